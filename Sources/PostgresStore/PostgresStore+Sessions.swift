import Authorize
import Foundation
import Postgres

/// The outcome of one refresh statement (docs/protocol.md#refresh-checks).
public enum RefreshOutcome: Sendable, Equatable {
    /// No environment has this publishable key.
    case unknownClient
    /// The refresh token is unknown or belongs to another environment (nothing changed).
    case unknownToken
    /// The session has ended (revoked, signed out, account closed) or just ended because this
    /// presentation was reuse outside the grace (`revokedForReuse`).
    case ended(revokedForReuse: Bool)
    /// The session is past its absolute or idle window: the person must sign in again.
    case reauthenticationRequired
    /// A new pair was issued: a rotation, or a presentation within the reuse grace.
    case refreshed(IssuedSession)
}

/// A live access token as a resource server sees it (RFC 7662 §2.2).
public struct IntrospectedToken: Sendable, Equatable {
    public let sessionID: String
    public let userID: String
    /// The environment's publishable key, the OAuth `client_id`.
    public let clientID: String
    public let issuedAt: Date
    public let expiresAt: Date
}

extension PostgresStore {
    // MARK: - Refresh

    /// One refresh attempt, everything hashed before it reaches SQL.
    public struct RefreshAttempt: Sendable {
        public let publishableKey: String
        public let refreshTokenHash: String
        public let newAccessTokenHash: String
        public let newRefreshTokenHash: String
        public let now: Date
        public init(publishableKey: String, refreshTokenHash: String, newAccessTokenHash: String, newRefreshTokenHash: String, now: Date) {
            self.publishableKey = publishableKey
            self.refreshTokenHash = refreshTokenHash
            self.newAccessTokenHash = newAccessTokenHash
            self.newRefreshTokenHash = newRefreshTokenHash
            self.now = now
        }
    }

    // The refresh in ONE statement (docs/protocol.md#refresh-checks). `presented` reads the token, its session and
    // when its generation was rotated out (the first issue of a later generation) from the statement's
    // snapshot. The UPDATE of the session row then decides on the row's LATEST version: PostgreSQL
    // re-evaluates an UPDATE's WHERE and SET on the newest row after waiting for a concurrent writer's
    // lock (READ COMMITTED), so of two refreshes of one token exactly one sees `generation = presented`:
    //   - current generation → rotate: generation + 1, new pair;
    //   - earlier generation within the grace (counted from that generation's rotation; a rotation this
    //     snapshot cannot see yet committed just now) → a new pair in the current generation, nothing
    //     rotated, so the pair the earlier rotation issued stays valid;
    //   - earlier generation outside the grace (always at grace 0) → reuse: the session is revoked.
    // Windows are computed from the environment's current settings, so shortening applies at once.
    // The new tokens are inserted from the UPDATE's RETURNING, so the pair and the rotation commit together.
    static let refreshSQL = """
        WITH env AS (
            SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes, refresh_reuse_grace_seconds
            FROM environments WHERE publishable_key = $1
        ), presented AS (
            SELECT r.session_id, r.generation, s.revoked_at, s.revoked_reason, s.auth_time, s.last_refreshed_at,
                   u.closed_at,
                   -- Within the reuse grace only when one is configured: a request's time is read before its
                   -- statement runs, so at grace 0 a loser timed just before the winner's rotation (or an
                   -- instance whose clock is behind) must still count as reuse.
                   env.refresh_reuse_grace_seconds > 0 AND to_timestamp($3::float8) < COALESCE(
                       (SELECT min(later.issued_at) FROM refresh_tokens later
                        WHERE later.session_id = r.session_id AND later.generation > r.generation),
                       to_timestamp($3::float8)
                   ) + make_interval(secs => env.refresh_reuse_grace_seconds) AS in_grace
            FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
            JOIN env ON env.id = s.environment_id
            WHERE r.token_hash = $2
        ), refreshed AS (
            UPDATE sessions s SET
                generation = CASE WHEN s.generation = p.generation THEN s.generation + 1 ELSE s.generation END,
                revoked_at = CASE
                    WHEN s.generation = p.generation OR p.in_grace THEN NULL
                    ELSE to_timestamp($3::float8) END,
                revoked_reason = CASE
                    WHEN s.generation = p.generation OR p.in_grace THEN NULL
                    ELSE 'refresh_token_reuse' END,
                last_refreshed_at = CASE
                    WHEN s.generation = p.generation OR p.in_grace THEN to_timestamp($3::float8)
                    ELSE s.last_refreshed_at END,
                access_token_hash = CASE
                    WHEN s.generation = p.generation OR p.in_grace THEN $4
                    ELSE s.access_token_hash END,
                refresh_token_hash = CASE
                    WHEN s.generation = p.generation OR p.in_grace THEN $5
                    ELSE s.refresh_token_hash END,
                access_expires_at = CASE
                    WHEN s.generation = p.generation OR p.in_grace
                    THEN to_timestamp($3::float8) + make_interval(mins => env.access_token_ttl_minutes)
                    ELSE s.access_expires_at END
            FROM presented p, env
            WHERE s.id = p.session_id AND s.revoked_at IS NULL AND p.closed_at IS NULL
              AND s.auth_time + make_interval(secs => env.session_max_age_days * 86400) > to_timestamp($3::float8)
              AND s.last_refreshed_at + make_interval(secs => env.session_idle_days * 86400) > to_timestamp($3::float8)
            RETURNING s.id, s.user_id, s.generation, s.revoked_at IS NOT NULL AS reused, s.auth_time,
                      s.last_refreshed_at, s.access_expires_at
        ), new_refresh_token AS (
            INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
            SELECT $5, id, generation, to_timestamp($3::float8) FROM refreshed WHERE NOT reused
        ), new_access_token AS (
            INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
            SELECT $4, id, to_timestamp($3::float8), access_expires_at FROM refreshed WHERE NOT reused
        )
        SELECT (SELECT id FROM env) AS environment_id, env.session_max_age_days, env.session_idle_days,
               p.session_id AS presented_session_id, p.revoked_at IS NOT NULL AS presented_revoked, p.revoked_reason,
               p.closed_at IS NOT NULL AS presented_closed,
               (p.auth_time + make_interval(secs => env.session_max_age_days * 86400) <= to_timestamp($3::float8)
                OR p.last_refreshed_at + make_interval(secs => env.session_idle_days * 86400) <= to_timestamp($3::float8))
                   AS presented_past_window,
               refreshed.id AS session_id, refreshed.reused, refreshed.auth_time, refreshed.last_refreshed_at,
               refreshed.access_expires_at,
               u.id AS user_id, u.email, u.name, u.image_url, u.password_hash
        FROM (SELECT 1) AS one
        LEFT JOIN env ON true LEFT JOIN presented p ON true LEFT JOIN refreshed ON true
        LEFT JOIN users u ON u.id = refreshed.user_id
        """

    /// Runs one refresh (see `refreshSQL`): one statement, race-free on any number of server instances.
    /// - Throws: `PostgresError`.
    public func refresh(_ attempt: RefreshAttempt) throws -> RefreshOutcome {
        let row = try pool.query(
            prepared: Self.refreshSQL,
            [
                attempt.publishableKey, attempt.refreshTokenHash, SQLTime.parameter(attempt.now), attempt.newAccessTokenHash,
                attempt.newRefreshTokenHash,
            ]
        ).rows[0]
        guard row["environment_id"] != nil else { return .unknownClient }
        guard row["presented_session_id"] != nil else { return .unknownToken }
        guard row["session_id"] != nil else {
            // Nothing was updated: say why, from the snapshot (a window only ever closes with time).
            if try row.bool("presented_revoked") {
                return row["revoked_reason"] == Self.expiredReason ? .reauthenticationRequired : .ended(revokedForReuse: false)
            }
            if try row.bool("presented_closed") { return .ended(revokedForReuse: false) }
            if try row.bool("presented_past_window") { return .reauthenticationRequired }
            return .ended(revokedForReuse: false)  // revoked by a concurrent statement
        }
        if try row.bool("reused") { return .ended(revokedForReuse: true) }
        let maxAge = Double(try row.int("session_max_age_days")) * 86_400
        let idle = Double(try row.int("session_idle_days")) * 86_400
        let expiresAt = try row.date("auth_time").addingTimeInterval(maxAge)
        return .refreshed(
            IssuedSession(
                sessionID: try row.string("session_id"), accessExpiresAt: try row.date("access_expires_at"),
                expiresAt: expiresAt, idleExpiresAt: min(expiresAt, try row.date("last_refreshed_at").addingTimeInterval(idle)),
                user: UserRecord(
                    id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                    imageURL: row["image_url"], passwordHash: try row.string("password_hash"), closed: false)))
    }

    /// `revoked_reason` of sessions ended because they were past a window when a settings change would
    /// have lengthened it; their refresh answers `reauthentication_required`, not `invalid_grant`.
    static let expiredReason = "expired"

    // MARK: - Revocation and introspection

    /// Revokes the session that issued `tokenHash` (an access or refresh token of any generation) when it
    /// belongs to `environmentID` (RFC 7009 §2.1; docs/protocol.md#revoke).
    /// - Returns: whether a live session was revoked (never told to the client, RFC 7009 §2.2).
    @discardableResult
    public func revokeSession(environmentID: String, tokenHash: String, reason: String, now: Date) throws -> Bool {
        try pool.query(
            """
            UPDATE sessions s SET revoked_at = to_timestamp($3::float8), revoked_reason = $4
            WHERE s.environment_id = $1 AND s.revoked_at IS NULL
              AND s.id IN (SELECT session_id FROM access_tokens WHERE token_hash = $2
                           UNION ALL SELECT session_id FROM refresh_tokens WHERE token_hash = $2)
            """, [environmentID, tokenHash, SQLTime.parameter(now), reason]
        ).rowsAffected > 0
    }

    /// A live access token of `environmentID` (RFC 7662 §2.2 `active: true`): unexpired, its session
    /// unrevoked and inside both windows, the account open.
    /// - Returns: nil for anything else, including another environment's token.
    public func introspect(environmentID: String, accessTokenHash: String, now: Date) throws -> IntrospectedToken? {
        guard
            let row = try pool.query(
                """
                SELECT s.id AS session_id, s.user_id, e.publishable_key, a.issued_at, a.expires_at
                FROM access_tokens a JOIN sessions s ON s.id = a.session_id
                JOIN environments e ON e.id = s.environment_id JOIN users u ON u.id = s.user_id
                WHERE a.token_hash = $1 AND e.id = $2 AND a.expires_at > to_timestamp($3::float8)
                  AND s.revoked_at IS NULL AND u.closed_at IS NULL
                  AND s.auth_time + make_interval(secs => e.session_max_age_days * 86400) > to_timestamp($3::float8)
                  AND s.last_refreshed_at + make_interval(secs => e.session_idle_days * 86400) > to_timestamp($3::float8)
                """, [accessTokenHash, environmentID, SQLTime.parameter(now)]
            ).first
        else { return nil }
        return IntrospectedToken(
            sessionID: try row.string("session_id"), userID: try row.string("user_id"), clientID: try row.string("publishable_key"),
            issuedAt: try row.date("issued_at"), expiresAt: try row.date("expires_at"))
    }
}
