import Authorize
import Foundation
import Synchronization
import Testing

/// A consent store that issues once per pending sign-in and records whether consent was remembered.
private final class OnceStore: ConsentStore, @unchecked Sendable {
    let remembered = Mutex<[Bool]>([])
    let done = Mutex<Set<String>>([])
    func issueCode(
        requestID: String, browserSessionID: String, codeHash: String, rememberConsent: Bool, now: Date, lifetimeSeconds: Double
    ) throws -> Bool {
        remembered.withLock { $0.append(rememberConsent) }
        #expect(lifetimeSeconds == 60)
        #expect(!codeHash.hasPrefix("hoc_"))
        return done.withLock { $0.insert(requestID).inserted }
    }
    func completeAuthorizationRequest(id: String, now: Date) throws -> Bool { done.withLock { $0.insert(id).inserted } }
}

@Suite struct ConsentTests {
    @Test func consentIsRememberedOnlyForLinksAndASignInYieldsOneCode() throws {
        let store = OnceStore()
        let consent = Consent(store: store, secrets: CountingSecrets())
        let code = try consent.allow(
            requestID: "r1", redirect: uri("https://acme.com/app/callback"), browserSessionID: "b1", now: Date())
        #expect(code?.hasPrefix("hoc_") == true)
        #expect(
            try consent.allow(requestID: "r1", redirect: uri("https://acme.com/app/callback"), browserSessionID: "b1", now: Date()) == nil)
        _ = try consent.allow(requestID: "r2", redirect: uri("com.acme.app:/callback"), browserSessionID: "b1", now: Date())
        _ = try consent.allow(requestID: "r3", redirect: uri("http://127.0.0.1/cb"), browserSessionID: "b1", now: Date())
        #expect(store.remembered.withLock { $0 } == [true, true, false, false])
        #expect(try consent.deny(requestID: "r4", now: Date()))
        #expect(try consent.deny(requestID: "r4", now: Date()) == false)
    }
}
