import Dispatch
import Foundation
import Glibc
import Postgres
import PostgresStore
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// What a client and a load balancer see when PostgreSQL fails under the server (docs/operations.md,
/// "PostgreSQL high availability" and "Database deadlines"): a read-only server and a frozen one answer
/// 503 with `Retry-After`, never a 500; `/readyz` is not ready; `/healthz` never waits.
@Suite struct DatabaseFaultTests {
    /// A migrated database of its own on the test cluster, for settings no other test may see.
    final class ScratchDatabase: Sendable {
        let name: String
        let url: String

        init() throws {
            name = "scratch_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            try PostgresConnection(url: TestDatabase.url).query("CREATE DATABASE \(name)")
            let base = TestDatabase.url
            guard let range = base.range(of: "///zevauth") else { throw TestHTTPClient.Failure.malformed }
            url = base.replacingCharacters(in: range, with: "///\(name)")
            let pool = PostgresPool(url: url, size: 1, sharedConnections: 1)
            _ = try Migrator(directory: TestDatabase.repositoryRoot + "/sql").apply(to: pool)
        }

        func admin(_ sql: String, _ parameters: [String?] = []) throws {
            try PostgresConnection(url: TestDatabase.url).query(sql, parameters)
        }

        func terminateBackends() throws {
            try admin(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                [name])
        }

        deinit {
            _ = try? PostgresConnection(url: TestDatabase.url).query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    static func createProject(_ server: TestServer) throws -> TestResponse {
        try server.client.send(
            "POST", "/v1/admin/projects",
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(TestServer.operatorToken)")],
            body: Array(#"{"name":"Failover"}"#.utf8))
    }

    /// An exchange with a publishable key no environment has: it reads PostgreSQL (this store has no
    /// configuration in memory), so it waits on a frozen database, and answers 401 once it answers.
    static func exchange(_ server: TestServer) throws -> TestResponse {
        try server.client.send(
            "POST", "/v1/auth/handoff/exchange",
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer pk_test_frozen_database_probe")],
            body: Array(#"{"code":"hoc_probe","redirectUri":"http://127.0.0.1/callback","codeVerifier":"x"}"#.utf8))
    }

    static func currentSession(_ server: TestServer) throws -> TestResponse {
        try server.client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer zat_not_a_token")])
    }

    /// The pool reaches a server that accepts no writes (a standby, a demoted primary behind a stale URL,
    /// VIP or PgBouncer): every write answers 503 with `Retry-After` (SQLSTATE 25006 is never a 500),
    /// reads still answer, the read-only connections are discarded rather than pooled, and `/readyz` is
    /// 503 so the load balancer drains the instance. When the database is writable again the same server,
    /// not restarted, writes again and is ready.
    @Test func readOnlyDatabaseAnswers503AndIsNotReady() throws {
        let database = try ScratchDatabase()
        let pool = PostgresPool(url: database.url, size: 4, sharedConnections: 2, healthCheckIntervalSeconds: 0.5)
        let server = try TestServer(store: PostgresStore(pool: pool))
        #expect(try Self.createProject(server).status == 201)
        #expect(try server.client.send("GET", "/readyz").status == 200)

        try database.admin("ALTER DATABASE \(database.name) SET default_transaction_read_only = on")
        try database.terminateBackends()
        var statuses: [Int] = []
        for _ in 0..<5 {
            let refused = try Self.createProject(server)
            statuses.append(refused.status)
            if refused.status == 503 {
                #expect(refused.header("Retry-After") != nil)
                #expect(refused.json["error"] as? String == "temporarily_unavailable")
            }
        }
        #expect(!statuses.contains(500))
        #expect(statuses.filter { $0 == 503 }.count == 5)
        #expect(try Self.currentSession(server).status == 401)
        #expect(try server.client.send("GET", "/readyz").status == 503)
        // Each refused write closed its connection: none of the pool's stays behind on the read-only server
        // except the ones reads use.
        #expect(try Self.currentSession(server).status == 401)
        #expect(server.serverFailureLines.filter { $0.contains(" 500 ") }.isEmpty)

        try database.admin("ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        try database.terminateBackends()
        #expect(eventually(seconds: 5) { (try? Self.createProject(server).status) == 201 })
        #expect(eventually(seconds: 5) { (try? server.client.send("GET", "/readyz").status) == 200 })
    }

    /// Every PostgreSQL process of a throwaway cluster frozen (SIGSTOP, as a hung host or a partitioned
    /// network looks from here): `/healthz` keeps answering within a second while database requests are
    /// stuck, each of those answers 503 with `Retry-After` within its deadline, `/readyz` is 503 within a
    /// bounded time, and once the cluster thaws the same server answers normally. Run with requests of the
    /// database queue (the current session) and with the hot path's exchanges, which run on the HTTP workers
    /// within the inline budget (half of the 8 workers) and on the queue beyond it.
    @Test(.timeLimit(.minutes(2)), arguments: [false, true]) func frozenDatabaseNeverHoldsHealthz(hotPath: Bool) throws {
        let directory = NSTemporaryDirectory() + "zevauth-freeze-" + UUID().uuidString.prefix(8)
        let cluster = LocalPostgresCluster(directory: directory, port: Int.random(in: 20_000...40_000))
        let url = try cluster.start() + "&connect_timeout=2"
        TestProcesses.recordPostmaster(clusterDirectory: directory)
        defer {
            try? cluster.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        var options = PostgresConnectionOptions()
        options.statementTimeoutMilliseconds = 1000
        let pool = PostgresPool(url: url, size: 30, sharedConnections: 4, options: options)
        _ = try Migrator(directory: TestDatabase.repositoryRoot + "/sql").apply(to: pool)
        // The hot-path run has as many HTTP workers as the daemon (8), as `serve` has.
        let server = try TestServer(live: true, configure: { if hotPath { $0.httpThreads = 8 } }, store: PostgresStore(pool: pool))
        let stuckRequest: @Sendable () throws -> TestResponse = { hotPath ? try Self.exchange(server) : try Self.currentSession(server) }
        #expect(try stuckRequest().status == 401)
        #expect(try server.client.send("GET", "/readyz").status == 200)
        let workQueues = server.app.context.workQueues

        let backend = try pool.query("SELECT pg_backend_pid() AS pid").rows[0].int("pid")
        let postmaster = try #require(Self.parent(of: pid_t(backend)))
        let frozen = [postmaster] + Self.children(of: postmaster)
        for pid in frozen { kill(pid, SIGSTOP) }
        var thawed = false
        let thaw = {
            if !thawed { for pid in frozen { kill(pid, SIGCONT) } }
            thawed = true
        }
        defer { thaw() }

        // Many more stuck database requests than the server has HTTP workers (8), so every worker would
        // hold one if database work ran on them.
        let stuck = 40
        let answers = Mutex<[(status: Int, retryAfter: String?, seconds: Double)]>([])
        let group = DispatchGroup()
        // A thread each (a dispatch queue would run only a few at once on a small machine).
        for _ in 0..<stuck {
            group.enter()
            Thread {
                let started = Date()
                let response = try? stuckRequest()
                answers.withLock {
                    $0.append((response?.status ?? 0, response?.header("Retry-After"), Date().timeIntervalSince(started)))
                }
                group.leave()
            }.start()
        }
        usleep(300_000)
        for _ in 0..<5 {
            let started = Date()
            let health = try server.client.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(Date().timeIntervalSince(started) < 1)
            usleep(100_000)
        }
        #expect(group.wait(timeout: .now() + 40) == .success)
        // `/readyz` answers from a check at most one health-check interval (5 s) old; each check is bounded
        // by the statement deadline, so it turns 503 within a bounded time and each answer is prompt.
        var readyAnswers: [(status: Int, seconds: Double)] = []
        let readyDeadline = Date().addingTimeInterval(15)
        while Date() < readyDeadline {
            let started = Date()
            let status = (try? server.client.send("GET", "/readyz").status) ?? 0
            readyAnswers.append((status, Date().timeIntervalSince(started)))
            if status == 503 { break }
            usleep(250_000)
        }
        #expect(readyAnswers.last?.status == 503)
        #expect(readyAnswers.allSatisfy { $0.seconds < 4 })
        thaw()

        let seen = answers.withLock { $0 }
        #expect(seen.count == stuck)
        for answer in seen {
            #expect(answer.status == 503)
            #expect(answer.retryAfter != nil)
        }
        // Each answers at its deadline (1 s + 1 s of client wait, or a new connection's connect_timeout of
        // 2 s); the database queue's threads take them in waves, so the first wave answers within one. On
        // the hot path a request whose connection sits on a worker held by a budgeted request waits for
        // that worker first (one deadline), so only the bound below holds there.
        let prompt = seen.filter { $0.seconds < 4 }.count
        if !hotPath { #expect(prompt >= workQueues.database.threads, "only \(prompt) answered within 4 s") }
        #expect(seen.allSatisfy { $0.seconds < 15 })
        #expect(eventually(seconds: 15) { (try? stuckRequest().status) == 401 })
        #expect(eventually(seconds: 15) { (try? server.client.send("GET", "/readyz").status) == 200 })
        #expect(server.serverFailureLines.filter { $0.contains(" 500 ") }.isEmpty)
    }

    /// The database settings: `ZEVAUTH_DATABASE_PREPARED`, `ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS` and
    /// `ZEVAUTH_DATABASE_SETTLE_MS`, their defaults, flags and ranges.
    @Test func databaseSettingsLoadWithDefaultsAndRanges() throws {
        let base = [
            "ZEVAUTH_DATABASE_URL": "postgresql://db.invalid/zevauth", "ZEVAUTH_ISSUER": "https://auth.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": "zop_database_fault_test_operator_token_0123",
        ]
        let defaults = try ConfigurationLoader.load(environment: base)
        #expect(defaults.databasePrepared)
        #expect(defaults.databaseStatementTimeoutMilliseconds == 5000)
        #expect(defaults.databaseSettleMilliseconds == 15_000)
        var set = base
        set["ZEVAUTH_DATABASE_PREPARED"] = "false"
        set["ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS"] = "2500"
        set["ZEVAUTH_DATABASE_SETTLE_MS"] = "0"
        let loaded = try ConfigurationLoader.load(environment: set)
        #expect(!loaded.databasePrepared)
        #expect(loaded.databaseStatementTimeoutMilliseconds == 2500)
        #expect(loaded.databaseSettleMilliseconds == 0)
        #expect(try !ConfigurationLoader.load(environment: base, arguments: ["--database-prepared", "0"]).databasePrepared)
        for (key, value) in [
            ("ZEVAUTH_DATABASE_PREPARED", "maybe"), ("ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS", "50"),
            ("ZEVAUTH_DATABASE_SETTLE_MS", "999999"),
        ] {
            var bad = base
            bad[key] = value
            #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(environment: bad) }
        }
    }

    /// The parent process id of `pid` (`/proc/<pid>/stat`, field 4).
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// Every process whose parent is `pid`.
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { parent(of: $0) == pid }
    }
}

/// Polls `condition` every 100 ms for up to `seconds`.
private func eventually(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(100_000)
    }
    return condition()
}
