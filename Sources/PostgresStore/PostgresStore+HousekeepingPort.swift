import Authorize
import Foundation

extension PostgresStore: HousekeepingStore {
    /// `pruneExpired(before:)` at the store's edge (`PostgresEdge`).
    /// - Throws: `StoreUnavailable`, `StoreFault`.
    public func deleteExpired(before: Date) throws -> PrunedRows {
        let counts = try PostgresEdge.run { try pruneExpired(before: before) }
        var rows = PrunedRows(
            authorizationRequests: counts.authorizationRequests, authorizationCodes: counts.authorizationCodes,
            mfaChallenges: counts.mfaChallenges, rateLimitCounters: counts.rateLimitCounters, browserBindings: counts.browserBindings)
        rows.auditRows = counts.auditRows
        return rows
    }
}
