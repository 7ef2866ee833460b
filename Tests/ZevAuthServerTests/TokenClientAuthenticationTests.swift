import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md "Standard OAuth surface": `/oauth2/token` and `/oauth2/revoke` read only
/// `application/x-www-form-urlencoded` bodies, and their clients are public, so client credentials are
/// never ignored (RFC 6749 §2.3, §5.2).
@Suite struct TokenClientAuthenticationTests {
    func make() throws -> SessionDriver {
        return try SessionDriver.started()
    }

    static let basic = "Basic " + Data("client:secret".utf8).base64EncodedString()

    func send(_ driver: SessionDriver, _ path: String, contentType: String?, body: String, headers: [(String, String)] = []) throws
        -> TestResponse
    {
        var all = headers
        if let contentType { all.append(("Content-Type", contentType)) }
        return try driver.server.client.send("POST", path, headers: all, body: Array(body.utf8))
    }

    func expectError(
        _ response: TestResponse, _ status: Int, _ error: String, mentions: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        let description = response.json["error_description"] as? String ?? ""
        #expect(description.hasPrefix(error + ": "), "\(description)", sourceLocation: sourceLocation)
        for text in mentions { #expect(description.contains(text), "\(description)", sourceLocation: sourceLocation) }
        #expect(response.header("cache-control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func aBodyThatIsNotAFormIsInvalidRequestNamingTheContentType(path: String) throws {
        let driver = try make()
        let key = driver.fixture.developmentKey
        let json = #"{"grant_type":"authorization_code","code":"hoc_x","client_id":"\#(key)","token":"zrt_x"}"#
        expectError(
            try send(driver, path, contentType: "application/json", body: json), 400, "invalid_request",
            mentions: ["application/json", "application/x-www-form-urlencoded"])
        let form = "grant_type=authorization_code&code=hoc_x&code_verifier=v&client_id=\(key)&token=zrt_x"
        expectError(
            try send(driver, path, contentType: "text/plain", body: form), 400, "invalid_request",
            mentions: ["text/plain", "application/x-www-form-urlencoded"])
        expectError(
            try send(driver, path, contentType: nil, body: form), 400, "invalid_request",
            mentions: ["no Content-Type", "application/x-www-form-urlencoded"])
        // Another type is named without echoing what was sent.
        let odd = try send(driver, path, contentType: "application/x-<b>odd</b>", body: form)
        expectError(odd, 400, "invalid_request", mentions: ["another media type"])
        #expect(!(odd.json["error_description"] as? String ?? "").contains("odd"))
        // Media type parameters and case are fine.
        let withCharset = try send(driver, path, contentType: "Application/X-WWW-Form-URLEncoded; charset=UTF-8", body: form)
        if path == "/oauth2/token" {
            expectError(withCharset, 400, "invalid_grant")
        } else {
            #expect(withCharset.status == 200)
        }
    }

    @Test func basicBesideClientIDIsInvalidRequestAndIssuesNoTokens() throws {
        let driver = try make()
        let issued = try driver.issueCode(path: "/oauth2/authorize")
        let fields = [
            ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", SessionDriver.redirect),
            ("code_verifier", issued.pkce.verifier), ("client_id", driver.fixture.developmentKey),
        ]
        let refused = try driver.postForm("/oauth2/token", fields, headers: [("Authorization", Self.basic)])
        expectError(refused, 400, "invalid_request", mentions: ["Authorization: Basic"])
        #expect(refused.json["access_token"] == nil)
        // The code was not consumed by the refused request.
        #expect(try driver.postForm("/oauth2/token", fields).status == 200)
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func aClientSecretIsInvalidRequest(path: String) throws {
        let driver = try make()
        let key = driver.fixture.developmentKey
        for secret in ["s3cret", ""] {
            let response = try driver.postForm(
                path,
                [
                    ("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x"), ("client_id", key),
                    ("client_secret", secret),
                ])
            expectError(response, 400, "invalid_request", mentions: ["client_secret"])
        }
        let both = try driver.postForm(
            path, [("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x"), ("client_id", key)],
            headers: [("Authorization", Self.basic)])
        expectError(both, 400, "invalid_request")
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func basicAloneIsInvalidClientChallengingBasic(path: String) throws {
        let driver = try make()
        let response = try driver.postForm(
            path, [("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x")],
            headers: [("Authorization", Self.basic)])
        expectError(response, 401, "invalid_client", mentions: ["client_id"])
        #expect(response.header("www-authenticate")?.hasPrefix("Basic") == true)
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func everyOtherInvalidClientChallengesBearer(path: String) throws {
        let driver = try make()
        for clientID in [nil, "pk_test_unknown"] as [String?] {
            var fields = [("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x")]
            if let clientID { fields.append(("client_id", clientID)) }
            let response = try driver.postForm(path, fields)
            expectError(response, 401, "invalid_client")
            #expect(response.header("www-authenticate") == "Bearer")
        }
    }

    @Test func introspectionReadsOnlyForms() throws {
        let driver = try make()
        let response = try send(
            driver, "/oauth2/introspect", contentType: "application/json", body: #"{"token":"zat_x"}"#,
            headers: [("Authorization", "Bearer \(driver.fixture.developmentSecret)")])
        expectError(response, 400, "invalid_request", mentions: ["application/json"])
    }
}

/// docs/protocol.md "Start": on `/oauth2/authorize` every start error, shown or redirected, carries the
/// RFC code as `error` and the product code first in `error_description` (RFC 6749 §4.1.2.1, RFC 7636 §4.4.1).
@Suite struct AuthorizeShownErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let drop: String?
        let replace: (String, String)?
        let production: Bool
        let status: Int
        let error: String
        let productCode: String
        var testDescription: String { productCode }
    }

    static let cases: [Case] = [
        Case(drop: "state", replace: nil, production: false, status: 400, error: "invalid_request", productCode: "invalid_state"),
        Case(drop: nil, replace: ("state", ""), production: false, status: 400, error: "invalid_request", productCode: "invalid_state"),
        Case(
            drop: nil, replace: ("state", "a\u{7}b"), production: false, status: 400, error: "invalid_request", productCode: "invalid_state"
        ),
        Case(drop: "client_id", replace: nil, production: false, status: 400, error: "invalid_client", productCode: "invalid_client"),
        Case(
            drop: "redirect_uri", replace: nil, production: false, status: 400, error: "invalid_request",
            productCode: "redirect_uri_required"),
        Case(
            drop: nil, replace: ("redirect_uri", "http://127.0.0.1:5000/other"), production: false, status: 400, error: "invalid_request",
            productCode: "redirect_uri_mismatch"),
        Case(
            drop: nil, replace: ("redirect_uri", "com.acme.app:/callback"), production: true, status: 403, error: "invalid_request",
            productCode: "custom_scheme_not_allowed"),
        Case(
            drop: nil, replace: ("redirect_uri", "http://127.0.0.1:5000/cb"), production: true, status: 403, error: "invalid_request",
            productCode: "loopback_redirect_not_allowed"),
    ]

    @Test(arguments: cases)
    func shownErrorsUseTheRFCCodeWithTheProductCodeFirst(_ test: Case) throws {
        let server = try TestServer()
        let fixture = try Fixture.make(
            store: server.store, production: ["http://127.0.0.1/cb", "com.acme.app:/callback"])
        var pairs = [
            ("client_id", test.production ? fixture.productionKey : fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"),
            ("state", "s"), ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"), ("response_type", "code"),
        ]
        if let drop = test.drop { pairs.removeAll { $0.0 == drop } }
        if let (name, value) = test.replace { pairs = pairs.map { $0.0 == name ? (name, value) : $0 } }
        let target = startTarget(pairs, path: "/oauth2/authorize")
        let json = try server.browser().get(target, headers: [("Accept", "application/json")])
        #expect(json.status == test.status)
        #expect(json.header("location") == nil)
        #expect(json.json["error"] as? String == test.error)
        #expect((json.json["error_description"] as? String ?? "").hasPrefix(test.productCode + ": "))
        let page = try server.browser().get(target)
        #expect(page.status == test.status)
        #expect(page.text.contains("<code>\(test.error)</code>"))
        #expect(page.text.contains(test.productCode + ": "))
        // The product's own start keeps the product code.
        let own = try server.browser().get(
            startTarget(pairs.filter { $0.0 != "response_type" }), headers: [("Accept", "application/json")])
        #expect(own.json["error"] as? String == test.productCode)
    }
}
