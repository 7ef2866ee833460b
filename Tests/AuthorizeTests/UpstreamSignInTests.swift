import Authorize
import Foundation
import Testing

/// Finding or making the account of an upstream identity over a store (docs/federation.md, "Accounts"),
/// and the `amr` of a federated sign-in; pure, over an in-memory fake.
@Suite struct UpstreamSignInTests {
    /// Links and accounts in memory; `raceOnce` makes the first create fail as if a concurrent sign-in won.
    final class FakeStore: UpstreamIdentityStore, @unchecked Sendable {
        var users: [String: UserRecord] = [:]
        var links: [String: String] = [:]
        var raceOnce = false
        var created = 0

        func key(_ identity: UpstreamIdentity) -> String { "\(identity.providerID)|\(identity.issuer)|\(identity.subject)" }
        func linkedAccount(_ identity: UpstreamIdentity, now: Date) throws -> UserRecord? { links[key(identity)].flatMap { users[$0] } }
        func user(emailKey: String) throws -> UserRecord? { users.values.first { $0.email.lowercased() == emailKey } }
        func createLinkedAccount(
            email: EmailAddress, name: DisplayName, verified: Bool, identity: UpstreamIdentity, now: Date, clientAddress: String?
        ) throws -> UserRecord {
            let user = UserRecord(
                id: "new-\(created)", email: email.typed, name: name.text, imageURL: nil, passwordHash: UserRecord.noPassword,
                closed: false,
                emailVerified: verified)
            if raceOnce {
                raceOnce = false
                users[user.id] = user
                links[key(identity)] = user.id
                throw StoreError.duplicate(constraint: "upstream_identities_subject_unique")
            }
            created += 1
            users[user.id] = user
            links[key(identity)] = user.id
            return user
        }
        func linkIdentity(
            providerID: String, issuer: String, subject: String, email: String?, userID: String, now: Date, clientAddress: String?
        ) throws -> Bool { false }
        func linkedIdentities(userID: String) throws -> [LinkedIdentity] { [] }
        func unlinkIdentity(
            id: String, userID: String, now: Date, clientAddress: String?, allowed: (Bool, Int, Int) -> Bool
        ) throws -> UnlinkOutcome { .notFound }
    }

    static let identity = UpstreamIdentity(
        providerID: "p1", issuer: "https://idp.example", subject: "s1", email: "ada@example.com", emailVerified: true, name: "Ada",
        tokenID: "t", expiresAt: 0)

    static func resolve(_ store: FakeStore, _ identity: UpstreamIdentity = identity) throws -> ResolveUpstreamAccount.Outcome {
        try ResolveUpstreamAccount(store: store, domainToASCII: { $0.lowercased() })(identity, now: Date(), clientAddress: nil)
    }

    static func user(_ id: String, closed: Bool = false) -> UserRecord {
        UserRecord(id: id, email: "ada@example.com", name: "Ada", imageURL: nil, passwordHash: "$argon2id$x", closed: closed)
    }

    @Test func aNewAddressMakesAnAccountWithoutAPasswordThenTheLinkSignsIn() throws {
        let store = FakeStore()
        guard case .signIn(let user, created: true) = try Self.resolve(store) else {
            Issue.record("expected a created account")
            return
        }
        #expect(!user.hasPassword)
        #expect(user.emailVerified)
        #expect(try Self.resolve(store) == .signIn(user, created: false))
        #expect(store.created == 1)
    }

    @Test func aConcurrentSignInThatWonIsFollowed() throws {
        let store = FakeStore()
        store.raceOnce = true
        guard case .signIn(_, created: false) = try Self.resolve(store) else {
            Issue.record("expected the winner's account")
            return
        }
    }

    @Test func anAddressWithAnAccountAsksForConfirmationAndAClosedOneRefuses() throws {
        let store = FakeStore()
        store.users["a1"] = Self.user("a1")
        #expect(try Self.resolve(store) == .confirmLink(Self.user("a1")))
        store.users["a1"] = Self.user("a1", closed: true)
        #expect(try Self.resolve(store) == .closed)
        store.links[store.key(Self.identity)] = "a1"
        #expect(try Self.resolve(store) == .closed)
    }

    @Test func noAddressIsRefused() throws {
        let bare = UpstreamIdentity(
            providerID: "p1", issuer: "https://idp.example", subject: "s2", email: nil, emailVerified: false, name: nil, tokenID: "t",
            expiresAt: 0)
        #expect(try Self.resolve(FakeStore(), bare) == .refused(.noAddress))
    }

    @Test func federatedSignInsRecordFed() {
        #expect(AuthenticationMethods.federated.values == ["fed"])
        #expect(AuthenticationMethods(secondFactor: nil, federated: true).values == ["fed", "otp", "mfa"])
        #expect(AuthenticationMethods(secondFactor: SecondFactorCode("ABCDE-FGHIJ"), federated: true).values == ["fed", "mfa"])
        #expect(AuthenticationMethods(secondFactor: SecondFactorCode("123456")).values == ["pwd", "otp", "mfa"])
    }

    @Test func flowSecretsOpenOnlyUnderTheirFlowAndField() throws {
        /// Seals as `associatedData ‖ 0 ‖ plaintext`; opens only under the same associated data.
        struct LabelSealer: SecretSealing {
            func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] { associatedData + [0] + plaintext }
            func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
                guard sealed.starts(with: associatedData + [0]) else { throw StoreError.notFound }
                return Array(sealed.dropFirst(associatedData.count + 1))
            }
        }
        let sealed = try UpstreamFlowSecrets.seal("verifier", flowID: "f1", field: "verifier", with: LabelSealer())
        #expect(UpstreamFlowSecrets.open(sealed, flowID: "f1", field: "verifier", with: LabelSealer()) == "verifier")
        #expect(UpstreamFlowSecrets.open(sealed, flowID: "f1", field: "nonce", with: LabelSealer()) == nil)
        #expect(UpstreamFlowSecrets.open(sealed, flowID: "f2", field: "verifier", with: LabelSealer()) == nil)
    }
}
