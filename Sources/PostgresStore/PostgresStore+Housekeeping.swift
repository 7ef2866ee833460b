import Foundation

extension PostgresStore {
    /// Rows removed by one housekeeping pass.
    public struct PruneCounts: Sendable, Equatable {
        public let authorizationRequests: Int
        public let authorizationCodes: Int
        public let mfaChallenges: Int
        public let rateLimitCounters: Int
        public let browserBindings: Int
    }

    /// Deletes what can no longer matter: pending sign-ins, MFA challenges, browser binding records, email
    /// messages and codes, and
    /// rate-limit windows that ended before `before`, and authorization codes that expired before it and produced no live session
    /// (a live session keeps its code, so a late valid replay still revokes it). Safe on any number of
    /// instances at once: every statement is an idempotent `DELETE`.
    /// - Parameter before: typically now − 1 day.
    /// - Throws: `PostgresError`.
    public func pruneExpired(before: Date) throws -> PruneCounts {
        let cutoff = [SQLTime.parameter(before)]
        let requests = try pool.query(
            "DELETE FROM authorization_requests WHERE expires_at < to_timestamp($1::float8)", cutoff
        ).rowsAffected
        let codes = try pool.query(
            """
            DELETE FROM authorization_codes c WHERE c.expires_at < to_timestamp($1::float8)
              AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.authorization_code_id = c.id AND s.revoked_at IS NULL)
            """, cutoff
        ).rowsAffected
        let challenges = try pool.query("DELETE FROM mfa_challenges WHERE expires_at < to_timestamp($1::float8)", cutoff).rowsAffected
        let counters = try rateLimits.prune(before: before)
        let bindings = try pool.query("DELETE FROM browser_bindings WHERE expires_at < to_timestamp($1::float8)", cutoff).rowsAffected
        // Email (sql/011): messages sent or given up, and codes expired, more than a day ago (the code limits
        // and the lock count codes of the last 24 hours only).
        try pool.query(
            "DELETE FROM email_outbox WHERE COALESCE(sent_at, failed_at) < to_timestamp($1::float8)", cutoff)
        try pool.query("DELETE FROM email_codes WHERE expires_at < to_timestamp($1::float8)", cutoff)
        return PruneCounts(
            authorizationRequests: requests, authorizationCodes: codes, mfaChallenges: challenges, rateLimitCounters: counters,
            browserBindings: bindings)
    }
}
