import Foundation
import Synchronization

/// The source of "now" for every expiry decision. Logic never reads the wall clock itself, so tests move
/// time instead of sleeping (docs/architecture.md: policy is pure Swift that decides, I/O sits at
/// the edges).
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

    /// - Parameter start: the instant the clock shows until moved; by default the current wall-clock
    ///   hour (now, rounded down to a whole hour, so minute and hour windows start at it). A default
    ///   relative to now keeps what a test writes near the present: a fixed date would drift into the
    ///   past and be pruned by housekeeping that runs on the real clock beside it.
    public init(_ start: Date = ManualClock.currentHour()) {
        current = Mutex(start)
    }

    /// The current wall-clock time rounded down to a whole hour (UTC).
    public static func currentHour() -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 3_600).rounded(.down) * 3_600)
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
