import Authorize
import Foundation
import Postgres

/// The native token exchange's storage (docs/federation.md, "Native Sign in with Apple and Google"): the
/// client's environment and iOS bundle IDs, the providers its project shows, and the one statement that
/// uses the upstream token once and makes the session.
public struct PostgresTokenExchange: TokenExchangeStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    public func tokenExchangeClient(publishableKey: String) throws -> TokenExchangeClient? {
        try PostgresEdge.run {
            let rows = try pool.query(
                """
                SELECT e.id, e.project_id, a.bundle_id FROM environments e
                LEFT JOIN mobile_apps a ON a.environment_id = e.id AND a.platform = 'ios'
                WHERE e.publishable_key = $1 ORDER BY a.bundle_id
                """, [publishableKey]
            ).rows
            guard let first = rows.first else { return nil }
            return TokenExchangeClient(
                environmentID: try first.string("id"), projectID: try first.string("project_id"),
                iosBundleIDs: rows.compactMap { $0["bundle_id"] })
        }
    }

    public func exchangeProviders(projectID: String) throws -> [UpstreamProviderRecord] {
        do {
            return try PostgresProviders(pool: pool).projectProviders(projectID: projectID)
        } catch ProviderRefusal.noProject {
            return []
        }
    }

    // One statement: the upstream token's use is inserted (ON CONFLICT DO NOTHING: of two concurrent uses
    // the second waits for the first's row and inserts nothing), and the session is made only when this
    // statement inserted it, the account is open and it has no confirmed TOTP factor. The account row is
    // locked FOR SHARE, as the code exchange locks it, so a closing or a password change serialises with
    // it. The first token pair is written on the session row (sql/021); `amr` is `fed`.
    // DPoP as the code exchange has it (docs/dpop.md, "Binding"): $9 the proof's key thumbprint or NULL,
    // $10 its `jti` digest, $11 when that use expires, $12 whether its nonce is accepted. An environment that
    // requires DPoP refuses a request without a proof (`dpop_missing`) or without an accepted nonce
    // (`dpop_stale_nonce`); the proof's use is inserted once per key and `jti` (`proof_use`: a conflict with
    // a live row is a replay). The upstream token's use is inserted only when all of that passed, so a
    // refused proof leaves the token usable; the session is bound to the proof's key (`dpop_jkt`).
    static let sessionSQL = """
        WITH env AS (
            SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes, id_token_signing_alg, require_dpop
            FROM environments WHERE id = $1::uuid
        ), \(DPoPProofSQL.commonTableExpressions(.init(thumbprint: 9, jtiDigest: 10, usableUntil: 11, nonceAccepted: 12, now: 5), gatedByRateLimit: false)), account AS (
            SELECT u.id, u.email, u.name, u.image_url, u.created_at, u.email_verified_at FROM users u
            WHERE u.id = $2::uuid AND u.closed_at IS NULL
            FOR SHARE OF u
        ), factor AS (
            SELECT EXISTS (SELECT 1 FROM totp_factors t WHERE t.user_id = $2::uuid AND t.confirmed_at IS NOT NULL) AS active
        ), token_use AS (
            INSERT INTO upstream_token_uses (token_hash, expires_at)
            SELECT $3, to_timestamp($4::float8) FROM proof_ok WHERE proof_ok.ok
            ON CONFLICT (token_hash) DO NOTHING
            RETURNING token_hash
        ), new_session AS (
            INSERT INTO sessions (environment_id, user_id, auth_time, created_at, last_refreshed_at, scope, amr,
                first_access_token_hash, first_access_expires_at, first_refresh_token_hash, dpop_jkt)
            SELECT env.id, account.id, to_timestamp($5::float8), to_timestamp($5::float8), to_timestamp($5::float8), $6, 'fed',
                   $7, to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes), $8, $9
            FROM env, account, token_use, factor WHERE NOT factor.active
            RETURNING id, auth_time, last_refreshed_at, dpop_jkt
        )
        SELECT (SELECT count(*) FROM token_use) AS used, (SELECT active FROM factor) AS second_factor,
               (SELECT missing FROM dpop) AS dpop_missing, (SELECT stale_nonce FROM dpop) AS dpop_stale_nonce,
               NOT (SELECT ok FROM proof_ok) AS dpop_refused, new_session.dpop_jkt,
               account.id AS user_id, account.email, account.name, account.image_url,
               env.session_max_age_days, env.session_idle_days, env.id_token_signing_alg,
               new_session.id AS session_id, new_session.auth_time, new_session.last_refreshed_at,
               to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes) AS access_expires_at,
               $6 AS scope, 'fed' AS amr, account.created_at AS profile_updated_at,
               account.email_verified_at IS NOT NULL AS email_verified
        FROM (SELECT 1) AS one
        LEFT JOIN env ON true LEFT JOIN account ON true LEFT JOIN new_session ON true
        """

    public func createFederatedSession(_ attempt: FederatedSessionAttempt) throws -> FederatedSessionFacts {
        try PostgresEdge.run {
            let row = try pool.query(
                prepared: Self.sessionSQL,
                [
                    attempt.environmentID, attempt.userID, attempt.upstreamTokenHash, SQLTime.parameter(attempt.upstreamTokenExpiresAt),
                    SQLTime.parameter(attempt.now), attempt.scope, attempt.accessTokenHash, attempt.refreshTokenHash,
                    attempt.proof?.thumbprint, attempt.proof?.identifierHash, attempt.proof.map { SQLTime.parameter($0.usableUntil) },
                    attempt.proof?.nonceAccepted == true ? "true" : "false",
                ]
            ).rows[0]
            if try row.bool("dpop_refused") {
                return .dpopRefused(try row.bool("dpop_missing") ? .missing : try row.bool("dpop_stale_nonce") ? .useNonce : .replayed)
            }
            guard try row.int("used") == 1 else { return .replayed }
            guard row["user_id"] != nil else { return .accountClosed }
            guard let sessionID = row["session_id"] else { return try row.bool("second_factor") ? .secondFactorRequired : .accountClosed }
            let windows = IssuedSession.windows(
                authTime: try row.date("auth_time"), lastRefreshedAt: try row.date("last_refreshed_at"),
                maxAgeDays: try row.int("session_max_age_days"), idleDays: try row.int("session_idle_days"))
            var session = IssuedSession(
                sessionID: sessionID, accessExpiresAt: try row.date("access_expires_at"), expiresAt: windows.expiresAt,
                idleExpiresAt: windows.idleExpiresAt,
                user: SessionUser(
                    id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"), imageURL: row["image_url"]),
                grant: try PostgresStore.grant(from: row, nonce: nil))
            session.dpopThumbprint = row["dpop_jkt"]
            return .issued(session)
        }
    }
}

extension PostgresStore {
    /// The native token exchange's storage.
    public var tokenExchange: PostgresTokenExchange { PostgresTokenExchange(pool: pool) }
}
