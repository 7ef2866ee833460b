import Authorize
import Foundation
import Postgres

/// The app sessions' aggregate: refresh with rotation, revocation, introspection and the current session
/// (docs/protocol.md#sessions). Every statement runs through `PostgresEdge.run`, so only domain errors leave it.
public struct PostgresSessions: Sendable {
    let pool: PostgresPool
    /// The environments kept in memory, when the store has a listener (docs/operations.md, "Configuration
    /// in memory"); nil reads PostgreSQL every time.
    let configuration: ConfigurationSnapshot?

    init(pool: PostgresPool, configuration: ConfigurationSnapshot? = nil) {
        self.pool = pool
        self.configuration = configuration
    }

    // The refresh in ONE statement (docs/protocol.md#refresh-checks), the client's failure limit included
    // (`gate`: over it, nothing is read or touched). `presented` reads the token, its session and
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
    // The new tokens are inserted from the UPDATE's RETURNING, so the pair and the rotation commit together;
    // the session row keeps no copy of the latest pair (sql/008). A presented token is read from
    // `issued_refresh_tokens` (sql/021): the session's first one is in its row, later ones in `refresh_tokens`.
    // The environment is found before the statement, by publishable key, from the configuration in memory
    // (docs/architecture.md, "Configuration in memory"): its id is $1 and its settings $11–$16, so the
    // statement reads no configuration table; a session of another environment is never found (`env.id`).
    // Web clients (docs/protocol.md, "Web clients"): $10 the authenticated web client (`zc_…`) or NULL for a
    // native app; a session is refreshed only by the client it was issued to (sql/026).
    // DPoP (docs/dpop.md, "Binding"), only in the form with a proof (used when the request carried one or the
    // environment requires DPoP): $16 whether the environment requires it, $17 the proof's key thumbprint or
    // NULL, $18 its `jti` digest, $19 when that use expires, $20 whether its nonce is accepted; checked as the
    // exchange's are, before the session is touched. A session bound to a key rotates only with a proof of
    // that key (RFC 9449 §5); otherwise nothing changes and the answer is `invalid_grant`
    // (`presented_other_key`). The form without a proof has the DPoP parts constant.
    static func refreshStatement(proof: Bool) -> String {
        let key = proof ? "$17" : "NULL::text"
        let dpop =
            proof
            ? DPoPProofSQL.commonTableExpressions(
                .init(thumbprint: 17, jtiDigest: 18, usableUntil: 19, nonceAccepted: 20, now: 3), gatedByRateLimit: true)
            : "dpop AS (SELECT false AS missing, false AS stale_nonce), proof_ok AS (SELECT true AS ok)"
        return """
            WITH env AS (
                SELECT $1::uuid AS id, $11::int AS session_max_age_days, $12::int AS session_idle_days,
                       $13::int AS access_token_ttl_minutes, $14::int AS refresh_reuse_grace_seconds,
                       $15::text AS id_token_signing_alg, \(proof ? "$16::boolean" : "false") AS require_dpop
            ), gate AS (
                SELECT EXISTS (
                    SELECT 1 FROM rate_limit_counters
                    WHERE bucket = $6 AND key = $7 AND window_start = to_timestamp($8::float8) AND count >= $9::int
                ) AS over
            ), \(dpop), presented AS (
                SELECT r.session_id, r.generation, s.revoked_at, s.revoked_reason, s.auth_time, s.last_refreshed_at,
                       u.closed_at, s.dpop_jkt, COALESCE(s.dpop_jkt = \(key), s.dpop_jkt IS NULL) AS key_matches,
                       -- Within the reuse grace only when one is configured: a request's time is read before its
                       -- statement runs, so at grace 0 a loser timed just before the winner's rotation (or an
                       -- instance whose clock is behind) must still count as reuse.
                       env.refresh_reuse_grace_seconds > 0 AND to_timestamp($3::float8) < COALESCE(
                           (SELECT min(later.issued_at) FROM issued_refresh_tokens later
                            WHERE later.session_id = r.session_id AND later.generation > r.generation),
                           to_timestamp($3::float8)
                       ) + make_interval(secs => env.refresh_reuse_grace_seconds) AS in_grace
                FROM issued_refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
                JOIN env ON env.id = s.environment_id
                WHERE r.token_hash = $2 AND NOT (SELECT over FROM gate) AND (SELECT ok FROM proof_ok)
                  AND s.web_client_id IS NOT DISTINCT FROM $10
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
                        ELSE s.last_refreshed_at END
                FROM presented p, env
                WHERE s.id = p.session_id AND s.revoked_at IS NULL AND p.closed_at IS NULL AND p.key_matches
                  AND s.auth_time + make_interval(secs => env.session_max_age_days * 86400) > to_timestamp($3::float8)
                  AND s.last_refreshed_at + make_interval(secs => env.session_idle_days * 86400) > to_timestamp($3::float8)
                RETURNING s.id, s.user_id, s.generation, s.revoked_at IS NOT NULL AS reused, s.auth_time, s.last_refreshed_at,
                          s.scope, s.amr, s.dpop_jkt
            ), new_refresh_token AS (
                INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
                SELECT $5, id, generation, to_timestamp($3::float8) FROM refreshed WHERE NOT reused
            ), new_access_token AS (
                INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
                SELECT $4, refreshed.id, to_timestamp($3::float8),
                       to_timestamp($3::float8) + make_interval(mins => env.access_token_ttl_minutes)
                FROM refreshed, env WHERE NOT refreshed.reused
            )
            SELECT env.id AS environment_id, (SELECT over FROM gate) AS rate_limited,
                   env.session_max_age_days, env.session_idle_days,
                   p.session_id AS presented_session_id, p.revoked_at IS NOT NULL AS presented_revoked, p.revoked_reason,
                   p.closed_at IS NOT NULL AS presented_closed, NOT p.key_matches AS presented_other_key,
                   (SELECT missing FROM dpop) AS dpop_missing, (SELECT stale_nonce FROM dpop) AS dpop_stale_nonce,
                   NOT (SELECT ok FROM proof_ok) AS dpop_refused, refreshed.dpop_jkt,
                   (p.auth_time + make_interval(secs => env.session_max_age_days * 86400) <= to_timestamp($3::float8)
                    OR p.last_refreshed_at + make_interval(secs => env.session_idle_days * 86400) <= to_timestamp($3::float8))
                       AS presented_past_window,
                   refreshed.id AS session_id, refreshed.reused, refreshed.auth_time, refreshed.last_refreshed_at,
                   to_timestamp($3::float8) + make_interval(mins => env.access_token_ttl_minutes) AS access_expires_at,
                   u.id AS user_id, u.email, u.name, u.image_url,
                   refreshed.scope, refreshed.amr, env.id_token_signing_alg, u.created_at AS profile_updated_at,
                   u.email_verified_at IS NOT NULL AS email_verified
            FROM env LEFT JOIN presented p ON true LEFT JOIN refreshed ON true
            LEFT JOIN users u ON u.id = refreshed.user_id
            """
    }

    /// The refresh when the request carried a DPoP proof or the environment requires one (`refreshStatement(proof:)`).
    static let refreshWithProofSQL = refreshStatement(proof: true)
    /// The refresh in the common case: no DPoP proof, none required (`refreshStatement(proof:)`).
    static let refreshSQL = refreshStatement(proof: false)

    /// The parameters of `refreshStatement(proof:)`, in order; the form without a proof takes the first 15.
    static func parameters(_ attempt: RefreshAttempt, environment: ExchangeEnvironment, proof: Bool) -> [String?] {
        var parameters: [String?] = [
            environment.id, attempt.refreshTokenHash, SQLTime.parameter(attempt.now), attempt.newAccessTokenHash,
            attempt.newRefreshTokenHash, attempt.failureGate?.bucket, attempt.failureGate?.key,
            attempt.failureGate.map { SQLTime.parameter($0.windowStart) }, attempt.failureGate.map { String($0.threshold) },
            attempt.webClientID, String(environment.sessionMaxAgeDays), String(environment.sessionIdleDays),
            String(environment.accessTokenTTLMinutes), String(environment.refreshReuseGraceSeconds),
            environment.idTokenSigningAlg.rawValue,
        ]
        if proof {
            parameters += [
                environment.requireDPoP ? "true" : "false", attempt.proof?.thumbprint, attempt.proof?.identifierHash,
                attempt.proof.map { SQLTime.parameter($0.usableUntil) }, attempt.proof?.nonceAccepted == true ? "true" : "false",
            ]
        }
        return parameters
    }

    /// The outcome of one `refreshSQL` row.
    static func outcome(from row: PostgresRow) throws -> RefreshOutcome {
        guard row["environment_id"] != nil else { return .unknownClient }
        if try row.bool("rate_limited") { return .rateLimited }
        if try row.bool("dpop_refused") {
            return .dpopRefused(try row.bool("dpop_missing") ? .missing : try row.bool("dpop_stale_nonce") ? .useNonce : .replayed)
        }
        guard row["presented_session_id"] != nil else { return .unknownToken }
        guard row["session_id"] != nil else {
            if try row.bool("presented_other_key"), try !row.bool("presented_revoked") { return .otherKey }
            // Nothing was updated: say why, from the snapshot (a window only ever closes with time).
            if try row.bool("presented_revoked") {
                return row["revoked_reason"] == PostgresStore.expiredReason ? .reauthenticationRequired : .ended(revokedForReuse: false)
            }
            if try row.bool("presented_closed") { return .ended(revokedForReuse: false) }
            if try row.bool("presented_past_window") { return .reauthenticationRequired }
            return .ended(revokedForReuse: false)  // revoked by a concurrent statement
        }
        if try row.bool("reused") { return .ended(revokedForReuse: true) }
        let windows = IssuedSession.windows(
            authTime: try row.date("auth_time"), lastRefreshedAt: try row.date("last_refreshed_at"),
            maxAgeDays: try row.int("session_max_age_days"), idleDays: try row.int("session_idle_days"))
        var session = IssuedSession(
            sessionID: try row.string("session_id"), accessExpiresAt: try row.date("access_expires_at"),
            expiresAt: windows.expiresAt, idleExpiresAt: windows.idleExpiresAt,
            user: SessionUser(
                id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"), imageURL: row["image_url"]),
            grant: try PostgresStore.grant(from: row, nonce: nil))
        session.dpopThumbprint = row["dpop_jkt"]
        return .refreshed(session)
    }

    /// Whether an environment has this publishable key (one indexed read).
    public func isKnownClient(publishableKey: String) throws -> Bool {
        try PostgresEdge.run {
            try pool.query("SELECT 1 FROM environments WHERE publishable_key = $1", [publishableKey]).first != nil
        }
    }

    /// The id of the environment whose publishable key this is, or nil.
    public func environmentID(publishableKey: String) throws -> String? {
        try PostgresEdge.run {
            try pool.query("SELECT id FROM environments WHERE publishable_key = $1", [publishableKey]).first?.string("id")
        }
    }

    /// The id of the environment with a live secret key of this digest, or nil.
    public func environmentID(secretKeyHash: String) throws -> String? {
        try PostgresEdge.run {
            try pool.query(
                "SELECT environment_id FROM secret_keys WHERE key_hash = $1 AND revoked_at IS NULL", [secretKeyHash]
            ).first?.string("environment_id")
        }
    }
}

extension PostgresSessions: RefreshStore {
    /// Runs one refresh (see `refreshStatement(proof:)`): the environment from the configuration in memory, then one
    /// statement, race-free on any number of server instances.
    public func refresh(_ attempt: RefreshAttempt) throws -> RefreshOutcome {
        guard
            let environment = try PostgresEdge.notInDoubt({
                try PostgresAuthorizations(pool: pool, configuration: configuration)
                    .exchangeEnvironment(publishableKey: attempt.publishableKey)
            })
        else { return .unknownClient }
        let proof = attempt.proof != nil || environment.requireDPoP
        return try PostgresEdge.run {
            try Self.outcome(
                from: pool.query(
                    prepared: proof ? Self.refreshWithProofSQL : Self.refreshSQL,
                    Self.parameters(attempt, environment: environment, proof: proof)
                ).rows[0])
        }
    }

    /// The session an in-doubt refresh rotated, by its new access token (the current-session read).
    public func refreshedSession(accessTokenHash: String, now: Date) throws -> IssuedSession? {
        try session(accessTokenHash: accessTokenHash, now: now)
    }
}

extension PostgresSessions: RevokeStore {
    /// Revokes the session that issued `tokenHash` (an access or refresh token of any generation) when it
    /// belongs to `environmentID` (RFC 7009 §2.1; docs/protocol.md#revoke).
    @discardableResult
    public func revokeSession(environmentID: String, tokenHash: String, reason: RevocationReason, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE sessions s SET revoked_at = to_timestamp($3::float8), revoked_reason = $4
                WHERE s.environment_id = $1 AND s.revoked_at IS NULL
                  AND s.id IN (SELECT session_id FROM issued_access_tokens WHERE token_hash = $2
                               UNION ALL SELECT session_id FROM issued_refresh_tokens WHERE token_hash = $2)
                """, [environmentID, tokenHash, SQLTime.parameter(now), reason.rawValue]
            ).rowsAffected > 0
        }
    }
}

extension PostgresSessions: IntrospectStore {
    /// A live access token of `environmentID` (RFC 7662 §2.2 `active: true`). Its `client_id` is the client
    /// the token was issued to: the web client named on the session (sql/026), else the environment's
    /// publishable key (docs/protocol.md#introspect).
    public func introspect(environmentID: String, accessTokenHash: String, now: Date) throws -> IntrospectedToken? {
        guard UUID(uuidString: environmentID) != nil else { return nil }
        return try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT s.id AS session_id, s.user_id, COALESCE(s.web_client_id, e.publishable_key) AS client_id,
                           a.issued_at, a.expires_at, s.dpop_jkt
                    FROM issued_access_tokens a JOIN sessions s ON s.id = a.session_id
                    JOIN environments e ON e.id = s.environment_id JOIN users u ON u.id = s.user_id
                    WHERE a.token_hash = $1 AND e.id = $2 AND a.expires_at > to_timestamp($3::float8)
                      AND s.revoked_at IS NULL AND u.closed_at IS NULL
                      AND s.auth_time + make_interval(secs => e.session_max_age_days * 86400) > to_timestamp($3::float8)
                      AND s.last_refreshed_at + make_interval(secs => e.session_idle_days * 86400) > to_timestamp($3::float8)
                    """, [accessTokenHash, environmentID, SQLTime.parameter(now)]
                ).first
            else { return nil }
            var token = IntrospectedToken(
                sessionID: try row.string("session_id"), userID: try row.string("user_id"),
                clientID: try row.string("client_id"), issuedAt: try row.date("issued_at"), expiresAt: try row.date("expires_at"))
            token.dpopThumbprint = row["dpop_jkt"]
            return token
        }
    }
}

extension PostgresSessions: CurrentSessionStore {
    /// A live session by its access token, with its windows and account (`GET /v1/auth/session`).
    public func session(accessTokenHash: String, now: Date) throws -> IssuedSession? {
        try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT s.id AS session_id, s.auth_time, a.expires_at AS access_expires_at, s.last_refreshed_at,
                           e.session_max_age_days, e.session_idle_days, u.id AS user_id, u.email, u.name, u.image_url,
                           s.scope, s.amr, e.id_token_signing_alg, u.created_at AS profile_updated_at,
                           u.email_verified_at IS NOT NULL AS email_verified, s.dpop_jkt
                    FROM issued_access_tokens a JOIN sessions s ON s.id = a.session_id
                    JOIN environments e ON e.id = s.environment_id JOIN users u ON u.id = s.user_id
                    WHERE a.token_hash = $1 AND s.revoked_at IS NULL AND u.closed_at IS NULL
                      AND a.expires_at > to_timestamp($2::float8)
                      AND s.auth_time + make_interval(secs => e.session_max_age_days * 86400) > to_timestamp($2::float8)
                      AND s.last_refreshed_at + make_interval(secs => e.session_idle_days * 86400) > to_timestamp($2::float8)
                    """, [accessTokenHash, SQLTime.parameter(now)]
                ).first
            else { return nil }
            let windows = IssuedSession.windows(
                authTime: try row.date("auth_time"), lastRefreshedAt: try row.date("last_refreshed_at"),
                maxAgeDays: try row.int("session_max_age_days"), idleDays: try row.int("session_idle_days"))
            var session = IssuedSession(
                sessionID: try row.string("session_id"), accessExpiresAt: try row.date("access_expires_at"),
                expiresAt: windows.expiresAt, idleExpiresAt: windows.idleExpiresAt,
                user: SessionUser(
                    id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                    imageURL: row["image_url"]),
                grant: try PostgresStore.grant(from: row, nonce: nil))
            session.dpopThumbprint = row["dpop_jkt"]
            return session
        }
    }
}

extension PostgresStore {
    /// A session's grant from a row with `scope`, `amr`, `auth_time`, `id_token_signing_alg` and
    /// `profile_updated_at` and `email_verified` (the exchange's and the refresh's statements, sql/010, sql/011). `nonce` only on the
    /// code exchange.
    static func grant(from row: PostgresRow, nonce: String?) throws -> SessionGrant {
        SessionGrant(
            scope: GrantedScope(requested: row["scope"]), nonce: nonce, methods: AuthenticationMethods(stored: row["amr"]),
            authTime: try row.date("auth_time"),
            algorithm: row["id_token_signing_alg"].flatMap(SigningAlgorithm.init(rawValue:)) ?? .rs256,
            profileUpdatedAt: try row.date("profile_updated_at"), emailVerified: row["email_verified"] == "t")
    }

    /// The app sessions' aggregate.
    public var sessions: PostgresSessions { PostgresSessions(pool: pool, configuration: configuration) }

    /// `revoked_reason` of sessions ended because they were past a window when a settings change would
    /// have lengthened it; their refresh answers `reauthentication_required`, not `invalid_grant`.
    static let expiredReason = "expired"
}

extension PostgresSessions: DPoPProofUseStore {
    /// Inserts the use, taking over a row whose life has ended (sql/027): one statement, so two instances
    /// given the same proof at once record it once and the second sees a replay.
    public func recordProofUse(_ use: DPoPProofUse, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO dpop_proof_uses (jkt, jti_hash, expires_at) VALUES ($1, $2, to_timestamp($3::float8))
                ON CONFLICT (jkt, jti_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at
                    WHERE dpop_proof_uses.expires_at <= to_timestamp($4::float8)
                """, [use.thumbprint, use.identifierHash, SQLTime.parameter(use.usableUntil), SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }
}
