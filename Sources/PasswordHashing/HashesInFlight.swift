import Synchronization

/// How many Argon2id computations (`PasswordHasher.hash`, `verify`, `verifyDummy`) run in this process right
/// now: the `zevauth_password_hashes_in_flight` gauge (docs/operations.md, "Metrics"). One atomic, no lock.
public enum HashesInFlight {
    static let counter = Atomic<Int>(0)

    /// The current count (0 or more).
    public static var count: Int { counter.load(ordering: .relaxed) }

    /// One computation starts; pair with `leave()` (in a `defer`).
    static func enter() { counter.wrappingAdd(1, ordering: .relaxed) }

    /// One computation ends.
    static func leave() { counter.wrappingSubtract(1, ordering: .relaxed) }
}
