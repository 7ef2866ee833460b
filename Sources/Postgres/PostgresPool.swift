import Dispatch
import Glibc
import Synchronization

/// A fixed-size pool of `PostgresConnection`s, safe to share between threads, whose hot path takes no
/// shared lock (docs/decisions.md, "The connection pool: one connection per thread").
///
/// Two kinds of connection make up `size`:
/// - **Dedicated** (`size - sharedConnections`): the first threads to use the pool each claim one for
///   themselves, kept in a thread-specific slot (`pthread_getspecific`) and reached without a lock or a
///   wait. The server's threads are long-lived and fixed in number (the HTTP workers, the work-queue
///   threads), so sizing the pool for them gives each its own connection. A thread's slot returns to the
///   pool when the thread exits.
/// - **Shared** (`sharedConnections`): every other use — threads that found no dedicated slot free, and a
///   second `withConnection` nested inside the first on one thread — waits at most the acquire timeout for
///   one of these (`PostgresError.Kind.poolTimeout`).
///
/// Health is checked in the background, not per statement: a thread checks every idle connection every
/// `healthCheckIntervalSeconds` (a `poll()` on its socket, no round trip) and discards the dead ones, and a
/// connection that sat idle longer than that interval is checked the same way when it is next lent out. A
/// connection that fails with a connection-class error (`PostgresError.Kind.connection`) is discarded and
/// a fresh one is opened on the next use. Nothing is retried automatically: re-running a statement that
/// may have been executed is the caller's decision.
///
/// Opening a connection blocks the caller for at most `connect_timeout` per host (`options`, 5 s unless the
/// URL names one). Every statement has a deadline (`PostgresConnectionOptions`): the server's
/// `statement_timeout`, and the client's own wait on the socket one second past it.
///
/// Whether the database accepts writes (`acceptsWrites()`, for a readiness probe) is asked with one cheap
/// statement, at most once per health-check interval while the answer is "writable" and at most every 0.25 s
/// while it is not; it is false at once after any statement failed with `25006` (the pool reached a standby),
/// and asked again on the next call after any other lost connection.
public final class PostgresPool: Sendable {
    /// The most connections open at once.
    public let size: Int
    /// How many of `size` are shared rather than dedicated to a thread.
    public let sharedConnections: Int

    /// How connections are opened and how long statements may take.
    public let options: PostgresConnectionOptions

    private let url: String
    private let acquireTimeoutSeconds: Double
    private let healthCheckNanoseconds: UInt64
    /// Dedicated connections that threads may still claim.
    private let unclaimedDedicated: Atomic<Int>
    /// One permit per shared connection that may be in use; waiting on it is how shared callers queue.
    private let sharedPermits: DispatchSemaphore
    /// Open shared connections not currently lent out, with when each came back.
    private let sharedIdle = Mutex<[IdleConnection]>([])
    /// Every thread's dedicated slot, for the health checker and for closing at `deinit`. Touched when a
    /// thread claims or gives back a slot and by the checker, never when a connection is lent.
    private let slots = Mutex<[ObjectIdentifier: DedicatedSlot]>([:])
    /// The thread-specific key whose value is the calling thread's `DedicatedSlot` (retained).
    private let key: ThreadKey
    /// The thread-specific key that is set while the calling thread runs `sharedConnectionsOnly`.
    private let sharedOnly = MarkerKey()
    /// Signalled at `deinit` to stop the health checker.
    private let stopChecker = DispatchSemaphore(value: 0)
    /// Connections lent out right now (one relaxed atomic add each way; read only by scrapes).
    private let lent = Atomic<Int>(0)
    /// What the last writability check found: `Writability.unknown`, `.writable` or `.readOnly`.
    private let writability = Atomic<Int>(Writability.unknown)
    /// When (monotonic nanoseconds) `writability` was last set by a check.
    private let writabilityCheckedAt = Atomic<UInt64>(0)
    /// Set by the first `acceptsWrites()`: from then on the health checker keeps `writability` fresh.
    private let writabilityWanted = Atomic<Bool>(false)

    /// The pool's state now (the `zevauth_db_pool_connections` gauge): claimed thread slots and shared
    /// connections not lent out, connections lent out, and the most that may be open. Takes the slot and idle-list locks: for
    /// scrapes, never for hot paths.
    public var occupancy: (idle: Int, inUse: Int, size: Int) {
        let idleDedicated = slots.withLock { slots in
            // Only the atomic state is read: a slot's connection belongs to its thread.
            slots.values.filter { $0.state.load(ordering: .relaxed) == DedicatedSlot.idle }.count
        }
        return (idleDedicated + sharedIdle.withLock { $0.count }, lent.load(ordering: .relaxed), size)
    }

    /// Creates a pool; no connection is opened until the first use.
    /// - Parameters:
    ///   - url: A libpq connection string or URI (never included in errors).
    ///   - size: The most connections open at once; at least 1.
    ///   - sharedConnections: How many of them are shared by threads without a dedicated one (at least 1,
    ///     at most `size`; default 2, or `size` when smaller); the other `size - sharedConnections` go one
    ///     to a thread.
    ///   - acquireTimeoutSeconds: How long, in seconds, a caller waits for a shared connection before
    ///     `PostgresError.Kind.poolTimeout`.
    ///   - healthCheckIntervalSeconds: How often, in seconds, idle connections are checked in the background
    ///     (default 5).
    ///   - options: Connection defaults, the statement deadline and whether statements are prepared.
    public init(
        url: String, size: Int = 10, sharedConnections: Int = 2, acquireTimeoutSeconds: Double = 5,
        healthCheckIntervalSeconds: Double = 5, options: PostgresConnectionOptions = PostgresConnectionOptions()
    ) {
        precondition(size >= 1, "a PostgresPool needs at least one connection")
        self.url = url
        self.options = options
        self.size = size
        self.sharedConnections = min(size, max(1, sharedConnections))
        self.acquireTimeoutSeconds = acquireTimeoutSeconds
        let interval = healthCheckIntervalSeconds.isFinite ? min(max(healthCheckIntervalSeconds, 0.01), 3600) : 5
        self.healthCheckNanoseconds = UInt64(interval * 1e9)
        self.unclaimedDedicated = Atomic(size - self.sharedConnections)
        self.sharedPermits = DispatchSemaphore(value: self.sharedConnections)
        self.key = ThreadKey()
        startHealthChecker(interval: interval)
    }

    deinit {
        stopChecker.signal()
        // Threads still holding a slot keep only the empty slot object; its connection closes here.
        for slot in slots.withLock({ Array($0.values) }) {
            slot.connection = nil
        }
        key.delete()
        pthread_key_delete(sharedOnly.raw)
    }

    /// Lends one connection to `body`, then takes it back.
    ///
    /// Do not keep the connection after `body` returns. A transaction left open by `body` is rolled back
    /// when the connection comes back. On a thread with a dedicated connection this takes no lock and does
    /// not wait; otherwise it waits at most the acquire timeout for a shared one.
    /// - Parameter body: Work on the connection; runs on the calling thread.
    /// - Returns: What `body` returns.
    /// - Throws: `PostgresError` (`.poolTimeout` when no connection is free in time, `.connection` when one
    ///   cannot be opened), or whatever `body` throws.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        lent.wrappingAdd(1, ordering: .relaxed)
        defer { lent.wrappingSubtract(1, ordering: .relaxed) }
        if sharedOnly.value == nil, let slot = dedicatedSlot(), slot.take() {
            defer { slot.state.store(DedicatedSlot.idle, ordering: .releasing) }
            let connection: PostgresConnection
            if let existing = slot.connection, isUsable(existing, idleSince: slot.idleSince) {
                connection = existing
            } else {
                slot.connection = nil
                connection = try PostgresConnection(url: url, options: options)
                slot.connection = connection
            }
            do {
                let value = try body(connection)
                if !settle(connection, broken: false) { slot.connection = nil }
                slot.idleSince = Self.now()
                return value
            } catch {
                if !settle(connection, broken: breaksConnection(error)) { slot.connection = nil }
                slot.idleSince = Self.now()
                throw error
            }
        }
        let connection = try acquireShared()
        do {
            let value = try body(connection)
            releaseShared(connection, broken: false)
            return value
        } catch {
            releaseShared(connection, broken: breaksConnection(error))
            throw error
        }
    }

    /// Runs `body` with every connection it uses on this thread lent from the shared ones, never from a
    /// dedicated slot (so a thread that uses the database only now and then, such as an HTTP worker running
    /// a budgeted request, does not claim a connection for good). Nests.
    /// - Parameter body: Work that may use the pool.
    /// - Returns: What `body` returns.
    public func sharedConnectionsOnly<T>(_ body: () throws -> T) rethrows -> T {
        if sharedOnly.value != nil { return try body() }
        sharedOnly.value = UnsafeMutableRawPointer(bitPattern: 1)
        defer { sharedOnly.value = nil }
        return try body()
    }

    /// Whether `error` means the connection it came from must not be lent again: a connection-class error
    /// (lost, shutting down, or read-only: `SQLState.isConnectionError`) or a missed deadline. A read-only
    /// error also marks the database as not accepting writes until the next check says otherwise; any
    /// other lost connection makes the next `acceptsWrites()` ask again rather than trust its last answer
    /// (the primary may be gone: a readiness probe must not say "ready" from before it went).
    private func breaksConnection(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        if error.sqlState == .readOnlySQLTransaction {
            writability.store(Writability.readOnly, ordering: .relaxed)
            writabilityCheckedAt.store(Self.now(), ordering: .relaxed)
        } else if error.kind == .connection {
            writability.store(Writability.unknown, ordering: .relaxed)
        }
        return error.kind == .connection || error.kind == .timeout
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

    /// Whether the database answers `SELECT 1` within the acquire timeout.
    public func ping() -> Bool {
        (try? query("SELECT 1 AS ok"))?.first?["ok"] == "1"
    }

    /// Whether the database accepts writes now (for a readiness probe): a connection can be had and its
    /// `transaction_read_only` is `off`, which is false on a standby (in recovery) and under
    /// `default_transaction_read_only`.
    ///
    /// A "writable" answer stands for the health-check interval, so a probe every second costs at most one
    /// statement per interval; the first call also makes the background checker keep the answer fresh. A
    /// "not writable" answer stands for at most `notWritableRecheckNanoseconds` (0.25 s), so the instance is
    /// ready again as soon as a primary accepts writes after a failover, not up to one interval later. A
    /// statement that failed with `25006` sets it false at once. A check that cannot reach the database,
    /// or misses its deadline, is false.
    public func acceptsWrites() -> Bool {
        if !writabilityWanted.load(ordering: .relaxed) { writabilityWanted.store(true, ordering: .relaxed) }
        let checkedAt = writabilityCheckedAt.load(ordering: .relaxed)
        let state = writability.load(ordering: .relaxed)
        let standsFor =
            state == Writability.writable
            ? healthCheckNanoseconds : min(healthCheckNanoseconds, Self.notWritableRecheckNanoseconds)
        if state != Writability.unknown, checkedAt != 0, Self.now() &- checkedAt < standsFor {
            return state == Writability.writable
        }
        return checkWritability()
    }

    /// How long a "not writable" answer of `acceptsWrites()` stands before the next probe asks again:
    /// 0.25 s (monotonic nanoseconds).
    static let notWritableRecheckNanoseconds: UInt64 = 250_000_000

    /// Asks the database whether it accepts writes and remembers the answer (see `acceptsWrites()`).
    @discardableResult
    func checkWritability() -> Bool {
        let writable = (try? query("SELECT current_setting('transaction_read_only') AS read_only"))?.first?["read_only"] == "off"
        writability.store(writable ? Writability.writable : Writability.readOnly, ordering: .relaxed)
        writabilityCheckedAt.store(Self.now(), ordering: .relaxed)
        return writable
    }

    /// Called by the background checker each interval: refreshes the writability answer while someone asks.
    fileprivate func refreshWritabilityIfWanted() {
        if writabilityWanted.load(ordering: .relaxed) { checkWritability() }
    }

    /// Checks every idle connection now, as the background checker does every interval, and discards the
    /// dead ones (they are reopened on their next use).
    /// - Returns: How many connections were discarded.
    @discardableResult
    public func checkIdleConnections() -> Int {
        var discarded = 0
        for slot in slots.withLock({ Array($0.values) }) {
            guard
                slot.state.compareExchange(
                    expected: DedicatedSlot.idle, desired: DedicatedSlot.checking, ordering: .acquiring
                ).exchanged
            else { continue }
            if let connection = slot.connection, !connection.checkAlive() {
                slot.connection = nil
                discarded += 1
            }
            slot.state.store(DedicatedSlot.idle, ordering: .releasing)
        }
        let idle = sharedIdle.withLock { idle in
            defer { idle.removeAll() }
            return idle
        }
        let alive = idle.filter { $0.connection.checkAlive() }
        discarded += idle.count - alive.count
        sharedIdle.withLock { $0.append(contentsOf: alive) }
        return discarded
    }

    // MARK: Dedicated connections

    /// The calling thread's slot: the one it holds, or a newly claimed one while any is left; nil when the
    /// thread must use a shared connection.
    private func dedicatedSlot() -> DedicatedSlot? {
        if let pointer = key.value {
            return Unmanaged<DedicatedSlot>.fromOpaque(pointer).takeUnretainedValue()
        }
        var left = unclaimedDedicated.load(ordering: .relaxed)
        while left > 0 {
            let (exchanged, current) = unclaimedDedicated.compareExchange(
                expected: left, desired: left - 1, ordering: .acquiringAndReleasing)
            if exchanged {
                let slot = DedicatedSlot(pool: self)
                slots.withLock { $0[ObjectIdentifier(slot)] = slot }
                key.value = Unmanaged.passRetained(slot).toOpaque()
                return slot
            }
            left = current
        }
        return nil
    }

    /// Takes back the slot of a thread that is exiting (from the thread-specific key's destructor).
    fileprivate func giveBack(_ slot: DedicatedSlot) {
        slots.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(slot)) }
        // The thread is gone, so nobody lends from this slot any more; wait out a running health check.
        while !slot.state.compareExchange(
            expected: DedicatedSlot.idle, desired: DedicatedSlot.checking, ordering: .acquiring
        ).exchanged {
            sched_yield()
        }
        slot.connection = nil
        unclaimedDedicated.add(1, ordering: .releasing)
    }

    // MARK: Shared connections

    private func acquireShared() throws -> PostgresConnection {
        guard sharedPermits.wait(timeout: .now() + acquireTimeoutSeconds) == .success else {
            throw PostgresError(
                kind: .poolTimeout,
                message: "no database connection became free within \(acquireTimeoutSeconds) s")
        }
        while let idle = sharedIdle.withLock({ $0.popLast() }) {
            if isUsable(idle.connection, idleSince: idle.since) { return idle.connection }
            // Broken while idle (backend terminated, server restarted): drop it; PQfinish runs in deinit.
        }
        do {
            return try PostgresConnection(url: url, options: options)
        } catch {
            sharedPermits.signal()
            throw error
        }
    }

    private func releaseShared(_ connection: PostgresConnection, broken: Bool) {
        defer { sharedPermits.signal() }
        guard settle(connection, broken: broken) else { return }
        let returned = IdleConnection(connection: connection, since: Self.now())
        sharedIdle.withLock { $0.append(returned) }
    }

    // MARK: Health

    /// Whether a connection coming out of the pool can be lent: libpq still calls it healthy, and, when it
    /// sat idle longer than the health-check interval (so the checker may not have seen it yet), its socket
    /// has nothing pending (`PostgresConnection.checkAlive`).
    private func isUsable(_ connection: PostgresConnection, idleSince: UInt64) -> Bool {
        guard connection.isHealthy else { return false }
        guard Self.now() &- idleSince > healthCheckNanoseconds else { return true }
        return connection.checkAlive()
    }

    /// Readies a connection that comes back: rolls back a transaction left open. Returns whether it may be
    /// lent again (false: discard it).
    private func settle(_ connection: PostgresConnection, broken: Bool) -> Bool {
        guard !broken, connection.isHealthy else { return false }
        if !connection.isIdleOutsideTransaction {
            _ = try? connection.query("ROLLBACK")
            guard connection.isHealthy, connection.isIdleOutsideTransaction else { return false }
        }
        return true
    }

    private func startHealthChecker(interval: Double) {
        let stop = stopChecker
        let thread = HealthCheckThread(pool: self, stop: stop, interval: interval)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var handle = pthread_t()
        let started = pthread_create(
            &handle, &attributes,
            { argument in
                guard let argument else { return nil }
                Unmanaged<HealthCheckThread>.fromOpaque(argument).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(thread).toOpaque())
        pthread_attr_destroy(&attributes)
        // Without the checker, connections are still checked when lent after a long idle.
        if started != 0 { Unmanaged.passUnretained(thread).release() }
    }

    /// Monotonic nanoseconds (a vDSO clock read, no system call).
    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

/// The states of `PostgresPool`'s writability answer.
private enum Writability {
    static let unknown = 0
    static let writable = 1
    static let readOnly = 2
}

/// A shared connection waiting in the pool, and when it came back (monotonic nanoseconds).
private struct IdleConnection: @unchecked Sendable {
    let connection: PostgresConnection
    let since: UInt64
}

/// One thread's dedicated connection. `state` says who may touch `connection` and `idleSince`: the owning
/// thread while `lent`, the health checker (or the exiting thread's destructor) while `checking`.
private final class DedicatedSlot: @unchecked Sendable {
    static let idle = 0
    static let lent = 1
    static let checking = 2

    let state = Atomic<Int>(DedicatedSlot.idle)
    var connection: PostgresConnection?
    var idleSince: UInt64 = 0
    weak var pool: PostgresPool?

    init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Called by the owning thread: takes the slot, first waiting out a health check (microseconds) if one
    /// is running. Returns false when the slot is already lent (a nested `withConnection` on the same
    /// thread), which then uses a shared connection.
    func take() -> Bool {
        while true {
            let (exchanged, current) = state.compareExchange(
                expected: DedicatedSlot.idle, desired: DedicatedSlot.lent, ordering: .acquiring)
            if exchanged { return true }
            if current == DedicatedSlot.lent { return false }
            sched_yield()
        }
    }
}

/// A `pthread_key_t` whose destructor gives a dying thread's slot back to its pool.
private struct ThreadKey: @unchecked Sendable {
    let raw: pthread_key_t

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            let slot = Unmanaged<DedicatedSlot>.fromOpaque(pointer).takeRetainedValue()
            slot.pool?.giveBack(slot)
        }
        precondition(created == 0, "pthread_key_create failed: the process has used up its thread-specific keys")
        raw = key
    }

    var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(raw) }
        nonmutating set { pthread_setspecific(raw, newValue) }
    }

    func delete() { pthread_key_delete(raw) }
}

/// A thread-specific flag (set: a non-nil value), with no destructor.
private struct MarkerKey: @unchecked Sendable {
    let raw: pthread_key_t

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, nil)
        precondition(created == 0, "pthread_key_create failed: the process has used up its thread-specific keys")
        raw = key
    }

    var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(raw) }
        nonmutating set { pthread_setspecific(raw, newValue) }
    }
}

/// The background health checker of one pool: wakes every interval until the pool goes away.
private final class HealthCheckThread: @unchecked Sendable {
    weak var pool: PostgresPool?
    let stop: DispatchSemaphore
    let interval: Double

    init(pool: PostgresPool, stop: DispatchSemaphore, interval: Double) {
        self.pool = pool
        self.stop = stop
        self.interval = interval
    }

    func run() {
        while stop.wait(timeout: .now() + interval) == .timedOut {
            guard let pool else { return }
            pool.checkIdleConnections()
            pool.refreshWritabilityIfWanted()
        }
    }
}
