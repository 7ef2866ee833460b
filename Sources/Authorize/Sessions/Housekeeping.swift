import Foundation

/// Rows one housekeeping pass deleted, by kind (for the log line).
public struct PrunedRows: Sendable, Equatable {
    /// Pending sign-ins (authorization requests).
    public var authorizationRequests: Int
    /// Authorization codes that produced no live session.
    public var authorizationCodes: Int
    /// Second-factor challenges.
    public var mfaChallenges: Int
    /// Rate-limit windows.
    public var rateLimitCounters: Int
    /// Browser binding records.
    public var browserBindings: Int
    /// Audit-log rows past their 400-day retention (docs/console.md, "Audit log").
    public var auditRows: Int = 0

    /// - Parameters: the counts, each ≥ 0.
    public init(authorizationRequests: Int, authorizationCodes: Int, mfaChallenges: Int, rateLimitCounters: Int, browserBindings: Int) {
        self.authorizationRequests = authorizationRequests
        self.authorizationCodes = authorizationCodes
        self.mfaChallenges = mfaChallenges
        self.rateLimitCounters = rateLimitCounters
        self.browserBindings = browserBindings
    }
}

/// What housekeeping needs from storage.
public protocol HousekeepingStore: Sendable {
    /// Deletes pending sign-ins, MFA challenges, browser bindings and rate-limit windows that ended before
    /// `before`, and authorization codes that expired before it and produced no live session (a live session
    /// keeps its code, so a late valid replay still revokes it). Idempotent: safe on any number of instances
    /// at once.
    /// - Throws: `StoreUnavailable`.
    func deleteExpired(before: Date) throws -> PrunedRows
}

/// The hourly housekeeping pass (docs/operations.md): deletes what expired more than `retentionSeconds`
/// ago, so nothing that may still matter (a replay within the day, a window's last count) is lost.
public struct Housekeeping: Sendable {
    /// How long an expired row is kept: one day.
    public static let retentionSeconds: Double = 86_400

    let store: any HousekeepingStore

    /// - Parameter store: where the expired rows are.
    public init(store: any HousekeepingStore) { self.store = store }

    /// One pass at `now`.
    /// - Returns: the rows deleted.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(now: Date) throws -> PrunedRows {
        try store.deleteExpired(before: now.addingTimeInterval(-Self.retentionSeconds))
    }
}
