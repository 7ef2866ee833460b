import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// `ZEVAUTH_PASSKEY_RP_ID` (docs/passkeys.md, "Relying party"): the issuer's host or a parent domain of at
/// least two labels, else the server refuses to start naming the key.
@Suite struct PasskeyConfigurationTests {
    static func load(_ rpID: String?, issuer: String = "https://id.example.com") throws -> ServerConfiguration {
        var environment = ConfigurationErrorTests.base
        environment["ZEVAUTH_ISSUER"] = issuer
        environment["ZEVAUTH_PASSKEY_RP_ID"] = rpID
        return try ConfigurationLoader.load(environment: environment)
    }

    @Test func defaultsToTheIssuersHostAndOrigin() throws {
        let relyingParty = try Self.load(nil).relyingParty
        #expect(relyingParty.id == "id.example.com")
        #expect(relyingParty.origin == "https://id.example.com")
        #expect(try Self.load(nil, issuer: "https://ID.Example.COM:8443").relyingParty.id == "id.example.com")
    }

    @Test(arguments: [("id.example.com", "id.example.com"), ("example.com", "example.com"), ("EXAMPLE.com", "example.com")])
    func acceptsTheHostOrAParent(rpID: String, expected: String) throws {
        #expect(try Self.load(rpID).relyingParty.id == expected)
    }

    @Test func takesAnInternationalisedParentAsItsALabel() throws {
        #expect(try Self.load("bücher.example", issuer: "https://id.xn--bcher-kva.example").relyingParty.id == "xn--bcher-kva.example")
    }

    @Test(arguments: ["com", "other.example.com", "evil.com", "xample.com", "example.com.", "id.example.com.evil", "a b", ".com"])
    func refusesAnythingElse(rpID: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.load(rpID) }
        #expect(error?.key == "ZEVAUTH_PASSKEY_RP_ID")
    }

    @Test func anIPAddressIssuerUsesOnlyItself() throws {
        #expect(try Self.load("127.0.0.1", issuer: "http://127.0.0.1:8080").relyingParty.id == "127.0.0.1")
        #expect(throws: ConfigurationError.self) { try Self.load("0.0.1", issuer: "http://127.0.0.1:8080") }
    }
}
