import Authorize
import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// A web client's token at introspection, on the account page's connected apps, and its redirected errors in
/// `response_mode=form_post`, against PostgreSQL (docs/protocol.md#introspect, docs/protocol.md#connected-apps,
/// docs/protocol.md#form-post).
@Suite struct WebClientAppsAndErrorsTests {
    typealias T = WebClientTokenTests
    typealias P = WebClientPushedAndDPoPTests

    /// Signs `browser` in to `client` with `scope` and exchanges the code: the token response's JSON.
    static func tokens(_ server: TestServer, _ fixture: Fixture, _ client: T.Client, browser: TestBrowser, scope: String) throws
        -> [String: Any]
    {
        let pkce = PKCEPair()
        let code = try #require(
            try T.signIn(server, fixture, clientID: client.id, pkce: pkce, extra: [("scope", scope)], browser: browser)["code"])
        let exchanged = try T.token(
            server,
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier),
                ("client_id", client.id), ("client_secret", try #require(client.secret)),
            ])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        return try T.json(exchanged)
    }

    // MARK: Introspection

    @Test func introspectionNamesTheWebClientAsClientID() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let body = try Self.tokens(server, fixture, client, browser: server.browser(), scope: "openid")
        let accessToken = try #require(body["access_token"] as? String)
        let introspected = try server.client.send(
            "POST", "/oauth2/introspect",
            headers: [
                ("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/x-www-form-urlencoded"),
            ], body: Array(FormURLEncoding.encode([("token", accessToken)]).utf8))
        #expect(introspected.status == 200)
        let json = try T.json(introspected)
        #expect(json["active"] as? Bool == true)
        #expect(json["client_id"] as? String == client.id)
        #expect(json["client_id"] as? String != fixture.developmentKey)
        #expect(json["iss"] as? String == server.issuer)
    }

    // MARK: Connected apps

    @Test func removingAWebClientEndsItsSessionsAndForgetsItsConsent() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store, name: "Acme")
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()
        let native = try AccountTests.appSession(
            server, browser, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let body = try Self.tokens(server, fixture, client, browser: browser, scope: "openid email")
        let refreshToken = try #require(body["refresh_token"] as? String)
        // Remembered consent: prompt=none signs in silently.
        let silent = try WebClientConsentFlowTests.start(browser, clientID: client.id, [("scope", "openid"), ("prompt", "none")])
        #expect(queryItems(of: silent.header("location") ?? "")["code"] != nil)

        // The page lists the web client by its name, apart from the environment's native apps.
        let (page, csrf) = try AccountTests.accountPage(browser)
        #expect(page.text.contains("<strong>Acme site</strong>"))
        #expect(page.text.contains("<input type=\"hidden\" name=\"client\" value=\"\(client.id)\">"))
        #expect(page.text.contains("Remove Acme site"))
        #expect(page.text.contains("Remove Acme<"))
        let removed = try browser.postForm("/account/apps/remove", [("csrf", csrf), ("client", client.id)])
        #expect(removed.status == 303)
        #expect(removed.header("location") == "/account?done=removed")

        // Its session ended, its consent is forgotten: prompt=none now needs consent, and the page says so.
        let refreshed = try T.token(
            server,
            [
                ("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client.id),
                ("client_secret", try #require(client.secret)),
            ])
        #expect(refreshed.status == 400)
        #expect(try T.json(refreshed)["error"] as? String == "invalid_grant")
        let asked = try WebClientConsentFlowTests.start(browser, clientID: client.id, [("scope", "openid"), ("prompt", "none")])
        #expect(queryItems(of: asked.header("location") ?? "")["error"] == "consent_required")
        let remembered = try TestDatabase.pool.query("SELECT 1 FROM web_client_consents WHERE client_id = $1", [client.id]).rows
        #expect(remembered.isEmpty)
        let after = try browser.get("/account")
        #expect(!after.text.contains("Acme site"))
        // The environment's native app is another connected app: its session is untouched.
        #expect(after.text.contains("Remove Acme<"))
        #expect(try AccountTests.sessionStatus(server, native) == 200)
    }

    // MARK: form_post errors

    @Test func aResumedPushedRequestSendsItsErrorsByFormPost() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_basic", extra: ["requirePkce": false])
        let credentials = T.basic(client.id, try #require(client.secret))
        func resume(_ fields: [(String, String)]) throws -> TestResponse {
            let pushed = try P.push(
                server, [("response_type", "code"), ("redirect_uri", T.redirect), ("response_mode", "form_post")] + fields,
                headers: [credentials])
            #expect(pushed.status == 201, "\(pushed.text)")
            let requestURI = try #require(try T.json(pushed)["request_uri"] as? String)
            return try server.browser().get(
                startTarget([("client_id", client.id), ("request_uri", requestURI)], path: "/oauth2/authorize"))
        }

        // prompt=none without a signed-in browser: login_required, form-posted with state and iss.
        let pkce = PKCEPair()
        let none = try resume([
            ("state", "pushed-none"), ("scope", "openid"), ("prompt", "none"), ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"),
        ])
        #expect(none.status == 200)
        #expect(none.header("location") == nil)
        #expect(none.text.contains("<form method=\"post\" action=\"\(T.redirect)\" id=\"form-post\">"))
        let noneFields = FormPostTests.hidden(none.text)
        #expect(noneFields["error"] == "login_required")
        #expect(noneFields["state"] == "pushed-none")
        #expect(noneFields["iss"] == server.issuer)

        // A check the pushed parameters fail when used (PKCE required since the push): the start's own
        // redirected error, by form_post too.
        let pushed = try P.push(
            server,
            [
                ("response_type", "code"), ("redirect_uri", T.redirect), ("response_mode", "form_post"), ("state", "pushed-pkce"),
                ("scope", "openid"), ("nonce", "n-1"),
            ], headers: [credentials])
        #expect(pushed.status == 201, "\(pushed.text)")
        let requestURI = try #require(try T.json(pushed)["request_uri"] as? String)
        let updated = try P.admin(server, fixture, "PATCH", "/v1/admin/clients/\(client.id)", ["requirePkce": true])
        #expect(updated.status == 200)
        let refused = try server.browser().get(
            startTarget([("client_id", client.id), ("request_uri", requestURI)], path: "/oauth2/authorize"))
        #expect(refused.status == 200, "\(refused.header("location") ?? "")")
        #expect(refused.header("location") == nil)
        let fields = FormPostTests.hidden(refused.text)
        #expect(fields["error"] == "invalid_request")
        #expect(fields["error_description"]?.hasPrefix("pkce_required") == true)
        #expect(fields["state"] == "pushed-pkce")
        #expect(fields["iss"] == server.issuer)
    }

    @Test func plainStartsSendTheirRedirectedErrorsByFormPost() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let browser = server.browser()

        // POST /oauth2/authorize without a challenge: pkce_required, form-posted.
        let posted = try browser.postForm(
            "/oauth2/authorize",
            [
                ("response_type", "code"), ("client_id", client.id), ("redirect_uri", T.redirect), ("state", "posted"),
                ("response_mode", "form_post"),
            ])
        #expect(posted.status == 200)
        let postedFields = FormPostTests.hidden(posted.text)
        #expect(postedFields["error"] == "invalid_request")
        #expect(postedFields["state"] == "posted")
        #expect(postedFields["iss"] == server.issuer)

        // GET whose nonce does not decode: invalid_nonce, form-posted like every other redirected error.
        let target =
            startTarget(
                [
                    ("response_type", "code"), ("client_id", client.id), ("redirect_uri", T.redirect), ("state", "bad-nonce"),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"), ("scope", "openid"),
                    ("response_mode", "form_post"),
                ], path: "/oauth2/authorize") + "&nonce=%ZZ"
        let undecodable = try browser.get(target)
        #expect(undecodable.status == 200, "\(undecodable.header("location") ?? "")")
        let fields = FormPostTests.hidden(undecodable.text)
        #expect(fields["error"] == "invalid_request")
        #expect(fields["error_description"]?.hasPrefix("invalid_nonce") == true)
        #expect(fields["state"] == "bad-nonce")
    }
}
