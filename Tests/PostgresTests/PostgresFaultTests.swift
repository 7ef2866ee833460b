import Authorize
import Foundation
import Glibc
import Postgres
import PostgresStore
import Testing

/// A database of its own on the test cluster, for a test that changes database-wide settings
/// (`default_transaction_read_only`) no other test may see. Dropped at the end.
final class ScratchDatabase: Sendable {
    let name: String
    let url: String
    let adminURL: String

    init() throws {
        adminURL = try testDatabaseURL()
        name = "scratch_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try PostgresConnection(url: adminURL).query("CREATE DATABASE \(name)")
        guard let range = adminURL.range(of: "///zevauth") else { throw MissingTestDatabase() }
        url = adminURL.replacingCharacters(in: range, with: "///\(name)")
    }

    /// Runs one statement as the administrator on the base database.
    func admin(_ sql: String) throws {
        try PostgresConnection(url: adminURL).query(sql)
    }

    /// Terminates every backend connected to this database, waiting until each is gone.
    func terminateBackends() throws {
        try PostgresConnection(url: adminURL).query(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [name])
    }

    /// Backends connected to this database right now (not counting the one asking).
    func backendCount() throws -> Int {
        try PostgresConnection(url: adminURL).query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]
        ).rows[0].int("n")
    }

    deinit {
        if let admin = try? PostgresConnection(url: adminURL) {
            _ = try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }
}

/// A read-only or recovering server, a missed deadline and a dead first host (docs/operations.md,
/// "PostgreSQL high availability" and "Database deadlines").
@Suite struct PostgresFaultTests {
    /// A write that meets a read-only server (SQLSTATE 25006: a standby, a demoted primary, or
    /// `default_transaction_read_only`) discards its connection like a broken one, is translated to
    /// `StoreUnavailable` (a 503, never a 500), and the pool says the database accepts no writes; once
    /// the database is writable again, the next use reconnects and writes.
    @Test func readOnlyServerDiscardsTheConnectionAndIsNotWritable() throws {
        let database = try ScratchDatabase()
        let pool = PostgresPool(url: database.url, size: 2, sharedConnections: 1, healthCheckIntervalSeconds: 1)
        try pool.query("CREATE TABLE notes (x int)")
        try pool.query("INSERT INTO notes VALUES (1)")
        #expect(pool.acceptsWrites())

        // Every session of the database is read-only from now on, as on a standby the pool reconnected to.
        try database.admin("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try database.terminateBackends()
        _ = try? pool.query("SELECT 1")  // the terminated connection fails once and is replaced
        let readOnlyPID = try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid")
        let error = try #require(throws: PostgresError.self) { try pool.query("INSERT INTO notes VALUES (2)") }
        #expect(error.sqlState == .readOnlySQLTransaction)
        #expect(error.kind == .connection)
        #expect(PostgresEdge.translate(error) as? StoreUnavailable == StoreUnavailable(reason: "read_only"))
        #expect(!pool.acceptsWrites())
        // The read-only connection was closed, not pooled: the next use has a fresh backend. Reads work on
        // a read-only server; each write fails, on a connection then discarded.
        let nextPID = try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid")
        #expect(nextPID != readOnlyPID)
        #expect(throws: PostgresError.self) { try pool.query("INSERT INTO notes VALUES (3)") }
        #expect(try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid") != nextPID)
        #expect(!pool.acceptsWrites())

        // Writable again (the failover finished): the pool reconnects without a restart.
        try database.admin("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        try database.terminateBackends()
        _ = try? pool.query("SELECT 1")
        try pool.query("INSERT INTO notes VALUES (4)")
        usleep(1_200_000)
        #expect(pool.acceptsWrites())
    }

    /// `acceptsWrites()` answers from a check younger than the health-check interval: many probes cost
    /// one statement.
    @Test func writabilityIsCheckedAtMostOncePerInterval() throws {
        let demoted = try writablePoolWhoseDatabaseTurnsReadOnly()
        let pool = demoted.pool
        // Within the interval the cached answer stands (no statement runs), though the database changed.
        for _ in 0..<50 { #expect(pool.acceptsWrites()) }
    }

    /// A "not writable" answer is asked again after a quarter second, whatever the health-check interval:
    /// once the failover's new primary accepts writes, the readiness probe says so on its next call.
    @Test func notWritableIsAskedAgainSoonSoReadinessReturnsAfterAFailover() throws {
        let database = try ScratchDatabase()
        let pool = PostgresPool(url: database.url, size: 2, sharedConnections: 1, healthCheckIntervalSeconds: 3600)
        try pool.query("CREATE TABLE notes (x int)")
        #expect(pool.acceptsWrites())
        try database.admin("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try database.terminateBackends()
        _ = try? pool.query("SELECT 1")
        #expect(throws: PostgresError.self) { try pool.query("INSERT INTO notes VALUES (1)") }
        #expect(!pool.acceptsWrites())

        try database.admin("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        try database.terminateBackends()
        _ = try? pool.query("SELECT 1")  // the terminated connection fails once and is replaced
        usleep(300_000)
        #expect(pool.acceptsWrites())
    }

    /// A lost connection makes the next readiness probe ask the database again, whatever the health-check
    /// interval: the primary went away, and the node behind the URL now is a standby.
    @Test func aLostConnectionMakesTheNextProbeAskAgain() throws {
        let demoted = try writablePoolWhoseDatabaseTurnsReadOnly()
        let pool = demoted.pool
        #expect(throws: PostgresError.self) { try pool.query("SELECT 1") }
        #expect(!pool.acceptsWrites())
    }

    /// A pool (health-check interval 3600 s, so no check falls due during a test) that has answered
    /// "writable" once; then every new session of its database is read-only and its connections are ended,
    /// as when the primary behind the URL is demoted. The database is returned too, to outlive the pool.
    private func writablePoolWhoseDatabaseTurnsReadOnly() throws -> (database: ScratchDatabase, pool: PostgresPool) {
        let database = try ScratchDatabase()
        let pool = PostgresPool(url: database.url, size: 1, sharedConnections: 1, healthCheckIntervalSeconds: 3600)
        #expect(pool.acceptsWrites())
        try database.admin("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try database.terminateBackends()
        return (database, pool)
    }

    /// The server's `statement_timeout` (SQLSTATE 57014) ends a statement past the deadline: a 503, and
    /// the connection is kept.
    @Test func statementTimeoutIsUnavailableAndKeepsTheConnection() throws {
        var options = PostgresConnectionOptions()
        options.statementTimeoutMilliseconds = 200
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1, sharedConnections: 1, options: options)
        let pid = try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid")
        let started = Date()
        let error = try #require(throws: PostgresError.self) { try pool.query("SELECT pg_sleep(3)") }
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(error.sqlState == .queryCanceled)
        #expect(PostgresEdge.translate(error) as? StoreUnavailable == StoreUnavailable(reason: "statement_timeout"))
        #expect(try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid") == pid)
    }

    /// A backend that stops answering (here SIGSTOPped, as a frozen server or a network that drops
    /// packets) cannot hold the caller: the client's own wait on the socket ends one second past the
    /// statement timeout, the connection is discarded, and the next use gets a fresh one.
    @Test func frozenBackendMissesTheClientDeadline() throws {
        var options = PostgresConnectionOptions()
        options.statementTimeoutMilliseconds = 300
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1, sharedConnections: 1, options: options)
        let pid = try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid")
        #expect(kill(pid_t(pid), SIGSTOP) == 0)
        defer { kill(pid_t(pid), SIGCONT) }
        let started = Date()
        let error = try #require(throws: PostgresError.self) { try pool.query("SELECT 1") }
        let waited = Date().timeIntervalSince(started)
        #expect(error.kind == .timeout)
        #expect(waited >= 1.2 && waited < 2.5)
        #expect(PostgresEdge.translate(error) as? StoreUnavailable == StoreUnavailable(reason: "statement_deadline"))
        kill(pid_t(pid), SIGCONT)
        #expect(try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid") != pid)
    }

    /// Prepared statements off (PgBouncer in transaction mode): `query(prepared:)` leaves nothing
    /// prepared on the server, and still answers.
    @Test func preparedStatementsCanBeTurnedOff() throws {
        var options = PostgresConnectionOptions()
        options.preparedStatements = false
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1, sharedConnections: 1, options: options)
        #expect(try pool.query(prepared: "SELECT $1::int + 1 AS n", ["41"]).rows[0].int("n") == 42)
        #expect(try pool.query("SELECT count(*) AS n FROM pg_prepared_statements").rows[0].int("n") == 0)
        let preparing = PostgresPool(url: try testDatabaseURL(), size: 1, sharedConnections: 1)
        #expect(try preparing.query(prepared: "SELECT $1::int + 1 AS n", ["41"]).rows[0].int("n") == 42)
        #expect(try preparing.query("SELECT count(*) AS n FROM pg_prepared_statements").rows[0].int("n") == 1)
    }

    /// A prepared statement is found by its text (an equal text built anew is the same statement), and the
    /// column names remembered for it never leak into another statement's rows on the same connection.
    @Test func preparedStatementsKeepTheirOwnColumns() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1, sharedConnections: 1)
        let first = "SELECT $1::int AS a, $1::int + 1 AS b"
        let second = "SELECT $1::int + 1 AS b, $1::int AS a, 'x' AS c"
        for round in 0..<3 {
            let one = try pool.query(prepared: first, [String(round)]).rows[0]
            #expect(try one.int("a") == round && one.int("b") == round + 1 && one["c"] == nil)
            let two = try pool.query(prepared: second, [String(round)]).rows[0]
            #expect(try two.int("a") == round && two.int("b") == round + 1 && two.string("c") == "x")
        }
        let rebuilt = String(first.reversed().reversed())
        #expect(try pool.query(prepared: rebuilt, ["7"]).rows[0].int("b") == 8)
        #expect(try pool.query("SELECT count(*) AS n FROM pg_prepared_statements").rows[0].int("n") == 2)
    }

    /// Several hosts with `target_session_attrs=read-write`: libpq skips a first host that is down and
    /// keeps the writable one.
    @Test func deadFirstHostIsSkipped() throws {
        let url = try testDatabaseURL()
        let query = try #require(URLComponents(string: url)?.queryItems)
        let host = try #require(query.first { $0.name == "host" }?.value)
        let port = try #require(query.first { $0.name == "port" }?.value)
        let user = query.first { $0.name == "user" }?.value ?? "postgres"
        let several =
            "postgresql:///zevauth?host=/nonexistent-zevauth-dir,\(host)&port=1,\(port)&user=\(user)"
            + "&target_session_attrs=read-write"
        let pool = PostgresPool(url: several, size: 1, sharedConnections: 1)
        #expect(try pool.query("SELECT 1 AS one").rows[0].int("one") == 1)
        #expect(pool.acceptsWrites())
    }
}
