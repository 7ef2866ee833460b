import Authorize
import Crypto
import Foundation
import Postgres
import Synchronization
import Testing
import ZevAuthTesting

@testable import PostgresStore

/// The replay that races the winning exchange (docs/protocol.md#exchange-replay: its session is revoked if any
/// valid replay came), made deterministic: the winner's transaction is held open until the replay is seen waiting on
/// the code's row lock, then committed.
@Suite struct ExchangeRaceTests {
    @Test func aValidReplayThatWaitedOnTheWinnerStillRevokesTheWinnersSession() throws {
        let store = PostgresStore(pool: TestDatabase.pool)
        let fixture = try Fixture.make(store: store)
        let environment = try #require(try store.environment(publishableKey: fixture.developmentKey))
        let code = try Crypto.mintToken(prefix: "hoc_")
        let pkce = PKCEPair()
        let redirect = "http://127.0.0.1:9/cb"
        let now = Date()
        try TestDatabase.pool.query(
            """
            INSERT INTO authorization_codes (code_hash, environment_id, user_id, redirect_uri, code_challenge, auth_time, issued_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, to_timestamp($6::float8), to_timestamp($6::float8), to_timestamp($6::float8) + interval '60 seconds')
            """, [Crypto.hexSHA256(code), environment.id, fixture.userID, redirect, pkce.challenge, String(now.timeIntervalSince1970)])

        func attempt() throws -> ExchangeAttempt {
            ExchangeAttempt(
                publishableKey: fixture.developmentKey, codeHash: Crypto.hexSHA256(code), requestedRedirectURI: redirect,
                verifierChallenge: pkce.challenge, attemptID: UUID().uuidString,
                accessTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zat_")),
                refreshTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zrt_")), now: now)
        }

        // The winner: the exchange statement inside an open transaction.
        let winner = try PostgresConnection(url: TestDatabase.url)
        try winner.query("BEGIN")
        let won = try attempt()
        let settings = try #require(
            try PostgresAuthorizations(pool: TestDatabase.pool).uncachedExchangeEnvironment(publishableKey: won.publishableKey))
        let row = try winner.query(
            PostgresAuthorizations.exchangeSQL, PostgresAuthorizations.parameters(won, environment: settings, proof: false)
        ).rows[0]
        #expect(try row.bool("won"))
        let sessionID = try row.string("session_id")

        // The replay blocks on the row lock …
        let replay = try attempt()
        let outcome = Mutex<ExchangeFacts?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = try? store.authorizations.exchange(replay)
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(try TestDatabase.waitForWaiters(blockedBy: winner), "the replay never waited on the winner's lock")
        // … until the winner commits; then it must still find and revoke the winner's session.
        try winner.query("COMMIT")
        #expect(done.wait(timeout: .now() + 10) == .success)
        let facts = try #require(outcome.withLock { $0 })
        #expect(facts.code == .alreadyConsumed(revokedSession: true))
        #expect(ExchangeDecision.decide(facts, proofPresented: false) == .refused(ExchangeDecision.invalidCode))
        #expect(try store.isSessionRevoked(id: sessionID) == true)
    }
}
