import Dispatch
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

    /// An idle connection whose backend died is found by the background health check (or, idle longer
    /// than the interval, when next lent), so the next call gets a fresh one instead of an error.
    @Test(arguments: [1, 4]) func nextCallSucceedsAfterIdleBackendIsKilled(size: Int) throws {
        let url = try testDatabaseURL()
        let pool = PostgresPool(url: url, size: size, sharedConnections: 1, healthCheckIntervalSeconds: 0.05)
        let before = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        let killer = try PostgresConnection(url: url)
        // The timeout argument (milliseconds) makes pg_terminate_backend wait until the backend is gone.
        let killed = try killer.query("SELECT pg_terminate_backend($1::int, 5000) AS ok", [String(before)])
        #expect(try killed.first?.bool("ok") == true)
        usleep(200_000)

        let after = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        #expect(after != before)
        #expect(pool.ping())
    }

    /// Without a health check in between, the dead connection's statement fails with a connection error
    /// (never retried), the connection is discarded, and the call after it gets a fresh one.
    @Test(arguments: [1, 4]) func brokenConnectionIsReplacedOnTheNextUse(size: Int) throws {
        let url = try testDatabaseURL()
        let pool = PostgresPool(url: url, size: size, sharedConnections: 1, healthCheckIntervalSeconds: 3600)
        let before = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        try PostgresConnection(url: url).query("SELECT pg_terminate_backend($1::int, 5000)", [String(before)])
        let error = try #require(throws: PostgresError.self) { try pool.query("SELECT 1") }
        #expect(error.kind == .connection)
        let after = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        #expect(after != before)
    }

    @Test func healthCheckDiscardsDeadIdleConnections() throws {
        let url = try testDatabaseURL()
        let pool = PostgresPool(url: url, size: 3, sharedConnections: 1, healthCheckIntervalSeconds: 3600)
        let pid = try #require(try pool.query("SELECT pg_backend_pid() AS pid").first).int("pid")
        #expect(pool.checkIdleConnections() == 0)
        try PostgresConnection(url: url).query("SELECT pg_terminate_backend($1::int, 5000)", [String(pid)])
        #expect(eventually { pool.checkIdleConnections() == 1 })
        #expect(pool.ping())
    }

    /// Each of many threads at once gets a connection of its own: no two threads' statements run on the same
    /// backend at the same time, and threads with a dedicated connection keep it.
    @Test func manyThreadsAtOnceNeverShareAConnection() throws {
        let threads = 8
        let pool = PostgresPool(url: try testDatabaseURL(), size: threads + 2, sharedConnections: 2)
        let busy = Mutex<Set<Int>>([])
        let backendsByThread = Mutex<[Int: Set<Int>]>([:])
        let clashes = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for index in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                start.wait()
                for _ in 0..<20 {
                    do {
                        try pool.withConnection { connection in
                            let pid = try #require(try connection.query("SELECT pg_backend_pid() AS pid").first).int("pid")
                            if !busy.withLock({ $0.insert(pid).inserted }) { clashes.add(1, ordering: .relaxed) }
                            usleep(1_000)
                            busy.withLock { _ = $0.remove(pid) }
                            backendsByThread.withLock { _ = $0[index, default: []].insert(pid) }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for _ in 0..<threads { start.signal() }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(failures.withLock { $0 } == [])
        #expect(clashes.load(ordering: .relaxed) == 0)
        let byThread = backendsByThread.withLock { $0 }
        #expect(byThread.count == threads)
        #expect(byThread.values.allSatisfy { $0.count == 1 })
        #expect(Set(byThread.values.flatMap { $0 }).count == threads)
    }

    /// While connections are free, no acquire waits: with every shared connection held, threads with a
    /// dedicated connection still get theirs at once (the short timeout would fail them otherwise).
    @Test func noAcquireBlocksWhileConnectionsAreFree() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 3, sharedConnections: 1, acquireTimeoutSeconds: 0.2)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let results = Mutex<[String]>([])
        let group = DispatchGroup()
        // Two threads claim the two dedicated connections first.
        let claimed = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            group.enter()
            claimed.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                _ = try? pool.query("SELECT 1")
                claimed.leave()
                go.wait()
                let started = ContinuousClock.now
                let ok = (try? pool.query("SELECT 1 AS ok"))?.first?["ok"] == "1"
                let waited = ContinuousClock.now - started < .milliseconds(150)
                results.withLock { $0.append(ok && waited ? "ok" : "waited or failed") }
            }
        }
        #expect(claimed.wait(timeout: .now() + 10) == .success)
        // This thread has no dedicated connection left: it takes the one shared connection and holds it.
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            _ = try? pool.withConnection { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        go.signal()
        go.signal()
        usleep(100_000)
        release.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(results.withLock { $0 } == ["ok", "ok"])
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

/// Polls `condition` for up to `seconds`.
private func eventually(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
