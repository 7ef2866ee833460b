import Association
import Authorize
import Foundation
import Postgres

/// Every SQL statement of the server, parameterized only (`$1…` through `PQexecParams`).
///
/// One instance is shared by all request threads; it holds no state beyond the pool, so any number of
/// server instances may share one database (DEVELOPERS.md, "The shape we build").
public final class PostgresStore: Sendable {
    public let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    // Tenancy (projects, environments, keys, domains) is `PostgresTenancy` (PostgresStore+Projects.swift).

    // MARK: - Callbacks and domains

    private static func callback(from row: PostgresRow) throws -> CallbackRecord {
        CallbackRecord(
            id: try row.string("id"), uri: try row.string("uri"), kind: try row.string("kind"),
            createdAt: try row.date("created_at"))
    }

    /// Registers a redirect URI for an environment.
    /// - Throws: `StoreError.duplicate("callbacks_unique")` when it is registered already.
    public func addCallback(environmentID: String, uri: String, kind: String, now: Date) throws -> CallbackRecord {
        do {
            return try Self.callback(
                from: pool.query(
                    """
                    INSERT INTO callbacks (environment_id, uri, kind, created_at) VALUES ($1, $2, $3, to_timestamp($4::float8))
                    RETURNING id, uri, kind, created_at
                    """, [environmentID, uri, kind, SQLTime.parameter(now)]
                ).rows[0])
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw StoreError.duplicate(constraint: error.constraint ?? "callbacks_unique")
        }
    }

    /// One page of an environment's callbacks in creation order.
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil.
    ///   - limit: 1–100.
    public func callbacks(environmentID: String, after: String?, limit: Int) throws -> [CallbackRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try pool.query(
            """
            SELECT id, uri, kind, created_at FROM callbacks
            WHERE environment_id = $1
              AND ($2::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM callbacks WHERE id = $2::uuid))
            ORDER BY created_at, id LIMIT $3
            """, [environmentID, cursor, String(limit)]
        ).rows.map(Self.callback(from:))
    }

    /// Deletes a callback of this environment. - Returns: whether one was deleted.
    public func deleteCallback(environmentID: String, id: String) throws -> Bool {
        guard UUID(uuidString: id) != nil else { return false }
        return try pool.query("DELETE FROM callbacks WHERE environment_id = $1 AND id = $2", [environmentID, id]).rowsAffected == 1
    }

    // MARK: - Start

    /// The client as the start's checks see it: the environment, its registered redirect URIs, and for
    /// each link whether its domain is verified. One statement.
    /// - Returns: nil when no environment has this publishable key.
    public func clientEnvironment(publishableKey: String) throws -> (EnvironmentRecord, ClientEnvironment)? {
        let result = try pool.query(
            """
            SELECT \(Self.environmentColumns), c.uri, d.verified_at IS NOT NULL AS link_verified
            FROM environments e JOIN projects p ON p.id = e.project_id
            LEFT JOIN callbacks c ON c.environment_id = e.id
            LEFT JOIN project_domains d ON c.kind = 'link' AND d.project_id = e.project_id
                 AND d.domain = split_part(split_part(substr(c.uri, 9), '/', 1), ':', 1)
            WHERE e.publishable_key = $1
            ORDER BY c.created_at
            """, [publishableKey])
        guard let first = result.first else { return nil }
        let environment = try Self.environment(from: first)
        let facts = try appFacts(environmentID: environment.id)
        var registered: [RegisteredRedirect] = []
        for row in result.rows {
            guard let raw = row["uri"], case .success(let uri) = RedirectURI.parse(raw) else { continue }
            let domainVerified = (row["link_verified"] ?? "f") == "t"
            registered.append(
                RegisteredRedirect(
                    uri: uri, productionCustomSchemeAllowed: facts.customSchemes.contains(uri.scheme),
                    linkVerified: facts.linkVerified(
                        host: uri.host ?? "", path: String(uri.pathAndQuery.prefix { $0 != "?" }), domainVerified: domainVerified,
                        production: environment.kind == .production)))
        }
        let client = ClientEnvironment(
            environmentID: environment.id, kind: environment.kind,
            appName: environment.projectName, registeredRedirects: registered)
        return (environment, client)
    }

    /// Records a pending sign-in.
    /// - Parameter standardEndpoint: whether `/oauth2/authorize` (not `/v1/auth/zevid/start`) started it.
    /// - Returns: its id (a UUID, not a secret: the browser binding protects it).
    public func createAuthorizationRequest(
        _ request: ValidatedStartRequest, standardEndpoint: Bool = false, browserBindingHash: String, browserSessionID: String?,
        now: Date, lifetimeSeconds: Double
    ) throws -> String {
        try pool.query(
            """
            INSERT INTO authorization_requests (environment_id, redirect_uri, redirect_kind, state, code_challenge,
                prompt_login, login_hint, browser_binding_hash, browser_session_id, created_at, expires_at, standard_endpoint)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_timestamp($10::float8), to_timestamp($11::float8), $12)
            RETURNING id
            """,
            [
                request.environmentID, request.redirect.raw, request.redirect.kind.rawValue, request.state.value,
                request.challenge.value, request.prompt == .login ? "true" : "false", request.loginHint,
                browserBindingHash, browserSessionID, SQLTime.parameter(now),
                SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds)), standardEndpoint ? "true" : "false",
            ]
        ).rows[0].string("id")
    }

    /// A pending sign-in by id, whatever its state (the caller checks expiry, completion and binding).
    public func authorizationRequest(id: String) throws -> AuthorizationRequestRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        guard
            let row = try pool.query(
                """
                SELECT id, environment_id, redirect_uri, redirect_kind, state, code_challenge, prompt_login, login_hint,
                       browser_binding_hash, browser_session_id, expires_at, completed_at, standard_endpoint
                FROM authorization_requests WHERE id = $1
                """, [id]
            ).first
        else { return nil }
        return AuthorizationRequestRecord(
            id: try row.string("id"), environmentID: try row.string("environment_id"),
            redirectURI: try row.string("redirect_uri"), redirectKind: try row.string("redirect_kind"),
            state: try row.string("state"), codeChallenge: try row.string("code_challenge"),
            promptLogin: try row.bool("prompt_login"), loginHint: row["login_hint"],
            browserBindingHash: try row.string("browser_binding_hash"), browserSessionID: row["browser_session_id"],
            expiresAt: try row.date("expires_at"), completedAt: try row.optionalDate("completed_at"),
            standardEndpoint: try row.bool("standard_endpoint"))
    }

    /// Ends a pending sign-in without a code (consent denied).
    /// - Returns: false when it had already ended.
    public func completeAuthorizationRequest(id: String, now: Date) throws -> Bool {
        try pool.query(
            "UPDATE authorization_requests SET completed_at = to_timestamp($2::float8) WHERE id = $1 AND completed_at IS NULL",
            [id, SQLTime.parameter(now)]
        ).rowsAffected == 1
    }

    // MARK: - Codes

    /// Issues an authorization code for a pending sign-in and completes it, in one statement, so a pending
    /// sign-in yields at most one code. Remembers consent when `rememberConsent` is set.
    /// - Parameters:
    ///   - codeHash: SHA-256 hex of the `hoc_…` code (the code itself is never stored).
    ///   - lifetimeSeconds: 60 (docs/protocol.md#code-lifetime).
    /// - Returns: false when the pending sign-in is unknown, expired, completed, or not authenticated by
    ///   `browserSessionID`.
    public func issueCode(
        requestID: String, browserSessionID: String, codeHash: String, rememberConsent: Bool, now: Date, lifetimeSeconds: Double
    ) throws -> Bool {
        let result = try pool.query(
            """
            WITH request AS (
                UPDATE authorization_requests r SET completed_at = to_timestamp($4::float8)
                FROM browser_sessions b
                WHERE r.id = $1 AND r.completed_at IS NULL AND r.expires_at > to_timestamp($4::float8)
                  AND r.browser_session_id = $2 AND b.id = r.browser_session_id AND b.ended_at IS NULL
                RETURNING r.environment_id, r.redirect_uri, r.code_challenge, b.user_id, b.id AS browser_session_id, b.auth_time
            ), consent AS (
                INSERT INTO consents (user_id, environment_id, granted_at)
                SELECT user_id, environment_id, to_timestamp($4::float8) FROM request WHERE $6::boolean
                ON CONFLICT (user_id, environment_id) DO NOTHING
            )
            INSERT INTO authorization_codes (code_hash, environment_id, user_id, browser_session_id, redirect_uri,
                code_challenge, auth_time, issued_at, expires_at)
            SELECT $3, environment_id, user_id, browser_session_id, redirect_uri, code_challenge, auth_time,
                   to_timestamp($4::float8), to_timestamp($5::float8)
            FROM request
            RETURNING id
            """,
            [
                requestID, browserSessionID, codeHash, SQLTime.parameter(now),
                SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds)), rememberConsent ? "true" : "false",
            ])
        return result.rowsAffected == 1
    }

    // MARK: - Exchange

    /// One exchange attempt, everything hashed or derived before it reaches SQL.
    public struct ExchangeAttempt: Sendable {
        public let publishableKey: String
        public let codeHash: String
        /// The `redirectUri` sent, or nil when missing.
        public let requestedRedirectURI: String?
        /// S256 of the sent `codeVerifier` when its grammar is valid (RFC 7636 §4.1), else nil.
        public let verifierChallenge: String?
        /// A fresh UUID naming this attempt: the row records which attempt consumed it.
        public let attemptID: String
        public let accessTokenHash: String
        public let refreshTokenHash: String
        public let now: Date
        /// When set, the statement touches no code if the client's failure counter is at its threshold.
        public let failureGate: FailureGate?
        public init(
            publishableKey: String, codeHash: String, requestedRedirectURI: String?, verifierChallenge: String?,
            attemptID: String, accessTokenHash: String, refreshTokenHash: String, now: Date, failureGate: FailureGate? = nil
        ) {
            self.failureGate = failureGate
            self.publishableKey = publishableKey
            self.codeHash = codeHash
            self.requestedRedirectURI = requestedRedirectURI
            self.verifierChallenge = verifierChallenge
            self.attemptID = attemptID
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.now = now
        }
    }

    /// A failure-counted rate limit checked inside a statement (`rate_limit_counters`), so the exchange's
    /// common path stays one statement (docs/protocol.md#rate-limits; docs/performance.md).
    public struct FailureGate: Sendable {
        public let bucket: String
        public let key: String
        public let windowStart: Date
        /// The count at which the client is refused.
        public let threshold: Int
        public init(bucket: String, key: String, windowStart: Date, threshold: Int) {
            self.bucket = bucket
            self.key = key
            self.windowStart = windowStart
            self.threshold = threshold
        }
    }

    // The exchange in ONE statement (docs/protocol.md#exchange-checks): find the environment by publishable key;
    // consume the code if unconsumed and unexpired (recording which attempt consumed it), or, when it was
    // already consumed and this presentation would pass rows 4–6, mark it replayed; create the session
    // when this attempt consumed it and rows 4–6 pass (with its first token pair in `refresh_tokens` and
    // `access_tokens`, sql/003); revoke the code's session on a valid replay.
    // Consumption and session creation commit together. The UPDATE's row lock serialises concurrent
    // attempts on any number of server instances: exactly one sees `consumed_at IS NULL`.
    // A code is consumed only while what it stood for still holds (docs/protocol.md, "Exchange", row 3):
    // the account open (`holder`) and the ZevID browser session it was issued from not ended (`issuer`).
    // Both rows are locked FOR SHARE, account first, in the order a password change or a closing takes
    // them (`PostgresStore+Accounts.swift`), so the two serialise instead of deadlocking: a sign-out,
    // sign-out everywhere, password change or closing that commits while this statement waits is seen
    // here (READ COMMITTED re-checks a locked row's newest version), and one that starts after this
    // statement waits for it and then revokes the session it made, in its next statement.
    // A password change ends every browser session of the account, so `issuer` covers it.
    static let exchangeSQL = """
        WITH env AS (
            SELECT id, session_max_age_days, session_idle_days, access_token_ttl_minutes
            FROM environments WHERE publishable_key = $1
        ), gate AS (
            SELECT EXISTS (
                SELECT 1 FROM rate_limit_counters
                WHERE bucket = $9 AND key = $10 AND window_start = to_timestamp($11::float8) AND count >= $12::int
            ) AS over
        ), holder AS (
            SELECT u.id FROM authorization_codes c0 JOIN users u ON u.id = c0.user_id
            WHERE c0.code_hash = $2 AND c0.consumed_at IS NULL AND u.closed_at IS NULL
            FOR SHARE OF u
        ), issuer AS (
            SELECT b.id FROM authorization_codes c0 JOIN browser_sessions b ON b.id = c0.browser_session_id
            WHERE c0.code_hash = $2 AND c0.consumed_at IS NULL AND b.ended_at IS NULL AND EXISTS (SELECT 1 FROM holder)
            FOR SHARE OF b
        ), code AS (
            UPDATE authorization_codes c SET
                consumed_at = COALESCE(c.consumed_at, to_timestamp($5::float8)),
                consumed_by = COALESCE(c.consumed_by, $6::uuid),
                replayed_at = CASE
                    WHEN c.consumed_at IS NOT NULL AND c.redirect_uri = $3 AND c.code_challenge = $4
                    THEN COALESCE(c.replayed_at, to_timestamp($5::float8)) ELSE c.replayed_at END
            WHERE c.code_hash = $2 AND c.environment_id = (SELECT id FROM env) AND NOT (SELECT over FROM gate)
              AND (c.consumed_at IS NOT NULL OR (
                  c.expires_at > to_timestamp($5::float8) AND EXISTS (SELECT 1 FROM holder)
                  AND (c.browser_session_id IS NULL OR EXISTS (SELECT 1 FROM issuer))))
            RETURNING c.id, c.user_id, c.browser_session_id, c.redirect_uri, c.code_challenge, c.auth_time,
                      c.consumed_by = $6::uuid AS won,
                      c.consumed_by <> $6::uuid AND COALESCE(c.redirect_uri = $3 AND c.code_challenge = $4, false) AS replay
        ), account AS (
            SELECT u.id, u.email, u.name, u.image_url, u.password_hash FROM users u
            WHERE u.id = (SELECT user_id FROM code) AND u.closed_at IS NULL
        ), new_session AS (
            INSERT INTO sessions (environment_id, user_id, browser_session_id, authorization_code_id, auth_time,
                created_at, last_refreshed_at, access_token_hash, access_expires_at, refresh_token_hash)
            SELECT env.id, code.user_id, code.browser_session_id, code.id, code.auth_time,
                   to_timestamp($5::float8), to_timestamp($5::float8), $7,
                   to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes), $8
            FROM code, env, account
            WHERE code.won AND code.redirect_uri = $3 AND code.code_challenge = $4
            RETURNING id, auth_time, access_expires_at, last_refreshed_at
        ), first_refresh_token AS (
            INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
            SELECT $8, id, 1, to_timestamp($5::float8) FROM new_session
        ), first_access_token AS (
            INSERT INTO access_tokens (token_hash, session_id, issued_at, expires_at)
            SELECT $7, id, to_timestamp($5::float8), access_expires_at FROM new_session
        ), revoked AS (
            UPDATE sessions s SET revoked_at = to_timestamp($5::float8), revoked_reason = 'authorization_code_replay'
            FROM code WHERE code.replay AND s.authorization_code_id = code.id AND s.revoked_at IS NULL
            RETURNING s.id
        )
        SELECT (SELECT id FROM env) AS environment_id, (SELECT over FROM gate) AS rate_limited,
               env.session_max_age_days, env.session_idle_days,
               code.id AS code_id, code.redirect_uri, code.code_challenge, code.won, code.replay,
               (SELECT count(*) FROM revoked) AS revoked_count,
               new_session.id AS session_id, new_session.auth_time, new_session.access_expires_at,
               new_session.last_refreshed_at,
               account.id AS user_id, account.email, account.name, account.image_url, account.password_hash
        FROM (SELECT 1) AS one
        LEFT JOIN env ON true LEFT JOIN code ON true LEFT JOIN new_session ON true LEFT JOIN account ON true
        """

    /// Runs one exchange attempt (see `exchangeSQL`): one statement in the common case, plus one more only
    /// when a valid replay raced the winning exchange and could not yet see its session.
    /// - Throws: `PostgresError`.
    public func exchange(_ attempt: ExchangeAttempt) throws -> ExchangeOutcome {
        let row = try pool.query(
            prepared: Self.exchangeSQL,
            [
                attempt.publishableKey, attempt.codeHash, attempt.requestedRedirectURI, attempt.verifierChallenge,
                SQLTime.parameter(attempt.now), attempt.attemptID, attempt.accessTokenHash, attempt.refreshTokenHash,
                attempt.failureGate?.bucket, attempt.failureGate?.key, attempt.failureGate.map { SQLTime.parameter($0.windowStart) },
                attempt.failureGate.map { String($0.threshold) },
            ]
        ).rows[0]
        guard row["environment_id"] != nil else { return .unknownClient }
        if try row.bool("rate_limited") { return .rateLimited }
        guard let codeID = row["code_id"] else { return .invalidGrant(revokedReplay: false) }
        if try row.bool("won") == false {
            var revoked = try row.int("revoked_count") > 0
            if try row.bool("replay"), !revoked {
                // This attempt waited on the winner's row lock, so the winner has committed; a new
                // statement (a new snapshot under READ COMMITTED) sees its session.
                revoked =
                    try pool.query(
                        """
                        UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = 'authorization_code_replay'
                        WHERE authorization_code_id = $1 AND revoked_at IS NULL
                        """, [codeID, SQLTime.parameter(attempt.now)]
                    ).rowsAffected > 0
            }
            return .invalidGrant(revokedReplay: revoked)
        }
        let redirectURI = try row.string("redirect_uri")
        let challenge = try row.string("code_challenge")
        guard let sessionID = row["session_id"] else {
            return .consumed(issuedRedirectURI: redirectURI, codeChallenge: challenge, session: nil)
        }
        let authTime = try row.date("auth_time")
        let lastRefresh = try row.date("last_refreshed_at")
        let expiresAt = authTime.addingTimeInterval(Double(try row.int("session_max_age_days")) * 86_400)
        let idle = min(expiresAt, lastRefresh.addingTimeInterval(Double(try row.int("session_idle_days")) * 86_400))
        let user = UserRecord(
            id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
            imageURL: row["image_url"], passwordHash: try row.string("password_hash"), closed: false)
        return .consumed(
            issuedRedirectURI: redirectURI, codeChallenge: challenge,
            session: IssuedSession(
                sessionID: sessionID, accessExpiresAt: try row.date("access_expires_at"),
                expiresAt: expiresAt, idleExpiresAt: idle, user: user))
    }

    // MARK: - Sessions

    /// A live session by its access token, with its windows and account (`GET /v1/auth/session`).
    /// - Returns: nil when the token is unknown, expired, revoked, past a window, or the account is closed.
    public func session(accessTokenHash: String, now: Date) throws -> IssuedSession? {
        guard
            let row = try pool.query(
                """
                SELECT s.id AS session_id, s.auth_time, a.expires_at AS access_expires_at, s.last_refreshed_at,
                       e.session_max_age_days, e.session_idle_days,
                       u.id AS user_id, u.email, u.name, u.image_url, u.password_hash
                FROM access_tokens a JOIN sessions s ON s.id = a.session_id
                JOIN environments e ON e.id = s.environment_id JOIN users u ON u.id = s.user_id
                WHERE a.token_hash = $1 AND s.revoked_at IS NULL AND u.closed_at IS NULL
                  AND a.expires_at > to_timestamp($2::float8)
                  AND s.auth_time + make_interval(secs => e.session_max_age_days * 86400) > to_timestamp($2::float8)
                  AND s.last_refreshed_at + make_interval(secs => e.session_idle_days * 86400) > to_timestamp($2::float8)
                """, [accessTokenHash, SQLTime.parameter(now)]
            ).first
        else { return nil }
        let authTime = try row.date("auth_time")
        let expiresAt = authTime.addingTimeInterval(Double(try row.int("session_max_age_days")) * 86_400)
        let idle = min(expiresAt, try row.date("last_refreshed_at").addingTimeInterval(Double(try row.int("session_idle_days")) * 86_400))
        return IssuedSession(
            sessionID: try row.string("session_id"), accessExpiresAt: try row.date("access_expires_at"),
            expiresAt: expiresAt, idleExpiresAt: idle,
            user: UserRecord(
                id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                imageURL: row["image_url"], passwordHash: try row.string("password_hash"), closed: false))
    }

    /// Whether a session is revoked (tests and the conformance client's view of replay).
    public func isSessionRevoked(id: String) throws -> Bool? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query("SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1", [id]).first
            .map { try $0.bool("revoked") }
    }

    /// Answers whether PostgreSQL responds (`/readyz`).
    public func isReady() -> Bool { pool.ping() }
}
