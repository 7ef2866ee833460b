import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md#standard-surface and docs/protocol.md#sessions: RFC 8414 metadata, `/oauth2/token` (both grants
/// and every error), codes crossing between the two starts and exchanges, revocation (RFC 7009) and
/// introspection (RFC 7662).
@Suite struct StandardSurfaceTests {
    func make() throws -> SessionDriver {
        return try SessionDriver.started()
    }

    func expectTokenError(
        _ response: TestResponse, _ status: Int, _ error: String, productCode: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        let description = response.json["error_description"] as? String ?? ""
        #expect(description.hasPrefix((productCode ?? error) + ": "), "\(description)", sourceLocation: sourceLocation)
        #expect(response.header("cache-control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test func metadataNamesTheEndpointsAndCapabilities() throws {
        let driver = try make()
        let response = try driver.server.client.send("GET", "/.well-known/oauth-authorization-server")
        #expect(response.status == 200)
        let issuer = driver.server.issuer
        let json = response.json
        #expect(json["issuer"] as? String == issuer)
        #expect(json["authorization_endpoint"] as? String == issuer + "/oauth2/authorize")
        #expect(json["token_endpoint"] as? String == issuer + "/oauth2/token")
        #expect(json["revocation_endpoint"] as? String == issuer + "/oauth2/revoke")
        #expect(json["introspection_endpoint"] as? String == issuer + "/oauth2/introspect")
        #expect(json["code_challenge_methods_supported"] as? [String] == ["S256"])
        #expect(json["response_types_supported"] as? [String] == ["code"])
        #expect(
            json["grant_types_supported"] as? [String] == [
                "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange",
            ])
        #expect(
            json["token_endpoint_auth_methods_supported"] as? [String] == [
                "client_secret_basic", "client_secret_post", "private_key_jwt", "none",
            ])
        #expect(json["token_endpoint_auth_signing_alg_values_supported"] as? [String] == ["RS256", "ES256"])
        #expect(
            json["revocation_endpoint_auth_methods_supported"] as? [String] == [
                "client_secret_basic", "client_secret_post", "private_key_jwt", "none",
            ])
        #expect(json["authorization_response_iss_parameter_supported"] as? Bool == true)
    }

    @Test func tokenEndpointAuthorizationCodeThenRefreshInRFC6749Shapes() throws {
        let driver = try make()
        let issued = try driver.issueCode(path: "/oauth2/authorize")
        let response = try driver.postForm(
            "/oauth2/token",
            [
                ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", SessionDriver.redirect),
                ("code_verifier", issued.pkce.verifier), ("client_id", driver.fixture.developmentKey),
            ])
        #expect(response.status == 200)
        #expect(response.header("cache-control") == "no-store")
        #expect(response.header("pragma") == "no-cache")
        #expect(Set(response.json.keys) == ["access_token", "token_type", "expires_in", "refresh_token", "scope"])
        #expect(response.json["scope"] as? String == "")
        #expect(response.json["token_type"] as? String == "Bearer")
        #expect(response.json["expires_in"] as? Int == 900)
        let access = try #require(response.json["access_token"] as? String)
        let refresh = try #require(response.json["refresh_token"] as? String)
        #expect(try driver.current(access).status == 200)
        let refreshed = try driver.postForm(
            "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", driver.fixture.developmentKey)])
        #expect(refreshed.status == 200)
        #expect(refreshed.json["refresh_token"] as? String != refresh)
        // The rotated-out token is reuse at grace 0.
        expectTokenError(
            try driver.postForm(
                "/oauth2/token",
                [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", driver.fixture.developmentKey)]),
            400, "invalid_grant")
    }

    @Test func aCodeFromEitherStartWorksOnEitherExchange() throws {
        let driver = try make()
        let standard = try driver.issueCode(path: "/oauth2/authorize")
        let exchanged = try SignInDriver(server: driver.server, browser: driver.server.browser()).exchange(
            clientID: driver.fixture.developmentKey,
            fields: ["code": standard.code, "codeVerifier": standard.pkce.verifier, "redirectUri": SessionDriver.redirect])
        #expect(exchanged.status == 200)
        let product = try driver.issueCode(path: "/v1/auth/zevid/start")
        let token = try driver.postForm(
            "/oauth2/token",
            [
                ("grant_type", "authorization_code"), ("code", product.code), ("redirect_uri", SessionDriver.redirect),
                ("code_verifier", product.pkce.verifier), ("client_id", driver.fixture.developmentKey),
            ])
        #expect(token.status == 200)
    }

    @Test func tokenEndpointErrors() throws {
        let driver = try make()
        let key = driver.fixture.developmentKey
        let issued = try driver.issueCode(path: "/oauth2/authorize")
        func post(_ fields: [(String, String)]) throws -> TestResponse { try driver.postForm("/oauth2/token", fields) }
        let good: [(String, String)] = [
            ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", SessionDriver.redirect),
            ("code_verifier", issued.pkce.verifier), ("client_id", key),
        ]
        expectTokenError(try post(good + [("grant_type", "authorization_code")]), 400, "invalid_request")
        let raw = try driver.server.client.send(
            "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array("code=%zz".utf8))
        expectTokenError(raw, 400, "invalid_request")
        expectTokenError(try post(good.filter { $0.0 != "client_id" }), 401, "invalid_client")
        expectTokenError(try post(good.filter { $0.0 != "client_id" } + [("client_id", "pk_test_unknown")]), 401, "invalid_client")
        expectTokenError(try post(good.filter { $0.0 != "grant_type" }), 400, "invalid_request")
        expectTokenError(try post([("grant_type", "password"), ("client_id", key)]), 400, "unsupported_grant_type")
        expectTokenError(try post([("grant_type", "client_credentials"), ("client_id", key)]), 400, "unsupported_grant_type")
        expectTokenError(try post([("grant_type", "authorization_code"), ("client_id", key)]), 400, "invalid_request")
        expectTokenError(try post([("grant_type", "refresh_token"), ("client_id", key)]), 400, "invalid_request")
        expectTokenError(
            try post([("grant_type", "authorization_code"), ("code", "hoc_unknown"), ("client_id", key)]), 400, "invalid_grant")
        expectTokenError(
            try post([("grant_type", "refresh_token"), ("refresh_token", "zrt_unknown"), ("client_id", key)]), 400, "invalid_grant")
        // The code is still unused: each failure above came before it was looked up or named another code.
        #expect(try post(good).status == 200)

        // Rows 4–6 after consumption: invalid_grant with the product code first.
        for (field, value, productCode) in [
            ("redirect_uri", nil, "redirect_uri_required"), ("redirect_uri", "http://127.0.0.1:1/cb", "redirect_uri_mismatch"),
            ("code_verifier", nil, "pkce_verification_failed"), ("code_verifier", PKCEPair().verifier, "pkce_verification_failed"),
        ] as [(String, String?, String)] {
            let fresh = try driver.issueCode(path: "/v1/auth/zevid/start")
            var fields: [(String, String)] = [
                ("grant_type", "authorization_code"), ("code", fresh.code), ("redirect_uri", SessionDriver.redirect),
                ("code_verifier", fresh.pkce.verifier), ("client_id", key),
            ].filter { $0.0 != field }
            if let value { fields.append((field, value)) }
            expectTokenError(try post(fields), 400, "invalid_grant", productCode: productCode)
        }
    }

    @Test func reauthenticationRequiredIsInvalidGrantOnTheTokenEndpoint() throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let driver = SessionDriver(server: server, fixture: try Fixture.make(store: server.store))
        let pair = try driver.signIn()
        clock.advance(by: 30 * 86_400)
        expectTokenError(
            try driver.postForm(
                "/oauth2/token",
                [("grant_type", "refresh_token"), ("refresh_token", pair.refreshToken), ("client_id", driver.fixture.developmentKey)]),
            400, "invalid_grant", productCode: "reauthentication_required")
    }

    // MARK: Revocation

    @Test(arguments: [true, false])
    func revokeWithEitherTokenEndsTheSession(useAccessToken: Bool) throws {
        let driver = try make()
        let pair = try driver.signIn()
        let response = try driver.sendJSON(
            "POST", "/v1/auth/session/revoke", bearer: driver.fixture.developmentKey,
            ["token": useAccessToken ? pair.accessToken : pair.refreshToken])
        #expect(response.status == 200)
        #expect(response.header("cache-control") == "no-store")
        #expect(try driver.current(pair.accessToken).status == 401)
        let refresh = try driver.refresh(pair.refreshToken)
        #expect(refresh.status == 400 && refresh.json["error"] as? String == "invalid_grant")
        // Idempotent, and an unknown token answers the same (RFC 7009 §2.2).
        #expect(
            try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: driver.fixture.developmentKey, ["token": pair.refreshToken])
                .status == 200)
        #expect(
            try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: driver.fixture.developmentKey, ["token": "zat_nothing"]).status
                == 200)
    }

    @Test func revokeErrorsAndAnotherEnvironmentsToken() throws {
        let driver = try make()
        let pair = try driver.signIn()
        let none = try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: nil, ["token": pair.accessToken])
        #expect(none.status == 401 && none.json["error"] as? String == "invalid_client")
        let bad = try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: driver.fixture.developmentKey, ["token": 5])
        #expect(bad.status == 400 && bad.json["error"] as? String == "invalid_request")
        // Another environment's key: 200, and nothing happens.
        #expect(
            try driver.sendJSON("POST", "/v1/auth/session/revoke", bearer: driver.fixture.productionKey, ["token": pair.accessToken]).status
                == 200)
        #expect(try driver.current(pair.accessToken).status == 200)
        // The standard endpoint.
        let missing = try driver.postForm("/oauth2/revoke", [("client_id", driver.fixture.developmentKey)])
        #expect(missing.status == 400 && missing.json["error"] as? String == "invalid_request")
        let unknownClient = try driver.postForm("/oauth2/revoke", [("token", pair.refreshToken), ("client_id", "pk_test_x")])
        #expect(unknownClient.status == 401 && unknownClient.json["error"] as? String == "invalid_client")
        let revoked = try driver.postForm(
            "/oauth2/revoke",
            [("token", pair.refreshToken), ("token_type_hint", "refresh_token"), ("client_id", driver.fixture.developmentKey)])
        #expect(revoked.status == 200)
        #expect(try driver.current(pair.accessToken).status == 401)
    }

    // MARK: Introspection

    func introspect(_ driver: SessionDriver, _ token: String, bearer: String?) throws -> TestResponse {
        try driver.postForm("/oauth2/introspect", [("token", token)], headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    @Test func introspectionAnswersLiveAccessTokensOfTheKeysEnvironmentOnly() throws {
        let driver = try make()
        let pair = try driver.signIn()
        let secret = driver.fixture.developmentSecret
        let active = try introspect(driver, pair.accessToken, bearer: secret)
        #expect(active.status == 200)
        #expect(active.json["active"] as? Bool == true)
        #expect(active.json["client_id"] as? String == driver.fixture.developmentKey)
        #expect(active.json["sub"] as? String == driver.fixture.userID)
        #expect(active.json["sid"] as? String == pair.sessionID)
        #expect(active.json["token_type"] as? String == "Bearer")
        let exp = try #require(active.json["exp"] as? Int)
        let iat = try #require(active.json["iat"] as? Int)
        #expect(exp - iat == 900)
        // Another environment's secret key: not active there.
        #expect(try introspect(driver, pair.accessToken, bearer: driver.fixture.productionSecret).text == "{\"active\":false}")
        // A refresh token and garbage are not active access tokens.
        #expect(try introspect(driver, pair.refreshToken, bearer: secret).json["active"] as? Bool == false)
        #expect(try introspect(driver, "zat_nothing", bearer: secret).json["active"] as? Bool == false)
        // Wrong authentication.
        for bearer in [nil, driver.fixture.developmentKey, TestServer.operatorToken, "sk_test_unknown"] as [String?] {
            let response = try introspect(driver, pair.accessToken, bearer: bearer)
            #expect(response.status == 401)
            #expect(response.json["error"] as? String == "invalid_client")
        }
        let missing = try driver.postForm("/oauth2/introspect", [], headers: [("Authorization", "Bearer \(secret)")])
        #expect(missing.status == 400 && missing.json["error"] as? String == "invalid_request")
        // Revoked: not active.
        #expect(
            try driver.postForm("/oauth2/revoke", [("token", pair.accessToken), ("client_id", driver.fixture.developmentKey)]).status == 200
        )
        #expect(try introspect(driver, pair.accessToken, bearer: secret).json["active"] as? Bool == false)
    }
}
