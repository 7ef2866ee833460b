import Foundation

extension PostgresStore {
    /// Rows removed by one housekeeping pass.
    public struct PruneCounts: Sendable, Equatable {
        public let authorizationRequests: Int
        public let authorizationCodes: Int
        public let mfaChallenges: Int
        public let rateLimitCounters: Int
        public let browserBindings: Int
        /// Audit-log rows past the 400-day retention (docs/console.md, "Audit log").
        public var auditRows: Int = 0
    }

    /// Deletes what can no longer matter: pending sign-ins, pushed authorization requests, MFA challenges,
    /// browser binding records, email messages and codes, upstream flows and link confirmations, and
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
        // Passkey challenges (sql/022): each lives 5 minutes, used or not (docs/passkeys.md, "Storage").
        try pool.query("DELETE FROM passkey_challenges WHERE expires_at < to_timestamp($1::float8)", cutoff)
        // Pushed authorization requests (sql/024): a pushed request is useless past its 60 seconds.
        try pool.query("DELETE FROM pushed_authorization_requests WHERE expires_at < to_timestamp($1::float8)", cutoff)
        // Upstream ID tokens accepted once (sql/023): a token past its own expiry is refused on `exp` anyway.
        try pool.query("DELETE FROM upstream_token_uses WHERE expires_at < to_timestamp($1::float8)", cutoff)
        // The hosted upstream sign-in (sql/025): trips to a provider and links awaiting confirmation, each
        // 10 minutes long.
        try pool.query("DELETE FROM upstream_flows WHERE expires_at < to_timestamp($1::float8)", cutoff)
        try pool.query("DELETE FROM upstream_link_confirmations WHERE expires_at < to_timestamp($1::float8)", cutoff)
        // DPoP proof uses (sql/027): past its `iat` + 60 s a proof is refused on `iat` anyway.
        try pool.query("DELETE FROM dpop_proof_uses WHERE expires_at < to_timestamp($1::float8)", cutoff)
        var counts = PruneCounts(
            authorizationRequests: requests, authorizationCodes: codes, mfaChallenges: challenges, rateLimitCounters: counters,
            browserBindings: bindings)
        counts.auditRows = try pruneAuditLog()
        return counts
    }

    /// Deletes the audit-log rows past the retention (`PostgresAudit.retentionDays`, measured by the
    /// database's `now()` exactly as sql/015_audit.sql's append-only trigger measures it, so a pass never
    /// trips it), in batches of 1,000, at most 100 batches a pass (the next pass goes on).
    /// - Returns: how many were deleted.
    /// - Throws: `PostgresError`.
    func pruneAuditLog() throws -> Int {
        var deleted = 0
        for _ in 0..<100 {
            let batch = try pool.query(
                """
                DELETE FROM audit_log WHERE id IN (
                    SELECT id FROM audit_log WHERE at < now() - make_interval(days => $1::integer) ORDER BY at LIMIT 1000)
                """, [String(PostgresAudit.retentionDays)]
            ).rowsAffected
            deleted += batch
            if batch < 1000 { break }
        }
        return deleted
    }
}
