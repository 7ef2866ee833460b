import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md, "OpenID Connect": discovery, scopes and nonce through code and session, ID tokens on
/// the exchange and each refresh (signed through the `IDTokenSigner` port, here a fake whose tokens are
/// decoded without verifying), `amr`, and userinfo — in process over the real PostgreSQL.
@Suite struct OpenIDTests {
    static let redirect = "http://127.0.0.1:54321/cb"

    struct Setup {
        let server: TestServer
        let fixture: Fixture
        let signer: FakeIDTokenSigner
    }

    static func setup(clock: ManualClock? = nil) throws -> Setup {
        let signer = FakeIDTokenSigner()
        let server = try TestServer(clock: clock, ports: { $0.idTokenSigner = signer })
        return Setup(server: server, fixture: try Fixture.make(store: server.store), signer: signer)
    }

    /// Drives a sign-in from `path` with `extra` start parameters to the code, in `browser`.
    static func code(
        _ setup: Setup, path: String = "/v1/auth/zevid/start", extra: [(String, String)], browser: TestBrowser? = nil
    ) throws -> (code: String, pkce: PKCEPair) {
        let browser = browser ?? setup.server.browser()
        let pkce = PKCEPair()
        var pairs: [(String, String)] = [
            ("client_id", setup.fixture.developmentKey), ("redirect_uri", redirect), ("state", "s"),
            ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
        ]
        if path == "/oauth2/authorize" { pairs.append(("response_type", "code")) }
        let start = try browser.get(startTarget(pairs + extra, path: path))
        var next = try #require(start.header("location"), "\(start.status) \(start.text.prefix(200))")
        if next.hasPrefix("/v1/auth/zevid/signin") {
            let page = try browser.get(next)
            let posted = try browser.postForm(
                "/v1/auth/zevid/signin",
                [
                    ("request", try #require(hiddenField("request", in: page.text))),
                    ("csrf", try #require(hiddenField("csrf", in: page.text))), ("email", setup.fixture.email),
                    ("password", setup.fixture.password),
                ])
            next = try #require(posted.header("location"))
        }
        let consent = try browser.get(next)
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        let location = try #require(allowed.header("location"))
        let code = try #require(queryItems(of: location)["code"])
        SuiteCapture.secret(code)
        return (code, pkce)
    }

    static func nativeExchange(_ setup: Setup, _ issued: (code: String, pkce: PKCEPair)) throws -> TestResponse {
        try SignInDriver(server: setup.server, browser: setup.server.browser()).exchange(
            clientID: setup.fixture.developmentKey,
            fields: ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": redirect])
    }

    static func tokenExchange(_ setup: Setup, _ issued: (code: String, pkce: PKCEPair)) throws -> TestResponse {
        try SessionDriver(server: setup.server, fixture: setup.fixture).postForm(
            "/oauth2/token",
            [
                ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", redirect),
                ("code_verifier", issued.pkce.verifier), ("client_id", setup.fixture.developmentKey),
            ])
    }

    static func atHash(_ accessToken: String) -> String {
        Base64URL.encode(Crypto.sha256(Array(accessToken.utf8)).prefix(16))
    }

    /// OpenID Connect Core 1.0 Appendix A.3's example: this access token's `at_hash`.
    @Test func atHashIsTheLeftHalfOfTheSHA256() {
        #expect(
            IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", sha256: { Crypto.sha256($0) })
                == "77QmUPtjPfzWtF2AnpK9RQ")
    }

    // MARK: Discovery

    @Test func bothWellKnownPathsAnswerTheSameDocumentWithEveryField() throws {
        let server = try TestServer()
        let openid = try server.client.send("GET", "/.well-known/openid-configuration")
        let oauth = try server.client.send("GET", "/.well-known/oauth-authorization-server")
        #expect(openid.status == 200)
        #expect(openid.body == oauth.body)
        #expect(openid.header("cache-control") == "public, max-age=300")
        #expect(oauth.header("cache-control") == "public, max-age=300")
        let json = openid.json
        let issuer = server.issuer
        // Byte-identical to ZEVAUTH_ISSUER: the raw text carries it exactly.
        #expect(openid.text.contains("\"issuer\":\"\(issuer)\""))
        #expect(json["jwks_uri"] as? String == issuer + "/.well-known/jwks.json")
        #expect(json["userinfo_endpoint"] as? String == issuer + "/oauth2/userinfo")
        #expect(json["end_session_endpoint"] as? String == issuer + "/oauth2/logout")
        #expect(json["scopes_supported"] as? [String] == ["openid", "profile", "email", "offline_access"])
        #expect(json["subject_types_supported"] as? [String] == ["public"])
        #expect(json["id_token_signing_alg_values_supported"] as? [String] == ["RS256", "ES256"])
        #expect(json["response_modes_supported"] as? [String] == ["query", "form_post"])
        #expect(json["prompt_values_supported"] as? [String] == ["none", "login", "consent"])
        #expect(json["request_parameter_supported"] as? Bool == false)
        #expect(json["request_uri_parameter_supported"] as? Bool == false)
        #expect(json["claims_parameter_supported"] as? Bool == true)
        let claims = try #require(json["claims_supported"] as? [String])
        for claim in ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr", "sid", "at_hash", "name", "email", "email_verified"] {
            #expect(claims.contains(claim), "\(claim)")
        }
        // AppAuth's required fields (iOS: OIDServiceDiscovery.m; Android: AuthorizationServiceDiscovery.java).
        for field in [
            "issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported", "subject_types_supported",
            "id_token_signing_alg_values_supported",
        ] {
            #expect(json[field] != nil, "\(field)")
        }
    }

    // MARK: Start: scope and nonce

    @Test func aNonceOver512CharactersIsRedirectedAsInvalidRequestAfterTheRedirectIsTrusted() throws {
        let setup = try Self.setup()
        let long = String(repeating: "n", count: 513)
        let base: [(String, String)] = [
            ("client_id", setup.fixture.developmentKey), ("state", "st"), ("code_challenge", PKCEPair().challenge),
            ("code_challenge_method", "S256"), ("response_type", "code"), ("nonce", long), ("scope", "openid"),
        ]
        let standard = try setup.server.client.send("GET", startTarget(base + [("redirect_uri", Self.redirect)], path: "/oauth2/authorize"))
        #expect(standard.status == 303)
        let query = queryItems(of: try #require(standard.header("location")))
        #expect(query["error"] == "invalid_request")
        #expect(query["error_description"]?.hasPrefix("invalid_nonce") == true)
        #expect(query["state"] == "st")
        #expect(query["iss"] == setup.server.issuer)
        let native = try setup.server.client.send("GET", startTarget(base + [("redirect_uri", Self.redirect)]))
        let nativeQuery = queryItems(of: try #require(native.header("location")))
        #expect(nativeQuery["error"] == "invalid_request")
        #expect(nativeQuery["error_description"]?.hasPrefix("invalid_nonce") == true)
        // Before the redirect URI is trusted, its own error is shown, never redirected.
        let untrusted = try setup.server.client.send(
            "GET", startTarget(base + [("redirect_uri", "http://127.0.0.1:1/elsewhere/x")], path: "/oauth2/authorize"))
        #expect(untrusted.status == 400)
        #expect(untrusted.header("location") == nil)
        // A control character is refused too; 512 characters are accepted.
        let control = try setup.server.client.send(
            "GET", startTarget(base.dropLast(2) + [("nonce", "a\u{7}b"), ("redirect_uri", Self.redirect)], path: "/oauth2/authorize"))
        #expect(queryItems(of: try #require(control.header("location")))["error_description"]?.hasPrefix("invalid_nonce") == true)
        let fine = try setup.server.client.send(
            "GET",
            startTarget(
                base.dropLast(2) + [("nonce", String(repeating: "é", count: 512)), ("redirect_uri", Self.redirect)],
                path: "/oauth2/authorize"
            ))
        #expect(fine.header("location")?.hasPrefix("/v1/auth/zevid/signin") == true)
        #expect(setup.server.serverFailureLines.isEmpty)
    }

    @Test func theGrantedScopeIgnoresUnknownValuesAndNeedsOpenID() throws {
        let setup = try Self.setup()
        let first = try Self.nativeExchange(setup, try Self.code(setup, extra: [("scope", "email foo openid  offline_access profile")]))
        let session = try #require(first.json["session"] as? [String: Any])
        #expect(session["scope"] as? String == "openid profile email offline_access")
        let plain = try Self.nativeExchange(setup, try Self.code(setup, extra: [("scope", "profile email offline_access")]))
        let plainSession = try #require(plain.json["session"] as? [String: Any])
        #expect(plainSession["scope"] as? String == "")
        #expect(plainSession["idToken"] == nil)
        let none = try Self.nativeExchange(setup, try Self.code(setup, extra: []))
        #expect((none.json["session"] as? [String: Any])?["scope"] as? String == "")
        #expect(setup.signer.algorithms.withLock { $0 } == [.rs256])
    }

    // MARK: ID token

    @Test func theNativeExchangeOfAnOpenIDCodeCarriesAnIDTokenWithEveryClaim() throws {
        let setup = try Self.setup()
        let nonce = "n-0S6_WzA2Mj é ☃"
        let before = Int(Date().timeIntervalSince1970)
        let response = try Self.nativeExchange(setup, try Self.code(setup, extra: [("scope", "openid profile email"), ("nonce", nonce)]))
        #expect(response.status == 200)
        let session = try #require(response.json["session"] as? [String: Any])
        #expect(session["scope"] as? String == "openid profile email")
        let token = try #require(DecodedJWT(session["idToken"] as? String))
        #expect(token.header["alg"] as? String == "RS256")
        #expect(token.header["typ"] as? String == "JWT")
        #expect(token.header["kid"] as? String == setup.signer.kid)
        let claims = token.claims
        #expect(claims["iss"] as? String == setup.server.issuer)
        #expect(claims["sub"] as? String == setup.fixture.userID)
        #expect(claims["aud"] as? String == setup.fixture.developmentKey)
        #expect(claims["azp"] as? String == setup.fixture.developmentKey)
        let iat = try #require(claims["iat"] as? Int)
        #expect(abs(iat - before) <= 5)
        #expect(claims["exp"] as? Int == iat + 3600)
        let authTime = try #require(claims["auth_time"] as? Int)
        #expect(authTime <= iat && authTime >= before - 5)
        #expect(claims["nonce"] as? String == nonce)
        #expect(claims["amr"] as? [String] == ["pwd"])
        #expect(claims["sid"] as? String == session["id"] as? String)
        #expect(claims["at_hash"] as? String == Self.atHash(try #require(session["accessToken"] as? String)))
        #expect(claims["name"] as? String == "Pat Person")
        #expect(claims["picture"] == nil)
        #expect(claims["updated_at"] is Int)
        #expect(claims["email"] as? String == setup.fixture.email)
        #expect(claims["email_verified"] as? Bool == false)
    }

    @Test func theTokenEndpointAnswersScopeAndIDTokenAndEachRefreshANewOneWithoutTheNonce() throws {
        let clock = ManualClock()
        let setup = try Self.setup(clock: clock)
        let driver = SessionDriver(server: setup.server, fixture: setup.fixture)
        let issued = try Self.code(setup, path: "/oauth2/authorize", extra: [("scope", "openid"), ("nonce", "abc")])
        let response = try Self.tokenExchange(setup, issued)
        #expect(response.status == 200)
        #expect(response.json["scope"] as? String == "openid")
        let first = try #require(DecodedJWT(response.json["id_token"] as? String))
        #expect(first.claims["nonce"] as? String == "abc")
        #expect(first.claims["name"] == nil)
        #expect(first.claims["email"] == nil)
        #expect(first.claims["at_hash"] as? String == Self.atHash(try #require(response.json["access_token"] as? String)))
        clock.advance(by: 120)
        let refreshed = try driver.postForm(
            "/oauth2/token",
            [
                ("grant_type", "refresh_token"), ("refresh_token", try #require(response.json["refresh_token"] as? String)),
                ("client_id", setup.fixture.developmentKey),
            ])
        #expect(refreshed.status == 200)
        #expect(refreshed.json["scope"] as? String == "openid")
        let second = try #require(DecodedJWT(refreshed.json["id_token"] as? String))
        #expect(second.claims["nonce"] == nil)
        #expect(second.claims["sid"] as? String == first.claims["sid"] as? String)
        #expect(second.claims["auth_time"] as? Int == first.claims["auth_time"] as? Int)
        #expect(second.claims["iat"] as? Int == (first.claims["iat"] as? Int ?? 0) + 120)
        #expect(second.claims["at_hash"] as? String == Self.atHash(try #require(refreshed.json["access_token"] as? String)))
        // The native refresh of the same session carries one too.
        let native = try driver.refresh(try #require(refreshed.json["refresh_token"] as? String))
        let nativeSession = try #require(native.json["session"] as? [String: Any])
        #expect(nativeSession["scope"] as? String == "openid")
        #expect(DecodedJWT(nativeSession["idToken"] as? String)?.claims["sid"] as? String == first.claims["sid"] as? String)
    }

    @Test func aPlainOAuthSignInGetsScopeButNoIDToken() throws {
        let setup = try Self.setup()
        let response = try Self.tokenExchange(setup, try Self.code(setup, path: "/oauth2/authorize", extra: []))
        #expect(Set(response.json.keys) == ["access_token", "token_type", "expires_in", "refresh_token", "scope"])
        #expect(response.json["scope"] as? String == "")
        #expect(setup.signer.algorithms.withLock { $0 }.isEmpty)
    }

    @Test func theEnvironmentsAlgorithmSignsItsIDTokens() throws {
        let setup = try Self.setup()
        let driver = SessionDriver(server: setup.server, fixture: setup.fixture)
        let secret = setup.fixture.developmentSecret
        let refused = try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: secret, ["idTokenSigningAlg": "HS256"])
        #expect(refused.status == 400)
        #expect((refused.json["error_description"] as? String)?.hasPrefix("idTokenSigningAlg must be") == true)
        #expect(try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: secret, ["idTokenSigningAlg": 256]).status == 400)
        let changed = try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: secret, ["idTokenSigningAlg": "ES256"])
        #expect(changed.status == 200)
        #expect(changed.json["idTokenSigningAlg"] as? String == "ES256")
        let read = try driver.sendJSON("GET", "/v1/admin/settings", bearer: secret)
        #expect(read.json["idTokenSigningAlg"] as? String == "ES256")
        let response = try Self.nativeExchange(setup, try Self.code(setup, extra: [("scope", "openid")]))
        let session = try #require(response.json["session"] as? [String: Any])
        #expect(DecodedJWT(session["idToken"] as? String)?.header["alg"] as? String == "ES256")
        #expect(setup.signer.algorithms.withLock { $0 } == [.es256])
    }

    @Test func signingKeysOutOfReachAnswer503NotA500() throws {
        let setup = try Self.setup()
        setup.signer.failure.withLock { $0 = StoreUnavailable(reason: "test") }
        let response = try Self.nativeExchange(setup, try Self.code(setup, extra: [("scope", "openid")]))
        #expect(response.status == 503)
        #expect(response.json["error"] as? String == "temporarily_unavailable")
    }

    // MARK: amr

    /// Signs in from a new browser with `scope=openid`, the password, then `secondFactor` at the MFA step;
    /// returns the ID token's `amr` and `auth_time`.
    static func amrAfterSecondFactor(_ setup: Setup, _ secondFactor: String) throws -> (amr: [String]?, authTime: Int?) {
        let browser = setup.server.browser()
        let pkce = PKCEPair()
        let start = try browser.get(
            startTarget([
                ("client_id", setup.fixture.developmentKey), ("redirect_uri", redirect), ("state", "s"),
                ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("scope", "openid"), ("nonce", "n"),
            ]))
        let page = try browser.get(try #require(start.header("location")))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", try #require(hiddenField("request", in: page.text))),
                ("csrf", try #require(hiddenField("csrf", in: page.text))), ("email", setup.fixture.email),
                ("password", setup.fixture.password),
            ])
        let mfa = try #require(posted.header("location"))
        #expect(mfa.hasPrefix("/v1/auth/zevid/mfa"))
        let passed = try TOTPSignInTests.submitCode(browser, at: mfa, secondFactor)
        #expect(passed.status == 303)
        let consent = try browser.get(try #require(passed.header("location")))
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        let location = try #require(allowed.header("location"))
        let code = try #require(queryItems(of: location)["code"])
        let exchanged = try Self.nativeExchange(setup, (code, pkce))
        let session = try #require(exchanged.json["session"] as? [String: Any])
        let claims = try #require(DecodedJWT(session["idToken"] as? String)).claims
        return (claims["amr"] as? [String], claims["auth_time"] as? Int)
    }

    @Test func amrRecordsThePasswordAndTheSecondFactorOfTheBrowserSession() throws {
        let clock = ManualClock()
        let setup = try Self.setup(clock: clock)
        let owner = setup.server.browser()
        _ = try AccountTests.appSession(
            setup.server, owner, clientID: setup.fixture.developmentKey, email: setup.fixture.email, password: setup.fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let shown = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>"))
            .replacingOccurrences(of: " ", with: "")
        let secret = try #require(Base32.decode(shown))
        SuiteCapture.secret(shown)
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let confirmed = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))])
        let codes = confirmed.text.matches(of: /zrc_[A-Z2-7]{5}-[A-Z2-7]{5}/).map { String($0.output) }
        codes.forEach { SuiteCapture.secret($0) }
        clock.advance(by: 30)
        let totp = try Self.amrAfterSecondFactor(setup, TOTP.code(secret: secret, step: step + 1))
        #expect(totp.amr == ["pwd", "otp", "mfa"])
        #expect(totp.authTime == Int(clock.now().timeIntervalSince1970))
        let recovery = try Self.amrAfterSecondFactor(setup, try #require(codes.first))
        #expect(recovery.amr == ["pwd", "mfa"])
    }

    // MARK: UserInfo

    @Test func userinfoAnswersTheGrantedClaimsAndRFC6750Errors() throws {
        let setup = try Self.setup()
        let client = setup.server.client
        let response = try Self.tokenExchange(setup, try Self.code(setup, path: "/oauth2/authorize", extra: [("scope", "openid email")]))
        let access = try #require(response.json["access_token"] as? String)
        let refresh = try #require(response.json["refresh_token"] as? String)

        let viaHeader = try client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(access)")])
        #expect(viaHeader.status == 200)
        #expect(viaHeader.header("cache-control") == "no-store")
        #expect(viaHeader.json["sub"] as? String == setup.fixture.userID)
        #expect(viaHeader.json["email"] as? String == setup.fixture.email)
        #expect(viaHeader.json["email_verified"] as? Bool == false)
        #expect(viaHeader.json["name"] == nil)
        let viaPostHeader = try client.send("POST", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(access)")])
        #expect(viaPostHeader.status == 200)
        let viaForm = try client.send(
            "POST", "/oauth2/userinfo", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("access_token=\(access)".utf8))
        #expect(viaForm.status == 200)
        #expect(viaForm.json["sub"] as? String == setup.fixture.userID)

        let none = try client.send("GET", "/oauth2/userinfo")
        #expect(none.status == 401)
        #expect(none.header("www-authenticate") == "Bearer")
        #expect(none.header("cache-control") == "no-store")
        for bad in [refresh, "zat_unknown", "garbage"] {
            let refused = try client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(bad)")])
            #expect(refused.status == 401)
            #expect(refused.header("www-authenticate") == "Bearer error=\"invalid_token\"")
            #expect(refused.json["error"] as? String == "invalid_token")
            #expect(refused.header("cache-control") == "no-store")
        }
        let both = try client.send(
            "POST", "/oauth2/userinfo",
            headers: [("Authorization", "Bearer \(access)"), ("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("access_token=\(access)".utf8))
        #expect(both.status == 400)

        let plain = try Self.tokenExchange(setup, try Self.code(setup, path: "/oauth2/authorize", extra: [("scope", "profile")]))
        let plainAccess = try #require(plain.json["access_token"] as? String)
        let forbidden = try client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(plainAccess)")])
        #expect(forbidden.status == 403)
        #expect(forbidden.header("www-authenticate") == "Bearer error=\"insufficient_scope\"")
        #expect(forbidden.json["error"] as? String == "insufficient_scope")

        // Revoked: no longer live.
        _ = try SessionDriver(server: setup.server, fixture: setup.fixture).postForm(
            "/oauth2/revoke", [("token", access), ("client_id", setup.fixture.developmentKey)])
        let revoked = try client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(access)")])
        #expect(revoked.status == 401)
        #expect(setup.server.serverFailureLines.isEmpty)
    }

    @Test func profileClaimsCarryThePictureWhenTheAccountHasOne() throws {
        let setup = try Self.setup()
        try TestDatabase.pool.query(
            "UPDATE users SET image_url = 'https://img.example.com/p.png' WHERE id = $1", [setup.fixture.userID])
        let response = try Self.tokenExchange(setup, try Self.code(setup, path: "/oauth2/authorize", extra: [("scope", "openid profile")]))
        let claims = try #require(DecodedJWT(response.json["id_token"] as? String)).claims
        #expect(claims["picture"] as? String == "https://img.example.com/p.png")
        let info = try setup.server.client.send(
            "GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(try #require(response.json["access_token"] as? String))")])
        #expect(info.json["picture"] as? String == "https://img.example.com/p.png")
        #expect(info.json["name"] as? String == "Pat Person")
        #expect(info.json["updated_at"] as? Int == claims["updated_at"] as? Int)
    }
}
