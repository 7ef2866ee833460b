import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md#pushed-requests (RFC 9126) against PostgreSQL: `POST /oauth2/par`, the authorization
/// endpoint resuming a pushed request once, for its own client, within 60 seconds, and the environment's
/// `requirePushedAuthorizationRequests`.
@Suite struct PushedAuthorizationTests {
    static let prefix = "urn:ietf:params:oauth:request_uri:"

    func pushed(_ driver: SessionDriver, pkce: PKCEPair, state: String = "pushed state", changes: [String: String?] = [:]) -> [(
        String, String
    )] {
        var fields: [(String, String)] = [
            ("client_id", driver.fixture.developmentKey), ("redirect_uri", SessionDriver.redirect), ("response_type", "code"),
            ("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("scope", "openid email"),
        ]
        for (name, value) in changes {
            fields.removeAll { $0.0 == name }
            if let value { fields.append((name, value)) }
        }
        return fields
    }

    func push(_ driver: SessionDriver, _ fields: [(String, String)]) throws -> TestResponse {
        try driver.postForm("/oauth2/par", fields)
    }

    func authorize(_ browser: TestBrowser, clientID: String, requestURI: String, extra: [(String, String)] = []) throws -> TestResponse {
        try browser.get(startTarget([("client_id", clientID), ("request_uri", requestURI)] + extra, path: "/oauth2/authorize"))
    }

    /// Follows a 303 from the start through the hosted sign-in and consent to the redirect's location.
    func signIn(_ driver: SessionDriver, _ browser: TestBrowser, from start: TestResponse) throws -> String {
        let signInPath = try #require(start.header("location"), "\(start.status) \(start.text.prefix(300))")
        let page = try browser.get(signInPath)
        let csrf = try #require(hiddenField("csrf", in: page.text))
        let request = try #require(hiddenField("request", in: page.text))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [("request", request), ("csrf", csrf), ("email", driver.fixture.email), ("password", driver.fixture.password)])
        let consent = try browser.get(try #require(posted.header("location")))
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        let location = try #require(allowed.header("location"))
        SuiteCapture.secret(queryItems(of: location)["code"])
        return location
    }

    func expectJSONError(
        _ response: TestResponse, _ status: Int, _ error: String, productCode: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        let description = response.json["error_description"] as? String ?? ""
        #expect(description.hasPrefix((productCode ?? error) + ": "), "\(description)", sourceLocation: sourceLocation)
        #expect(response.header("cache-control") == "no-store", sourceLocation: sourceLocation)
        #expect(response.header("location") == nil, sourceLocation: sourceLocation)
        #expect(response.header("content-type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
    }

    func expectShownInvalidRequestURI(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 400, "\(response.text.prefix(300))", sourceLocation: sourceLocation)
        #expect(response.header("location") == nil, sourceLocation: sourceLocation)
        #expect(response.text.contains("invalid_request_uri"), sourceLocation: sourceLocation)
    }

    @Test func pushAnswers201WithASingleUseRequestURI() throws {
        let driver = try SessionDriver.started()
        let response = try push(driver, pushed(driver, pkce: PKCEPair()))
        #expect(response.status == 201, "\(response.text)")
        #expect(response.header("cache-control") == "no-store")
        #expect(response.header("content-type")?.hasPrefix("application/json") == true)
        #expect(Set(response.json.keys) == ["request_uri", "expires_in"])
        #expect(response.json["expires_in"] as? Int == 60)
        let requestURI = try #require(response.json["request_uri"] as? String)
        #expect(requestURI.hasPrefix(Self.prefix))
        let random = requestURI.dropFirst(Self.prefix.count)
        #expect(random.count == 43)
        #expect(random.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        let again = try push(driver, pushed(driver, pkce: PKCEPair()))
        #expect(again.json["request_uri"] as? String != requestURI)
        #expect(try driver.server.client.send("GET", "/oauth2/par").status == 405)
    }

    @Test func theAuthorizationEndpointResumesThePushedRequestAndTheCodeExchanges() throws {
        let driver = try SessionDriver.started()
        let pkce = PKCEPair()
        let requestURI = try #require(try push(driver, pushed(driver, pkce: pkce)).json["request_uri"] as? String)
        let browser = driver.server.browser()
        // Parameters beside client_id and request_uri are ignored (RFC 9101 §5): the pushed state comes back.
        let start = try authorize(
            browser, clientID: driver.fixture.developmentKey, requestURI: requestURI,
            extra: [("state", "query state"), ("redirect_uri", "http://127.0.0.1:1/other")])
        #expect(start.status == 303)
        let location = try signIn(driver, browser, from: start)
        #expect(location.hasPrefix(SessionDriver.redirect + "?"))
        let query = queryItems(of: location)
        #expect(query["state"] == "pushed state")
        #expect(query["iss"] == driver.server.issuer)
        let code = try #require(query["code"])
        let token = try driver.postForm(
            "/oauth2/token",
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", SessionDriver.redirect),
                ("code_verifier", pkce.verifier), ("client_id", driver.fixture.developmentKey),
            ])
        #expect(token.status == 200, "\(token.text)")
        #expect(token.json["scope"] as? String == "openid email")
        #expect(token.json["id_token"] is String)
    }

    @Test func aRequestURIWorksOnceForItsClientWithinSixtySeconds() throws {
        let clock = ManualClock()
        let driver = try SessionDriver.started(clock: clock)
        let key = driver.fixture.developmentKey
        func fresh() throws -> String {
            try #require(try push(driver, pushed(driver, pkce: PKCEPair())).json["request_uri"] as? String)
        }
        // Used twice: the second is refused, shown, never redirected.
        let once = try fresh()
        #expect(try authorize(driver.server.browser(), clientID: key, requestURI: once).status == 303)
        expectShownInvalidRequestURI(try authorize(driver.server.browser(), clientID: key, requestURI: once))
        // Another client's: refused, and the request stays usable by its own client.
        let other = try fresh()
        expectShownInvalidRequestURI(try authorize(driver.server.browser(), clientID: driver.fixture.productionKey, requestURI: other))
        #expect(try authorize(driver.server.browser(), clientID: key, requestURI: other).status == 303)
        // Unknown.
        expectShownInvalidRequestURI(
            try authorize(driver.server.browser(), clientID: key, requestURI: Self.prefix + String(repeating: "A", count: 43)))
        // Expired: usable at 59 s, refused at 60 s.
        let late = try fresh()
        let alive = try fresh()
        clock.advance(by: 59)
        #expect(try authorize(driver.server.browser(), clientID: key, requestURI: alive).status == 303)
        clock.advance(by: 1)
        expectShownInvalidRequestURI(try authorize(driver.server.browser(), clientID: key, requestURI: late))
        // Without client_id: check 2, shown.
        let missing = try driver.server.browser().get(startTarget([("request_uri", try fresh())], path: "/oauth2/authorize"))
        #expect(missing.status == 400)
        #expect(missing.header("location") == nil)
        #expect(missing.text.contains("invalid_client"))
        // A request URI that is not ours keeps check 4's answer, redirected.
        let foreign = try driver.server.browser().get(
            startTarget(pushed(driver, pkce: PKCEPair(), changes: ["request_uri": "https://rp.example/r"]), path: "/oauth2/authorize"))
        #expect(foreign.status == 303)
        #expect(queryItems(of: foreign.header("location") ?? "")["error"] == "request_uri_not_supported")
    }

    @Test func pushRefusalsAreJSONInTheStartsOrder() throws {
        let driver = try SessionDriver.started()
        let pkce = PKCEPair()
        expectJSONError(try push(driver, pushed(driver, pkce: pkce, changes: ["client_id": "pk_test_unknown"])), 401, "invalid_client")
        #expect(try push(driver, pushed(driver, pkce: pkce, changes: ["client_id": nil])).header("www-authenticate") == "Bearer")
        expectJSONError(try push(driver, pushed(driver, pkce: pkce) + [("state", "twice")]), 400, "invalid_request")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["redirect_uri": "http://127.0.0.1:1/unregistered"])), 400,
            "invalid_request", productCode: "redirect_uri_mismatch")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["request_uri": Self.prefix + "abc"])), 400, "invalid_request")
        expectJSONError(try push(driver, pushed(driver, pkce: pkce, changes: ["request": "a.b.c"])), 400, "request_not_supported")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["state": nil])), 400, "invalid_request", productCode: "invalid_state")
        expectJSONError(try push(driver, pushed(driver, pkce: pkce, changes: ["response_type": nil])), 400, "invalid_request")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["code_challenge": nil])), 400, "invalid_request",
            productCode: "pkce_required")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["code_challenge_method": "plain"])), 400, "invalid_request",
            productCode: "pkce_method_unsupported")
        expectJSONError(
            try push(driver, pushed(driver, pkce: pkce, changes: ["client_secret": "s"])), 401, "invalid_client")
        let basic = try push(driver, pushed(driver, pkce: pkce), headers: [("Authorization", "Basic YTpi")])
        expectJSONError(basic, 401, "invalid_client")
        #expect(basic.header("www-authenticate")?.hasPrefix("Basic") == true)
        let json = try driver.server.client.send(
            "POST", "/oauth2/par", headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        expectJSONError(json, 400, "invalid_request")
    }

    func push(_ driver: SessionDriver, _ fields: [(String, String)], headers: [(String, String)]) throws -> TestResponse {
        try driver.postForm("/oauth2/par", fields, headers: headers)
    }

    @Test func anEnvironmentMayRequirePushedRequestsOnBothStarts() throws {
        let driver = try SessionDriver.started()
        let patched = try driver.sendJSON(
            "PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, ["requirePushedAuthorizationRequests": true])
        #expect(patched.status == 200)
        #expect(patched.json["requirePushedAuthorizationRequests"] as? Bool == true)
        for path in ["/oauth2/authorize", "/v1/auth/zevid/start"] {
            let start = try driver.server.browser().get(startTarget(pushed(driver, pkce: PKCEPair()), path: path))
            // A loopback redirect is never held for a gesture: the 303 carries the error.
            let location = try #require(start.header("location"), "\(path): \(start.status)")
            let query = queryItems(of: location)
            #expect(query["error"] == "invalid_request", "\(path)")
            #expect(query["error_description"]?.contains("must use pushed authorization requests") == true, "\(path)")
            #expect(query["state"] == "pushed state", "\(path)")
        }
        let requestURI = try #require(try push(driver, pushed(driver, pkce: PKCEPair())).json["request_uri"] as? String)
        #expect(try authorize(driver.server.browser(), clientID: driver.fixture.developmentKey, requestURI: requestURI).status == 303)
        let metadata = try driver.server.client.send("GET", "/.well-known/oauth-authorization-server").json
        #expect(metadata["pushed_authorization_request_endpoint"] as? String == driver.server.issuer + "/oauth2/par")
        #expect(metadata["require_pushed_authorization_requests"] as? Bool == false)
    }

}
