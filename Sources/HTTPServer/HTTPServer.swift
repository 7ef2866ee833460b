internal import CMicroHTTPD
import Glibc
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd 0.9.75: a thread pool over epoll, one `HTTPHandler` for every request.
///
/// The server enforces what libmicrohttpd leaves lenient (docs/decisions.md#libmicrohttpd): message framing
/// (RFC 9112 §6), the body size limit (RFC 9110 §15.5.14), and it answers its own errors as JSON
/// `{"error":…,"error_description":…}`. It never logs request targets, header values or bodies: they carry
/// codes and tokens.
public final class HTTPServer: Sendable {
    /// The TCP port the server is bound to (the ephemeral one when configured with port 0).
    public let port: UInt16

    // The daemon handle, taken out exactly once by `shutdown` (or `deinit`).
    private let daemon: Mutex<DaemonHandle?>
    // Reached from the C callbacks through `void *` without a retain: `self` owns it and stops the daemon
    // (joining every worker thread) before it is released, so no callback can outlive it.
    private let context: ServerContext

    /// Starts serving on `configuration.host`:`configuration.port`; returns once the socket is listening.
    /// - Parameters:
    ///   - configuration: limits and the address to bind.
    ///   - handler: answers every request that passes framing and size checks; called on worker threads.
    /// - Throws: `HTTPServerError`: `.invalidConfiguration` naming the field, `.invalidHost`, `.addressInUse`,
    ///   or `.startFailed` with the errno libmicrohttpd left.
    public init(configuration: HTTPServerConfiguration, handler: any HTTPHandler) throws {
        try configuration.validate()
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw HTTPServerError.invalidHost(configuration.host)
        }
        let limits = ClientLimits(
            perAddressLimit: configuration.perIPConnectionLimit, exempt: configuration.perIPLimitExemptAddresses,
            requestDeadlineSeconds: configuration.requestDeadlineSeconds)
        let context = ServerContext(handler: handler, maxBodyBytes: configuration.maxBodyBytes, limits: limits)
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        // MHD_USE_ITC is required for MHD_quiesce_daemon in thread-pool mode (microhttpd.h).
        // MHD_ALLOW_SUSPEND_RESUME lets a request whose handler runs on a WorkQueue suspend its connection.
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        let started: OpaquePointer? = address.withSockaddr { sockaddrPointer in
            var options: [MHD_OptionItem] = [
                .init(option: .THREAD_POOL_SIZE, value: configuration.threadPoolSize, ptr_value: nil),
                .init(option: .CONNECTION_LIMIT, value: configuration.connectionLimit, ptr_value: nil),
                .init(
                    option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryLimitBytes, ptr_value: nil),
                .init(option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeoutSeconds, ptr_value: nil),
                // 0: `Framing.rejection` checks Host (RFC 9112 §3.2) and field names (§5.1) itself and answers
                // with the JSON error body; at 1 libmicrohttpd 0.9.75 answers a missing Host with an HTML page
                // whose status line and headers it writes twice (docs/decisions.md, "Framing").
                .init(option: .STRICT_FOR_CLIENT, value: 0, ptr_value: nil),
                .init(option: .SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(mutating: sockaddrPointer)),
                .init(option: .END, value: 0, ptr_value: nil),
            ]
            errno = 0
            return options.withUnsafeMutableBufferPointer { items in
                CMicroHTTPD_start_daemon(
                    flags, configuration.port, acceptPolicy, contextPointer, accessHandler, contextPointer, uriLogCallback, contextPointer,
                    completedCallback, contextPointer, connectionNotification, contextPointer, items.baseAddress)
            }
        }
        let startErrno = errno
        guard let started else {
            limits.stop()
            if startErrno == EADDRINUSE {
                throw HTTPServerError.addressInUse(host: configuration.host, port: configuration.port)
            }
            throw HTTPServerError.startFailed(host: configuration.host, port: configuration.port, errno: startErrno)
        }
        let boundPort = CMicroHTTPD_bind_port(started)
        guard boundPort != 0 else {
            MHD_stop_daemon(started)
            limits.stop()
            throw HTTPServerError.startFailed(host: configuration.host, port: configuration.port, errno: 0)
        }
        self.port = boundPort
        self.context = context
        self.daemon = Mutex(DaemonHandle(pointer: started))
    }

    deinit {
        // Stops at once if `shutdown` was never called; MHD_stop_daemon joins the workers before `context`
        // is released.
        if let handle = daemon.withLock({ $0.take() }) {
            // As in `shutdown`: no connection may still be suspended on a WorkQueue.
            while context.suspended.load(ordering: .sequentiallyConsistent) > 0 {
                usleep(1_000)
            }
            MHD_stop_daemon(handle.pointer)
            context.limits.stop()
        }
    }

    /// Stops the server gracefully: stop accepting (new connections are refused), let in-flight requests
    /// finish for up to `gracePeriodSeconds`, then close every connection and join the worker threads.
    ///
    /// Responses sent while draining carry `Connection: close` so keep-alive clients go away. A handler
    /// still running when the grace period ends is waited for (its thread is joined), not interrupted.
    /// Idempotent: calls after the first return at once, even while the first is still draining.
    /// Never call it from a handler: stopping joins the worker thread the handler runs on.
    /// - Parameter gracePeriodSeconds: the longest wait for in-flight requests, in seconds.
    public func shutdown(gracePeriodSeconds: Double = 10) {
        guard let handle = daemon.withLock({ $0.take() }) else { return }
        context.draining.store(true, ordering: .sequentiallyConsistent)
        // After MHD_quiesce_daemon the listening socket is ours, but it stays open (and would keep completing
        // handshakes into its backlog) until we close it after MHD_stop_daemon, which may still be using it.
        // shutdown(SHUT_RD) on a listening socket makes Linux stop listening now, so new connections are
        // refused at once (a reverse proxy can retry elsewhere) instead of hanging.
        let listenSocket = MHD_quiesce_daemon(handle.pointer)
        if listenSocket != MHD_INVALID_SOCKET {
            _ = Glibc.shutdown(listenSocket, Int32(SHUT_RD))
        }
        let grace = gracePeriodSeconds.isFinite ? max(0, min(gracePeriodSeconds, 86_400)) : 0
        let deadline = ContinuousClock.now + .seconds(grace)
        while context.inFlight.load(ordering: .sequentiallyConsistent) > 0 && ContinuousClock.now < deadline {
            usleep(5_000)
        }
        // A request whose handler runs on a WorkQueue keeps its connection suspended, and libmicrohttpd must
        // not stop with a suspended connection: wait for those handlers even past the grace period, as for
        // a handler running on a worker (whose thread MHD_stop_daemon joins).
        while context.suspended.load(ordering: .sequentiallyConsistent) > 0 {
            usleep(1_000)
        }
        MHD_stop_daemon(handle.pointer)
        context.limits.stop()
        if listenSocket != MHD_INVALID_SOCKET {
            close(listenSocket)
        }
    }

    /// Requests whose request line has arrived and whose response has not completed, including those whose
    /// handler runs on a `WorkQueue` (for tests).
    var inFlightRequests: Int { context.inFlight.load(ordering: .sequentiallyConsistent) }

    /// Connections libmicrohttpd has accepted and not yet closed (the `zevauth_http_connections_open` gauge,
    /// docs/operations.md, "Metrics").
    public var openConnections: Int { context.openConnections.load(ordering: .sequentiallyConsistent) }

    /// Connections refused because their address was at `perIPConnectionLimit` (for tests).
    var refusedConnections: Int { context.limits.refused.load(ordering: .relaxed) }

    /// Connections shut down at their request deadline (for tests).
    var expiredConnections: Int { context.limits.expired.load(ordering: .relaxed) }

    /// Whether `shutdown` has begun (for tests).
    var isDraining: Bool { context.draining.load(ordering: .sequentiallyConsistent) }

    /// Blocks SIGINT and SIGTERM on the calling thread and ignores SIGPIPE for the process.
    ///
    /// Call it on the main thread before starting any server: threads inherit the signal mask, so the
    /// signals then stay pending for `waitForTerminationSignal()` instead of killing a worker
    /// (docs/decisions.md#libmicrohttpd).
    public static func blockTerminationSignals() {
        signal(SIGPIPE, SIG_IGN)
        var signals = terminationSignals()
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Waits until SIGINT or SIGTERM arrives and returns its number.
    ///
    /// Blocks both signals on the calling thread first (harmless if `blockTerminationSignals()` already
    /// did), then `sigwait`s. Call `blockTerminationSignals()` before starting servers so that the signal
    /// reaches this thread rather than a worker.
    /// - Returns: `SIGINT` or `SIGTERM`.
    public static func waitForTerminationSignal() -> Int32 {
        blockTerminationSignals()
        var signals = terminationSignals()
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        return received
    }

    private static func terminationSignals() -> sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        return signals
    }
}

/// The `MHD_Daemon *`. MHD_quiesce_daemon and MHD_stop_daemon may be called from any thread; the mutex
/// in `HTTPServer` guarantees only one caller ever takes the handle.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// An IPv4 or IPv6 socket address parsed from a literal.
private enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init?(host: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .v6(v6)
            return
        }
        return nil
    }

    var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch self {
        case .v4(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }
}
