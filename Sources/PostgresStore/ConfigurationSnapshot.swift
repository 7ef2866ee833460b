import Authorize
import Dispatch
import Foundation
import Glibc
import Postgres
import Synchronization

/// The environment's settings the exchange and the refresh need, read by publishable key: so their statements
/// take them as parameters instead of reading `environments` themselves.
public struct ExchangeEnvironment: Sendable, Equatable {
    /// The environment's id (a UUID).
    public let id: String
    /// Days after which a session ends however active it is (1–90).
    public let sessionMaxAgeDays: Int
    /// Days without a refresh after which a session ends.
    public let sessionIdleDays: Int
    /// Access tokens' lifetime in minutes.
    public let accessTokenTTLMinutes: Int
    /// Seconds after a rotation during which the rotated refresh token still refreshes (0–60).
    public var refreshReuseGraceSeconds = 0
    /// The algorithm ID tokens are signed with (`RS256` unless the environment chose another).
    public let idTokenSigningAlg: SigningAlgorithm
    /// Whether every token request must carry a DPoP proof (docs/dpop.md).
    public let requireDPoP: Bool

    public init(
        id: String, sessionMaxAgeDays: Int, sessionIdleDays: Int, accessTokenTTLMinutes: Int, idTokenSigningAlg: SigningAlgorithm,
        requireDPoP: Bool
    ) {
        self.id = id
        self.sessionMaxAgeDays = sessionMaxAgeDays
        self.sessionIdleDays = sessionIdleDays
        self.accessTokenTTLMinutes = accessTokenTTLMinutes
        self.idTokenSigningAlg = idTokenSigningAlg
        self.requireDPoP = requireDPoP
    }
}

/// The configuration the hot paths read on every request — the start's client (`StartClient`, by `pk_…` or
/// `zc_…`) and the exchange's environment (`ExchangeEnvironment`) — kept in memory and dropped whenever
/// PostgreSQL says it may have changed (docs/operations.md, "Configuration in memory").
///
/// The rules:
/// - A generation counter (one atomic word, with a "listening" bit) moves on every notification on
///   `channel` (sql/029 sends one when any table the values come from changes, at commit) and on every
///   loss and re-establishment of the listener. Every entry is tagged with the generation read *before*
///   its database read, and a lookup uses it only while the generation is unchanged; so a change committed
///   during a load is never served past the notification that announces it.
/// - While the listener is not listening (never started, lost, reconnecting), every lookup reads PostgreSQL
///   directly and nothing is cached: correct, only slower.
/// - Each thread keeps its own entries (a thread-specific slot, as `PostgresPool` keeps connections), so a
///   hit takes no lock: one atomic load, one `pthread_getspecific`, one dictionary lookup. A thread keeps
///   at most `maximumEntriesPerThread` of each kind and starts over past it.
/// - "Unknown" (nil) is cached like any answer: creating an environment or a web client notifies too.
/// - With a delivery check (`startListening(url:options:probe:)`), a `LISTEN` that succeeded is not trusted
///   by itself: the snapshot sends a notification of its own through the pool (`probe:…`) and caches only
///   once the listener has received it, then again every `probeIntervalSeconds`; a probe not received
///   within `probeTimeoutSeconds` stops the caching until one is. A listener behind a pooler that cannot
///   carry `LISTEN` (PgBouncer in transaction mode) therefore never caches. Readiness follows the
///   listener's connection, not the probes.
///
/// Without `startListening`, nothing is ever cached (the default for stores built without a listener).
public final class ConfigurationSnapshot: Sendable {
    /// The notification channel (sql/029_configuration_notify.sql).
    public static let channel = "zevauth_configuration"
    /// The most entries of each kind one thread keeps; past it the thread's entries are dropped.
    public static let maximumEntriesPerThread = 1000
    /// The longest key kept (bytes): publishable keys and web client ids are far shorter.
    public static let maximumKeyBytes = 100

    /// Seconds between delivery checks while they succeed.
    public static let probeIntervalSeconds = 30.0
    /// Seconds a delivery check waits for its notification; also the wait before the next try after one failed.
    public static let probeTimeoutSeconds = 5.0

    /// `generation << 1 | listening`: read with one load on every lookup.
    private let state = Atomic<UInt64>(0)
    /// Set by `startListening`: from then on `isReady` follows the listener.
    private let started = Atomic<Bool>(false)
    /// Whether the listener's connection is up (`.listening` seen, no `.lost` since): readiness.
    private let connected = Atomic<Bool>(false)
    /// The delivery check, when `startListening` was given a probe.
    private let prober = Mutex<DeliveryCheck?>(nil)
    private let listener = Mutex<PostgresListener?>(nil)
    private let key: CacheKey
    private let loadStartClient: @Sendable (String) throws -> StartClient?
    private let loadExchangeEnvironment: @Sendable (String) throws -> ExchangeEnvironment?

    /// A snapshot over the given loaders (tests inject their own).
    /// - Parameters:
    ///   - loadStartClient: Reads a start client from PostgreSQL (nil: no such key).
    ///   - loadExchangeEnvironment: Reads an exchange environment from PostgreSQL (nil: no such key).
    public init(
        loadStartClient: @escaping @Sendable (String) throws -> StartClient?,
        loadExchangeEnvironment: @escaping @Sendable (String) throws -> ExchangeEnvironment?
    ) {
        self.loadStartClient = loadStartClient
        self.loadExchangeEnvironment = loadExchangeEnvironment
        key = CacheKey()
    }

    /// A snapshot whose loads read `pool` (`PostgresAuthorizations.uncachedStartClient`,
    /// `PostgresAuthorizations.uncachedExchangeEnvironment`); `probe(pool:)` sends its delivery checks there.
    public convenience init(pool: PostgresPool) {
        let direct = PostgresAuthorizations(pool: pool)
        self.init(
            loadStartClient: { try direct.uncachedStartClient(publishableKey: $0) },
            loadExchangeEnvironment: { try direct.uncachedExchangeEnvironment(publishableKey: $0) })
    }

    deinit {
        listener.withLock { $0?.stop() }
        // Threads still alive keep their (small) cache objects: a deleted key runs no destructor.
        key.delete()
    }

    /// Starts the one listener of this snapshot (`PostgresListener` on `channel`); a second call does
    /// nothing. Until it reports `.listening`, lookups read PostgreSQL and `isReady` is false.
    /// - Parameters:
    ///   - url: A libpq URL reaching PostgreSQL directly or through session pooling (not PgBouncer's
    ///     transaction mode, which does not carry `LISTEN`).
    ///   - options: Connection defaults and the deadline of `LISTEN`.
    public func startListening(
        url: String, options: PostgresConnectionOptions = PostgresConnectionOptions(),
        probe: (@Sendable (String) throws -> Void)? = nil
    ) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        if let probe { startDeliveryCheck(probe) }
        let made = PostgresListener(url: url, channel: Self.channel, options: options) { [weak self] event in
            self?.receive(event)
        }
        listener.withLock { $0 = made }
    }

    /// Starts the delivery check with `probe` as its sender (`startListening` does; a test may drive the
    /// listener's events itself with `receive`).
    func startDeliveryCheck(_ probe: @escaping @Sendable (String) throws -> Void) {
        let check = DeliveryCheck(send: probe)
        prober.withLock { $0 = check }
        check.start(snapshot: self)
    }

    /// Stops the listener: lookups read PostgreSQL from now on, and `isReady` stays false.
    public func stopListening() {
        let stopped = listener.withLock { listener in
            defer { listener = nil }
            return listener
        }
        stopped?.stop()
        prober.withLock { check in
            check?.stop()
            check = nil
        }
        receive(.lost)
    }

    /// Whether lookups may use the cache now (the listener is listening).
    public var isListening: Bool { state.load(ordering: .acquiring) & 1 == 1 }

    /// For `/readyz`: true without a listener, else whether it listens now (and so every entry from before
    /// an outage is already invalid).
    public var isReady: Bool { !started.load(ordering: .relaxed) || connected.load(ordering: .relaxed) }

    /// Applies one listener event: any event moves the generation; `.listening` and `.lost` set whether the
    /// listener is connected, and so whether lookups may cache — at once without a delivery check, else
    /// once a probe comes back (`deliveryConfirmed`). Public so a test can drive a snapshot without a database.
    public func receive(_ event: PostgresListener.Event) {
        let check = prober.withLock { $0 }
        switch event {
        case .listening:
            connected.store(true, ordering: .relaxed)
            if let check {
                move(listening: false)
                check.wake()
            } else {
                move(listening: true)
            }
        case .lost:
            connected.store(false, ordering: .relaxed)
            move(listening: false)
        case .notification(let payload):
            if let check, check.received(payload) { return }
            move(listening: nil)
        }
    }

    /// Whether the listener's connection is up now.
    var isConnected: Bool { connected.load(ordering: .relaxed) }

    /// A delivery check's outcome: the probe came back (lookups may cache while the listener stays
    /// connected) or did not (they may not).
    func deliveryConfirmed(_ delivered: Bool) {
        move(listening: delivered && connected.load(ordering: .relaxed))
    }

    /// Moves the generation, and sets the listening bit to `listening` (nil: unchanged).
    private func move(listening: Bool?) {
        var current = state.load(ordering: .relaxed)
        while true {
            let bit: UInt64 = listening.map { $0 ? 1 : 0 } ?? (current & 1)
            let next = (((current >> 1) &+ 1) << 1) | bit
            let (exchanged, found) = state.compareExchange(expected: current, desired: next, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = found
        }
    }

    /// The start's client for a `pk_…` or `zc_…` key, from this thread's cache while it is valid.
    /// - Throws: what the loader throws (`StoreUnavailable` and the store's other errors).
    public func startClient(publishableKey: String) throws -> StartClient? {
        try lookup(publishableKey, \.startClients, load: loadStartClient)
    }

    /// The exchange's environment for a publishable key, from this thread's cache while it is valid.
    /// - Throws: what the loader throws (`StoreUnavailable` and the store's other errors).
    public func exchangeEnvironment(publishableKey: String) throws -> ExchangeEnvironment? {
        try lookup(publishableKey, \.exchangeEnvironments, load: loadExchangeEnvironment)
    }

    private func lookup<Value>(
        _ key: String, _ entries: ReferenceWritableKeyPath<ThreadCache, [String: Value?]>,
        load: (String) throws -> Value?
    ) throws -> Value? {
        // Read before the load: an entry is only as new as the generation seen before its database read.
        let observed = state.load(ordering: .acquiring)
        // A key longer than any real one is looked up but never kept, so made-up keys cannot fill memory.
        guard observed & 1 == 1, key.utf8.count <= Self.maximumKeyBytes else { return try load(key) }
        let cache = threadCache()
        if cache.generation != observed { cache.reset(generation: observed) }
        if let hit = cache[keyPath: entries][key] { return hit }
        let value = try load(key)
        if cache.generation == observed {
            if cache[keyPath: entries].count >= Self.maximumEntriesPerThread { cache[keyPath: entries].removeAll() }
            cache[keyPath: entries][key] = .some(value)
        }
        return value
    }

    /// The calling thread's cache, made on its first lookup.
    private func threadCache() -> ThreadCache {
        if let pointer = key.value { return Unmanaged<ThreadCache>.fromOpaque(pointer).takeUnretainedValue() }
        let cache = ThreadCache()
        key.value = Unmanaged.passRetained(cache).toOpaque()
        return cache
    }
}

/// One thread's entries, all tagged with one generation; only its thread touches it.
private final class ThreadCache {
    var generation: UInt64 = 0
    var startClients: [String: StartClient?] = [:]
    var exchangeEnvironments: [String: ExchangeEnvironment?] = [:]

    func reset(generation: UInt64) {
        self.generation = generation
        startClients.removeAll()
        exchangeEnvironments.removeAll()
    }
}

/// A `pthread_key_t` whose value is the thread's `ThreadCache` (retained), released when the thread exits.
private struct CacheKey: @unchecked Sendable {
    let raw: pthread_key_t

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<ThreadCache>.fromOpaque(pointer).release()
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

extension PostgresAuthorizations {
    /// The exchange's environment read from PostgreSQL (no cache; see `exchangeEnvironment(publishableKey:)`).
    /// - Throws: `StoreUnavailable` and the store's other errors.
    public func uncachedExchangeEnvironment(publishableKey: String) throws -> ExchangeEnvironment? {
        try PostgresEdge.run {
            guard
                let row = try pool.query(
                    prepared: """
                        SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes, refresh_reuse_grace_seconds,
                               id_token_signing_alg, require_dpop
                        FROM environments WHERE publishable_key = $1
                        """, [publishableKey]
                ).first
            else { return nil }
            var environment = ExchangeEnvironment(
                id: try row.string("id"), sessionMaxAgeDays: try row.int("session_max_age_days"),
                sessionIdleDays: try row.int("session_idle_days"), accessTokenTTLMinutes: try row.int("access_token_ttl_minutes"),
                idTokenSigningAlg: row["id_token_signing_alg"].flatMap(SigningAlgorithm.init(rawValue:)) ?? .rs256,
                requireDPoP: try row.bool("require_dpop"))
            environment.refreshReuseGraceSeconds = try row.int("refresh_reuse_grace_seconds")
            return environment
        }
    }

    /// The exchange's environment for a publishable key: from the configuration snapshot when the store has
    /// one and its listener listens, else read from PostgreSQL.
    /// - Throws: `StoreUnavailable` and the store's other errors.
    public func exchangeEnvironment(publishableKey: String) throws -> ExchangeEnvironment? {
        if let configuration { return try configuration.exchangeEnvironment(publishableKey: publishableKey) }
        return try uncachedExchangeEnvironment(publishableKey: publishableKey)
    }
}

extension ConfigurationSnapshot {
    /// A delivery check's sender over `pool`: `pg_notify` on `channel` with the probe's payload.
    public static func probe(pool: PostgresPool) -> @Sendable (String) throws -> Void {
        { payload in try pool.query("SELECT pg_notify($1, $2)", [channel, payload]) }
    }
}

/// The snapshot's delivery check: a thread that sends a probe notification, waits for the listener to
/// report it, and tells the snapshot whether it came back; every `probeIntervalSeconds` while they do,
/// every `probeTimeoutSeconds` while they do not, and at once after the listener reconnects.
final class DeliveryCheck: Sendable {
    private let send: @Sendable (String) throws -> Void
    /// The payload of the probe in flight, if any.
    private let pending = Mutex<String?>(nil)
    private let arrived = DispatchSemaphore(value: 0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    init(send: @escaping @Sendable (String) throws -> Void) {
        self.send = send
    }

    func start(snapshot: ConfigurationSnapshot) {
        Thread.detachNewThread { [weak snapshot, self] in
            while !self.stopped.load(ordering: .relaxed) {
                guard let snapshot else { return }
                // Nothing can come back before the listener is connected: wait for `.listening` (`wake`).
                guard snapshot.isConnected else {
                    _ = self.wakeUp.wait(timeout: .now() + ConfigurationSnapshot.probeTimeoutSeconds)
                    continue
                }
                let delivered = self.check()
                if self.stopped.load(ordering: .relaxed) { return }
                snapshot.deliveryConfirmed(delivered)
                let pause = delivered ? ConfigurationSnapshot.probeIntervalSeconds : ConfigurationSnapshot.probeTimeoutSeconds
                _ = self.wakeUp.wait(timeout: .now() + pause)
            }
        }
    }

    /// Sends one probe and waits for it; whether it came back in time.
    private func check() -> Bool {
        let payload = "probe:" + UUID().uuidString
        while arrived.wait(timeout: .now()) == .success {}
        pending.withLock { $0 = payload }
        defer { pending.withLock { $0 = nil } }
        guard (try? send(payload)) != nil else { return false }
        return arrived.wait(timeout: .now() + ConfigurationSnapshot.probeTimeoutSeconds) == .success
    }

    /// Whether `payload` is the probe in flight (then it is taken as delivered, not as a change).
    func received(_ payload: String) -> Bool {
        guard payload.hasPrefix("probe:") else { return false }
        if pending.withLock({ $0 == payload }) { arrived.signal() }
        // Another instance's probe changes nothing either.
        return true
    }

    /// Runs the next check now (the listener has just connected).
    func wake() { wakeUp.signal() }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        wakeUp.signal()
    }
}
