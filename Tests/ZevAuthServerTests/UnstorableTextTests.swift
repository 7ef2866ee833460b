import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md "Text values": PostgreSQL's `text` cannot hold U+0000, so every request value is
/// checked where it is decoded (query, form, JSON, bearer credential). A NUL gets the field's ordinary
/// error, never a 500 and never a database error in the log.
@Suite struct UnstorableTextTests {
    static let nul = "\u{0}"

    func make() throws -> SessionDriver {
        return try SessionDriver.started()
    }

    func expectNoDatabaseError(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(server.serverFailureLines.isEmpty, "\(server.serverFailureLines)", sourceLocation: sourceLocation)
    }

    func expectJSONError(
        _ response: TestResponse, _ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
    }

    func startPairs(_ driver: SessionDriver, _ name: String, _ value: String) -> [(String, String)] {
        [
            ("client_id", driver.fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"), ("state", "s"),
            ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"), ("response_type", "code"),
        ].map { $0.0 == name ? (name, value) : $0 }
    }

    @Test(arguments: [
        ("client_id", "invalid_client", "invalid_client"),
        ("redirect_uri", "redirect_uri_mismatch", "invalid_request"),
        ("state", "invalid_state", "invalid_request"),
    ])
    func aNULInAStartParameterIsThatParametersShownError(name: String, productCode: String, rfcCode: String) throws {
        let driver = try make()
        for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
            let valid = ["client_id": driver.fixture.developmentKey, "redirect_uri": "http://127.0.0.1:5000/cb", "state": "x"]
            let pairs = startPairs(driver, name, (valid[name] ?? "") + Self.nul)
            let response = try driver.server.browser().get(startTarget(pairs, path: path), headers: [("Accept", "application/json")])
            expectJSONError(response, 400, path == "/oauth2/authorize" ? rfcCode : productCode)
            #expect(response.header("location") == nil)
        }
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInAnExchangeOrSessionJSONFieldIsInvalidRequest() throws {
        let driver = try make()
        let key = driver.fixture.developmentKey
        let client = driver.server.client
        for fields in [
            ["code": "hoc_x" + Self.nul], ["code": "hoc_x", "redirectUri": "http://127.0.0.1:5000/cb" + Self.nul],
            ["code": "hoc_x", "codeVerifier": Self.nul], ["code": "hoc_x", "extra\u{0}name": 1],
        ] as [[String: Any]] {
            let body = Array(try JSONSerialization.data(withJSONObject: fields))
            expectJSONError(try SignInDriver.exchange(client, clientID: key, body: body), 400, "invalid_request")
        }
        expectJSONError(try SessionDriver.refresh(client, clientID: key, body: ["refreshToken": "zrt_" + Self.nul]), 400, "invalid_request")
        let revoke = try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: key, ["token": "zrt_" + Self.nul])
        expectJSONError(revoke, 400, "invalid_request")
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInABearerCredentialIsNoCredential() throws {
        let driver = try make()
        let response = try SignInDriver.exchange(
            driver.server.client, clientID: driver.fixture.developmentKey + Self.nul, body: Array(#"{"code":"hoc_x"}"#.utf8))
        #expect(response.status != 500)
        #expect([400, 401].contains(response.status))
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInATokenRevokeOrIntrospectFormFieldIsInvalidRequest() throws {
        let driver = try make()
        let key = driver.fixture.developmentKey
        for fields in [
            [("grant_type", "authorization_code"), ("code", "hoc_" + Self.nul), ("code_verifier", "v"), ("client_id", key)],
            [("grant_type", "refresh_token"), ("refresh_token", "zrt_" + Self.nul), ("client_id", key)],
            [("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("client_id", key + Self.nul)],
        ] {
            expectJSONError(try driver.postForm("/oauth2/token", fields), 400, "invalid_request")
        }
        expectJSONError(try driver.postForm("/oauth2/revoke", [("token", "zrt_" + Self.nul), ("client_id", key)]), 400, "invalid_request")
        expectJSONError(try driver.postForm("/oauth2/revoke", [("token", "zrt_x"), ("client_id", key + Self.nul)]), 400, "invalid_request")
        let introspect = try driver.postForm(
            "/oauth2/introspect", [("token", "zat_" + Self.nul)], headers: [("Authorization", "Bearer \(driver.fixture.developmentSecret)")]
        )
        expectJSONError(introspect, 400, "invalid_request")
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInTheHostedSignInFormIsInvalidRequest() throws {
        let driver = try make()
        let signIn = SignInDriver(server: driver.server, browser: driver.server.browser())
        let form = try signIn.reachSignInForm(clientID: driver.fixture.developmentKey)
        let posted = try signIn.browser.postForm(
            "/v1/auth/zevid/signin", form.fields + [("email", "a" + Self.nul + "@example.com"), ("password", "whatever password")])
        #expect(posted.status == 400)
        #expect(posted.text.contains("<code>invalid_request</code>"))
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInTheAccountFormsIsInvalidRequest() throws {
        let driver = try make()
        for (path, fields) in [
            ("/account/signin", [("email", "a" + Self.nul + "@example.com"), ("password", "whatever password")]),
            ("/account/signup", [("name", "Sam"), ("email", "b" + Self.nul + "@example.com"), ("password", "a long enough password")]),
        ] {
            let browser = driver.server.browser()
            let page = try browser.get(path)
            let csrf = try #require(hiddenField("csrf", in: page.text))
            let posted = try browser.postForm(path, [("csrf", csrf)] + fields)
            #expect(posted.status == 400, "\(path)")
            #expect(posted.text.contains("<code>invalid_request</code>"), "\(path)")
        }
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInASignedInAccountFormIsInvalidRequest() throws {
        let driver = try make()
        let browser = driver.server.browser()
        _ = try AccountTests.appSession(
            driver.server, browser, clientID: driver.fixture.developmentKey, email: driver.fixture.email, password: driver.fixture.password)
        let (_, csrf) = try AccountTests.accountPage(browser)
        let posted = try browser.postForm("/account/apps/remove", [("csrf", csrf), ("environment", "x" + Self.nul)])
        #expect(posted.status == 400)
        #expect(posted.text.contains("<code>invalid_request</code>"))
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInAnAdminJSONFieldIsInvalidRequest() throws {
        let driver = try make()
        let operatorToken = TestServer.operatorToken
        let secret = driver.fixture.developmentSecret
        let calls: [(String, String, String, [String: Any])] = [
            ("POST", "/v1/admin/domains/acme-nul.example/verify", operatorToken, ["projectId": driver.fixture.projectID + Self.nul]),
            ("POST", "/v1/admin/projects", operatorToken, ["name": "Acme" + Self.nul]),
            ("POST", "/v1/admin/users", operatorToken, ["email": "c@example.com", "password": "a long password" + Self.nul, "name": "C"]),
            ("POST", "/v1/admin/callbacks", secret, ["uri": "http://127.0.0.1/cb" + Self.nul]),
            ("POST", "/v1/admin/apps", secret, ["platform": "ios", "bundleId": "com.acme" + Self.nul, "teamId": "ABCDE12345"]),
            ("PATCH", "/v1/admin/settings", secret, ["sessionIdleDays": 7, "x\u{0}": 1]),
        ]
        for (method, path, token, body) in calls {
            let response = try driver.sendJSON(method, path, bearer: token, body)
            expectJSONError(response, 400, "invalid_request")
        }
        expectNoDatabaseError(driver.server)
    }

    @Test func aNULInAPathParameterIsNotAServerError() throws {
        let driver = try make()
        for (method, path) in [
            ("DELETE", "/v1/admin/callbacks/%00"), ("DELETE", "/v1/admin/keys/a%00"), ("GET", "/v1/admin/apps/%00"),
            ("POST", "/v1/admin/apps/%00/check"),
        ] {
            let response = try driver.sendJSON(method, path, bearer: driver.fixture.developmentSecret)
            #expect(response.status != 500, "\(method) \(path): \(response.text)")
            #expect((400..<500).contains(response.status), "\(method) \(path)")
        }
        expectNoDatabaseError(driver.server)
    }
}

/// docs/protocol.md "Errors": an `error_description` never echoes a request value; an unknown field is
/// described without its name.
@Suite struct ErrorDescriptionEchoTests {
    @Test func anUnknownSettingsFieldIsNotEchoed() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let response = try driver.sendJSON(
            "PATCH", "/v1/admin/settings", bearer: fixture.developmentSecret, ["<script>alert(1)</script>": 1])
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        let description = response.json["error_description"] as? String ?? ""
        #expect(!description.contains("script") && !description.contains("alert") && !description.contains("<"))
        #expect(description.contains("sessionMaxAgeDays"))
    }

    @Test func anUnverifiedCallbackDomainIsNotEchoed() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let response = try driver.sendJSON(
            "POST", "/v1/admin/callbacks", bearer: fixture.developmentSecret, ["uri": "https://planted-name.example/cb"])
        #expect(response.status == 400)
        #expect(!(response.json["error_description"] as? String ?? "").contains("planted"))
    }
}
