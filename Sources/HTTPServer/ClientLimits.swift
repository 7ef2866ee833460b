import Dispatch
import Glibc
import Synchronization

/// The limits on one client the server enforces itself (docs/decisions.md, "Slow and greedy clients"):
/// how many connections one peer address may hold open, and how long a request may take to arrive.
///
/// libmicrohttpd's idle timeout (`MHD_OPTION_CONNECTION_TIMEOUT`) restarts with every byte, so a client
/// trickling one byte every few seconds keeps a connection for ever, and its per-IP limit
/// (`MHD_OPTION_PER_IP_CONNECTION_LIMIT`) cannot exempt the reverse proxies. So the server counts
/// connections per peer address in its accept policy (trusted proxies exempt: every client behind them
/// has the proxy's address), and gives every request a deadline from the moment the connection opens, or
/// the previous response completes, to the last byte of its body. A connection past its deadline is shut
/// down (`shutdown(2)`), which libmicrohttpd sees as the peer going away and closes on its own thread.
final class ClientLimits: @unchecked Sendable {
    /// The most connections one peer address may hold open at once; 0 = no limit.
    let perAddressLimit: Int
    /// Lower-cased peer addresses the per-address limit does not apply to.
    let exempt: Set<String>
    /// How long a request may take to arrive, headers and body.
    let requestDeadline: Duration

    private struct Watch {
        let socket: Int32
        let deadline: RequestDeadline
    }

    private let counts = Mutex<[String: Int]>([:])
    // Keyed by the connection's `ConnectionState`, written only when a connection opens or closes. An
    // entry is removed in the connection-closed notification, which libmicrohttpd calls before it closes
    // the socket, under the same lock `sweep` shuts sockets down with: a socket number is never shut down
    // after it was reused. A request's start and end touch only their connection's own `RequestDeadline`,
    // so the requests of different connections never wait on each other here.
    private let watches = Mutex<[ObjectIdentifier: Watch]>([:])
    /// The instant deadlines are counted from (`RequestDeadline` holds nanoseconds after it).
    private let origin = ContinuousClock.now
    private let timer: any DispatchSourceTimer
    /// Connections the per-address limit refused (for tests and the logs).
    let refused = Atomic<Int>(0)
    /// Connections shut down at their request deadline (for tests).
    let expired = Atomic<Int>(0)

    init(perAddressLimit: Int, exempt: [String], requestDeadlineSeconds: Int) {
        self.perAddressLimit = perAddressLimit
        self.exempt = Set(exempt.map { $0.lowercased() })
        self.requestDeadline = .seconds(requestDeadlineSeconds)
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "zevauth.http.deadlines"))
        // A quarter of a second: deadlines are seconds long, and a sweep is one pass over a dictionary.
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250), leeway: .milliseconds(50))
        timer.setEventHandler { [self] in sweep(now: .now) }
        timer.resume()
    }

    /// Stops the sweeps (after the daemon has stopped); releases the timer's hold on `self`.
    func stop() {
        timer.cancel()
    }

    /// Whether a new connection from `address` may be accepted (the accept policy).
    func admits(_ address: String) -> Bool {
        guard perAddressLimit > 0, !exempt.contains(address.lowercased()) else { return true }
        let open = counts.withLock { $0[address, default: 0] }
        if open < perAddressLimit { return true }
        refused.add(1, ordering: .relaxed)
        return false
    }

    /// A connection opened: count it for its address and start its first request's deadline. Workers
    /// accept in parallel, so two may both have been admitted for an address's last place: the one counted
    /// over the limit is shut down at once.
    func opened(_ connection: ConnectionState, socket: Int32, now: ContinuousClock.Instant) {
        let open = counts.withLock { counts in
            counts[connection.address, default: 0] += 1
            return counts[connection.address, default: 0]
        }
        guard socket >= 0 else { return }
        if perAddressLimit > 0, open > perAddressLimit, !exempt.contains(connection.address.lowercased()) {
            refused.add(1, ordering: .relaxed)
            _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
            return
        }
        connection.deadline.nanoseconds.store(nanoseconds(now + requestDeadline), ordering: .relaxed)
        watches.withLock { $0[ObjectIdentifier(connection)] = Watch(socket: socket, deadline: connection.deadline) }
    }

    /// A connection closed (on every path): forget it.
    func closed(_ connection: ConnectionState) {
        counts.withLock { counts in
            let left = counts[connection.address, default: 1] - 1
            counts[connection.address] = left > 0 ? left : nil
        }
        _ = watches.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// The request on `connection` has arrived whole: no deadline while it is answered. Takes no lock.
    func arrived(_ connection: ConnectionState) {
        connection.deadline.nanoseconds.store(0, ordering: .relaxed)
    }

    /// The response on `connection` completed: the next request's deadline starts now. Takes no lock (a
    /// connection refused at open has no watch, so its deadline is never read).
    func completed(_ connection: ConnectionState, now: ContinuousClock.Instant) {
        connection.deadline.nanoseconds.store(nanoseconds(now + requestDeadline), ordering: .relaxed)
    }

    /// Shuts down every connection whose request deadline has passed (once each). A deadline the
    /// connection's worker moved or cleared meanwhile is left alone: only the value read is cleared.
    func sweep(now: ContinuousClock.Instant) {
        let current = nanoseconds(now)
        watches.withLock { watches in
            for watch in watches.values {
                let deadline = watch.deadline.nanoseconds.load(ordering: .relaxed)
                guard deadline != 0, deadline <= current else { continue }
                guard watch.deadline.nanoseconds.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged
                else { continue }
                _ = Glibc.shutdown(watch.socket, Int32(SHUT_RDWR))
                expired.add(1, ordering: .relaxed)
            }
        }
    }

    /// `instant` as nanoseconds after `origin`, at least 1 (0 means "no deadline").
    private func nanoseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - origin).components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// One connection's request deadline (`ClientLimits`): nanoseconds after the limits' origin, 0 while
/// none runs (a request is being answered). Written by the connection's own worker, read and cleared by
/// the sweep.
final class RequestDeadline: Sendable {
    let nanoseconds = Atomic<Int64>(0)
}
