import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Web clients at `/oauth2/authorize` and `/oauth2/token` over HTTP against PostgreSQL (docs/protocol.md,
/// "Web clients"): a code exchange and a refresh for each authentication method, the ID token naming the
/// client, the secret rotation overlap, `private_key_jwt` refusals (a replayed `jti`, a wrong `aud`, an
/// expired assertion, another key), one client's code useless to another, and the PKCE rule.
@Suite struct WebClientTokenTests {
    static let redirect = "https://site.example/callback"

    struct Client {
        let id: String
        let secret: String?
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// Registers a client through the admin API.
    static func register(
        _ server: TestServer, _ fixture: Fixture, method: String, extra: [String: Any] = [:]
    ) throws -> Client {
        var body: [String: Any] = ["name": "Acme site", "redirectUris": [redirect], "tokenEndpointAuthMethod": method]
        body.merge(extra) { $1 }
        let response = try server.client.send(
            "POST", "/v1/admin/clients",
            headers: [("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: body)))
        #expect(response.status == 201, "\(response.text)")
        let object = try json(response)
        let secret = object["clientSecret"] as? String
        SuiteCapture.secret(secret)
        return Client(id: try #require(object["clientId"] as? String), secret: secret)
    }

    /// `/oauth2/authorize` → sign-in → consent (allow) → the code; or the redirect's query when the start
    /// itself answered with an error.
    static func signIn(
        _ server: TestServer, _ fixture: Fixture, clientID: String, pkce: PKCEPair?, extra: [(String, String)] = [],
        browser: TestBrowser? = nil
    ) throws -> [String: String] {
        let browser = browser ?? server.browser()
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("state", "st"),
        ]
        if let pkce { pairs += [("code_challenge", pkce.challenge), ("code_challenge_method", "S256")] }
        var response = try browser.get(startTarget(pairs + extra, path: "/oauth2/authorize"))
        for _ in 0..<6 {
            guard response.status == 303, let location = response.header("location") else { break }
            if location.hasPrefix(redirect) { return queryItems(of: location) }
            let page = try browser.get(location)
            if location.hasPrefix("/v1/auth/zevid/signin") {
                response = try browser.postForm(
                    "/v1/auth/zevid/signin",
                    [
                        ("request", try #require(hiddenField("request", in: page.text))),
                        ("csrf", try #require(hiddenField("csrf", in: page.text))), ("email", fixture.email),
                        ("password", fixture.password),
                    ])
            } else if page.status == 200, let request = hiddenField("request", in: page.text) {
                #expect(page.text.contains("Acme site"))
                response = try browser.postForm(
                    "/v1/auth/zevid/consent",
                    [("request", request), ("csrf", try #require(hiddenField("csrf", in: page.text))), ("decision", "allow")])
            } else {
                response = page
            }
        }
        Issue.record("the sign-in did not reach the redirect URI: \(response.status) \(response.text.prefix(200))")
        return [:]
    }

    static func token(_ server: TestServer, _ fields: [(String, String)], headers: [(String, String)] = []) throws -> TestResponse {
        try server.client.send(
            "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(FormURLEncoding.encode(fields).utf8))
    }

    static func basic(_ id: String, _ secret: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())
    }

    static func idTokenClaims(_ body: [String: Any]) throws -> [String: Any] {
        let token = try #require(body["id_token"] as? String)
        let payload = try #require(Base64URL.decodeCanonical(String(token.split(separator: ".")[1])))
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    /// A P-256 key and its JWK Set.
    static func keyPair(kid: String = "k1") throws -> (key: Crypto.SigningKey, jwks: [String: Any]) {
        let key = try Crypto.SigningKey.generate(.p256)
        guard case .p256(let x, let y) = try key.publicParameters() else { throw Failure.notP256 }
        return (
            key, ["keys": [["kty": "EC", "crv": "P-256", "x": Base64URL.encode(x), "y": Base64URL.encode(y), "kid": kid, "use": "sig"]]]
        )
    }

    enum Failure: Error { case notP256 }

    static func assertion(
        _ key: Crypto.SigningKey, clientID: String, aud: String, exp: TimeInterval = 60, jti: String = UUID().uuidString, kid: String = "k1"
    ) throws -> String {
        let claims: [String: Any] = [
            "iss": clientID, "sub": clientID, "aud": aud, "jti": jti, "exp": Int(Date().timeIntervalSince1970 + exp),
            "iat": Int(Date().timeIntervalSince1970),
        ]
        let input = JWS.signingInput(
            header: JWS.protectedHeader(algorithm: .es256, keyID: kid), payload: Array(try JSONSerialization.data(withJSONObject: claims)))
        return JWS.compact(signingInput: input, signature: try key.sign(input))
    }

    @Test func clientSecretBasicExchangesACodeAndRefreshesAndTheIDTokenNamesTheClient() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try Self.register(server, fixture, method: "client_secret_basic")
        let secret = try #require(client.secret)
        let pkce = PKCEPair()
        let code = try #require(
            try Self.signIn(server, fixture, clientID: client.id, pkce: pkce, extra: [("scope", "openid email"), ("nonce", "n-1")])["code"])

        let fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirect), ("code_verifier", pkce.verifier),
        ]
        // The client's secret is required: the same request without it is 401 and does not burn the code.
        let unauthenticated = try Self.token(server, fields + [("client_id", client.id)])
        #expect(unauthenticated.status == 401)
        #expect(try Self.json(unauthenticated)["error"] as? String == "invalid_client")
        let exchanged = try Self.token(server, fields, headers: [Self.basic(client.id, secret)])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        let body = try Self.json(exchanged)
        let claims = try Self.idTokenClaims(body)
        #expect(claims["aud"] as? String == client.id)
        #expect(claims["azp"] as? String == client.id)
        #expect(claims["nonce"] as? String == "n-1")
        let refreshToken = try #require(body["refresh_token"] as? String)
        SuiteCapture.secret(refreshToken)

        // Refresh authenticates the client too; a native client of the environment cannot use the token.
        let native = try Self.token(
            server, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", fixture.developmentKey)])
        #expect(native.status == 400)
        #expect(try Self.json(native)["error"] as? String == "invalid_grant")
        let wrong = try Self.token(
            server, [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], headers: [Self.basic(client.id, "zcs_wrong")])
        #expect(wrong.status == 401)
        #expect(wrong.header("www-authenticate")?.hasPrefix("Basic") == true)
        let refreshed = try Self.token(
            server, [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], headers: [Self.basic(client.id, secret)])
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(try Self.idTokenClaims(try Self.json(refreshed))["aud"] as? String == client.id)
    }

    @Test func clientSecretPostRefusesTheWrongMethodTwoMethodsAndAnotherClientsSecret() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try Self.register(server, fixture, method: "client_secret_post")
        let other = try Self.register(server, fixture, method: "client_secret_post")
        let secret = try #require(client.secret)
        let pkce = PKCEPair()
        let code = try #require(try Self.signIn(server, fixture, clientID: client.id, pkce: pkce)["code"])
        let fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirect), ("code_verifier", pkce.verifier),
        ]

        let basic = try Self.token(server, fields, headers: [Self.basic(client.id, secret)])
        #expect(basic.status == 401)
        #expect(basic.header("www-authenticate")?.hasPrefix("Basic") == true)
        let both = try Self.token(
            server, fields + [("client_id", client.id), ("client_secret", secret)], headers: [Self.basic(client.id, secret)])
        #expect(both.status == 400)
        #expect(try Self.json(both)["error"] as? String == "invalid_request")
        let othersSecret = try Self.token(server, fields + [("client_id", client.id), ("client_secret", try #require(other.secret))])
        #expect(othersSecret.status == 401)
        // The other client, authenticated, cannot exchange this client's code, and that does not burn it.
        let stolen = try Self.token(server, fields + [("client_id", other.id), ("client_secret", try #require(other.secret))])
        #expect(stolen.status == 400)
        #expect(try Self.json(stolen)["error"] as? String == "invalid_grant")
        let exchanged = try Self.token(server, fields + [("client_id", client.id), ("client_secret", secret)])
        #expect(exchanged.status == 200, "\(exchanged.text)")
    }

    @Test func aRotatedSecretOverlapsUntilTheOldOneIsRevoked() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try Self.register(server, fixture, method: "client_secret_post")
        let old = try #require(client.secret)
        let admin = [("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/json")]
        let rotated = try Self.json(try server.client.send("POST", "/v1/admin/clients/\(client.id)/secrets", headers: admin))
        let new = try #require(rotated["clientSecret"] as? String)
        SuiteCapture.secret(new)
        func exchange(_ secret: String) throws -> Int {
            let pkce = PKCEPair()
            let code = try #require(try Self.signIn(server, fixture, clientID: client.id, pkce: pkce)["code"])
            return try Self.token(
                server,
                [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirect), ("code_verifier", pkce.verifier),
                    ("client_id", client.id), ("client_secret", secret),
                ]
            ).status
        }
        #expect(try exchange(old) == 200)
        #expect(try exchange(new) == 200)
        let oldID = try #require(
            try TestDatabase.pool.query(
                "SELECT id FROM web_client_secrets WHERE client_id = $1 AND secret_hash = $2", [client.id, Crypto.hexSHA256(old)]
            ).first?["id"])
        #expect(try server.client.send("DELETE", "/v1/admin/clients/\(client.id)/secrets/\(oldID)", headers: admin).status == 200)
        #expect(try exchange(old) == 401)
        #expect(try exchange(new) == 200)
    }

    @Test func privateKeyJWTAuthenticatesOnceAndRefusesEachBadAssertion() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let (key, jwks) = try Self.keyPair()
        let client = try Self.register(server, fixture, method: "private_key_jwt", extra: ["jwks": jwks])
        #expect(client.secret == nil)
        let endpoint = server.issuer + "/oauth2/token"
        func attempt(_ assertion: String, clientID: String? = nil) throws -> TestResponse {
            let pkce = PKCEPair()
            let code = try #require(try Self.signIn(server, fixture, clientID: client.id, pkce: pkce)["code"])
            var fields = [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirect), ("code_verifier", pkce.verifier),
                ("client_assertion_type", ClientAuthentication.jwtBearerType), ("client_assertion", assertion),
            ]
            if let clientID { fields.append(("client_id", clientID)) }
            return try Self.token(server, fields)
        }
        let good = try Self.assertion(key, clientID: client.id, aud: endpoint)
        let first = try attempt(good, clientID: client.id)
        #expect(first.status == 200, "\(first.text)")
        #expect(try Self.json(first)["id_token"] == nil)  // no openid scope: no ID token
        // The issuer as audience works too, and client_id may be left out (the assertion's sub names the client).
        #expect(try attempt(try Self.assertion(key, clientID: client.id, aud: server.issuer)).status == 200)

        let replayed = try attempt(good)
        #expect(replayed.status == 401)
        #expect((try Self.json(replayed)["error_description"] as? String)?.contains("single use") == true)
        #expect(try attempt(try Self.assertion(key, clientID: client.id, aud: "https://elsewhere.example/token")).status == 401)
        #expect(try attempt(try Self.assertion(key, clientID: client.id, aud: endpoint, exp: -5)).status == 401)
        #expect(try attempt(try Self.assertion(key, clientID: client.id, aud: endpoint, exp: 7200)).status == 401)
        let (otherKey, _) = try Self.keyPair()
        #expect(try attempt(try Self.assertion(otherKey, clientID: client.id, aud: endpoint)).status == 401)
        #expect(try attempt(try Self.assertion(key, clientID: client.id, aud: endpoint, kid: "unknown")).status == 401)
        // The jti is kept in PostgreSQL until the assertion expires.
        #expect(
            try TestDatabase.pool.query("SELECT count(*) AS n FROM web_client_assertion_ids WHERE client_id = $1", [client.id]).first?["n"]
                == "2")
    }

    @Test func pkceIsRequiredUnlessTheClientOptedOutAndSentAnOpenIDNonce() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let strict = try Self.register(server, fixture, method: "client_secret_post")
        let relaxed = try Self.register(server, fixture, method: "client_secret_post", extra: ["requirePkce": false])

        // requirePkce true: no challenge is pkce_required even with openid and a nonce.
        let refused = try Self.signIn(server, fixture, clientID: strict.id, pkce: nil, extra: [("scope", "openid"), ("nonce", "n")])
        #expect(refused["error"] == "invalid_request")
        #expect(refused["error_description"]?.hasPrefix("pkce_required") == true)
        // requirePkce false: still required without openid or without a nonce.
        for extra in [[("scope", "openid")], [("nonce", "n")], [("scope", "profile"), ("nonce", "n")]] {
            let answer = try Self.signIn(server, fixture, clientID: relaxed.id, pkce: nil, extra: extra)
            #expect(answer["error_description"]?.hasPrefix("pkce_required") == true, "\(extra)")
        }
        // An OpenID request with a nonce goes without PKCE, and its code is exchanged without a verifier.
        let code = try #require(
            try Self.signIn(server, fixture, clientID: relaxed.id, pkce: nil, extra: [("scope", "openid"), ("nonce", "n-2")])["code"])
        let secret = try #require(relaxed.secret)
        let base = [
            ("grant_type", "authorization_code"), ("redirect_uri", Self.redirect), ("client_id", relaxed.id), ("client_secret", secret),
        ]
        // A verifier sent for a code issued without a challenge matches nothing (and burns the code).
        let withVerifier = try Self.token(server, base + [("code", code), ("code_verifier", PKCEPair().verifier)])
        #expect(withVerifier.status == 400)
        let code2 = try #require(
            try Self.signIn(server, fixture, clientID: relaxed.id, pkce: nil, extra: [("scope", "openid"), ("nonce", "n-3")])["code"])
        let exchanged = try Self.token(server, base + [("code", code2)])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        #expect(try Self.idTokenClaims(try Self.json(exchanged))["nonce"] as? String == "n-3")
        // A code issued with PKCE still needs its verifier.
        let pkce = PKCEPair()
        let code3 = try #require(try Self.signIn(server, fixture, clientID: relaxed.id, pkce: pkce)["code"])
        #expect(try Self.token(server, base + [("code", code3)]).status == 400)
    }

    @Test func aWebClientsRedirectURIsMatchExactlyAndItsCodeIsUselessToANativeClient() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try Self.register(
            server, fixture, method: "client_secret_post", extra: ["redirectUris": [Self.redirect, "http://127.0.0.1:8080/cb"]])
        let browser = server.browser()
        for uri in ["http://127.0.0.1:9090/cb", Self.redirect + "/", "https://site.example/callback?x=1"] {
            let start = try browser.get(
                startTarget(
                    [
                        ("response_type", "code"), ("client_id", client.id), ("redirect_uri", uri), ("state", "s"),
                        ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                    ], path: "/oauth2/authorize"))
            #expect(start.status == 400, "\(uri)")
        }
        let pkce = PKCEPair()
        let code = try #require(try Self.signIn(server, fixture, clientID: client.id, pkce: pkce)["code"])
        let native = try Self.token(
            server,
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirect), ("code_verifier", pkce.verifier),
                ("client_id", fixture.developmentKey),
            ])
        #expect(native.status == 400)
        #expect(try Self.json(native)["error"] as? String == "invalid_grant")
    }
}

/// A web client's consent over HTTP (docs/protocol.md, "Web clients: consent"): named by the client,
/// remembered per account and scope set, answering `prompt=none` silently; native apps keep asking.
@Suite struct WebClientConsentFlowTests {
    typealias T = WebClientTokenTests

    static func start(_ browser: TestBrowser, clientID: String, redirect: String = T.redirect, _ extra: [(String, String)]) throws
        -> TestResponse
    {
        try browser.get(
            startTarget(
                [
                    ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("state", "st"),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                ] + extra, path: "/oauth2/authorize"))
    }

    @Test func consentIsRememberedPerScopeSetAndAnswersPromptNone() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()

        // Not signed in: prompt=none is login_required.
        let anonymous = try Self.start(browser, clientID: client.id, [("scope", "openid"), ("prompt", "none")])
        #expect(anonymous.status == 303)
        #expect(queryItems(of: anonymous.header("location") ?? "")["error"] == "login_required")

        // The first sign-in asks, naming the client (checked in `signIn`), and remembers "openid profile email".
        let first = try T.signIn(
            server, fixture, clientID: client.id, pkce: PKCEPair(), extra: [("scope", "openid profile email")], browser: browser)
        #expect(first["code"] != nil)

        // The same or a narrower scope set: no page, a direct 303 with the code.
        for scope in ["openid profile email", "openid email"] {
            let again = try Self.start(browser, clientID: client.id, [("scope", scope)])
            #expect(again.status == 303)
            let consent = try browser.get(try #require(again.header("location")))
            #expect(consent.status == 303, "\(scope)")
            #expect(queryItems(of: consent.header("location") ?? "")["code"] != nil, "\(scope)")
            #expect(consent.header("location")?.hasPrefix(T.redirect) == true)
            // prompt=none answers with a code at once.
            let silent = try Self.start(browser, clientID: client.id, [("scope", scope), ("prompt", "none")])
            #expect(silent.status == 303)
            #expect(queryItems(of: silent.header("location") ?? "")["code"] != nil, "\(scope)")
        }

        // A wider set asks again (prompt=none: consent_required), and prompt=consent always asks.
        let wider = try Self.start(browser, clientID: client.id, [("scope", "openid profile email offline_access"), ("prompt", "none")])
        #expect(queryItems(of: wider.header("location") ?? "")["error"] == "consent_required")
        let asked = try Self.start(browser, clientID: client.id, [("scope", "openid email"), ("prompt", "consent")])
        let page = try browser.get(try #require(asked.header("location")))
        #expect(page.status == 200)
        #expect(page.text.contains("Continue to Acme site?"))

        // Another web client of the environment has no consent yet.
        let other = try T.register(server, fixture, method: "client_secret_post")
        let otherSilent = try Self.start(browser, clientID: other.id, [("scope", "openid"), ("prompt", "none")])
        #expect(queryItems(of: otherSilent.header("location") ?? "")["error"] == "consent_required")
        // Every issued code's scope set is remembered; the refused wider one is not.
        let remembered = try TestDatabase.pool.query(
            "SELECT scope FROM web_client_consents WHERE client_id = $1 ORDER BY scope", [client.id]
        ).rows.map { try $0.string("scope") }
        #expect(remembered == ["openid email", "openid profile email"])
    }

    @Test func aNativeLoopbackSignInInTheSameEnvironmentStillAsks() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()
        _ = try T.signIn(server, fixture, clientID: client.id, pkce: PKCEPair(), extra: [("scope", "openid")], browser: browser)
        let native = try Self.start(browser, clientID: fixture.developmentKey, redirect: "http://127.0.0.1/cb", [("scope", "openid")])
        let page = try browser.get(try #require(native.header("location")))
        #expect(page.status == 200)
        #expect(page.text.contains("decision"))
        let silent = try Self.start(
            browser, clientID: fixture.developmentKey, redirect: "http://127.0.0.1/cb", [("scope", "openid"), ("prompt", "none")])
        #expect(queryItems(of: silent.header("location") ?? "")["error"] == "consent_required")
    }
}

/// `POST /oauth2/authorize` (OpenID Connect Core §3.1.2.1): the form body is the GET's query.
@Suite struct AuthorizePostTests {
    typealias T = WebClientTokenTests

    @Test func aFormPostStartsTheSameSignInAsAGet() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()
        let pkce = PKCEPair()
        let started = try browser.postForm(
            "/oauth2/authorize",
            [
                ("response_type", "code"), ("client_id", client.id), ("redirect_uri", T.redirect), ("state", "posted"),
                ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("scope", "openid"), ("nonce", "n"),
            ])
        #expect(started.status == 303)
        #expect(started.header("location")?.hasPrefix("/v1/auth/zevid/signin?request=") == true)
        // The checks run as for GET: a bad redirect URI is shown, an unsupported response_type redirected.
        let shown = try browser.postForm(
            "/oauth2/authorize",
            [("response_type", "code"), ("client_id", client.id), ("redirect_uri", "https://evil.example/cb"), ("state", "s")])
        #expect(shown.status == 400)
        let redirected = try browser.postForm(
            "/oauth2/authorize", [("response_type", "token"), ("client_id", client.id), ("redirect_uri", T.redirect), ("state", "s")])
        #expect(redirected.status == 303)
        #expect(queryItems(of: redirected.header("location") ?? "")["error"] == "unsupported_response_type")
        // Native apps may post too.
        let native = try browser.postForm(
            "/oauth2/authorize",
            [
                ("response_type", "code"), ("client_id", fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:4000/cb"),
                ("state", "s"),
                ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
            ])
        #expect(native.status == 303)
        #expect(native.header("location")?.hasPrefix("/v1/auth/zevid/signin?request=") == true)
        // Not a form: shown, never redirected.
        let json = try server.client.send(
            "POST", "/oauth2/authorize", headers: [("Content-Type", "application/json")], body: Array("{\"client_id\":\"x\"}".utf8))
        #expect(json.status == 400)
        #expect(json.header("location") == nil)
    }
}

/// `response_mode=form_post` (OAuth 2.0 Form Post Response Mode) for web clients: the code and the errors
/// after the redirect URI is trusted come back as an auto-submitting form under the strict CSP.
@Suite struct FormPostTests {
    typealias T = WebClientTokenTests

    static func hidden(_ html: String) -> [String: String] {
        var fields: [String: String] = [:]
        for match in html.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/) {
            fields[String(match.output.1)] = String(match.output.2).replacingOccurrences(of: "&amp;", with: "&")
        }
        return fields
    }

    @Test func theCodeAndTheErrorsAreFormPostedToTheRedirectURI() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()
        let pkce = PKCEPair()

        // prompt=none before any sign-in: login_required, form-posted.
        let refused = try WebClientConsentFlowTests.start(
            browser, clientID: client.id, [("scope", "openid"), ("prompt", "none"), ("response_mode", "form_post")])
        #expect(refused.status == 200)
        #expect(refused.text.contains("<form method=\"post\" action=\"\(T.redirect)\" id=\"form-post\">"))
        #expect(Self.hidden(refused.text)["error"] == "login_required")
        #expect(Self.hidden(refused.text)["state"] == "st")

        // A full sign-in: the consent's answer is the form with code, state and iss.
        let started = try browser.get(
            startTarget(
                [
                    ("response_type", "code"), ("client_id", client.id), ("redirect_uri", T.redirect), ("state", "fp"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("response_mode", "form_post"),
                ], path: "/oauth2/authorize"))
        let signIn = try browser.get(try #require(started.header("location")))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", try #require(hiddenField("request", in: signIn.text))),
                ("csrf", try #require(hiddenField("csrf", in: signIn.text))), ("email", fixture.email), ("password", fixture.password),
            ])
        let consent = try browser.get(try #require(posted.header("location")))
        let answer = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        #expect(answer.status == 200)
        #expect(answer.header("location") == nil)
        let csp = answer.header("content-security-policy") ?? ""
        #expect(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"))
        #expect(answer.text.contains("<script src=\"/assets/form-post.js\" defer></script>"))
        #expect(!answer.text.contains("<script>"))
        #expect(answer.text.contains("<noscript>"))
        let fields = Self.hidden(answer.text)
        #expect(fields["state"] == "fp")
        #expect(fields["iss"] == server.issuer)
        let code = try #require(fields["code"])
        let exchanged = try T.token(
            server,
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier),
                ("client_id", client.id), ("client_secret", try #require(client.secret)),
            ])
        #expect(exchanged.status == 200)
        let script = try browser.get("/assets/form-post.js")
        #expect(script.status == 200)
        #expect(script.text.contains("form-post"))

        // A native app cannot ask for form_post: invalid_request, redirected by query.
        let native = try WebClientConsentFlowTests.start(
            browser, clientID: fixture.developmentKey, redirect: "http://127.0.0.1/cb", [("response_mode", "form_post")])
        #expect(native.status == 303)
        #expect(queryItems(of: native.header("location") ?? "")["error"] == "invalid_request")
    }
}

/// The `claims` request parameter over HTTP (docs/protocol.md, "The claims parameter"): accepted, and a
/// requested claim the scopes did not grant is left out of the ID token and userinfo, essential or not.
@Suite struct ClaimsParameterFlowTests {
    typealias T = WebClientTokenTests

    @Test func essentialClaimsTheScopesDidNotGrantAreLeftOut() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let claims = #"{"id_token":{"email":{"essential":true},"acr":{"essential":true}},"userinfo":{"email":{"essential":true}}}"#
        let pkce = PKCEPair()
        let code = try #require(
            try T.signIn(server, fixture, clientID: client.id, pkce: pkce, extra: [("scope", "openid profile"), ("claims", claims)])["code"]
        )
        let exchanged = try T.token(
            server,
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier),
                ("client_id", client.id), ("client_secret", try #require(client.secret)),
            ])
        #expect(exchanged.status == 200)
        let body = try T.json(exchanged)
        let idToken = try T.idTokenClaims(body)
        #expect(idToken["name"] as? String == "Pat Person")
        #expect(idToken["email"] == nil && idToken["acr"] == nil)
        let userinfo = try server.client.send(
            "GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(try #require(body["access_token"] as? String))")])
        #expect(userinfo.status == 200)
        #expect(try T.json(userinfo)["email"] == nil)
        // A malformed claims request is invalid_request, redirected.
        let refused = try T.signIn(server, fixture, clientID: client.id, pkce: PKCEPair(), extra: [("claims", "[1]")])
        #expect(refused["error"] == "invalid_request")
    }
}

/// `id_token_hint` with `prompt=none` for a web client: the hint's subject must be the browser's account.
@Suite struct WebClientHintTests {
    typealias T = WebClientTokenTests

    static func idToken(_ server: TestServer, _ fixture: Fixture, _ client: T.Client, browser: TestBrowser) throws -> String {
        let pkce = PKCEPair()
        let code = try #require(
            try T.signIn(server, fixture, clientID: client.id, pkce: pkce, extra: [("scope", "openid")], browser: browser)["code"])
        let body = try T.json(
            try T.token(
                server,
                [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier),
                    ("client_id", client.id), ("client_secret", try #require(client.secret)),
                ]))
        let token = try #require(body["id_token"] as? String)
        SuiteCapture.secret(token)
        return token
    }

    @Test func promptNoneAnswersLoginRequiredWhenTheHintNamesAnotherAccount() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let other = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let otherClient = try T.register(server, other, method: "client_secret_post")
        let browser = server.browser()
        let own = try Self.idToken(server, fixture, client, browser: browser)
        let foreign = try Self.idToken(server, other, otherClient, browser: server.browser())

        let matching = try WebClientConsentFlowTests.start(
            browser, clientID: client.id, [("scope", "openid"), ("prompt", "none"), ("id_token_hint", own)])
        #expect(queryItems(of: matching.header("location") ?? "")["code"] != nil)
        let mismatched = try WebClientConsentFlowTests.start(
            browser, clientID: client.id, [("scope", "openid"), ("prompt", "none"), ("id_token_hint", foreign)])
        #expect(queryItems(of: mismatched.header("location") ?? "")["error"] == "login_required")
    }
}

/// RP-initiated logout for a web client: its `postLogoutRedirectUris` only, matched exactly, then a 303.
@Suite struct WebClientLogoutTests {
    typealias T = WebClientTokenTests

    @Test func logoutReturnsToARegisteredPostLogoutRedirectURIOnly() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(
            server, fixture, method: "client_secret_post", extra: ["postLogoutRedirectUris": ["https://site.example/signed-out"]])
        let browser = server.browser()
        let hint = try WebClientHintTests.idToken(server, fixture, client, browser: browser)
        func logout(_ uri: String) throws -> TestResponse {
            try browser.get(
                "/oauth2/logout?"
                    + FormURLEncoding.encode([
                        ("id_token_hint", hint), ("client_id", client.id), ("post_logout_redirect_uri", uri), ("state", "bye"),
                    ]))
        }
        // The sign-in redirect URI is not a post-logout one; nor is a near miss.
        #expect(try logout(T.redirect).status == 400)
        #expect(try logout("https://site.example/signed-out/").status == 400)
        let out = try logout("https://site.example/signed-out")
        #expect(out.status == 303)
        #expect(out.header("location") == "https://site.example/signed-out?state=bye")
    }
}

/// `POST /oauth2/revoke` for a web client (RFC 7009 §2.1): authenticated, and only its own tokens.
@Suite struct WebClientRevokeTests {
    typealias T = WebClientTokenTests

    @Test func aWebClientRevokesItsOwnTokensOnly() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_basic")
        let other = try T.register(server, fixture, method: "client_secret_basic")
        let secret = try #require(client.secret)
        func tokens(_ who: T.Client) throws -> [String: Any] {
            let pkce = PKCEPair()
            let code = try #require(try T.signIn(server, fixture, clientID: who.id, pkce: pkce)["code"])
            return try T.json(
                try T.token(
                    server,
                    [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier)],
                    headers: [T.basic(who.id, try #require(who.secret))]))
        }
        let mine = try #require(try tokens(client)["refresh_token"] as? String)
        let theirs = try #require(try tokens(other)["refresh_token"] as? String)
        func revoke(_ token: String, _ auth: (String, String)) throws -> TestResponse {
            try server.client.send(
                "POST", "/oauth2/revoke", headers: [("Content-Type", "application/x-www-form-urlencoded"), auth],
                body: Array(FormURLEncoding.encode([("token", token)]).utf8))
        }
        #expect(try revoke(mine, T.basic(client.id, "zcs_wrong")).status == 401)
        // Another client's token: 200, and it still refreshes.
        #expect(try revoke(theirs, T.basic(client.id, secret)).status == 200)
        let stillAlive = try T.token(
            server, [("grant_type", "refresh_token"), ("refresh_token", theirs)], headers: [T.basic(other.id, try #require(other.secret))])
        #expect(stillAlive.status == 200)
        #expect(try revoke(mine, T.basic(client.id, secret)).status == 200)
        let ended = try T.token(server, [("grant_type", "refresh_token"), ("refresh_token", mine)], headers: [T.basic(client.id, secret)])
        #expect(ended.status == 400)
        #expect(try T.json(ended)["error"] as? String == "invalid_grant")
    }
}
