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
    static let sessionSQL = """
        WITH env AS (
            SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes, id_token_signing_alg
            FROM environments WHERE id = $1::uuid
        ), account AS (
            SELECT u.id, u.email, u.name, u.image_url, u.created_at, u.email_verified_at FROM users u
            WHERE u.id = $2::uuid AND u.closed_at IS NULL
            FOR SHARE OF u
        ), factor AS (
            SELECT EXISTS (SELECT 1 FROM totp_factors t WHERE t.user_id = $2::uuid AND t.confirmed_at IS NOT NULL) AS active
        ), token_use AS (
            INSERT INTO upstream_token_uses (token_hash, expires_at) VALUES ($3, to_timestamp($4::float8))
            ON CONFLICT (token_hash) DO NOTHING
            RETURNING token_hash
        ), new_session AS (
            INSERT INTO sessions (environment_id, user_id, auth_time, created_at, last_refreshed_at, scope, amr,
                first_access_token_hash, first_access_expires_at, first_refresh_token_hash)
            SELECT env.id, account.id, to_timestamp($5::float8), to_timestamp($5::float8), to_timestamp($5::float8), $6, 'fed',
                   $7, to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes), $8
            FROM env, account, token_use, factor WHERE NOT factor.active
            RETURNING id, auth_time, last_refreshed_at
        )
        SELECT (SELECT count(*) FROM token_use) AS used, (SELECT active FROM factor) AS second_factor,
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
                ]
            ).rows[0]
            guard try row.int("used") == 1 else { return .replayed }
            guard row["user_id"] != nil else { return .accountClosed }
            guard let sessionID = row["session_id"] else { return try row.bool("second_factor") ? .secondFactorRequired : .accountClosed }
            let windows = IssuedSession.windows(
                authTime: try row.date("auth_time"), lastRefreshedAt: try row.date("last_refreshed_at"),
                maxAgeDays: try row.int("session_max_age_days"), idleDays: try row.int("session_idle_days"))
            return .issued(
                IssuedSession(
                    sessionID: sessionID, accessExpiresAt: try row.date("access_expires_at"), expiresAt: windows.expiresAt,
                    idleExpiresAt: windows.idleExpiresAt,
                    user: SessionUser(
                        id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                        imageURL: row["image_url"]),
                    grant: try PostgresStore.grant(from: row, nonce: nil)))
        }
    }
}

extension PostgresStore {
    /// The native token exchange's storage.
    public var tokenExchange: PostgresTokenExchange { PostgresTokenExchange(pool: pool) }
}
