import Authorize
import Foundation
import Synchronization

/// Browser bindings kept in memory, for contexts with no database: the account page mints one for its
/// passkey calls (docs/passkeys.md), and a binding minted here is on record until it expires.
public final class FakeBrowserBindings: BrowserBindingStore {
    private let expiries = Mutex([String: Date]())

    public init() {}

    public func recordBrowserBinding(bindingHash: String, now: Date, lifetimeSeconds: Double) throws {
        expiries.withLock { $0[bindingHash] = now.addingTimeInterval(lifetimeSeconds) }
    }

    public func isBrowserBindingOnRecord(bindingHash: String, until: Date) throws -> Bool {
        expiries.withLock { ($0[bindingHash] ?? .distantPast) >= until }
    }
}

/// The passkey ports of an account that has none, for contexts with no database: listing and counting
/// answer nothing; anything that would create, use or change a passkey is `StoreUnavailable`, as it would
/// be without PostgreSQL.
public struct NoPasskeys: PasskeyStores {
    public init() {}

    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "passkeys_not_in_this_fake") }
    public func issuePasskeyChallenge(
        hash: String, purpose: PasskeyPurpose, userID: String?, bindingHash: String, now: Date, lifetimeSeconds: Double
    ) throws { throw unavailable() }
    public func consumePasskeyChallenge(hash: String, purpose: PasskeyPurpose, bindingHash: String, now: Date) throws -> (
        consumed: Bool, userID: String?
    ) { throw unavailable() }
    public func passkeyUserHandle(userID: String, candidate: [UInt8]) throws -> [UInt8] { throw unavailable() }
    public func passkeys(userID: String) throws -> [PasskeyRecord] { [] }
    public func addPasskey(_ passkey: NewPasskey, userID: String, now: Date) throws -> PasskeyRecord? { throw unavailable() }
    public func passkeyForSignIn(credentialID: [UInt8]) throws -> PasskeyForSignIn? { nil }
    public func recordPasskeyUse(id: String, signCount: UInt32, backedUp: Bool, now: Date) throws { throw unavailable() }
    public func createBrowserSession(tokenHash: String, userID: String, now: Date, methods: AuthenticationMethods) throws -> String {
        throw unavailable()
    }
    public func renamePasskey(userID: String, id: String, name: PasskeyName) throws -> Bool { false }
    public func removePasskey(userID: String, id: String) throws -> PasskeyRecord? { nil }
    public func passkeyOfferFacts(userID: String) throws -> (count: Int, skippedAt: Date?) { (0, nil) }
    public func skipPasskeyOffer(userID: String, now: Date) throws { throw unavailable() }
    public func passkeyCount(userID: String) throws -> Int { 0 }
}
