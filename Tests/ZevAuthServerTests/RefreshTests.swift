import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md#refresh-checks: rotation, reuse outside and inside the grace, concurrent refreshes, the windows
/// with an injected clock, and settings that shorten (never lengthen) them.
@Suite struct RefreshTests {
    static let day: Double = 86_400

    func expectError(_ response: TestResponse, _ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        #expect(response.header("cache-control") == "no-store", sourceLocation: sourceLocation)
    }

    /// A manual clock on a whole second, so RFC 3339 times compare exactly.
    static func clock() -> ManualClock {
        ManualClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    }

    func make(clock: ManualClock? = nil) throws -> SessionDriver {
        return try SessionDriver.started(clock: clock)
    }

    func setGrace(_ driver: SessionDriver, _ seconds: Int) throws {
        let response = try driver.sendJSON(
            "PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, ["refreshReuseGraceSeconds": seconds])
        #expect(response.status == 200)
    }

    @Test func rotationIssuesANewPairForTheSameSessionInTheExchangesShape() throws {
        let driver = try make()
        let first = try driver.signIn()
        let response = try driver.refresh(first.refreshToken)
        #expect(response.status == 200)
        #expect(response.header("cache-control") == "no-store")
        let session = try #require(response.json["session"] as? [String: Any])
        #expect(
            Set(session.keys) == ["id", "accessToken", "refreshToken", "tokenType", "expiresIn", "expiresAt", "idleExpiresAt", "scope"])
        #expect(session["scope"] as? String == "")
        #expect(session["tokenType"] as? String == "Bearer")
        #expect(session["expiresIn"] as? Int == 900)
        let user = try #require(response.json["user"] as? [String: Any])
        #expect(user["id"] as? String == driver.fixture.userID)
        let second = try #require(SessionDriver.Pair(response))
        #expect(second.sessionID == first.sessionID)
        #expect(second.refreshToken != first.refreshToken && second.accessToken != first.accessToken)
        #expect(try driver.current(second.accessToken).status == 200)
        // The next generation rotates too.
        let third = try #require(SessionDriver.Pair(try driver.refresh(second.refreshToken)))
        #expect(third.sessionID == first.sessionID)
    }

    @Test func reuseOutsideTheGraceRevokesTheWholeSession() throws {
        let driver = try make()
        let first = try driver.signIn()
        let second = try #require(SessionDriver.Pair(try driver.refresh(first.refreshToken)))
        expectError(try driver.refresh(first.refreshToken), 400, "invalid_grant")
        // Every pair of the session is dead now.
        expectError(try driver.refresh(second.refreshToken), 400, "invalid_grant")
        #expect(try driver.current(second.accessToken).status == 401)
        #expect(try driver.current(first.accessToken).status == 401)
        #expect(try driver.server.store.isSessionRevoked(id: first.sessionID) == true)
    }

    @Test func reuseInsideTheGraceGetsANewPairAndTheEarlierRotationsPairStaysValid() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        try setGrace(driver, 30)
        let first = try driver.signIn()
        let second = try #require(SessionDriver.Pair(try driver.refresh(first.refreshToken)))
        clock.advance(by: 29)
        // Within 30 s of its rotation: a new pair for the same session.
        let third = try #require(SessionDriver.Pair(try driver.refresh(first.refreshToken)))
        #expect(third.sessionID == first.sessionID)
        #expect(third.refreshToken != second.refreshToken)
        // The pair the earlier rotation issued stays valid, and so does the new one.
        #expect(try driver.current(second.accessToken).status == 200)
        #expect(try driver.current(third.accessToken).status == 200)
        let fourth = try #require(SessionDriver.Pair(try driver.refresh(second.refreshToken)))
        #expect(try driver.current(fourth.accessToken).status == 200)
        // 30 s after the first token's rotation, presenting it again is reuse: the session ends.
        clock.advance(by: 1)
        expectError(try driver.refresh(first.refreshToken), 400, "invalid_grant")
        expectError(try driver.refresh(fourth.refreshToken), 400, "invalid_grant")
        #expect(try driver.current(fourth.accessToken).status == 401)
    }

    @Test func twoConcurrentRefreshesAtGraceZeroOneWinsAndTheLoserRevokesTheSession() throws {
        let driver = try make()
        let first = try driver.signIn()
        let responses = try concurrentRefreshes(driver, first.refreshToken, count: 2)
        #expect(responses.filter { $0.status == 200 }.count <= 1)
        #expect(responses.filter { $0.status == 400 && $0.json["error"] as? String == "invalid_grant" }.count >= 1)
        #expect(try driver.server.store.isSessionRevoked(id: first.sessionID) == true)
        for winner in responses.compactMap(SessionDriver.Pair.init) {
            #expect(try driver.current(winner.accessToken).status == 401)
            expectError(try driver.refresh(winner.refreshToken), 400, "invalid_grant")
        }
    }

    /// A request reads its clock before its SQL runs, so the loser of a race (or an instance whose clock is
    /// a little behind) can carry a time just before the winner's rotation. At grace 0 that is still reuse.
    @Test func atGraceZeroAReuseTimedJustBeforeTheRotationStillRevokesTheSession() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        let first = try driver.signIn()
        clock.advance(by: 10)
        let rotated = try #require(SessionDriver.Pair(try driver.refresh(first.refreshToken)))
        clock.advance(by: -0.5)
        expectError(try driver.refresh(first.refreshToken), 400, "invalid_grant")
        clock.advance(by: 0.5)
        expectError(try driver.refresh(rotated.refreshToken), 400, "invalid_grant")
        #expect(try driver.current(rotated.accessToken).status == 401)
    }

    @Test func concurrentRefreshesWithinAGraceAllGetWorkingPairs() throws {
        let driver = try make()
        try setGrace(driver, 60)
        let first = try driver.signIn()
        let responses = try concurrentRefreshes(driver, first.refreshToken, count: 8)
        let pairs = responses.compactMap(SessionDriver.Pair.init)
        #expect(pairs.count == 8)
        #expect(Set(pairs.map(\.sessionID)) == [first.sessionID])
        for pair in pairs {
            #expect(try driver.current(pair.accessToken).status == 200)
            #expect(try driver.refresh(pair.refreshToken).status == 200)
        }
    }

    func concurrentRefreshes(_ driver: SessionDriver, _ token: String, count: Int) throws -> [TestResponse] {
        let client = driver.server.client
        let key = driver.fixture.developmentKey
        let results = ConcurrentResults()
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                results.append(try? SessionDriver.refresh(client, clientID: key, body: ["refreshToken": token]))
                group.leave()
            }
        }
        for _ in 0..<count { start.signal() }
        group.wait()
        return results.all.compactMap { $0 }
    }

    // MARK: Windows

    @Test func theAbsoluteWindowIsNinetyDaysFromAuthentication() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        var pair = try driver.signIn()
        let signedIn = clock.now()
        // Refresh every 20 days, so the idle window never closes.
        for _ in 0..<4 {
            clock.advance(by: 20 * Self.day)
            pair = try #require(SessionDriver.Pair(try driver.refresh(pair.refreshToken)))
        }
        clock.set(signedIn.addingTimeInterval(89 * Self.day + 23 * 3600))
        let lastGood = try driver.refresh(pair.refreshToken)
        #expect(lastGood.status == 200)
        let session = try #require(lastGood.json["session"] as? [String: Any])
        #expect(session["expiresAt"] as? String == timestamp(signedIn.addingTimeInterval(90 * Self.day)))
        #expect(session["idleExpiresAt"] as? String == timestamp(signedIn.addingTimeInterval(90 * Self.day)))
        pair = try #require(SessionDriver.Pair(lastGood))
        clock.set(signedIn.addingTimeInterval(90 * Self.day))
        expectError(try driver.refresh(pair.refreshToken), 401, "reauthentication_required")
        #expect(try driver.current(pair.accessToken).status == 401)
    }

    @Test func theIdleWindowIsThirtyDaysWithoutARefresh() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        let first = try driver.signIn()
        clock.advance(by: 29 * Self.day)
        let refreshed = try driver.refresh(first.refreshToken)
        #expect(refreshed.status == 200)
        let session = try #require(refreshed.json["session"] as? [String: Any])
        #expect(session["idleExpiresAt"] as? String == timestamp(clock.now().addingTimeInterval(30 * Self.day)))
        let second = try #require(SessionDriver.Pair(refreshed))
        clock.advance(by: 30 * Self.day)
        expectError(try driver.refresh(second.refreshToken), 401, "reauthentication_required")
    }

    @Test func shortenedSettingsApplyToExistingSessionsAndLengtheningDoesNotReviveThem() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        let idle = try driver.signIn()
        let absolute = try driver.signIn()
        let secret = driver.fixture.developmentSecret
        #expect(
            try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: secret, ["sessionIdleDays": 7, "sessionMaxAgeDays": 10]).status
                == 200)
        clock.advance(by: 6 * Self.day)
        let kept = try #require(SessionDriver.Pair(try driver.refresh(absolute.refreshToken)))
        clock.advance(by: 1 * Self.day)
        // 7 days idle under the shortened window: ended.
        expectError(try driver.refresh(idle.refreshToken), 401, "reauthentication_required")
        clock.advance(by: 3 * Self.day)
        // 10 days since authentication under the shortened maximum: ended although refreshed 4 days ago.
        expectError(try driver.refresh(kept.refreshToken), 401, "reauthentication_required")
        // Back to the defaults: the sessions that ended stay ended.
        #expect(
            try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: secret, ["sessionIdleDays": 30, "sessionMaxAgeDays": 90]).status
                == 200)
        expectError(try driver.refresh(idle.refreshToken), 401, "reauthentication_required")
        expectError(try driver.refresh(kept.refreshToken), 401, "reauthentication_required")
    }

    @Test func theAccessTokenLifetimeFollowsTheSetting() throws {
        let clock = Self.clock()
        let driver = try make(clock: clock)
        let first = try driver.signIn()
        #expect(
            try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, ["accessTokenTtlMinutes": 5])
                .status == 200)
        let response = try driver.refresh(first.refreshToken)
        #expect((response.json["session"] as? [String: Any])?["expiresIn"] as? Int == 300)
        let pair = try #require(SessionDriver.Pair(response))
        clock.advance(by: 299)
        #expect(try driver.current(pair.accessToken).status == 200)
        clock.advance(by: 1)
        #expect(try driver.current(pair.accessToken).status == 401)
    }

    // MARK: Errors

    @Test func refreshErrorsInOrder() throws {
        let driver = try make()
        let pair = try driver.signIn()
        let client = driver.server.client
        expectError(try SessionDriver.refresh(client, clientID: nil, body: ["refreshToken": pair.refreshToken]), 401, "invalid_client")
        expectError(try SessionDriver.refresh(client, clientID: "pk_test_nope", rawBody: Array("{".utf8)), 401, "invalid_client")
        for body in ["", "{", "{\"refreshToken\": 5}", "{}", "{\"refreshToken\":\"a\",\"refreshToken\":\"b\"}"] {
            expectError(
                try SessionDriver.refresh(client, clientID: driver.fixture.developmentKey, rawBody: Array(body.utf8)), 400,
                "invalid_request")
        }
        expectError(try driver.refresh("zrt_unknown"), 400, "invalid_grant")
        // Another environment's key: invalid_grant, and the token is untouched.
        expectError(try driver.refresh(pair.refreshToken, clientID: driver.fixture.productionKey), 400, "invalid_grant")
        #expect(try driver.refresh(pair.refreshToken).status == 200)
    }

    func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!))
    }
}
