import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// `Placement.inlineWithin`'s budget: at most `limit` requests on the workers at once, none while the running
/// ones make no progress, each inside the budget's scope (docs/decisions.md, "The database never holds an
/// HTTP worker").
@Suite struct InlineBudgetTests {
    static let ok = HTTPResponse(status: 200)

    /// Starts `count` threads that each run a budgeted request waiting on `release`, and waits (at most 5 s)
    /// until they all hold a place; the group is left when each has finished.
    static func hold(_ budget: InlineBudget, count: Int, until release: DispatchSemaphore) -> DispatchGroup {
        let finished = DispatchGroup()
        for _ in 0..<count {
            finished.enter()
            Thread {
                _ = budget.run {
                    release.wait()
                    return Self.ok
                }
                finished.leave()
            }.start()
        }
        var waited = 0
        while budget.inUse < count && waited < 5_000 {
            usleep(1_000)
            waited += 1
        }
        return finished
    }

    @Test func runsInsideItsScopeAndGivesThePlaceBack() {
        let scoped = Atomic<Int>(0)
        let budget = InlineBudget(limit: 1) { handler in
            scoped.add(1, ordering: .relaxed)
            return handler()
        }
        #expect(budget.run { Self.ok }?.status == 200)
        #expect(budget.run { Self.ok }?.status == 200)
        #expect(scoped.load(ordering: .relaxed) == 2)
        #expect(budget.inUse == 0)
    }

    /// `limit` requests that wait on something: the next one is refused (it would go to the queue), and
    /// once one finishes a place is free again.
    @Test func refusesBeyondItsLimit() {
        let budget = InlineBudget(limit: 2, stallSeconds: 60)
        let release = DispatchSemaphore(value: 0)
        let finished = Self.hold(budget, count: 2, until: release)
        #expect(budget.inUse == 2)
        #expect(budget.run { Self.ok } == nil)
        release.signal()
        release.signal()
        #expect(finished.wait(timeout: .now() + 5) == .success)
        #expect(budget.run { Self.ok }?.status == 200)
    }

    /// One request stuck past the stall time: a second is refused although a place is free, so a stalled
    /// database holds one worker, not `limit`.
    @Test func refusesWhileTheRunningOnesMakeNoProgress() {
        let budget = InlineBudget(limit: 4, stallSeconds: 0.05)
        let release = DispatchSemaphore(value: 0)
        let finished = Self.hold(budget, count: 1, until: release)
        usleep(100_000)
        #expect(budget.run { Self.ok } == nil)
        release.signal()
        #expect(finished.wait(timeout: .now() + 5) == .success)
        #expect(budget.run { Self.ok }?.status == 200)
    }

    /// A 5xx answer sends every request to the queue for the quarantine, then they may run inline again; a
    /// 4xx does not.
    @Test func aServerErrorQuarantinesTheWorkers() {
        let budget = InlineBudget(limit: 4, quarantineSeconds: 0.2)
        #expect(budget.run { HTTPResponse(status: 503) }?.status == 503)
        #expect(budget.run { Self.ok } == nil)
        usleep(300_000)
        #expect(budget.run { Self.ok }?.status == 200)
        #expect(budget.run { HTTPResponse(status: 429) }?.status == 429)
        #expect(budget.run { Self.ok }?.status == 200)
    }
}
