import Authorize
import Crypto
import Foundation
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Housekeeping deletes what expired more than a day ago and keeps a code whose session is live, so a late
/// valid replay can still revoke that session.
@Suite struct HousekeepingTests {
    /// How far in the past this test lives. Pruning is global (one database for the whole suite), so the
    /// test isolates itself by time: every other test's clock is relative to now (`ManualClock`'s default,
    /// `Date()`, or a few days back at most), so a cutoff two days after `isolation` reaches only this test's
    /// rows, whatever the calendar date the suite runs on.
    static let isolation: TimeInterval = -1_000 * 86_400

    @Test func pruningRemovesExpiredRowsButKeepsCodesOfLiveSessions() throws {
        let clock = ManualClock(Date().addingTimeInterval(Self.isolation))
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let live = try driver.signIn()  // a code with a live session
        let unused = try driver.issueCode(path: "/v1/auth/zevid/start")  // a code never exchanged
        func codeExists(_ code: String) throws -> Bool {
            try TestDatabase.pool.query("SELECT 1 FROM authorization_codes WHERE code_hash = $1", [Crypto.hexSHA256(code)]).first != nil
        }
        func pendingSignIns() throws -> Int {
            try TestDatabase.pool.query(
                "SELECT count(*) AS n FROM authorization_requests WHERE environment_id = (SELECT id FROM environments WHERE publishable_key = $1)",
                [fixture.developmentKey]
            ).rows[0].int("n")
        }
        // A pushed authorization request (sql/024), never used.
        let pushed = try driver.postForm(
            "/oauth2/par",
            [
                ("client_id", fixture.developmentKey), ("redirect_uri", SessionDriver.redirect), ("response_type", "code"),
                ("state", "s"), ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ])
        #expect(pushed.status == 201)
        func pushedRequests() throws -> Int {
            try TestDatabase.pool.query(
                """
                SELECT count(*) AS n FROM pushed_authorization_requests
                WHERE environment_id = (SELECT id FROM environments WHERE publishable_key = $1)
                """, [fixture.developmentKey]
            ).rows[0].int("n")
        }
        #expect(try pushedRequests() == 1)
        // A passkey sign-in challenge (sql/022), asked for and never answered.
        let passkeyBrowser = server.browser()
        let signInPage = try passkeyBrowser.get("/account/signin")
        let options = try PasskeyTests.post(
            passkeyBrowser, server, "/account/passkeys/signin/options", ["csrf": try #require(PasskeyTests.dataCSRF(signInPage.text))])
        #expect(options.status == 200)
        let challengeHash = Crypto.sha256(try PasskeyTests.challenge(options)).map { String(format: "%02x", $0) }.joined()
        func passkeyChallenges() throws -> Int {
            try TestDatabase.pool.query("SELECT count(*) AS n FROM passkey_challenges WHERE challenge_hash = $1", [challengeHash]).rows[0]
                .int("n")
        }
        #expect(try passkeyChallenges() == 1)
        // A DPoP proof's use (sql/027), past its 60 seconds long ago.
        let thumbprint = "housekeeping-" + UUID().uuidString
        let use = DPoPProofUse(
            thumbprint: thumbprint, identifierHash: "j", usableUntil: clock.now().addingTimeInterval(60), nonceAccepted: false)
        #expect(try server.store.sessions.recordProofUse(use, now: clock.now()))
        func proofUses() throws -> Int {
            try TestDatabase.pool.query("SELECT count(*) AS n FROM dpop_proof_uses WHERE jkt = $1", [thumbprint]).rows[0].int("n")
        }
        #expect(try proofUses() == 1)
        #expect(try codeExists(unused.code))
        #expect(try pendingSignIns() == 2)
        // Assertions name this test's own rows: a housekeeping pass elsewhere may prune them first.
        _ = try server.store.pruneExpired(before: Date().addingTimeInterval(Self.isolation + 2 * 86_400))
        #expect(try codeExists(unused.code) == false)
        #expect(try pendingSignIns() == 0)
        #expect(try pushedRequests() == 0)
        #expect(try passkeyChallenges() == 0)
        #expect(try proofUses() == 0)
        let kept = try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM authorization_codes c JOIN sessions s ON s.authorization_code_id = c.id WHERE s.id = $1",
            [live.sessionID])
        #expect(try kept.rows[0].int("n") == 1)
    }

    /// A test clock starts near the present: rows a test writes are never old enough for another test's
    /// pruning, on any calendar date.
    @Test func aManualClockStartsAtTheCurrentHour() {
        let start = ManualClock().now()
        #expect(abs(start.timeIntervalSinceNow) <= 3_600)
        #expect(start.timeIntervalSince1970.truncatingRemainder(dividingBy: 3_600) == 0)
    }
}
