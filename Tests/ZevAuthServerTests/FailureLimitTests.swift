import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Failed refreshes and failed standard-endpoint grants count against the client address (docs/protocol.md#rate-limits),
/// and an ended session's refresh answers `invalid_grant` (docs/protocol.md#refresh-row-4).
@Suite struct FailureLimitTests {
    @Test func failedRefreshesAreLimitedPerAddressEvenForAValidTokenAfterwards() throws {
        let server = try TestServer(
            clock: ManualClock(Date()),
            configure: {
                $0.rateLimits.refreshFailuresPerAddress = 2
                $0.trustedProxies = ["127.0.0.1"]
            })
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let pair = try driver.signIn()
        // This test's own client address, behind the trusted proxy, so other suites' failures do not count.
        let address = Self.uniqueAddress()
        func refresh(_ token: String) throws -> TestResponse {
            try server.client.send(
                "POST", "/v1/auth/session/refresh",
                headers: [
                    ("Authorization", "Bearer \(fixture.developmentKey)"), ("Content-Type", "application/json"),
                    ("X-Forwarded-For", address),
                ],
                body: Array("{\"refreshToken\":\"\(token)\"}".utf8))
        }
        #expect(try refresh("zrt_not_a_token").status == 400)
        #expect(try refresh("zrt_not_a_token_either").status == 400)
        let limited = try refresh(pair.refreshToken)
        #expect(limited.status == 429)
        #expect(limited.header("retry-after").flatMap(Int.init) ?? 0 > 0)
        #expect(limited.json["error"] as? String == "temporarily_unavailable")
        // The window passes; the valid token still works (it was never presented).
        server.clock?.advance(by: Double(server.context.configuration.rateLimits.windowSeconds))
        #expect(try refresh(pair.refreshToken).status == 200)
    }

    /// A documentation-range address (RFC 5737) unique to one test.
    static func uniqueAddress() -> String {
        "198.51.100.\(Int.random(in: 1...254))"
    }

    @Test func failedCodeGrantsAtTheTokenEndpointCountAsFailedExchanges() throws {
        let server = try TestServer(configure: {
            $0.rateLimits.exchangeFailuresPerAddress = 2
            $0.trustedProxies = ["127.0.0.1"]
        })
        let address = "203.0.113.\(Int.random(in: 1...254))"  // RFC 5737; this test's own client address
        let fixture = try Fixture.make(store: server.store)
        func grant(_ code: String) throws -> TestResponse {
            let form =
                "grant_type=authorization_code&code=\(code)&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&code_verifier=\(PKCEPair().verifier)&client_id=\(fixture.developmentKey)"
            return try server.client.send(
                "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", address)],
                body: Array(form.utf8))
        }
        #expect(try grant("hoc_nope1").json["error"] as? String == "invalid_grant")
        #expect(try grant("hoc_nope2").json["error"] as? String == "invalid_grant")
        #expect(try grant("hoc_nope3").status == 429)
    }

    @Test func aLimitedExchangeLeavesAValidCodeUnconsumed() throws {
        let clock = ManualClock(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 30).rounded(.down) * 30))
        let server = try TestServer(
            clock: clock,
            configure: {
                $0.rateLimits.exchangeFailuresPerAddress = 2
                $0.rateLimits.windowSeconds = 30
                $0.trustedProxies = ["127.0.0.1"]
            })
        let fixture = try Fixture.make(store: server.store)
        let code = try SessionDriver(server: server, fixture: fixture).issueCode(path: "/v1/auth/zevid/start")
        let address = "192.0.2.\(Int.random(in: 1...254))"  // RFC 5737; this test's own client address
        let codeVerifier = code.pkce.verifier
        func exchange(_ code: String) throws -> TestResponse {
            let body = try JSONSerialization.data(withJSONObject: [
                "code": code, "codeVerifier": code == "hoc_nope" ? "x" : codeVerifier, "redirectUri": SessionDriver.redirect,
            ])
            return try server.client.send(
                "POST", "/v1/auth/handoff/exchange",
                headers: [
                    ("Authorization", "Bearer \(fixture.developmentKey)"), ("Content-Type", "application/json"),
                    ("X-Forwarded-For", address),
                ],
                body: Array(body))
        }
        #expect(try exchange("hoc_nope").status == 400)
        #expect(try exchange("hoc_nope").status == 400)
        #expect(try exchange(code.code).status == 429)
        // The next window: the code, 30 s old, was never touched and still redeems once.
        clock.advance(by: 30)
        #expect(try exchange(code.code).status == 200)
    }

    @Test func aClosedAccountsSessionCannotBeRefreshed() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let pair = try driver.signIn()
        let closed = try server.client.send(
            "POST", "/v1/admin/users/\(fixture.userID)/close", headers: [("Authorization", "Bearer \(TestServer.operatorToken)")])
        #expect(closed.status == 200)
        let refreshed = try driver.refresh(pair.refreshToken)
        #expect(refreshed.status == 400)
        #expect(refreshed.json["error"] as? String == "invalid_grant")
    }
}
