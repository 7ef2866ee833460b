import Authorize
import Foundation
import Testing

/// The rules of the provider fields and of a create or update body (docs/federation.md, "Providers"), and
/// the claims of Apple's client secret; pure, no I/O.
@Suite struct ProviderFieldTests {
    static let pem = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg
        AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
        -----END PRIVATE KEY-----
        """

    static func fields(_ kind: UpstreamProviderKind) -> [String: String] {
        switch kind {
        case .apple: ["clientId": "com.acme.signin", "teamId": "abcde12345", "keyId": "KEY1234567", "privateKey": pem]
        case .google: ["clientId": "123.apps.googleusercontent.com", "clientSecret": "GOCSPX-secret"]
        case .oidc:
            ["slug": "okta", "displayName": "Okta", "issuer": "https://acme.okta.com", "clientId": "client", "clientSecret": "s3cret"]
        }
    }

    static func create(_ kind: UpstreamProviderKind, _ fields: [String: String], allowHTTP: Bool = false) -> Result<
        ProviderInput, ProviderFieldProblem
    > {
        ProviderInput.parse(fields, rules: .init(kind: kind, allowHTTPIssuer: allowHTTP), creating: true)
    }

    @Test func appleAndGoogleGetTheirFixedIssuerNameAndSlug() throws {
        let apple = try Self.create(.apple, Self.fields(.apple)).get()
        #expect(apple.issuer == "https://appleid.apple.com")
        #expect(apple.displayName == "Apple")
        #expect(apple.slug == "apple")
        #expect(apple.teamID == "ABCDE12345")
        #expect(apple.privateKeyDER?.isEmpty == false)
        let google = try Self.create(.google, Self.fields(.google)).get()
        #expect(google.issuer == "https://accounts.google.com")
        #expect(google.displayName == "Google")
        #expect(google.clientSecret == "GOCSPX-secret")
    }

    @Test func oidcNeedsItsIssuerNameAndSlug() throws {
        for field in ["slug", "displayName", "issuer", "clientId", "clientSecret"] {
            var fields = Self.fields(.oidc)
            fields[field] = nil
            #expect(Self.create(.oidc, fields) == .failure(ProviderFieldProblem(field: field, rule: "is required (a string)")))
        }
        #expect(try Self.create(.oidc, Self.fields(.oidc)).get().issuer == "https://acme.okta.com")
    }

    @Test func aFieldTheKindDoesNotTakeIsRefused() {
        var fields = Self.fields(.google)
        fields["issuer"] = "https://evil.example"
        guard case .failure(let problem) = Self.create(.google, fields) else {
            Issue.record("an issuer for google was accepted")
            return
        }
        #expect(problem.field == "The body")
        #expect(problem.rule.hasSuffix("it takes slug, clientId, clientSecret"))
        var apple = Self.fields(.apple)
        apple["clientSecret"] = "x"
        #expect(throws: ProviderFieldProblem.self) { try Self.create(.apple, apple).get() }
    }

    @Test(arguments: ["ABCDE1234", "ABCDE123456", "ABCDE-1234", "ÄBCDE12345", ""])
    func teamIDIsTenLettersOrDigits(_ raw: String) {
        guard case .failure(let problem) = ProviderFields.teamID(raw) else {
            Issue.record("team ID accepted")
            return
        }
        #expect(problem.field == "teamId")
        #expect(problem.rule.hasPrefix("must be exactly 10 letters or digits"))
    }

    @Test func keyIDIsTenLettersOrDigitsUpperCased() {
        #expect(ProviderFields.keyID(" key1234567 ") == .success("KEY1234567"))
        #expect(ProviderFields.keyID("KEY123456") == .failure(ProviderFields.keyIDProblem))
    }

    @Test(arguments: [
        "http://acme.example", "https://", "https://acme.example/?x=1", "https://acme.example/#f", "https://user@acme.example",
        "HTTPS://acme.example", "ftp://acme.example", "https://acme example", "acme.example",
    ])
    func issuerIsAnHTTPSURLWithoutQueryOrFragment(_ raw: String) {
        guard case .failure(let problem) = ProviderFields.issuer(raw, allowHTTP: false) else {
            Issue.record("issuer accepted")
            return
        }
        #expect(problem.field == "issuer")
    }

    @Test func httpIssuersOnlyWhenPrivateFetchesAreAllowed() {
        #expect(ProviderFields.issuer("http://127.0.0.1:8443/op", allowHTTP: true) == .success("http://127.0.0.1:8443/op"))
        #expect(ProviderFields.issuer(" https://id.acme.example/realm/ ", allowHTTP: false) == .success("https://id.acme.example/realm/"))
    }

    @Test(arguments: ["", "-okta", "okta-", "Okta Login", "ok_ta", String(repeating: "a", count: 33)])
    func slugIsLowerCaseLettersDigitsAndHyphens(_ raw: String) {
        guard case .failure(let problem) = ProviderFields.slug(raw) else {
            Issue.record("slug accepted")
            return
        }
        #expect(problem.field == "slug")
    }

    @Test func slugIsLowerCased() {
        #expect(ProviderFields.slug("Acme-SSO") == .success("acme-sso"))
    }

    @Test(arguments: [
        "", "MIGHAgEAMBMG", "-----BEGIN EC PRIVATE KEY-----\nMIGH\n-----END EC PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----",
    ])
    func privateKeyIsAPEMPrivateKeyBlock(_ raw: String) {
        guard case .failure(let problem) = ProviderFields.privateKey(raw) else {
            Issue.record("private key accepted")
            return
        }
        #expect(problem.field == "privateKey")
    }

    @Test func clientSecretIsKeptExactlyAndHasNoSpace() {
        #expect(ProviderFields.clientSecret("a~b") == .success("a~b"))
        #expect(throws: ProviderFieldProblem.self) { try ProviderFields.clientSecret("a b").get() }
        #expect(throws: ProviderFieldProblem.self) { try ProviderFields.clientSecret(String(repeating: "x", count: 1025)).get() }
    }

    @Test func anUpdateTakesAnyFieldAndChangesOnlyThose() throws {
        let update = try ProviderInput.parse(["clientSecret": "new"], rules: .init(kind: .google, allowHTTPIssuer: false), creating: false)
            .get()
        #expect(update.clientSecret == "new")
        #expect(update.slug == nil && update.issuer == nil && update.clientID == nil)
        #expect(try ProviderInput.parse([:], rules: .init(kind: .oidc, allowHTTPIssuer: false), creating: false).get().isEmpty)
    }

    @Test func providerIDsAreDistinctUUIDs() {
        let id = "6F1B2C3D-0000-4000-8000-000000000001"
        #expect(ProviderFields.providerIDs([id]) == .success([id.lowercased()]))
        #expect(throws: ProviderFieldProblem.self) { try ProviderFields.providerIDs([id, id.lowercased()]).get() }
        #expect(throws: ProviderFieldProblem.self) { try ProviderFields.providerIDs(["okta"]).get() }
        #expect(ProviderFields.providerIDs([]) == .success([]))
    }

    // MARK: Apple's client secret

    @Test func appleClientSecretClaimsAreExact() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.7)
        let claims = String(
            decoding: AppleClientSecret.claims(teamID: "ABCDE12345", servicesID: "com.acme.signin", now: now), as: UTF8.self)
        #expect(
            claims
                == #"{"iss":"ABCDE12345","iat":1800000000,"exp":1812960000,"aud":"https://appleid.apple.com","sub":"com.acme.signin"}"#)
        #expect(String(decoding: AppleClientSecret.header(keyID: "KEY1234567"), as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
    }

    @Test func appleClientSecretLivesWithinApplesBoundAndIsRenewedBeforeItsLastMonth() {
        #expect(AppleClientSecret.lifetimeSeconds <= AppleClientSecret.maximumLifetimeSeconds)
        let minted = Date(timeIntervalSince1970: 1_800_000_000)
        let expires = AppleClientSecret.expiresAt(mintedAt: minted)
        #expect(expires.timeIntervalSince(minted) == 150 * 86_400)
        #expect(!AppleClientSecret.needsRenewal(expiresAt: expires, now: minted.addingTimeInterval(119 * 86_400)))
        #expect(AppleClientSecret.needsRenewal(expiresAt: expires, now: minted.addingTimeInterval(121 * 86_400)))
    }
}
