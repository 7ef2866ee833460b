import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The hosted account pages and the events that end sessions at once (docs/protocol.md#session-ends), each checked
/// with `GET /v1/auth/session` on the right sessions only.
@Suite struct AccountTests {
    /// Signs in to an app in `browser` (password page when asked) and exchanges the code.
    /// - Returns: the access token.
    static func appSession(_ server: TestServer, _ browser: TestBrowser, clientID: String, email: String, password: String) throws -> String
    {
        let pkce = PKCEPair()
        let driver = SignInDriver(server: server, browser: browser)
        let result = try driver.run(
            clientID: clientID, redirectURI: "http://127.0.0.1:5555/cb", state: "s", pkce: pkce, email: email, password: password)
        let exchanged = try driver.exchange(
            clientID: clientID,
            fields: ["code": try #require(result.code), "codeVerifier": pkce.verifier, "redirectUri": "http://127.0.0.1:5555/cb"])
        #expect(exchanged.status == 200)
        return try #require((exchanged.json["session"] as? [String: Any])?["accessToken"] as? String)
    }

    /// `GET /v1/auth/session`'s status for an access token.
    static func sessionStatus(_ server: TestServer, _ token: String) throws -> Int {
        try server.client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(token)")]).status
    }

    /// The account page of a signed-in browser and its CSRF token.
    static func accountPage(_ browser: TestBrowser) throws -> (page: TestResponse, csrf: String) {
        let page = try browser.get("/account")
        #expect(page.status == 200)
        return (page, try #require(hiddenField("csrf", in: page.text)))
    }

    @Test func signingOutOfOneBrowserEndsOnlyTheAppSessionsMadeFromIt() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browserA = server.browser()
        let browserB = server.browser()
        let fromA = try Self.appSession(
            server, browserA, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let fromB = try Self.appSession(
            server, browserB, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (page, csrf) = try Self.accountPage(browserA)
        #expect(page.text.contains("Acme"))
        #expect(page.header("content-security-policy")?.contains("default-src 'none'") == true)

        // A forged CSRF token changes nothing.
        #expect(try browserA.postForm("/account/signout", [("csrf", "forged")]).status == 403)
        #expect(try Self.sessionStatus(server, fromA) == 200)

        let signedOut = try browserA.postForm("/account/signout", [("csrf", csrf)])
        #expect(signedOut.status == 303)
        #expect(try Self.sessionStatus(server, fromA) == 401)
        #expect(try Self.sessionStatus(server, fromB) == 200)
        #expect(try browserA.get("/account").status == 303)
        #expect(try browserB.get("/account").status == 200)
    }

    @Test func signingOutEverywhereEndsEveryBrowserAndAppSession() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let other = try Fixture.make(store: server.store)
        let browserA = server.browser()
        let browserB = server.browser()
        let fromA = try Self.appSession(
            server, browserA, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let fromB = try Self.appSession(
            server, browserB, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let someoneElse = try Self.appSession(
            server, server.browser(), clientID: other.developmentKey, email: other.email, password: other.password)
        let (_, csrf) = try Self.accountPage(browserA)
        #expect(try browserA.postForm("/account/signout-everywhere", [("csrf", csrf)]).status == 303)
        #expect(try Self.sessionStatus(server, fromA) == 401)
        #expect(try Self.sessionStatus(server, fromB) == 401)
        #expect(try Self.sessionStatus(server, someoneElse) == 200)
        #expect(try browserB.get("/account").status == 303)
    }

    @Test func removingAnAppEndsItsSessionsAndForgetsConsentOnly() throws {
        let server = try TestServer()
        let acme = try Fixture.make(store: server.store, name: "Acme")
        let beta = try Fixture.make(store: server.store, name: "Beta Books")
        let browser = server.browser()
        let acmeToken = try Self.appSession(server, browser, clientID: acme.developmentKey, email: acme.email, password: acme.password)
        let betaToken = try Self.appSession(server, browser, clientID: beta.developmentKey, email: acme.email, password: acme.password)
        let (page, csrf) = try Self.accountPage(browser)
        #expect(page.text.contains("Acme"))
        #expect(page.text.contains("Beta Books"))
        let acmeEnvironment = try #require(try server.store.environment(publishableKey: acme.developmentKey)).id
        #expect(try browser.postForm("/account/apps/remove", [("csrf", csrf), ("environment", acmeEnvironment)]).status == 303)
        #expect(try Self.sessionStatus(server, acmeToken) == 401)
        #expect(try Self.sessionStatus(server, betaToken) == 200)
        let after = try browser.get("/account")
        #expect(!after.text.contains("<strong>Acme</strong>"))
        #expect(after.text.contains("Beta Books"))
    }

    @Test func changingThePasswordEndsEverythingAndKeepsThisBrowserSignedIn() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browserA = server.browser()
        let browserB = server.browser()
        let fromA = try Self.appSession(
            server, browserA, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let fromB = try Self.appSession(
            server, browserB, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try Self.accountPage(browserA)
        let newPassword = "a brand new passphrase"
        SuiteCapture.secret(newPassword)
        let wrong = try browserA.postForm(
            "/account/password", [("csrf", csrf), ("current_password", "not the password"), ("new_password", newPassword)])
        #expect(wrong.status == 401)
        #expect(try Self.sessionStatus(server, fromA) == 200)
        let short = try browserA.postForm(
            "/account/password", [("csrf", csrf), ("current_password", fixture.password), ("new_password", "short")])
        #expect(short.status == 400)
        let changed = try browserA.postForm(
            "/account/password", [("csrf", csrf), ("current_password", fixture.password), ("new_password", newPassword)])
        #expect(changed.status == 303)
        #expect(try Self.sessionStatus(server, fromA) == 401)
        #expect(try Self.sessionStatus(server, fromB) == 401)
        #expect(try browserA.get("/account").status == 200)
        #expect(try browserB.get("/account").status == 303)
        // The new password signs in; the old one no longer does.
        _ = try Self.appSession(server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: newPassword)
        #expect(throws: SignInDriver.Failure.self) {
            _ = try Self.appSession(
                server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        }
    }

    @Test func theOperatorClosesAnAccountIdempotently() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let token = try Self.appSession(
            server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let close = { (bearer: String?, id: String) in
            try server.client.send(
                "POST", "/v1/admin/users/\(id)/close", headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
        }
        #expect(try close(nil, fixture.userID).status == 401)
        #expect(try close(fixture.developmentSecret, fixture.userID).status == 403)
        #expect(try Self.sessionStatus(server, token) == 200)
        let unknown = try close(TestServer.operatorToken, UUID().uuidString)
        #expect(unknown.status == 404)
        #expect(unknown.json["error"] as? String == "not_found")
        #expect(try close(TestServer.operatorToken, "not-a-uuid").status == 404)
        let closed = try close(TestServer.operatorToken, fixture.userID)
        #expect(closed.status == 200)
        #expect(closed.json["id"] as? String == fixture.userID)
        let closedAt = try #require(closed.json["closedAt"] as? String)
        #expect(try Self.sessionStatus(server, token) == 401)
        let again = try close(TestServer.operatorToken, fixture.userID)
        #expect(again.status == 200)
        #expect(again.json["closedAt"] as? String == closedAt)
        #expect(throws: SignInDriver.Failure.self) {
            _ = try Self.appSession(
                server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        }
    }

    @Test func signUpAnswersTheSameForANewAndAnExistingEmail() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let signUp = { (email: String, password: String, browser: TestBrowser) throws -> TestResponse in
            let form = try browser.get("/account/signup")
            #expect(form.status == 200)
            return try browser.postForm(
                "/account/signup",
                [("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "Sam"), ("email", email), ("password", password)])
        }
        let newEmail = "new-\(UUID().uuidString.lowercased())@example.com"
        let chosen = "my chosen passphrase"
        SuiteCapture.secret(chosen)
        let freshBrowser = server.browser()
        let fresh = try signUp(newEmail, chosen, freshBrowser)
        let existing = try signUp(fixture.email, chosen, server.browser())
        #expect(fresh.status == 200)
        #expect(existing.status == 200)
        // The same code page: only the flow's id, its form token and the browser's passkey token differ.
        func shape(_ page: TestResponse) -> String {
            page.text.replacingOccurrences(of: hiddenField("flow", in: page.text) ?? "-", with: "F")
                .replacingOccurrences(of: hiddenField("csrf", in: page.text) ?? "-", with: "C")
                .replacingOccurrences(of: PasskeyTests.dataCSRF(page.text) ?? "-", with: "P")
        }
        #expect(shape(fresh) == shape(existing))
        // The existing account was not touched; the new one signs in once its code is entered.
        _ = try Self.appSession(
            server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let code = try Mailbox.code(for: newEmail)
        let entered = try freshBrowser.postForm(
            "/account/code",
            [
                ("flow", try #require(hiddenField("flow", in: fresh.text))), ("csrf", try #require(hiddenField("csrf", in: fresh.text))),
                ("code", code),
            ])
        #expect(entered.status == 303)
        _ = try Self.appSession(server, server.browser(), clientID: fixture.developmentKey, email: newEmail, password: chosen)
        // The policy is enforced, with the form shown again.
        let weak = try signUp("weak-\(UUID().uuidString.lowercased())@example.com", "short", server.browser())
        #expect(weak.status == 400)
        #expect(weak.text.contains("at least 10 characters"))
    }

    @Test func theSignInPageLinksToSignUp() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let form = try SignInDriver(server: server, browser: server.browser()).reachSignInForm(clientID: fixture.developmentKey)
        #expect(form.page.text.contains("/account/signup?request="))
    }
}
