import Foundation
import Synchronization

/// The source of "now" for every expiry decision. Logic never reads the wall clock itself, so tests move
/// time instead of sleeping (STYLE.md, "Decisions pure, I/O at the edges").
public protocol Clock: Sendable {
    /// The current instant.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: Clock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that stays where it is put: for tests and for the conformance of expiry boundaries.
public final class ManualClock: Clock {
    private let current: Mutex<Date>

    /// - Parameter start: the instant the clock shows until moved.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
