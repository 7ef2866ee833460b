import Foundation

/// The store port of the fixed-window rate limits (docs/protocol.md#rate-limits), counted in the database
/// so every instance sees the same count. The server's `RateLimiter` holds the thresholds and windows.
public protocol RateLimitStore: Sendable {
    /// Counts one event in a fixed window, atomically.
    /// - Parameters:
    ///   - bucket: what is counted (`password_account`, …).
    ///   - key: whose events (a user id, an email hash, a client address).
    ///   - windowStart: the window's first instant (the caller aligns it).
    /// - Returns: the count in this window including this event.
    /// - Throws: `StoreUnavailable`.
    func rateLimitHit(bucket: String, key: String, windowStart: Date) throws -> Int
    /// The count in a window without adding to it (for buckets that count only failures).
    /// - Throws: `StoreUnavailable`.
    func rateLimitCount(bucket: String, key: String, windowStart: Date) throws -> Int
}
