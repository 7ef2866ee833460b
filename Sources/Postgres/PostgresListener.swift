internal import CLibPQ
import Foundation
import Synchronization

/// A connection of its own, outside any pool, that runs `LISTEN` on one channel and reports every
/// notification, and every loss and re-establishment of the connection, to a callback
/// (docs/architecture.md, "Configuration in memory").
///
/// A background thread connects, runs `LISTEN`, then waits on the connection's socket (`poll`, at most
/// `pollMilliseconds` at a time so `stop()` is noticed), reads what arrived (`PQconsumeInput`) and hands each
/// notification (`PQnotifies`) to the callback. When the connection is lost (the backend terminated, the
/// server restarted, the network gone, or a connection attempt failing) it reports `.lost` once, then
/// reconnects after a pause that doubles from `initialBackoffSeconds` to at most `maximumBackoffSeconds`,
/// runs `LISTEN` again and reports `.listening`. Notifications sent while no connection listened are
/// lost: a receiver must treat `.lost` … `.listening` as "anything may have changed".
///
/// PostgreSQL delivers a `NOTIFY` when its transaction commits, and not at all when it rolls back. The
/// connection reports `application_name` `zevauth-listener` (`applicationName`), so an operator (or a test)
/// can find it in `pg_stat_activity`. A pooler in transaction mode (PgBouncer `pool_mode = transaction`)
/// does not carry `LISTEN`: the URL must reach PostgreSQL directly or through session pooling.
public final class PostgresListener: Sendable {
    /// What the listener reports, on its own thread, in the order it happened.
    public enum Event: Sendable, Equatable {
        /// `LISTEN` succeeded on a new connection: from now on every committed notification on the channel
        /// is reported.
        case listening
        /// One notification on the channel, with its payload (empty when the sender gave none).
        case notification(payload: String)
        /// The connection is gone or could not be made: notifications may be missed until the next
        /// `.listening`. Reported once per outage.
        case lost
    }

    /// The `application_name` of the listener's connection.
    public static let applicationName = "zevauth-listener"

    private let thread: ListenerThread

    /// Starts listening on a background thread; the first event is `.listening` or `.lost`.
    /// - Parameters:
    ///   - url: A libpq connection string or URI; it never appears in errors or events. It must reach
    ///     PostgreSQL directly or through session pooling.
    ///   - channel: The channel name: lower-case ASCII letters, digits and `_`, starting with a letter, at
    ///     most 63 bytes (it is written into `LISTEN` unquoted-safe; a name outside this set is a programming
    ///     error and traps).
    ///   - options: Connection defaults and the statement deadline of `LISTEN`; its `applicationName` is
    ///     replaced by `applicationName`.
    ///   - pollMilliseconds: The longest single wait on the socket, so `stop()` takes effect within it
    ///     (default 250).
    ///   - initialBackoffSeconds: The first pause before reconnecting (default 0.1 s); it doubles after each
    ///     failed attempt.
    ///   - maximumBackoffSeconds: The longest pause between attempts (default 2 s).
    ///   - onEvent: Receives each event on the listener's thread; it should return quickly.
    public init(
        url: String, channel: String, options: PostgresConnectionOptions = PostgresConnectionOptions(),
        pollMilliseconds: Int = 250, initialBackoffSeconds: Double = 0.1, maximumBackoffSeconds: Double = 2,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        precondition(
            !channel.isEmpty && channel.utf8.count <= 63 && channel.first!.isLetter
                && channel.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F },
            "a PostgresListener channel is lower-case ASCII letters, digits and _")
        var options = options
        options.applicationName = Self.applicationName
        thread = ListenerThread(
            url: url, channel: channel, options: options, pollMilliseconds: max(10, pollMilliseconds),
            initialBackoff: max(0.01, initialBackoffSeconds), maximumBackoff: max(initialBackoffSeconds, maximumBackoffSeconds),
            onEvent: onEvent)
        let running = thread
        let background = Thread { running.run() }
        background.name = Self.applicationName
        background.start()
    }

    deinit { stop() }

    /// Stops listening: no event is reported once this returns, and the thread ends within the poll timeout
    /// (or, while connecting, within the connection's `connect_timeout`). Nothing waits for it.
    public func stop() { thread.stop() }
}

/// The state and loop of one listener's background thread; it holds nothing of the `PostgresListener`, so
/// releasing that stops the thread.
private final class ListenerThread: @unchecked Sendable {
    let url: String
    let channel: String
    let options: PostgresConnectionOptions
    let pollMilliseconds: Int
    let initialBackoff: Double
    let maximumBackoff: Double
    /// Set by `stop()`; the event callback runs under `reporting` so that no event follows `stop()`.
    let stopped = Atomic<Bool>(false)
    let reporting = Mutex<(@Sendable (PostgresListener.Event) -> Void)?>(nil)

    init(
        url: String, channel: String, options: PostgresConnectionOptions, pollMilliseconds: Int, initialBackoff: Double,
        maximumBackoff: Double, onEvent: @escaping @Sendable (PostgresListener.Event) -> Void
    ) {
        self.url = url
        self.channel = channel
        self.options = options
        self.pollMilliseconds = pollMilliseconds
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        reporting.withLock { $0 = onEvent }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        reporting.withLock { $0 = nil }
    }

    /// Hands `event` to the callback unless stopped. Only this thread reports, so the lock is uncontended
    /// except against `stop()`.
    private func report(_ event: PostgresListener.Event) {
        reporting.withLock { $0?(event) }
    }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    func run() {
        var backoff = initialBackoff
        var lostReported = false
        while !isStopped {
            if let connection = try? listeningConnection() {
                backoff = initialBackoff
                lostReported = false
                report(.listening)
                relayNotifications(from: connection)
                if isStopped { return }
            }
            if !lostReported {
                report(.lost)
                lostReported = true
            }
            pause(seconds: backoff)
            backoff = min(backoff * 2, maximumBackoff)
        }
    }

    /// A new connection that listens on the channel.
    private func listeningConnection() throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url, options: options)
        // The channel was checked to be a plain lower-case identifier at init; LISTEN takes no parameters.
        try connection.query("LISTEN \(channel)")
        return connection
    }

    /// Reports the connection's notifications until it is lost or the listener stops.
    private func relayNotifications(from connection: PostgresConnection) {
        let handle = connection.handle
        while !isStopped {
            // Notifications may already be buffered (read with LISTEN's answer, or with the last input).
            while let notification = PQnotifies(handle) {
                let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
                PQfreemem(notification)
                report(.notification(payload: payload))
            }
            guard PQstatus(handle) == CONNECTION_OK else { return }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else { return }
            let ready = poll(&descriptor, 1, Int32(pollMilliseconds))
            if ready < 0 && errno != EINTR { return }
            if ready > 0 {
                // A terminated backend sends its FATAL error and closes the socket: the first read may only
                // buffer the error; the next poll sees the end of the stream, and this read fails.
                guard PQconsumeInput(handle) == 1 else { return }
            }
        }
    }

    /// Sleeps `seconds`, in steps of at most the poll timeout so a stop is noticed.
    private func pause(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while !isStopped {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return }
            Thread.sleep(forTimeInterval: min(left, Double(pollMilliseconds) / 1000))
        }
    }
}
