import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Rate limits kept in PostgreSQL hold across server instances (docs/protocol.md#rate-limits).
@Suite struct RateLimitTests {
    /// A new browser at the password form of a fresh pending sign-in on `server`.
    static func passwordForm(_ server: TestServer, _ fixture: Fixture) throws -> (TestBrowser, [(String, String)]) {
        let browser = server.browser()
        return (browser, try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey).fields)
    }

    @Test func passwordAttemptsPerAccountAreCountedAcrossTwoServers() throws {
        let clock = ManualClock()
        let configure: (inout ServerConfiguration) -> Void = { $0.rateLimits.passwordPerAccount = 3 }
        let one = try TestServer(clock: clock, configure: configure)
        let two = try TestServer(clock: clock, configure: configure)
        let fixture = try Fixture.make(store: one.store)
        var statuses: [Int] = []
        for server in [one, two, one] {
            let (browser, hidden) = try Self.passwordForm(server, fixture)
            statuses.append(
                try browser.postForm("/v1/auth/zevid/signin", hidden + [("email", fixture.email), ("password", "wrong wrong wrong")]).status
            )
        }
        #expect(statuses == [401, 401, 401])
        // The fourth attempt, on the other server, is over the limit — even with the right password.
        let (browser, hidden) = try Self.passwordForm(two, fixture)
        let limited = try browser.postForm("/v1/auth/zevid/signin", hidden + [("email", fixture.email), ("password", fixture.password)])
        #expect(limited.status == 429)
        let retryAfter = try #require(limited.header("retry-after").flatMap { Int($0) })
        #expect((1...900).contains(retryAfter))
        #expect(limited.text.contains("Too many attempts. For your security, try again in"))
        #expect(browser.cookies["zevid_session"] == nil)
        // Another account is not affected; after the window the right password works again.
        let other = try Fixture.make(store: one.store)
        let (otherBrowser, otherHidden) = try Self.passwordForm(one, other)
        #expect(
            try otherBrowser.postForm("/v1/auth/zevid/signin", otherHidden + [("email", other.email), ("password", other.password)]).status
                == 303)
        clock.advance(by: Double(retryAfter))
        let (later, laterHidden) = try Self.passwordForm(one, fixture)
        #expect(
            try later.postForm("/v1/auth/zevid/signin", laterHidden + [("email", fixture.email), ("password", fixture.password)]).status
                == 303)
    }

    @Test func failedExchangesPerClientAddressAreCountedAcrossTwoServers() throws {
        let clock = ManualClock()
        let configure: (inout ServerConfiguration) -> Void = {
            $0.rateLimits.exchangeFailuresPerAddress = 2
            $0.trustedProxies = ["127.0.0.1"]
        }
        let one = try TestServer(clock: clock, configure: configure)
        let two = try TestServer(clock: clock, configure: configure)
        let fixture = try Fixture.make(store: one.store)
        let address = "2001:db8::\(String(UInt16.random(in: 1...UInt16.max), radix: 16))"
        let attempt = { (server: TestServer, forwardedFor: String) in
            try server.client.send(
                "POST", "/v1/auth/handoff/exchange",
                headers: [
                    ("Authorization", "Bearer \(fixture.developmentKey)"), ("Content-Type", "application/json"),
                    ("X-Forwarded-For", forwardedFor),
                ],
                body: Array(#"{"code":"hoc_not_a_code","codeVerifier":"x","redirectUri":"http://127.0.0.1/cb"}"#.utf8))
        }
        // The client wrote a fake left-most entry; the proxy appended the real address.
        #expect(try attempt(one, "10.9.9.9, \(address)").status == 400)
        #expect(try attempt(two, "10.9.9.8, \(address)").status == 400)
        let limited = try attempt(one, address)
        #expect(limited.status == 429)
        #expect(limited.json["error"] as? String == "temporarily_unavailable")
        #expect((limited.json["error_description"] as? String)?.hasPrefix("rate_limited:") == true)
        #expect(limited.header("retry-after").flatMap { Int($0) } != nil)
        #expect(limited.header("cache-control") == "no-store")
        // Another client address is not limited.
        #expect(try attempt(two, "2001:db8::ffff:\(String(UInt16.random(in: 1...UInt16.max), radix: 16))").status == 400)
    }

    @Test func mfaAttemptsAreLimitedPerAccount() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock, configure: { $0.rateLimits.mfaPerAccount = 2 })
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        #expect(try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", "123456")]).status == 303)  // nothing to confirm yet
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        #expect(enrol.status == 200)
        #expect(try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", "000001")]).status == 400)
        #expect(try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", "000002")]).status == 400)
        let limited = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", "000003")])
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") != nil)
        #expect(limited.text.contains("try again in"))
    }

    @Test(arguments: [
        ("10.0.0.1", ["203.0.113.7"], [String](), "10.0.0.1"),
        ("10.0.0.1", ["203.0.113.7"], ["10.0.0.1"], "203.0.113.7"),
        ("10.0.0.1", ["6.6.6.6, 203.0.113.7, 10.0.0.2"], ["10.0.0.1", "10.0.0.2"], "203.0.113.7"),
        ("10.0.0.1", ["6.6.6.6", "203.0.113.7"], ["10.0.0.1"], "203.0.113.7"),
        ("10.0.0.1", [], ["10.0.0.1"], "10.0.0.1"),
        ("10.0.0.1", ["10.0.0.2"], ["10.0.0.1", "10.0.0.2"], "10.0.0.2"),
    ])
    func clientAddressBelievesOnlyTrustedProxies(peer: String, forwarded: [String], trusted: [String], expected: String) {
        #expect(ClientAddress.resolve(peer: peer, forwardedFor: forwarded, trusted: trusted) == expected)
    }

    @Test func thresholdsComeFromTheEnvironment() throws {
        let base = [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "o", count: 32),
        ]
        let defaults = try ConfigurationLoader.load(environment: base)
        #expect(defaults.rateLimits == RateLimits())
        var environment = base
        environment["ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT"] = "5"
        environment["ZEVAUTH_RATE_WINDOW_SECONDS"] = "60"
        let configured = try ConfigurationLoader.load(environment: environment, arguments: ["--rate-mfa-per-account", "7"])
        #expect(configured.rateLimits.passwordPerAccount == 5)
        #expect(configured.rateLimits.windowSeconds == 60)
        #expect(configured.rateLimits.mfaPerAccount == 7)
        environment["ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT"] = "0"
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(environment: environment) }
    }
}
