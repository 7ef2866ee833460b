import Synchronization

/// Bounds the outbound fetches that run inside a request (domain verification, "Check again", the check
/// after adding or changing an app). Each blocks an HTTP worker thread for up to the outbound timeouts, so
/// without a bound one tenant pointing a domain at a slow host could occupy every worker and stall every
/// tenant's sign-ins. At most `total` run at once on this instance, and at most one per environment; a
/// request that finds no free slot does not wait (the caller answers 429 or leaves the check to the
/// scheduler).
public final class OutboundSlots: Sendable {
    private let state = Mutex<(running: Int, byEnvironment: [String: Int])>((0, [:]))
    /// Fetching requests allowed at once on this instance.
    public let total: Int

    /// - Parameter total: fetching requests at once (default 4 of the default 16 HTTP threads).
    public init(total: Int = 4) {
        self.total = max(1, total)
    }

    /// Runs `body` in a slot for `environmentID`, or returns nil at once when none is free.
    /// - Throws: whatever `body` throws (the slot is released either way).
    public func withSlot<T>(environmentID: String, _ body: () throws -> T) rethrows -> T? {
        let acquired = state.withLock { state -> Bool in
            guard state.running < total, state.byEnvironment[environmentID, default: 0] == 0 else { return false }
            state.running += 1
            state.byEnvironment[environmentID] = 1
            return true
        }
        guard acquired else { return nil }
        defer {
            state.withLock { state in
                state.running -= 1
                state.byEnvironment[environmentID] = nil
            }
        }
        return try body()
    }
}
