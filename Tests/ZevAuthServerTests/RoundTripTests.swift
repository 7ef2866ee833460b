import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The whole round trip over real HTTP on loopback against real PostgreSQL (docs/protocol.md#round-trip).
@Suite struct RoundTripTests {
    @Test func signsInExchangesAndRecognisesTheBrowserNextTime() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let driver = SignInDriver(server: server, browser: browser)
        let pkce = PKCEPair()
        var sawPassword = false
        let result = try driver.run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:54321/cb", state: "xyz-1",
            pkce: pkce, email: fixture.email, password: fixture.password, passwordPageSeen: &sawPassword)
        #expect(sawPassword)
        #expect(result.location.hasPrefix("http://127.0.0.1:54321/cb?"))
        #expect(result.query["state"] == "xyz-1")
        #expect(result.query["iss"] == server.issuer)
        let code = try #require(result.code)
        #expect(code.hasPrefix("hoc_"))

        let exchanged = try driver.exchange(
            clientID: fixture.developmentKey,
            fields: [
                "code": code, "codeVerifier": pkce.verifier, "redirectUri": "http://127.0.0.1:54321/cb",
            ])
        #expect(exchanged.status == 200)
        #expect(exchanged.header("cache-control") == "no-store")
        let session = try #require(exchanged.json["session"] as? [String: Any])
        let user = try #require(exchanged.json["user"] as? [String: Any])
        let accessToken = try #require(session["accessToken"] as? String)
        let refreshToken = try #require(session["refreshToken"] as? String)
        #expect(accessToken.hasPrefix("zat_"))
        #expect(refreshToken.hasPrefix("zrt_"))
        #expect(session["tokenType"] as? String == "Bearer")
        #expect(session["expiresIn"] as? Int == 900)
        #expect((session["expiresAt"] as? String)?.hasSuffix("Z") == true)
        #expect((session["idleExpiresAt"] as? String)?.hasSuffix("Z") == true)
        #expect(Set(user.keys) == ["id", "email", "name", "imageUrl"])
        #expect(user["email"] as? String == fixture.email)

        let current = try server.client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(accessToken)")])
        #expect(current.status == 200)
        #expect((current.json["user"] as? [String: Any])?["id"] as? String == fixture.userID)

        // A second sign-in in the same browser skips the password, but still asks for consent on a loopback.
        let second = PKCEPair()
        let again = try driver.run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:40000/cb", state: "second",
            pkce: second, email: fixture.email, password: "wrong password is never asked", passwordPageSeen: &sawPassword)
        #expect(sawPassword == false)
        #expect(again.query["state"] == "second")
        #expect(again.code != nil)

        // prompt=login forces the password again.
        let forced = try driver.run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:40001/cb", state: "forced",
            pkce: PKCEPair(), email: fixture.email, password: fixture.password,
            extra: [("prompt", "login")], passwordPageSeen: &sawPassword)
        #expect(sawPassword)
        #expect(forced.code != nil)

        // Nothing secret reached the log.
        let log = server.log.all.joined(separator: "\n")
        for secret in [code, pkce.verifier, accessToken, refreshToken, fixture.password, second.verifier] {
            #expect(!log.contains(secret))
        }
        for (_, value) in browser.cookies { #expect(!log.contains(value)) }
    }

    @Test func customSchemeSignInReturnsThroughA303AfterTheConsentClick() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let driver = SignInDriver(server: server, browser: server.browser())
        let result = try driver.run(
            clientID: fixture.developmentKey, redirectURI: "com.acme.app:/callback", state: "s",
            pkce: PKCEPair(), email: fixture.email, password: fixture.password)
        #expect(result.location.hasPrefix("com.acme.app:/callback?code=hoc_"))
    }

    @Test func wrongPasswordAndUnknownEmailGetTheSameGenericMessage() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let (request, csrf) = (form.fields[0].1, form.fields[1].1)
        let wrongPassword = try browser.postForm(
            "/v1/auth/zevid/signin", [("request", request), ("csrf", csrf), ("email", fixture.email), ("password", "nope nope nope")])
        let unknownEmail = try browser.postForm(
            "/v1/auth/zevid/signin",
            [("request", request), ("csrf", csrf), ("email", "nobody@example.com"), ("password", "nope nope nope")])
        #expect(wrongPassword.status == 401)
        #expect(unknownEmail.status == 401)
        #expect(wrongPassword.text.contains("The email or password is incorrect."))
        #expect(unknownEmail.text.contains("The email or password is incorrect."))
        #expect(wrongPassword.header("content-security-policy")?.contains("frame-ancestors 'none'") == true)
        // A forged CSRF token is refused.
        let forged = try browser.postForm(
            "/v1/auth/zevid/signin", [("request", request), ("csrf", "forged"), ("email", fixture.email), ("password", fixture.password)])
        #expect(forged.status == 403)
    }

    @Test func aPendingSignInIsBoundToTheBrowserThatStartedIt() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let start = try server.browser().get(
            startTarget([
                ("client_id", fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]))
        let other = server.browser()
        let page = try other.get(try #require(start.header("location")))
        #expect(page.status == 400)
        #expect(page.text.contains("another browser"))
    }

    @Test func denyingConsentStartedAtTheStandardEndpointUsesItsDescriptionFormat() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let driver = SignInDriver(server: server, browser: server.browser())
        let consent = try driver.reachConsent(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", email: fixture.email,
            password: fixture.password, path: "/oauth2/authorize", extra: [("response_type", "code")])
        let denied = try driver.browser.postForm("/v1/auth/zevid/consent", consent.fields + [("decision", "deny")])
        let query = queryItems(of: try #require(denied.header("location")))
        #expect(query["error"] == "access_denied")
        #expect(query["error_description"]?.hasPrefix("access_denied") == true)
    }

    @Test func denyingConsentRedirectsWithAccessDenied() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let driver = SignInDriver(server: server, browser: server.browser())
        let consent = try driver.reachConsent(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "keep me", email: fixture.email,
            password: fixture.password)
        let denied = try driver.browser.postForm("/v1/auth/zevid/consent", consent.fields + [("decision", "deny")])
        #expect(denied.status == 303)
        let query = queryItems(of: try #require(denied.header("location")))
        #expect(query["error"] == "access_denied")
        #expect(query["state"] == "keep me")
        #expect(query["iss"] == server.issuer)
        #expect(query["code"] == nil)
    }
}
