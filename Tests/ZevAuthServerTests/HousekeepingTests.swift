import Crypto
import Foundation
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Housekeeping deletes what expired more than a day ago and keeps a code whose session is live, so a late
/// valid replay can still revoke that session.
@Suite struct HousekeepingTests {
    @Test func pruningRemovesExpiredRowsButKeepsCodesOfLiveSessions() throws {
        // The suite shares one database: this test lives ten days in the past, so a cutoff eight days ago
        // reaches only its own rows, never a parallel test's.
        let clock = ManualClock(Date().addingTimeInterval(-10 * 86_400))
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let live = try driver.signIn()  // a code with a live session
        let unused = try driver.issueCode(path: "/v1/auth/zevid/start")  // a code never exchanged
        func codeExists(_ code: String) throws -> Bool {
            try TestDatabase.pool.query("SELECT 1 FROM authorization_codes WHERE code_hash = $1", [Crypto.hexSHA256(code)]).first != nil
        }
        #expect(try codeExists(unused.code))
        let pruned = try server.store.pruneExpired(before: Date().addingTimeInterval(-8 * 86_400))
        #expect(pruned.authorizationCodes >= 1)
        #expect(pruned.authorizationRequests >= 2)
        #expect(try codeExists(unused.code) == false)
        let kept = try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM authorization_codes c JOIN sessions s ON s.authorization_code_id = c.id WHERE s.id = $1",
            [live.sessionID])
        #expect(try kept.rows[0].int("n") == 1)
    }
}
