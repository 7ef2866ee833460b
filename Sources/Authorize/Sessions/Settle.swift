import Foundation

/// How long a grant whose write is in doubt keeps trying to learn its fate (docs/operations.md, "In-doubt
/// writes"; `ZEVAUTH_DATABASE_SETTLE_MS`).
public struct SettleWindow: Sendable, Equatable {
    /// The longest time, in milliseconds, from the in-doubt failure to the last try; 0 turns settling off
    /// (the failure answers 503 at once).
    public var milliseconds: Int
    /// The pause, in milliseconds, after a try that reached no database.
    public var pauseMilliseconds: Int

    /// - Parameters:
    ///   - milliseconds: the window; 0 for none.
    ///   - pauseMilliseconds: the pause between tries that reached no database (default 200).
    public init(milliseconds: Int, pauseMilliseconds: Int = 200) {
        self.milliseconds = milliseconds
        self.pauseMilliseconds = pauseMilliseconds
    }

    /// No settling: an in-doubt write answers 503 at once.
    public static let off = SettleWindow(milliseconds: 0)
}

/// What to do next while settling an in-doubt write: pure.
public enum SettleStep: Sendable, Equatable {
    /// The rows this attempt wrote are there: answer with the tokens it generated.
    case answerLanded
    /// They are not: the write did not land, so run the statement once more (a new try of the same
    /// attempt, with the same generated tokens).
    case runAgain
    /// No database answered: pause and look again.
    case pause
    /// The window is over without an answer: 503.
    case giveUp

    /// The step after a lookup of the attempt's own rows.
    /// - Parameters:
    ///   - found: true when the rows are there, false when they are not, nil when no database answered.
    ///   - windowLeft: whether the settle window still runs.
    public static func after(found: Bool?, windowLeft: Bool) -> SettleStep {
        guard windowLeft else { return .giveUp }
        switch found {
        case .some(true): return .answerLanded
        case .some(false): return .runAgain
        case .none: return .pause
        }
    }
}

/// Settles a grant's write on the request that sent it (docs/decisions.md, "In-doubt writes are settled
/// by the request that sent them").
///
/// When `write` fails with `StoreUnavailable` in doubt (the statement was sent; whether it committed is
/// unknown), the request does not answer 503 at once: within the window it looks up the rows this attempt
/// wrote itself (`lookup`, by the hashes of the tokens it generated), answers with them when they are
/// there, and runs `write` again when they are not. The replay and reuse rules are untouched: the second
/// run is the same attempt, and a lookup finds only what this attempt wrote.
public enum Settle {
    /// Runs `write`, settling an in-doubt failure within `window`.
    /// - Parameters:
    ///   - window: the settle window; `.off` rethrows at once.
    ///   - write: the grant's statement and its decision.
    ///   - lookup: the answer made from this attempt's own rows, or nil when they are not there.
    ///   - pause: sleeps for the given milliseconds (tests pass a recorder).
    /// - Returns: what `write` or `lookup` answered.
    /// - Throws: the last `StoreUnavailable` when the window ends without an answer; anything else
    ///   `write` or `lookup` throws.
    public static func run<T>(
        window: SettleWindow, write: () throws -> T, lookup: () throws -> T?,
        pause: (Int) -> Void = { usleep(useconds_t(max(0, $0)) * 1000) }
    ) throws -> T {
        do {
            return try write()
        } catch let failure as StoreUnavailable where failure.inDoubt && window.milliseconds > 0 {
            let deadline = ContinuousClock.now + .milliseconds(window.milliseconds)
            var last = failure
            while true {
                var landed: T?
                var found: Bool?
                do {
                    landed = try lookup()
                    found = landed != nil
                } catch let error as StoreUnavailable {
                    last = error
                }
                switch SettleStep.after(found: found, windowLeft: ContinuousClock.now < deadline) {
                case .answerLanded:
                    if let landed { return landed }
                case .runAgain:
                    do {
                        return try write()
                    } catch let error as StoreUnavailable {
                        last = error
                        if !error.inDoubt { pause(window.pauseMilliseconds) }
                    }
                case .pause:
                    pause(window.pauseMilliseconds)
                case .giveUp:
                    throw StoreUnavailable(reason: last.reason, detail: last.detail)
                }
            }
        }
    }
}
