import Association
import Authorize
import Foundation
import Synchronization

/// Checks every link domain at least once a day, inside the server (docs/protocol.md#link-check-schedule).
/// A round claims the domains due at its start in one statement (`FOR UPDATE SKIP LOCKED` plus a lease
/// naming this instance), then checks them with bounded concurrency; each check fetches a domain's files once
/// for every app on it. Several instances on one database never check one domain at once, and a round never
/// checks a domain twice.
public final class LinkScheduler: Sendable {
    let checker: AssociationChecker
    let schedule: any LinkScheduleStore
    /// The hourly housekeeping pass, if this scheduler runs it.
    let housekeeping: Housekeeping?
    let clock: any Clock
    let log: any LogSink
    /// This instance's lease owner id (random per process).
    public let owner: String
    /// Checks running at once.
    public let concurrency: Int
    /// How long a claim holds a domain: longer than one check (two fetches) at the largest timeouts; a round
    /// claims one batch at a time, so this never has to cover the whole round.
    public let leaseSeconds: Double
    /// Tests share one database: a scheduler scoped to these domains claims no other. Nil: every domain.
    let scope: [String]?

    private let stopped = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - context: the server's store, clock, log and outbound configuration.
    ///   - concurrency: checks at once (default 4).
    ///   - scope: restricts rounds to these domains (tests); nil for all.
    ///   - housekeeping: the hourly pass `start()` runs beside the rounds; nil for none.
    public init(context: ServerContext, concurrency: Int = 4, scope: [String]? = nil, housekeeping: Housekeeping? = nil) {
        self.checker = AssociationChecker(context: context)
        self.schedule = context.tenancy.linkSchedule
        self.housekeeping = housekeeping
        self.clock = context.clock
        self.log = context.log
        self.owner = "zevauth-\(UUID().uuidString.lowercased())"
        self.concurrency = max(1, concurrency)
        self.leaseSeconds = Double(context.configuration.outbound.timeoutMilliseconds) / 1000 * 4 + 60
        self.scope = scope
    }

    /// One round: syncs the schedule, then claims the domains due at the round's start in batches of
    /// `concurrency`, each batch with a fresh lease, and checks each batch in parallel before claiming the
    /// next. A lease therefore only has to outlast one check, however many domains are due, and another
    /// instance can share a long round's work without ever checking a domain this one holds.
    /// - Returns: the domains this round checked.
    /// - Throws: `StoreUnavailable` from syncing or claiming; a failing check is logged, not thrown.
    @discardableResult
    public func runRound() throws -> [String] {
        let roundStart = clock.now()
        try schedule.syncSchedule(now: roundStart)
        var checked: [String] = []
        var seen = Set<String>()
        while true {
            let batch = try schedule.claimDueDomains(
                owner: owner, now: clock.now(), dueBy: roundStart, leaseSeconds: leaseSeconds, limit: concurrency, only: scope
            ).map(\.domain).filter { seen.insert($0).inserted }
            if batch.isEmpty { return checked }
            let group = DispatchGroup()
            for domain in batch {
                group.enter()
                let thread = Thread { [self] in
                    defer { group.leave() }
                    do {
                        try checker.check(domain: domain, leaseOwner: owner)
                    } catch {
                        log.write("association check failed domain=\(domain) error=\(String(describing: type(of: error)))")
                    }
                }
                thread.start()
            }
            group.wait()
            checked += batch
        }
    }

    /// Runs a round every `intervalSeconds` on a background thread until `stop()`, and once an hour a
    /// housekeeping pass that deletes rows expired for more than a day (`Housekeeping`), when it has one.
    public func start(intervalSeconds: Double = 60) {
        let thread = Thread { [self] in
            var lastHousekeeping = Date.distantPast
            while !stopped.withLock({ $0 }) {
                do { try runRound() } catch { log.write("association round failed error=\(String(describing: type(of: error)))") }
                let now = clock.now()
                if let housekeeping, now.timeIntervalSince(lastHousekeeping) >= 3_600 {
                    lastHousekeeping = now
                    do {
                        let pruned = try housekeeping(now: now)
                        log.write(
                            "housekeeping pruned requests=\(pruned.authorizationRequests) codes=\(pruned.authorizationCodes) "
                                + "mfa=\(pruned.mfaChallenges) rate_limits=\(pruned.rateLimitCounters) audit=\(pruned.auditRows)")
                    } catch {
                        log.write("housekeeping failed error=\(String(describing: type(of: error)))")
                    }
                }
                _ = wake.wait(timeout: .now() + intervalSeconds)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops the background loop after its current round.
    public func stop() {
        stopped.withLock { $0 = true }
        wake.signal()
        finished.wait()
    }
}
