import Authorize
import Foundation
import Testing

/// The account rules of an upstream sign-in (docs/federation.md, "Accounts"); pure, no I/O.
@Suite struct UpstreamAccountRulesTests {
    static func identity(email: String? = "ada@example.com", verified: Bool = true, name: String? = "Ada Lovelace")
        -> UpstreamIdentity
    {
        UpstreamIdentity(
            providerID: "p1", issuer: "https://appleid.apple.com", subject: "000123.abc", email: email, emailVerified: verified,
            name: name, tokenID: "t", expiresAt: 0)
    }

    static func address(_ email: String?) -> EmailAddress? {
        UpstreamAccountRules.address(email, domainToASCII: { $0.lowercased() })
    }

    static func decide(_ identity: UpstreamIdentity, linked: String? = nil, withAddress: String? = nil) -> UpstreamAccountDecision {
        UpstreamAccountRules.decide(
            identity: identity, address: address(identity.email), linkedAccount: linked, accountWithAddress: withAddress)
    }

    @Test func aLinkedIdentitySignsInToItsAccountWhateverAddressItNowAsserts() {
        #expect(Self.decide(Self.identity(), linked: "acct-1", withAddress: "acct-2") == .signIn(accountID: "acct-1"))
        #expect(Self.decide(Self.identity(email: nil), linked: "acct-1") == .signIn(accountID: "acct-1"))
    }

    @Test func aNewAddressCreatesAnAccountVerifiedOnlyWhenTheUpstreamSaysSo() throws {
        let verified = Self.decide(Self.identity())
        #expect(
            verified == .create(email: try #require(Self.address("ada@example.com")), verified: true, name: DisplayName("Ada Lovelace")!))
        guard case .create(_, let unverified, _) = Self.decide(Self.identity(verified: false)) else {
            Issue.record("expected create")
            return
        }
        #expect(!unverified)
    }

    @Test func anAddressWithAnAccountNeedsConfirmationEvenWhenVerified() {
        #expect(Self.decide(Self.identity(), withAddress: "acct-2") == .confirmLink(existingAccountID: "acct-2"))
        #expect(Self.decide(Self.identity(verified: false), withAddress: "acct-2") == .confirmLink(existingAccountID: "acct-2"))
    }

    @Test(arguments: [nil, "", "not an address", "a@"])
    func noUsableAddressAndNoLinkIsRefused(email: String?) {
        #expect(Self.decide(Self.identity(email: email)) == .refuse(.noAddress))
        #expect(UpstreamAccountRefusal.noAddress.sentence(provider: "Apple").hasPrefix("Apple did not share an email address"))
    }

    @Test func privateRelayAddressesAreAddresses() throws {
        let relay = Self.identity(email: "x7kq2@privaterelay.appleid.com", name: nil)
        #expect(
            Self.decide(relay)
                == .create(email: try #require(Self.address("x7kq2@privaterelay.appleid.com")), verified: true, name: DisplayName("x7kq2")!)
        )
    }

    @Test func theNameComesFromTheIdentityThenAppleUserFieldThenTheAddress() throws {
        let apple = Self.identity(name: nil).naming(
            UpstreamAccountRules.appleUserName(#"{"name":{"firstName":"Grace","lastName":"Hopper"},"email":"g@x.io"}"#))
        guard case .create(_, _, let name) = Self.decide(apple) else {
            Issue.record("expected create")
            return
        }
        #expect(name.text == "Grace Hopper")
        guard case .create(_, _, let fallback) = Self.decide(Self.identity(name: "\u{202E}evil")) else {
            Issue.record("expected create")
            return
        }
        #expect(fallback.text == "ada")
    }

    @Test(
        arguments: [
            (#"{"name":{"firstName":"Grace","lastName":"Hopper"}}"#, "Grace Hopper"),
            (#"{"name":{"firstName":"Grace"}}"#, "Grace"),
            (#"{"name":{"firstName":" ","lastName":""}}"#, nil),
            (#"{"email":"g@x.io"}"#, nil),
            ("not json", nil),
            ("[1]", nil),
        ] as [(String, String?)])
    func appleUserFieldIsReadLeniently(json: String, expected: String?) {
        #expect(UpstreamAccountRules.appleUserName(json) == expected)
    }

    @Test func unlinkingNeedsAnotherWayToSignIn() {
        #expect(!UpstreamAccountRules.mayUnlink(hasPassword: false, passkeys: 0, linkedIdentities: 1))
        #expect(UpstreamAccountRules.mayUnlink(hasPassword: true, passkeys: 0, linkedIdentities: 1))
        #expect(UpstreamAccountRules.mayUnlink(hasPassword: false, passkeys: 1, linkedIdentities: 1))
        #expect(UpstreamAccountRules.mayUnlink(hasPassword: false, passkeys: 0, linkedIdentities: 2))
    }
}
