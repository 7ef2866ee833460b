import Authorize
import Foundation
import Synchronization
import Testing

/// Settling an in-doubt write (docs/decisions.md, "In-doubt writes are settled by the request that sent
/// them"): the pure step, and the loop over fake writes and lookups.
@Suite struct SettleTests {
    static let inDoubt = StoreUnavailable(reason: "connection", inDoubt: true)
    static let down = StoreUnavailable(reason: "connection")

    @Test func stepFollowsTheLookup() {
        #expect(SettleStep.after(found: true, windowLeft: true) == .answerLanded)
        #expect(SettleStep.after(found: false, windowLeft: true) == .runAgain)
        #expect(SettleStep.after(found: nil, windowLeft: true) == .pause)
        #expect(SettleStep.after(found: true, windowLeft: false) == .giveUp)
        #expect(SettleStep.after(found: nil, windowLeft: false) == .giveUp)
    }

    /// The write landed: the lookup's answer, and the statement is not run again.
    @Test func landedWriteAnswersFromTheLookup() throws {
        let writes = Mutex(0)
        let answer = try Settle.run(
            window: SettleWindow(milliseconds: 1000),
            write: { () throws -> String in
                writes.withLock { $0 += 1 }
                throw Self.inDoubt
            },
            lookup: { "landed" }, pause: { _ in })
        #expect(answer == "landed")
        #expect(writes.withLock { $0 } == 1)
    }

    /// The write did not land: run once more, after the database came back.
    @Test func lostWriteRunsOnceMore() throws {
        let writes = Mutex(0)
        let lookups = Mutex(0)
        let pauses = Mutex(0)
        let answer = try Settle.run(
            window: SettleWindow(milliseconds: 5000),
            write: { () throws -> String in
                let count = writes.withLock {
                    $0 += 1
                    return $0
                }
                if count == 1 { throw Self.inDoubt }
                return "second run"
            },
            lookup: { () throws -> String? in
                // The database is away for the first two lookups.
                let count = lookups.withLock {
                    $0 += 1
                    return $0
                }
                if count <= 2 { throw Self.down }
                return nil
            }, pause: { _ in pauses.withLock { $0 += 1 } })
        #expect(answer == "second run")
        #expect(writes.withLock { $0 } == 2)
        #expect(pauses.withLock { $0 } == 2)
    }

    /// No database within the window: 503 (the failure, no longer in doubt for the edge).
    @Test func noDatabaseInTheWindowGivesUp() {
        let started = ContinuousClock.now
        #expect(throws: StoreUnavailable.self) {
            try Settle.run(
                window: SettleWindow(milliseconds: 100, pauseMilliseconds: 10), write: { () throws -> String in throw Self.inDoubt },
                lookup: { () throws -> String? in throw Self.down })
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    /// A failure that is not in doubt (nothing was sent), or settling off, answers at once.
    @Test func certainFailuresAndAClosedWindowRethrowAtOnce() {
        let lookups = Mutex(0)
        #expect(throws: StoreUnavailable.self) {
            try Settle.run(
                window: SettleWindow(milliseconds: 1000), write: { () throws -> String in throw Self.down },
                lookup: { () -> String? in
                    lookups.withLock { $0 += 1 }
                    return nil
                })
        }
        #expect(throws: StoreUnavailable.self) {
            try Settle.run(
                window: .off, write: { () throws -> String in throw Self.inDoubt },
                lookup: { () -> String? in
                    lookups.withLock { $0 += 1 }
                    return nil
                })
        }
        #expect(lookups.withLock { $0 } == 0)
    }
}
