import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// RP-initiated logout at `/oauth2/logout` over real HTTP against the real PostgreSQL (docs/protocol.md,
/// "RP-initiated logout").
@Suite struct LogoutTests {
    static let loopback = "http://127.0.0.1:5555/cb"
    static let afterLogout = "http://127.0.0.1:7000/bye"
    static let scheme = "com.acme.app:/callback"

    struct World {
        let server: TestServer
        let fixture: Fixture
        let hints: FakeIDTokenHints

        init() throws {
            let hints = FakeIDTokenHints()
            server = try TestServer(live: true, ports: { $0.idTokenHints = hints })
            fixture = try Fixture.make(
                store: server.store, development: [LogoutTests.loopback, "http://127.0.0.1/bye", LogoutTests.scheme])
            self.hints = hints
        }

        /// Signs `browser` in to an app and exchanges the code. - Returns: the app session's id and access token.
        func appSession(_ browser: TestBrowser) throws -> (id: String, accessToken: String) {
            let pkce = PKCEPair()
            let driver = SignInDriver(server: server, browser: browser)
            let result = try driver.run(
                clientID: fixture.developmentKey, redirectURI: LogoutTests.loopback, state: "s", pkce: pkce, email: fixture.email,
                password: fixture.password)
            let exchanged = try driver.exchange(
                clientID: fixture.developmentKey,
                fields: ["code": try #require(result.code), "codeVerifier": pkce.verifier, "redirectUri": LogoutTests.loopback])
            let session = try #require(exchanged.json["session"] as? [String: Any])
            return (try #require(session["id"] as? String), try #require(session["accessToken"] as? String))
        }

        func live(_ token: String) throws -> Bool {
            try server.client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(token)")]).status == 200
        }

        func logout(_ browser: TestBrowser, _ pairs: [(String, String)]) throws -> TestResponse {
            try browser.get("/oauth2/logout?" + FormURLEncodingPairs.encode(pairs))
        }

        /// Whether the browser's next sign-in skips the password (its ZevID session is live).
        func browserSignedIn(_ browser: TestBrowser) throws -> Bool {
            let start = try browser.get(
                startTarget([
                    ("client_id", fixture.developmentKey), ("redirect_uri", LogoutTests.loopback), ("state", "s"),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                ]))
            return start.header("location")?.hasPrefix("/v1/auth/zevid/consent") == true
        }
    }

    /// The confirmation form's fields, as the page carries them.
    static func confirmationFields(_ page: TestResponse) throws -> [(String, String)] {
        var fields: [(String, String)] = []
        for name in ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "csrf", "confirm"] {
            if let value = hiddenField(name, in: page.text) { fields.append((name, value)) }
        }
        return fields
    }

    @Test func withoutAHintThePersonConfirmsThenOnlyThisBrowsersAppSessionsEnd() throws {
        let world = try World()
        let browser = world.server.browser()
        let other = world.server.browser()
        let mine = try world.appSession(browser)
        let theirs = try world.appSession(other)
        let page = try world.logout(
            browser, [("client_id", world.fixture.developmentKey), ("post_logout_redirect_uri", Self.afterLogout), ("state", "bye now")])
        #expect(page.status == 200)
        #expect(page.text.contains("Sign out of ZevID?"))
        // Nothing ended before the confirmation.
        #expect(try world.live(mine.accessToken))
        #expect(try world.browserSignedIn(browser))
        let fields = try Self.confirmationFields(page)
        // A forged confirmation (no CSRF token of this browser) ends nothing.
        let forged = try other.postForm("/oauth2/logout", fields.filter { $0.0 != "csrf" } + [("csrf", "forged")])
        #expect(forged.status == 403)
        #expect(try world.live(mine.accessToken))
        let confirmed = try browser.postForm("/oauth2/logout", fields)
        #expect(confirmed.status == 303)
        // A loopback port other than the registered one's matches (RFC 8252 §7.3); the redirect carries state only.
        #expect(confirmed.header("location") == Self.afterLogout + "?state=bye%20now")
        #expect(try !world.live(mine.accessToken))
        #expect(try world.live(theirs.accessToken))
        #expect(try !world.browserSignedIn(browser))
        #expect(try world.browserSignedIn(other))
    }

    @Test func aHintForTheSignedInAccountSkipsTheConfirmationAndEndsItsSid() throws {
        let world = try World()
        let browser = world.server.browser()
        let mine = try world.appSession(browser)
        // The app signed in through an ephemeral browser session: its session is named by the hint's sid.
        let ephemeral = try world.appSession(world.server.browser())
        world.hints.add(
            "hint.for.me",
            FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.developmentKey, sessionID: ephemeral.id))
        // A custom scheme would open the app without a gesture: the "Return to the app" page.
        let answer = try world.logout(
            browser,
            [
                ("id_token_hint", "hint.for.me"), ("client_id", world.fixture.developmentKey), ("post_logout_redirect_uri", Self.scheme),
                ("state", "s1"),
            ])
        #expect(answer.status == 200)
        #expect(answer.text.contains("Return to the app"))
        #expect(answer.text.contains("href=\"com.acme.app:/callback?state=s1\""))
        #expect(!answer.text.contains("hint.for.me"))
        #expect(try !world.live(mine.accessToken))
        #expect(try !world.live(ephemeral.accessToken))
        #expect(try !world.browserSignedIn(browser))
        #expect(!world.server.log.all.joined(separator: "\n").contains("hint.for.me"))
    }

    @Test func aHintWithoutTheSignedInBrowserEndsItsSidOnlyAfterConfirmation() throws {
        let world = try World()
        let ephemeral = try world.appSession(world.server.browser())
        world.hints.add(
            "hint.sid",
            FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.developmentKey, sessionID: ephemeral.id))
        let stranger = world.server.browser()
        let page = try world.logout(stranger, [("id_token_hint", "hint.sid"), ("post_logout_redirect_uri", Self.afterLogout)])
        #expect(page.status == 200)
        #expect(page.text.contains("Sign out of ZevID?"))
        #expect(try world.live(ephemeral.accessToken))
        let confirmed = try stranger.postForm("/oauth2/logout", try Self.confirmationFields(page))
        #expect(confirmed.status == 303)
        #expect(confirmed.header("location") == Self.afterLogout)
        #expect(try !world.live(ephemeral.accessToken))
    }

    @Test func aHintForAnotherClientAsksForConfirmation() throws {
        let world = try World()
        let browser = world.server.browser()
        _ = try world.appSession(browser)
        world.hints.add("hint.prod", FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.productionKey))
        let page = try world.logout(browser, [("id_token_hint", "hint.prod"), ("client_id", world.fixture.developmentKey)])
        #expect(page.status == 200)
        #expect(page.text.contains("Sign out of ZevID?"))
        #expect(try world.browserSignedIn(browser))
    }

    @Test func anUnregisteredPostLogoutRedirectURIIsShownAndNeverFollowed() throws {
        let world = try World()
        let browser = world.server.browser()
        let mine = try world.appSession(browser)
        world.hints.add("hint.ok", FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.developmentKey))
        for uri in ["https://evil.example/cb", "com.acme.app:/other", "http://127.0.0.1:7000/elsewhere"] {
            let answer = try world.logout(
                browser, [("id_token_hint", "hint.ok"), ("client_id", world.fixture.developmentKey), ("post_logout_redirect_uri", uri)])
            #expect(answer.status == 400, "\(uri)")
            #expect(answer.header("location") == nil)
            #expect(!answer.text.contains(uri))
            #expect(answer.text.contains("redirect_uri_mismatch"))
            // The shared error page: what happened and what to do, the detail in the developer disclosure.
            #expect(answer.text.contains("<h1>This sign-out can&#39;t continue.</h1>"))
            #expect(answer.text.contains("Details for the app's developer"))
        }
        // Production refuses a loopback as it refuses it as a redirect URI.
        let production = try world.logout(
            browser, [("client_id", world.fixture.productionKey), ("post_logout_redirect_uri", Self.afterLogout)])
        #expect(production.status == 400)
        #expect(production.header("location") == nil)
        #expect(try world.live(mine.accessToken))
        #expect(try world.browserSignedIn(browser))
    }

    @Test func postFromTheRelyingPartyWorksAsGetAndPlainLogoutEndsOnAPage() throws {
        let world = try World()
        let browser = world.server.browser()
        let mine = try world.appSession(browser)
        world.hints.add("hint.post", FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.developmentKey))
        let answer = try browser.postForm("/oauth2/logout", [("id_token_hint", "hint.post")])
        #expect(answer.status == 200)
        #expect(answer.text.contains("You're signed out"))
        #expect(try !world.live(mine.accessToken))
        #expect(world.server.serverFailureLines.isEmpty)
    }
}

/// Query strings for the tests (RFC 3986 unreserved characters left bare).
enum FormURLEncodingPairs {
    static func encode(_ pairs: [(String, String)]) -> String {
        String(startTarget(pairs, path: "").dropFirst())
    }
}
