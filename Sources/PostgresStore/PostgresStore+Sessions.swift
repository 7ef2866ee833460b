import Authorize
import Foundation
import Postgres

/// A secret key of an environment, without the key (docs/protocol.md#admin-keys, docs/protocol.md#secret-keys).
public struct SecretKeyRecord: Sendable, Equatable {
    public let id: String
    /// The key's last 4 characters, to tell keys apart.
    public let suffix: String
    public let createdAt: Date
    public let revokedAt: Date?
}

/// The environment's session settings, each optional in an update (nil keeps the current value).
public struct SessionSettingsUpdate: Sendable, Equatable {
    public var sessionMaxAgeDays: Int?
    public var sessionIdleDays: Int?
    public var accessTokenTTLMinutes: Int?
    public var refreshReuseGraceSeconds: Int?
    public init(
        sessionMaxAgeDays: Int? = nil, sessionIdleDays: Int? = nil, accessTokenTTLMinutes: Int? = nil,
        refreshReuseGraceSeconds: Int? = nil
    ) {
        self.sessionMaxAgeDays = sessionMaxAgeDays
        self.sessionIdleDays = sessionIdleDays
        self.accessTokenTTLMinutes = accessTokenTTLMinutes
        self.refreshReuseGraceSeconds = refreshReuseGraceSeconds
    }
}

/// The outcome of revoking a secret key.
public enum SecretKeyRevocation: Sendable, Equatable {
    /// Revoked now, or already revoked.
    case revoked
    /// No key with this id in this environment.
    case notFound
    /// It is the environment's last live key; an environment never has none.
    case lastKey
}

extension PostgresStore {
    // MARK: - Settings

    /// Applies a settings change to an environment (values already validated against the contract's
    /// bounds; the table's CHECK constraints hold them too). Serialised per environment by a row lock.
    /// When a window grows, sessions already past the current (shorter) window are ended first with
    /// reason `expired`, so lengthening never revives a session that had ended.
    /// - Returns: the environment with its new settings, or nil when it does not exist.
    /// - Throws: `PostgresError`.
    public func updateSessionSettings(environmentID: String, _ update: SessionSettingsUpdate, now: Date) throws -> EnvironmentRecord? {
        try pool.transaction { connection in
            guard
                let current = try connection.query(
                    "SELECT session_max_age_days, session_idle_days FROM environments WHERE id = $1 FOR UPDATE", [environmentID]
                ).first
            else { return nil }
            let maxAge = try current.int("session_max_age_days")
            let idle = try current.int("session_idle_days")
            if (update.sessionMaxAgeDays ?? maxAge) > maxAge || (update.sessionIdleDays ?? idle) > idle {
                try connection.query(
                    """
                    UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = $5
                    WHERE environment_id = $1 AND revoked_at IS NULL
                      AND (auth_time + make_interval(secs => $3::integer * 86400) <= to_timestamp($2::float8)
                           OR last_refreshed_at + make_interval(secs => $4::integer * 86400) <= to_timestamp($2::float8))
                    """, [environmentID, SQLTime.parameter(now), String(maxAge), String(idle), Self.expiredReason])
            }
            try connection.query(
                """
                UPDATE environments SET
                    session_max_age_days = COALESCE($2::integer, session_max_age_days),
                    session_idle_days = COALESCE($3::integer, session_idle_days),
                    access_token_ttl_minutes = COALESCE($4::integer, access_token_ttl_minutes),
                    refresh_reuse_grace_seconds = COALESCE($5::integer, refresh_reuse_grace_seconds)
                WHERE id = $1
                """,
                [
                    environmentID, update.sessionMaxAgeDays.map(String.init), update.sessionIdleDays.map(String.init),
                    update.accessTokenTTLMinutes.map(String.init), update.refreshReuseGraceSeconds.map(String.init),
                ])
            return try connection.query(
                """
                SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id WHERE e.id = $1
                """, [environmentID]
            ).first.map(Self.environment(from:))
        }
    }

    // MARK: - Secret keys

    private static func secretKey(from row: PostgresRow) throws -> SecretKeyRecord {
        SecretKeyRecord(
            id: try row.string("id"), suffix: try row.string("key_suffix"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"))
    }

    /// Adds a secret key to an environment; it works at once.
    /// - Parameters:
    ///   - keyHash: SHA-256 hex of the `sk_…` key (the key itself is never stored).
    ///   - suffix: its last 4 characters.
    public func addSecretKey(environmentID: String, keyHash: String, suffix: String, now: Date) throws -> SecretKeyRecord {
        try Self.secretKey(
            from: pool.query(
                """
                INSERT INTO secret_keys (environment_id, key_hash, key_suffix, created_at)
                VALUES ($1, $2, $3, to_timestamp($4::float8))
                RETURNING id, key_suffix, created_at, revoked_at
                """, [environmentID, keyHash, suffix, SQLTime.parameter(now)]
            ).rows[0])
    }

    /// The environment's secret keys, live and revoked, oldest first (keyset pagination by creation).
    public func secretKeys(environmentID: String, after: String?, limit: Int) throws -> [SecretKeyRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try pool.query(
            """
            SELECT id, key_suffix, created_at, revoked_at FROM secret_keys
            WHERE environment_id = $1
              AND ($2::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM secret_keys WHERE id = $2::uuid))
            ORDER BY created_at, id LIMIT $3
            """, [environmentID, cursor, String(limit)]
        ).rows.map(Self.secretKey(from:))
    }

    /// The id of the live key with this hash (the key making a call).
    public func secretKeyID(keyHash: String) throws -> String? {
        try pool.query("SELECT id FROM secret_keys WHERE key_hash = $1 AND revoked_at IS NULL", [keyHash]).first?.string("id")
    }

    /// Revokes a secret key of an environment, never its last live one. The environment row is locked
    /// first, so two concurrent revocations of its last two keys cannot both succeed: the second runs
    /// its check on a snapshot taken after the first committed.
    /// - Throws: `PostgresError`.
    public func revokeSecretKey(environmentID: String, id: String, now: Date) throws -> SecretKeyRevocation {
        guard UUID(uuidString: id) != nil else { return .notFound }
        return try pool.transaction { connection in
            try connection.query("SELECT id FROM environments WHERE id = $1 FOR UPDATE", [environmentID])
            guard
                let key = try connection.query(
                    "SELECT revoked_at IS NOT NULL AS revoked FROM secret_keys WHERE id = $1 AND environment_id = $2",
                    [id, environmentID]
                ).first
            else { return .notFound }
            if try key.bool("revoked") { return .revoked }
            let revoked = try connection.query(
                """
                UPDATE secret_keys k SET revoked_at = to_timestamp($3::float8)
                WHERE k.id = $1 AND k.environment_id = $2 AND k.revoked_at IS NULL
                  AND EXISTS (SELECT 1 FROM secret_keys o WHERE o.environment_id = $2 AND o.id <> $1 AND o.revoked_at IS NULL)
                """, [id, environmentID, SQLTime.parameter(now)]
            ).rowsAffected
            return revoked == 1 ? .revoked : .lastKey
        }
    }
}
