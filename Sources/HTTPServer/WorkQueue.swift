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
    /// On the HTTP worker, like `inline`, while fewer than the budget's limit of such requests run on the
    /// workers at once; otherwise on `otherwise`, like `queue`. For short database requests on the hot path:
    /// they skip the hand-over to a queue thread and back (two thread switches and a suspend/resume), and a
    /// database that stops answering can hold at most the budget's number of workers, so the others keep
    /// answering `/healthz` and everything else (docs/decisions.md, "The database never holds an HTTP worker").
    case inlineWithin(InlineBudget, otherwise: WorkQueue)
}

/// How many requests of `Placement.inlineWithin` may run on the HTTP workers at once, and whether they may
/// run there now: counters taken and given back with atomic operations, never waited on.
///
/// A budgeted request runs on a worker only while
/// - fewer than `limit` do;
/// - the running ones make progress: when some run and none has finished well (below 500) for
///   `stallSeconds`, the work they wait on is taken to be stalled;
/// - no budgeted request answered 5xx in the last `quarantineSeconds` (a database that fails, or stopped
///   answering and made them miss their deadline).
/// Otherwise it goes to the queue. So a database that stops answering holds at most `limit` workers for
/// one request's deadline, then none until the quarantine ends and a few try again.
public final class InlineBudget: Sendable {
    /// The most requests that run on the workers at once; 1 or more.
    public let limit: Int
    /// Seconds without a good answer, while some run, after which they are taken to be stalled.
    public let stallSeconds: Double
    /// Seconds after a 5xx answer during which every request goes to the queue.
    public let quarantineSeconds: Double
    /// What every budgeted request runs inside (e.g. a database pool's `sharedConnectionsOnly`), so what a
    /// worker needs while it runs one is accounted for by the budget, not by the worker.
    private let scope: @Sendable (() -> HTTPResponse) -> HTTPResponse
    private let running = Atomic<Int>(0)
    /// When (monotonic nanoseconds) a budgeted request last answered below 500, or started on an idle budget.
    private let progressed = Atomic<UInt64>(0)
    /// When (monotonic nanoseconds) a budgeted request last answered 5xx; 0: never.
    private let failed = Atomic<UInt64>(0)
    private let stallNanoseconds: UInt64
    private let quarantineNanoseconds: UInt64

    /// - Parameters:
    ///   - limit: the most requests on the workers at once (at least 1).
    ///   - stallSeconds: seconds without a good answer after which no new request runs on a worker
    ///     (default 0.25: a hundred times a hot-path statement's usual time).
    ///   - quarantineSeconds: seconds after a 5xx answer during which none does (default 5).
    ///   - scope: runs each budgeted handler; the default runs it as is.
    public init(
        limit: Int, stallSeconds: Double = 0.25, quarantineSeconds: Double = 5,
        scope: @escaping @Sendable (() -> HTTPResponse) -> HTTPResponse = { $0() }
    ) {
        self.limit = max(1, limit)
        self.stallSeconds = stallSeconds
        self.quarantineSeconds = quarantineSeconds
        self.stallNanoseconds = UInt64(max(0.001, stallSeconds) * 1e9)
        self.quarantineNanoseconds = UInt64(max(0, quarantineSeconds) * 1e9)
        self.scope = scope
    }

    /// Budgeted requests running now.
    public var inUse: Int { running.load(ordering: .relaxed) }

    /// Runs `handler` on the calling thread when the rules above allow it and returns its response; nil
    /// (and `handler` not run) otherwise.
    func run(_ handler: () -> HTTPResponse) -> HTTPResponse? {
        let now = DispatchTime.now().uptimeNanoseconds
        let lastFailure = failed.load(ordering: .relaxed)
        if lastFailure != 0, now &- lastFailure < quarantineNanoseconds { return nil }
        let before = running.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        if before == 0 {
            progressed.store(now, ordering: .relaxed)
        } else if before >= limit || now &- progressed.load(ordering: .relaxed) > stallNanoseconds {
            running.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        let response = withoutActuallyEscaping(handler) { handler in scope(handler) }
        let finished = DispatchTime.now().uptimeNanoseconds
        if response.status >= 500 { failed.store(finished, ordering: .relaxed) } else { progressed.store(finished, ordering: .relaxed) }
        running.wrappingSubtract(1, ordering: .releasing)
        return response
    }
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
