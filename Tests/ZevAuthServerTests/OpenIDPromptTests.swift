import Crypto
import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// `prompt`, `max_age`, `id_token_hint`, `login_hint` and the refused request options on both starts, over
/// real HTTP against the real PostgreSQL (docs/protocol.md, "prompt, max_age and hints").
@Suite struct OpenIDPromptTests {
    static let loopback = "http://127.0.0.1:5555/cb"
    static let scheme = "com.acme.app:/callback"

    /// A project whose development environment has a loopback, a custom scheme and a verified link callback.
    struct World {
        let server: TestServer
        let fixture: Fixture
        let link: String
        let hints: FakeIDTokenHints

        init(clock: ManualClock? = nil) throws {
            let hints = FakeIDTokenHints()
            let server = try TestServer(live: true, clock: clock, ports: { $0.idTokenHints = hints })
            let domain = "p\(UUID().uuidString.prefix(8).lowercased()).acme.test"
            link = "https://\(domain)/app/cb"
            fixture = try Fixture.make(
                store: server.store, development: [OpenIDPromptTests.loopback, OpenIDPromptTests.scheme, link], verifiedDomains: [domain])
            self.server = server
            self.hints = hints
        }

        func start(_ browser: TestBrowser, redirect: String, extra: [(String, String)], path: String = "/v1/auth/zevid/start") throws
            -> TestResponse
        {
            var pairs: [(String, String)] = [
                ("client_id", fixture.developmentKey), ("redirect_uri", redirect), ("state", "st ate"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]
            if path == "/oauth2/authorize" { pairs.append(("response_type", "code")) }
            return try browser.get(startTarget(pairs + extra, path: path))
        }

        /// Signs `browser` in through the link callback and allows, so consent is remembered.
        func signInAndRemember(_ browser: TestBrowser) throws {
            let result = try SignInDriver(server: server, browser: browser).run(
                clientID: fixture.developmentKey, redirectURI: link, state: "s", pkce: PKCEPair(), email: fixture.email,
                password: fixture.password)
            #expect(result.code != nil)
        }
    }

    static func query(_ response: TestResponse) -> [String: String] { queryItems(of: response.header("location") ?? "") }

    @Test func promptNoneWithoutASessionIsLoginRequiredByA303() throws {
        let world = try World()
        for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
            for redirect in [Self.scheme, world.link, Self.loopback] {
                let answer = try world.start(world.server.browser(), redirect: redirect, extra: [("prompt", "none")], path: path)
                #expect(answer.status == 303, "\(path) \(redirect)")
                #expect(answer.header("location")?.hasPrefix(redirect + "?") == true)
                let query = Self.query(answer)
                #expect(query["error"] == "login_required")
                #expect(query["state"] == "st ate")
                #expect(query["iss"] == world.server.issuer)
            }
        }
    }

    @Test func promptNoneIssuesACodeByA303ForARememberedLinkAndNeverShowsAPage() throws {
        let world = try World()
        let browser = world.server.browser()
        try world.signInAndRemember(browser)
        // Without prompt=none, a remembered link answers with the "Return to the app" page.
        let held = try world.start(browser, redirect: world.link, extra: [])
        let consent = try browser.get(try #require(held.header("location")))
        #expect(consent.status == 200)
        #expect(consent.text.contains("Return to the app"))
        // With prompt=none: a direct 303 with the code, state and iss.
        let answer = try world.start(browser, redirect: world.link, extra: [("prompt", "none")], path: "/oauth2/authorize")
        #expect(answer.status == 303)
        let query = Self.query(answer)
        #expect(query["code"]?.hasPrefix("hoc_") == true)
        #expect(query["state"] == "st ate")
        #expect(query["iss"] == world.server.issuer)
        SuiteCapture.secret(query["code"])
    }

    @Test func promptNoneNeedsConsentForACustomSchemeALoopbackAndAnUnrememberedLink() throws {
        let world = try World()
        let browser = world.server.browser()
        _ = try SignInDriver(server: world.server, browser: browser).run(
            clientID: world.fixture.developmentKey, redirectURI: Self.loopback, state: "s", pkce: PKCEPair(),
            email: world.fixture.email, password: world.fixture.password)
        for redirect in [Self.scheme, Self.loopback, world.link] {
            let answer = try world.start(browser, redirect: redirect, extra: [("prompt", "none")])
            #expect(answer.status == 303)
            #expect(Self.query(answer)["error"] == "consent_required", "\(redirect)")
            #expect(Self.query(answer)["state"] == "st ate")
        }
    }

    @Test func promptNoneWithAHintForAnotherAccountIsLoginRequired() throws {
        let world = try World()
        let browser = world.server.browser()
        try world.signInAndRemember(browser)
        world.hints.add(
            "hint.other.sig", FakeIDTokenHints.hint(subject: UUID().uuidString.lowercased(), audience: world.fixture.developmentKey))
        world.hints.add("hint.self.sig", FakeIDTokenHints.hint(subject: world.fixture.userID, audience: world.fixture.developmentKey))
        let other = try world.start(browser, redirect: world.link, extra: [("prompt", "none"), ("id_token_hint", "hint.other.sig")])
        #expect(other.status == 303)
        #expect(Self.query(other)["error"] == "login_required")
        let same = try world.start(browser, redirect: world.link, extra: [("prompt", "none"), ("id_token_hint", "hint.self.sig")])
        #expect(same.status == 303)
        #expect(Self.query(same)["code"] != nil)
        SuiteCapture.secret(Self.query(same)["code"])
        // A hint that is not this server's ID token is ignored as a hint (never an error, never a 500).
        let forged = try world.start(browser, redirect: world.link, extra: [("prompt", "none"), ("id_token_hint", "not-a-jws")])
        #expect(Self.query(forged)["code"] != nil)
        SuiteCapture.secret(Self.query(forged)["code"])
        #expect(world.hints.reads.contains("hint.other.sig"))
        // The hint never reaches the log or a URL the server built.
        let log = world.server.log.all.joined(separator: "\n")
        for hint in ["hint.other.sig", "hint.self.sig", "not-a-jws"] {
            #expect(!log.contains(hint))
            #expect(!(other.header("location") ?? "").contains(hint))
            #expect(!(same.header("location") ?? "").contains(hint))
        }
        #expect(world.server.serverFailureLines.isEmpty)
    }

    @Test func promptNoneAnswersTheStartsOwnRedirectedErrorsWithA303() throws {
        let world = try World()
        let browser = world.server.browser()
        // The same error without prompt=none holds a custom scheme behind the "Return to the app" page.
        let withoutPKCE = startTarget([
            ("client_id", world.fixture.developmentKey), ("redirect_uri", Self.scheme), ("state", "s"),
        ])
        let held = try browser.get(withoutPKCE)
        #expect(held.status == 200)
        #expect(held.text.contains("Return to the app"))
        let direct = try browser.get(withoutPKCE + "&prompt=none")
        #expect(direct.status == 303)
        #expect(Self.query(direct)["error"] == "pkce_required")
        // prompt=none with another value is invalid_request, also by a 303.
        let combined = try world.start(browser, redirect: Self.scheme, extra: [("prompt", "none login")], path: "/oauth2/authorize")
        #expect(combined.status == 303)
        #expect(Self.query(combined)["error"] == "invalid_request")
        #expect(Self.query(combined)["state"] == "st ate")
        #expect(Self.query(combined)["iss"] == world.server.issuer)
    }

    @Test func refusedRequestOptionsAreRedirectedWithStateAndIssuer() throws {
        let world = try World()
        for (name, value, code) in [
            ("request", "eyJhbGciOiJub25lIn0.e30.", "request_not_supported"),
            ("request_uri", "https://rp.example/r", "request_uri_not_supported"),
            ("max_age", "-5", "invalid_request"), ("response_mode", "fragment", "invalid_request"), ("prompt", "bogus", "invalid_request"),
        ] {
            for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
                let answer = try world.start(world.server.browser(), redirect: Self.loopback, extra: [(name, value)], path: path)
                #expect(answer.status == 303, "\(name) \(path)")
                let query = Self.query(answer)
                #expect(query["error"] == code, "\(name) \(path)")
                #expect(query["state"] == "st ate")
                #expect(query["iss"] == world.server.issuer)
                if path == "/oauth2/authorize" { #expect(query["error_description"]?.hasPrefix(code + ": ") == true) }
            }
        }
        // display, ui_locales and claims_locales are accepted and ignored.
        let ignored = try world.start(
            world.server.browser(), redirect: Self.loopback, extra: [("display", "touch"), ("ui_locales", "fr"), ("claims_locales", "de")])
        #expect(ignored.header("location")?.hasPrefix("/v1/auth/zevid/signin") == true)
    }

    @Test func promptConsentAlwaysShowsConsent() throws {
        let world = try World()
        let browser = world.server.browser()
        try world.signInAndRemember(browser)
        let start = try world.start(browser, redirect: world.link, extra: [("prompt", "consent")])
        let page = try browser.get(try #require(start.header("location")))
        #expect(page.status == 200)
        #expect(!page.text.contains("Return to the app"))
        #expect(hiddenField("csrf", in: page.text) != nil)
        #expect(page.text.contains("value=\"allow\""))
    }

    /// The `auth_time` the code was issued with (what the ID token's `auth_time` is made from).
    static func codeAuthTime(_ code: String) throws -> Date {
        let row = try #require(
            try TestDatabase.pool.query("SELECT auth_time FROM authorization_codes WHERE code_hash = $1", [Crypto.hexSHA256(code)]).first)
        return try row.date("auth_time")
    }

    @Test func maxAgeAsksForThePasswordWhenTheSessionIsOlderAndTheNewAuthTimeIsUsed() throws {
        let clock = ManualClock(Date())
        let world = try World(clock: clock)
        let browser = world.server.browser()
        let driver = SignInDriver(server: world.server, browser: browser)
        let first = try driver.run(
            clientID: world.fixture.developmentKey, redirectURI: Self.loopback, state: "s", pkce: PKCEPair(), email: world.fixture.email,
            password: world.fixture.password)
        let firstAuthTime = try Self.codeAuthTime(try #require(first.code))
        clock.advance(by: 120)
        // Authenticated 120 s ago: max_age=3600 skips the password, max_age=60 asks for it.
        var sawPassword = true
        let recent = try driver.run(
            clientID: world.fixture.developmentKey, redirectURI: Self.loopback, state: "s", pkce: PKCEPair(), email: world.fixture.email,
            password: "never asked", extra: [("max_age", "3600")], passwordPageSeen: &sawPassword)
        #expect(!sawPassword)
        #expect(abs(try Self.codeAuthTime(try #require(recent.code)).timeIntervalSince(firstAuthTime)) < 1)
        let old = try driver.run(
            clientID: world.fixture.developmentKey, redirectURI: Self.loopback, state: "s", pkce: PKCEPair(), email: world.fixture.email,
            password: world.fixture.password, extra: [("max_age", "60")], passwordPageSeen: &sawPassword)
        #expect(sawPassword)
        #expect(try Self.codeAuthTime(try #require(old.code)).timeIntervalSince(firstAuthTime) >= 119)
        // prompt=none with a max_age the session is too old for is login_required.
        clock.advance(by: 120)
        let silent = try world.start(browser, redirect: Self.loopback, extra: [("prompt", "none"), ("max_age", "60")])
        #expect(Self.query(silent)["error"] == "login_required")
        // max_age=0 always asks.
        let zero = try world.start(browser, redirect: Self.loopback, extra: [("max_age", "0")])
        #expect(zero.header("location")?.hasPrefix("/v1/auth/zevid/signin") == true)
        for code in [first.code, recent.code, old.code] { SuiteCapture.secret(code) }
    }

    @Test func loginHintPrefillsTheEmailAndNeverReachesTheLog() throws {
        let world = try World()
        let browser = world.server.browser()
        let start = try world.start(browser, redirect: Self.loopback, extra: [("login_hint", "hinted.person@example.com")])
        let page = try browser.get(try #require(start.header("location")))
        #expect(page.text.contains("value=\"hinted.person@example.com\""))
        #expect(!(start.header("location") ?? "").contains("hinted"))
        #expect(!world.server.log.all.joined(separator: "\n").contains("hinted"))
    }

    @Test func promptLoginAndMaxAgeZeroAlsoAskForTheSecondFactorWhenEnrolled() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let shown = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>"))
            .replacingOccurrences(of: " ", with: "")
        SuiteCapture.secret(shown)
        let secret = try #require(Base32.decode(shown))
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let confirmed = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))])
        #expect(confirmed.status == 200)
        // The signed-in browser skips the password without either option…
        let driver = SignInDriver(server: server, browser: owner)
        let plain = try owner.get(
            startTarget([
                ("client_id", fixture.developmentKey), ("redirect_uri", Self.loopback), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]))
        #expect(plain.header("location")?.hasPrefix("/v1/auth/zevid/consent") == true)
        // …and with prompt=login or max_age=0 gives the password, then the second factor.
        for extra in [[("prompt", "login")], [("max_age", "0")]] {
            let form = try driver.reachSignInForm(clientID: fixture.developmentKey, redirectURI: Self.loopback, extra: extra)
            let posted = try owner.postForm(
                "/v1/auth/zevid/signin", form.fields + [("email", fixture.email), ("password", fixture.password)])
            #expect(posted.status == 303)
            #expect(posted.header("location")?.hasPrefix("/v1/auth/zevid/mfa?challenge=") == true, "\(extra)")
        }
    }
}
