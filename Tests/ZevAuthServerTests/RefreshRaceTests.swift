import Authorize
import Crypto
import Foundation
import Postgres
import Synchronization
import Testing
import ZevAuthTesting

@testable import PostgresStore

/// Two refreshes of one token, made deterministic: the first runs the refresh statement inside an open
/// transaction; the second is seen waiting on the session's row lock, then the first commits. At grace 0
/// the second must revoke the session; within a grace it must get a pair of its own.
@Suite struct RefreshRaceTests {
    @Test(arguments: [0, 30], [true, false])
    func theSecondOfTwoRacingRefreshesDecidesOnTheWinnersCommittedRow(grace: Int, firstPairInRow: Bool) throws {
        let store = PostgresStore(pool: TestDatabase.pool)
        let fixture = try Fixture.make(store: store)
        let environment = try #require(try store.environment(publishableKey: fixture.developmentKey))
        _ = try store.updateSessionSettings(
            environmentID: environment.id, SessionSettingsUpdate(refreshReuseGraceSeconds: grace), now: Date())
        let now = Date()
        let refreshToken = try Crypto.mintToken(prefix: "zrt_")
        SuiteCapture.secret(refreshToken)
        let parameters: [String?] = [
            environment.id, fixture.userID, String(now.timeIntervalSince1970),
            Crypto.hexSHA256(try Crypto.mintToken(prefix: "zat_")), Crypto.hexSHA256(refreshToken),
        ]
        // Either shape a generation-1 session has: its first pair in the session row, as the exchange
        // writes it (sql/021), or in the token tables, as sessions made before sql/021 keep it.
        let sessionID = try TestDatabase.pool.query(
            firstPairInRow
                ? """
                INSERT INTO sessions (environment_id, user_id, auth_time, created_at, last_refreshed_at,
                    first_access_token_hash, first_access_expires_at, first_refresh_token_hash)
                VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8), to_timestamp($3::float8),
                    $4, to_timestamp($3::float8) + interval '15 minutes', $5)
                RETURNING id AS session_id
                """
                : """
                WITH s AS (
                    INSERT INTO sessions (environment_id, user_id, auth_time, created_at, last_refreshed_at)
                    VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8), to_timestamp($3::float8))
                    RETURNING id
                ), a AS (
                    INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
                    SELECT $4, id, to_timestamp($3::float8), to_timestamp($3::float8) + interval '15 minutes' FROM s
                )
                INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
                SELECT $5, id, 1, to_timestamp($3::float8) FROM s RETURNING session_id
                """,
            parameters
        ).rows[0].string("session_id")

        func attempt() throws -> RefreshAttempt {
            RefreshAttempt(
                publishableKey: fixture.developmentKey, refreshTokenHash: Crypto.hexSHA256(refreshToken),
                newAccessTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zat_")),
                newRefreshTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zrt_")), now: now)
        }

        let winner = try PostgresConnection(url: TestDatabase.url)
        try winner.query("BEGIN")
        let won = try attempt()
        let settings = try #require(
            try PostgresAuthorizations(pool: TestDatabase.pool).uncachedExchangeEnvironment(publishableKey: won.publishableKey))
        let row = try winner.query(
            PostgresSessions.refreshSQL, PostgresSessions.parameters(won, environment: settings, proof: false)
        ).rows[0]
        #expect(row["session_id"] == sessionID)
        #expect(try row.bool("reused") == false)

        let outcome = Mutex<RefreshOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let second = try attempt()
        Thread.detachNewThread {
            let result = try? store.sessions.refresh(second)
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(try TestDatabase.waitForWaiters(blockedBy: winner), "the second refresh never waited on the winner's lock")
        try winner.query("COMMIT")
        #expect(done.wait(timeout: .now() + 10) == .success)
        let result = try #require(outcome.withLock { $0 })
        if grace == 0 {
            #expect(result == .ended(revokedForReuse: true))
            #expect(try store.isSessionRevoked(id: sessionID) == true)
        } else {
            guard case .refreshed(let session) = result else {
                Issue.record("expected a pair within the grace, got \(result)")
                return
            }
            #expect(session.sessionID == sessionID)
            #expect(try store.isSessionRevoked(id: sessionID) == false)
        }
    }
}
