import Dispatch
import Synchronization

/// A fixed-size pool of `PostgresConnection`s, safe to share between threads.
///
/// Connections are opened lazily, up to `size`. A caller waits at most the acquire timeout for a free one.
/// A connection that is found broken — `PQstatus` bad, a connection-class error (SQLSTATE class `08`,
/// `57P01`…`57P03`), or a backend that died while the connection sat idle — is discarded, and the next
/// caller gets a fresh one. Nothing is retried automatically: re-running a statement that may have been
/// executed is the caller's decision.
///
/// Opening a connection blocks the caller; over TCP, put `connect_timeout=<seconds>` in the URL so an
/// unreachable server cannot hold a caller for the kernel's TCP timeout.
public final class PostgresPool: Sendable {
    private let url: String
    private let acquireTimeoutSeconds: Double
    /// One permit per connection that may be in use; waiting on it is how callers queue.
    private let permits: DispatchSemaphore
    /// Open connections not currently lent out.
    private let idle = Mutex<[PostgresConnection]>([])
    /// The most connections open at once.
    private let size: Int
    /// Connections lent out right now.
    private let lent = Atomic<Int>(0)

    /// The pool's state now (the `zevauth_db_pool_connections` gauge): open idle connections, connections
    /// lent out, and the most that may be open. Read under the idle list's lock: for scrapes, not hot paths.
    public var occupancy: (idle: Int, inUse: Int, size: Int) {
        (idle.withLock { $0.count }, lent.load(ordering: .relaxed), size)
    }

    /// Creates a pool; no connection is opened until the first use.
    /// - Parameters:
    ///   - url: A libpq connection string or URI (never included in errors).
    ///   - size: The most connections open at once; at least 1.
    ///   - acquireTimeoutSeconds: How long, in seconds, a caller waits for a free connection before
    ///     `PostgresError.Kind.poolTimeout`.
    public init(url: String, size: Int = 10, acquireTimeoutSeconds: Double = 5) {
        precondition(size >= 1, "a PostgresPool needs at least one connection")
        self.url = url
        self.acquireTimeoutSeconds = acquireTimeoutSeconds
        self.permits = DispatchSemaphore(value: size)
        self.size = size
    }

    /// Lends one connection to `body`, then takes it back.
    ///
    /// Do not keep the connection after `body` returns. A transaction left open by `body` is rolled back
    /// when the connection comes back.
    /// - Parameter body: Work on the connection; runs on the calling thread.
    /// - Returns: What `body` returns.
    /// - Throws: `PostgresError` (`.poolTimeout` when no connection is free in time, `.connection` when one
    ///   cannot be opened), or whatever `body` throws.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try acquire()
        lent.wrappingAdd(1, ordering: .relaxed)
        defer { lent.wrappingSubtract(1, ordering: .relaxed) }
        do {
            let value = try body(connection)
            release(connection, broken: false)
            return value
        } catch {
            release(connection, broken: (error as? PostgresError)?.kind == .connection)
            throw error
        }
    }

    /// Runs `body` inside `BEGIN` … `COMMIT` on one connection; rolls back when `body` throws.
    ///
    /// The isolation level is the server default (READ COMMITTED); run `SET TRANSACTION ISOLATION LEVEL …`
    /// first in `body` for another. Serialization failures (`40001`) and deadlocks (`40P01`) are thrown, not
    /// retried.
    /// - Parameter body: The transaction's statements.
    /// - Returns: What `body` returns, once COMMIT succeeded.
    /// - Throws: `PostgresError` from BEGIN or COMMIT, or what `body` threw (after ROLLBACK). When `body`
    ///   swallowed a statement error, PostgreSQL turns COMMIT into ROLLBACK; that is thrown as `25P02`
    ///   (`inFailedSQLTransaction`) rather than reported as success. When COMMIT itself fails with a
    ///   `.connection` error, whether the transaction committed is unknown.
    @discardableResult
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { connection in
            try connection.query("BEGIN")
            let value: T
            do {
                value = try body(connection)
            } catch {
                if connection.isHealthy { _ = try? connection.query("ROLLBACK") }
                throw error
            }
            let commit = try connection.query("COMMIT")
            if commit.commandTag == "ROLLBACK" {
                throw PostgresError(
                    kind: .query, sqlState: .inFailedSQLTransaction,
                    message: "the transaction was rolled back because a statement in it failed")
            }
            return value
        }
    }

    /// Runs one statement on a pooled connection; see `PostgresConnection.query(_:_:)`.
    /// - Parameters:
    ///   - sql: One SQL statement with `$n` placeholders.
    ///   - parameters: Text values; `nil` is SQL NULL.
    /// - Throws: `PostgresError`.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        try withConnection { try $0.query(sql, parameters) }
    }

    /// Runs one constant, hot statement prepared once per pooled connection (`PostgresConnection.query(prepared:_:)`).
    @discardableResult
    public func query(prepared sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        try withConnection { try $0.query(prepared: sql, parameters) }
    }

    /// Whether the database answers `SELECT 1` within the acquire timeout (for a readiness probe).
    public func ping() -> Bool {
        (try? query("SELECT 1 AS ok"))?.first?["ok"] == "1"
    }

    // MARK: Lending

    private func acquire() throws -> PostgresConnection {
        guard permits.wait(timeout: .now() + acquireTimeoutSeconds) == .success else {
            throw PostgresError(
                kind: .poolTimeout,
                message: "no database connection became free within \(acquireTimeoutSeconds) s")
        }
        while let connection = idle.withLock({ $0.popLast() }) {
            if connection.checkAlive() { return connection }
            // Broken while idle (backend terminated, server restarted): drop it; PQfinish runs in deinit.
        }
        do {
            return try PostgresConnection(url: url)
        } catch {
            permits.signal()
            throw error
        }
    }

    private func release(_ connection: PostgresConnection, broken: Bool) {
        defer { permits.signal() }
        guard !broken, connection.isHealthy else { return }
        if !connection.isIdleOutsideTransaction {
            _ = try? connection.query("ROLLBACK")
            guard connection.isHealthy, connection.isIdleOutsideTransaction else { return }
        }
        idle.withLock { $0.append(connection) }
    }
}
