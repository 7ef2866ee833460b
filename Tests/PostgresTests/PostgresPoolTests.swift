import Foundation
import Postgres
import Synchronization
import Testing

struct Boom: Error {}

@Suite struct PostgresPoolTests {
    @Test func transactionRollsBackWhenBodyThrows() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        try pool.query("CREATE TABLE items (name text)")
        #expect(throws: Boom.self) {
            try pool.transaction { connection in
                try connection.query("INSERT INTO items VALUES ($1)", ["rolled back"])
                throw Boom()
            }
        }
        try pool.transaction { connection in
            try connection.query("INSERT INTO items VALUES ($1)", ["committed"])
        }
        let names = try pool.query("SELECT name FROM items").rows.map { try $0.string("name") }
        #expect(names == ["committed"])
    }

    @Test func swallowedErrorInsideTransactionIsNotReportedAsCommitted() throws {
        let schema = try TestSchema()
        let pool = schema.pool(size: 1)
        try pool.query("CREATE TABLE items (name text UNIQUE)")
        try pool.query("INSERT INTO items VALUES ('x')")
        let error = try #require(throws: PostgresError.self) {
            try pool.transaction { connection in
                try connection.query("INSERT INTO items VALUES ('y')")
                _ = try? connection.query("INSERT INTO items VALUES ('x')")
            }
        }
        #expect(error.sqlState == .inFailedSQLTransaction)
        #expect(try pool.query("SELECT count(*) AS n FROM items").first?.int("n") == 1)
    }

    @Test func transactionLeftOpenInWithConnectionIsRolledBack() throws {
        let schema = try TestSchema()
        let pool = schema.pool(size: 1)
        try pool.query("CREATE TABLE items (name text)")
        try pool.withConnection { connection in
            try connection.query("BEGIN")
            try connection.query("INSERT INTO items VALUES ('dangling')")
        }
        #expect(try pool.query("SELECT count(*) AS n FROM items").first?.int("n") == 0)
    }

    @Test func poolOfTwoServesEightConcurrentUsers() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 2, acquireTimeoutSeconds: 30)
        let results = Mutex<[Int: Int]>([:])  // user → echoed number
        let backends = Mutex<Set<Int>>([])
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for user in 0..<8 {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    let row = try pool.query(
                        "SELECT $1::int AS n, pg_backend_pid() AS pid, pg_sleep(0.05)::text AS slept", [String(user)])
                    let first = try #require(row.first)
                    let n = try first.int("n")
                    let pid = try first.int("pid")
                    results.withLock { $0[user] = n }
                    backends.withLock { _ = $0.insert(pid) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            thread.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(results.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<8).map { ($0, $0) }))
        #expect(backends.withLock { $0.count } <= 2)
    }

    @Test func exhaustedPoolTimesOut() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1, acquireTimeoutSeconds: 0.2)
        try pool.withConnection { _ in
            let started = Date()
            let error = try #require(throws: PostgresError.self) { try pool.query("SELECT 1") }
            #expect(error.kind == .poolTimeout)
            #expect(Date().timeIntervalSince(started) >= 0.19)
            #expect(!pool.ping())
        }
        #expect(pool.ping())
    }

    @Test func nextCallSucceedsAfterBackendIsKilled() throws {
        let url = try testDatabaseURL()
        let pool = PostgresPool(url: url, size: 1)
        let before = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        let killer = try PostgresConnection(url: url)
        // The timeout argument (milliseconds) makes pg_terminate_backend wait until the backend is gone.
        let killed = try killer.query("SELECT pg_terminate_backend($1::int, 5000) AS ok", [String(before)])
        #expect(try killed.first?.bool("ok") == true)

        let after = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        #expect(after != before)
        #expect(pool.ping())
    }

    @Test func connectionErrorIsReportedAndConnectionReplacedAfterMidUseKill() throws {
        let url = try testDatabaseURL()
        let pool = PostgresPool(url: url, size: 1)
        let killer = try PostgresConnection(url: url)
        let error = try #require(throws: PostgresError.self) {
            try pool.withConnection { connection in
                let pid = try #require(try connection.query("SELECT pg_backend_pid() AS pid").first).int("pid")
                try killer.query("SELECT pg_terminate_backend($1::int, 5000)", [String(pid)])
                try connection.query("SELECT 1")  // the statement is not retried
            }
        }
        #expect(error.kind == .connection)
        #expect(pool.ping())
    }

    @Test func directConnectionReportsBrokenAfterKill() throws {
        let url = try testDatabaseURL()
        let connection = try PostgresConnection(url: url)
        let pid = try #require(try connection.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        try PostgresConnection(url: url).query("SELECT pg_terminate_backend($1::int, 5000)", [String(pid)])
        let error = try #require(throws: PostgresError.self) { try connection.query("SELECT 1") }
        #expect(error.kind == .connection)
        #expect(!connection.isHealthy)
    }
}
