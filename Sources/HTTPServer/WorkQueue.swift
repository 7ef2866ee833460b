import Dispatch
import Glibc
import Synchronization

/// Where the server runs a request's handler (docs/decisions.md, "Slow work leaves the HTTP workers").
public enum Placement: Sendable {
    /// On the HTTP worker thread that read the request (the default: fast handlers).
    case inline
    /// On one of `queue`'s threads: the server suspends the connection (libmicrohttpd's
    /// `MHD_suspend_connection`), the worker serves its other connections meanwhile, and the response is
    /// sent once the handler returns. When the queue's backlog is full, the request is answered at once
    /// with 503 `temporarily_unavailable` and `Retry-After: 1`.
    case queue(WorkQueue)
}

/// A fixed set of threads running jobs in arrival order, with a bounded backlog.
///
/// For slow, blocking work that must not hold an HTTP worker (Argon2id password hashing, outbound HTTPS).
/// At most `threads` jobs run at once; at most `capacity` more wait. A job is admitted in two steps so
/// the caller can prepare for it between them: `reserve()` takes a place (or refuses when the backlog is
/// full), then `run(reserved:)` hands the job over. The threads live as long as the queue.
public final class WorkQueue: Sendable {
    /// A name for logs.
    public let name: String
    /// How many jobs run at once.
    public let threads: Int
    /// How many admitted jobs may wait for a thread.
    public let capacity: Int

    private let core: Core

    /// Starts `threads` threads.
    /// - Parameters:
    ///   - name: A short name, e.g. `password`.
    ///   - threads: Jobs that run at once; 1...256.
    ///   - capacity: Jobs that may wait beyond the running ones; 0...65 536.
    public init(name: String, threads: Int, capacity: Int) {
        precondition((1...256).contains(threads), "a WorkQueue needs 1...256 threads")
        precondition((0...65_536).contains(capacity), "a WorkQueue's capacity must be 0...65536")
        self.name = name
        self.threads = threads
        self.capacity = capacity
        self.core = Core(limit: threads + capacity)
        for _ in 0..<threads {
            Core.startThread(core)
        }
    }

    deinit {
        core.stop(threads: threads)
    }

    /// Admitted jobs not yet finished (running or waiting).
    public var pending: Int { core.admitted.load(ordering: .relaxed) }

    /// Takes a place for one job; false when `threads + capacity` jobs are already admitted. Every
    /// successful reservation must be followed by exactly one `run(reserved:)`.
    public func reserve() -> Bool {
        var current = core.admitted.load(ordering: .relaxed)
        while current < core.limit {
            let (exchanged, seen) = core.admitted.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = seen
        }
        return false
    }

    /// Runs `job` on one of the queue's threads, in arrival order, using a place taken by `reserve()`.
    public func run(reserved job: @escaping @Sendable () -> Void) {
        core.jobs.withLock { $0.append(job) }
        core.available.signal()
    }

    /// Runs `job` if a place is free; false (and `job` is dropped) when the backlog is full.
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard reserve() else { return false }
        run(reserved: job)
        return true
    }

    /// The state the threads share with the queue; the threads keep it alive, not the queue.
    private final class Core: Sendable {
        let limit: Int
        let admitted = Atomic<Int>(0)
        let jobs = Mutex<[(@Sendable () -> Void)?]>([])
        let available = DispatchSemaphore(value: 0)

        init(limit: Int) {
            self.limit = limit
        }

        /// Wakes each thread with a `nil` job, its signal to exit once the jobs before it are done.
        func stop(threads: Int) {
            jobs.withLock { $0.append(contentsOf: Array(repeating: nil, count: threads)) }
            for _ in 0..<threads { available.signal() }
        }

        func work() {
            while true {
                available.wait()
                let next = jobs.withLock { jobs -> (@Sendable () -> Void)? in jobs.isEmpty ? nil : jobs.removeFirst() }
                guard let job = next else { return }
                job()
                admitted.subtract(1, ordering: .releasing)
            }
        }

        static func startThread(_ core: Core) {
            let context = Unmanaged.passRetained(core).toOpaque()
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            var handle = pthread_t()
            let created = pthread_create(
                &handle, &attributes,
                { argument in
                    guard let argument else { return nil }
                    Unmanaged<Core>.fromOpaque(argument).takeRetainedValue().work()
                    return nil
                }, context)
            pthread_attr_destroy(&attributes)
            precondition(created == 0, "the work queue could not start a thread (errno \(created))")
        }
    }
}
