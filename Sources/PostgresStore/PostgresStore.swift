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

    // MARK: - Tenancy and keys

    /// Credentials of one environment at creation: the publishable key and the secret key's hash.
    public struct NewEnvironmentKeys: Sendable {
        public let publishableKey: String
        public let secretKeyHash: String
        public let secretKeySuffix: String
        public init(publishableKey: String, secretKeyHash: String, secretKeySuffix: String) {
            self.publishableKey = publishableKey
            self.secretKeyHash = secretKeyHash
            self.secretKeySuffix = secretKeySuffix
        }
    }

    /// Creates a project with its development and production environments and one secret key each, in
    /// one transaction.
    /// - Returns: the project's id.
    /// - Throws: `PostgresError`.
    public func createProject(name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, now: Date) throws -> String {
        try pool.transaction { connection in
            let project = try connection.query(
                "INSERT INTO projects (name, created_at) VALUES ($1, to_timestamp($2::float8)) RETURNING id",
                [name, SQLTime.parameter(now)])
            let projectID = try project.rows[0].string("id")
            for (kind, keys) in [("development", development), ("production", production)] {
                try connection.query(
                    """
                    WITH environment AS (
                        INSERT INTO environments (project_id, kind, publishable_key) VALUES ($1, $2, $3) RETURNING id
                    )
                    INSERT INTO secret_keys (environment_id, key_hash, key_suffix, created_at)
                    SELECT id, $4, $5, to_timestamp($6::float8) FROM environment
                    """,
                    [projectID, kind, keys.publishableKey, keys.secretKeyHash, keys.secretKeySuffix, SQLTime.parameter(now)])
            }
            return projectID
        }
    }

    static let environmentColumns = """
        e.id, e.project_id, p.name AS project_name, e.kind, e.publishable_key, e.session_max_age_days,
        e.session_idle_days, e.access_token_ttl_minutes, e.refresh_reuse_grace_seconds
        """

    static func environment(from row: PostgresRow) throws -> EnvironmentRecord {
        EnvironmentRecord(
            id: try row.string("id"), projectID: try row.string("project_id"), projectName: try row.string("project_name"),
            kind: try row.string("kind"), publishableKey: try row.string("publishable_key"),
            sessionMaxAgeDays: try row.int("session_max_age_days"), sessionIdleDays: try row.int("session_idle_days"),
            accessTokenTTLMinutes: try row.int("access_token_ttl_minutes"),
            refreshReuseGraceSeconds: try row.int("refresh_reuse_grace_seconds"))
    }

    /// The environment whose unrevoked secret key hashes to `secretKeyHash`.
    public func environment(secretKeyHash: String) throws -> EnvironmentRecord? {
        let result = try pool.query(
            """
            SELECT \(Self.environmentColumns) FROM secret_keys k
            JOIN environments e ON e.id = k.environment_id JOIN projects p ON p.id = e.project_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL
            """, [secretKeyHash])
        return try result.first.map(Self.environment(from:))
    }

    /// The environment whose publishable key (OAuth `client_id`) is `publishableKey`.
    public func environment(publishableKey: String) throws -> EnvironmentRecord? {
        let result = try pool.query(
            """
            SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id
            WHERE e.publishable_key = $1
            """, [publishableKey])
        return try result.first.map(Self.environment(from:))
    }

    // MARK: - Accounts

    private static func user(from row: PostgresRow) throws -> UserRecord {
        UserRecord(
            id: try row.string("id"), email: try row.string("email"), name: try row.string("name"),
            imageURL: row["image_url"], passwordHash: try row.string("password_hash"),
            closed: row["closed_at"] != nil)
    }

    /// Creates a ZevID account.
    ///
    /// The insert never raises a unique violation on the email (`ON CONFLICT … DO NOTHING`): PostgreSQL
    /// would write the violating key, the normalised address, into its own log.
    /// - Parameters:
    ///   - emailNormalized: the address's key (`EmailAddress.key` of the server); unique across the deployment.
    ///   - passwordHash: an Argon2id PHC string.
    /// - Throws: `StoreError.duplicate("users_email_unique")` when the address is taken; `PostgresError`.
    public func createUser(email: String, emailNormalized: String, name: String, passwordHash: String, now: Date) throws -> UserRecord {
        let result = try pool.query(
            """
            INSERT INTO users (email, email_normalized, email_key_rule, name, password_hash, password_changed_at, created_at)
            VALUES ($1, $2, $6::smallint, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8))
            ON CONFLICT ON CONSTRAINT users_email_unique DO NOTHING
            RETURNING id, email, name, image_url, password_hash, closed_at
            """, [email, emailNormalized, name, passwordHash, SQLTime.parameter(now), String(Self.emailKeyRule)])
        guard let row = result.first else { throw StoreError.duplicate(constraint: "users_email_unique") }
        return try Self.user(from: row)
    }

    /// The account with this normalized email, open or closed.
    public func user(emailNormalized: String) throws -> UserRecord? {
        try pool.query(
            "SELECT id, email, name, image_url, password_hash, closed_at FROM users WHERE email_normalized = $1",
            [emailNormalized]
        ).first.map(Self.user(from:))
    }

    /// The account with this id, open or closed.
    public func user(id: String) throws -> UserRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query(
            "SELECT id, email, name, image_url, password_hash, closed_at FROM users WHERE id = $1", [id]
        ).first.map(Self.user(from:))
    }

    // MARK: - Callbacks and domains

    private static func callback(from row: PostgresRow) throws -> CallbackRecord {
        CallbackRecord(
            id: try row.string("id"), uri: try row.string("uri"),
            kind: RedirectKind(rawValue: try row.string("kind")) ?? .customScheme, createdAt: try row.date("created_at"))
    }

    /// Registers a parsed redirect URI for an environment, with its parts, so the start never parses it
    /// again (sql/008).
    /// - Throws: `StoreError.duplicate("callbacks_unique")` when it is registered already; `StoreUnavailable`.
    public func addCallback(environmentID: String, uri: RedirectURI, now: Date) throws -> CallbackRecord {
        do {
            return try PostgresEdge.run {
                try Self.callback(
                    from: pool.query(
                        """
                        INSERT INTO callbacks (environment_id, uri, kind, scheme, host, port, path_and_query, created_at)
                        VALUES ($1, $2, $3, $4, $5, $6::integer, $7, to_timestamp($8::float8))
                        RETURNING id, uri, kind, created_at
                        """,
                        [
                            environmentID, uri.raw, uri.kind.rawValue, uri.scheme, uri.host, uri.port.map(String.init), uri.pathAndQuery,
                            SQLTime.parameter(now),
                        ]
                    ).rows[0])
            }
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw StoreError.duplicate(constraint: error.constraint ?? "callbacks_unique")
        }
    }

    /// Registers a redirect URI given as text (the development seed and tests); it must parse.
    /// - Throws: `StoreError.unstorableInput` when it is not a redirect URI this server accepts; as above.
    public func addCallback(environmentID: String, uri: String, kind: String, now: Date) throws -> CallbackRecord {
        guard case .success(let parsed) = RedirectURI.parse(uri) else { throw StoreError.unstorableInput }
        return try addCallback(environmentID: environmentID, uri: parsed, now: now)
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

    /// Adds a domain to a project with the token it must publish.
    /// - Throws: `StoreError.duplicate("project_domains_unique")`.
    public func addDomain(projectID: String, domain: String, verificationToken: String, now: Date) throws -> DomainRecord {
        do {
            return try Self.domain(
                from: pool.query(
                    """
                    INSERT INTO project_domains (project_id, domain, verification_token, created_at)
                    VALUES ($1, $2, $3, to_timestamp($4::float8))
                    RETURNING domain, verification_token, verified_at, hosted
                    """, [projectID, domain, verificationToken, SQLTime.parameter(now)]
                ).rows[0])
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw StoreError.duplicate(constraint: error.constraint ?? "project_domains_unique")
        }
    }

    private static func domain(from row: PostgresRow) throws -> DomainRecord {
        DomainRecord(
            domain: try row.string("domain"), verificationToken: try row.string("verification_token"),
            verifiedAt: try row.optionalDate("verified_at"), hosted: try row.bool("hosted"))
    }

    /// A project's domains, alphabetically.
    public func domains(projectID: String) throws -> [DomainRecord] {
        try pool.query(
            "SELECT domain, verification_token, verified_at, hosted FROM project_domains WHERE project_id = $1 ORDER BY domain",
            [projectID]
        ).rows.map(Self.domain(from:))
    }

    /// Marks a project's domain verified (the operator's mark; the association checks replace it).
    /// - Returns: false when the project has no such domain.
    public func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date) throws -> Bool {
        guard UUID(uuidString: projectID) != nil else { return false }
        return try pool.query(
            """
            UPDATE project_domains SET verified_at = COALESCE(verified_at, to_timestamp($3::float8)),
                   hosted = COALESCE($4::boolean, hosted)
            WHERE project_id = $1 AND domain = $2
            """, [projectID, domain, SQLTime.parameter(now), hosted.map { $0 ? "true" : "false" }]
        ).rowsAffected == 1
    }

    /// Whether `domain` is a verified domain of the project.
    public func isDomainVerified(projectID: String, domain: String) throws -> Bool {
        try pool.query(
            "SELECT 1 FROM project_domains WHERE project_id = $1 AND domain = $2 AND verified_at IS NOT NULL",
            [projectID, domain]
        ).first != nil
    }

    // MARK: - Start

    /// The client as the start's checks see it: the environment, its registered redirect URIs, and for
    /// each link whether its domain is verified. One statement.
    /// - Returns: nil when no environment has this publishable key.
    public func clientEnvironment(publishableKey: String) throws -> (EnvironmentRecord, ClientEnvironment)? {
        let result = try pool.query(
            """
            SELECT \(Self.environmentColumns), c.uri, c.kind AS callback_kind, c.scheme, c.host, c.port, c.path_and_query,
                   d.verified_at IS NOT NULL AS link_verified
            FROM environments e JOIN projects p ON p.id = e.project_id
            LEFT JOIN callbacks c ON c.environment_id = e.id AND c.scheme IS NOT NULL
            LEFT JOIN project_domains d ON c.kind = 'link' AND d.project_id = e.project_id AND d.domain = c.host
            WHERE e.publishable_key = $1
            ORDER BY c.created_at
            """, [publishableKey])
        guard let first = result.first else { return nil }
        let environment = try Self.environment(from: first)
        let facts = try appFacts(environmentID: environment.id)
        var registered: [RegisteredRedirect] = []
        for row in result.rows {
            // Rebuilt from the parts stored at registration: never parsed again (sql/008).
            guard let raw = row["uri"], let kind = row["callback_kind"].flatMap(RedirectKind.init(rawValue:)) else { continue }
            let uri = RedirectURI(
                raw: raw, kind: kind, scheme: try row.string("scheme"), host: row["host"], port: row["port"].flatMap { Int($0) },
                pathAndQuery: try row.string("path_and_query"))
            let domainVerified = (row["link_verified"] ?? "f") == "t"
            registered.append(
                RegisteredRedirect(
                    uri: uri, productionCustomSchemeAllowed: facts.customSchemes.contains(uri.scheme),
                    linkVerified: environment.kind == "production"
                        ? domainVerified && facts.verifiesLink(uri) : domainVerified))
        }
        let client = ClientEnvironment(
            environmentID: environment.id, kind: environment.kind == "production" ? .production : .development,
            appName: environment.projectName, registeredRedirects: registered)
        return (environment, client)
    }

    /// A pending sign-in by id, whatever its state (the caller checks expiry, completion and binding).
    public func authorizationRequest(id: String) throws -> AuthorizationRequestRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        guard
            let row = try pool.query(
                """
                SELECT id, environment_id, redirect_uri, redirect_kind, redirect_scheme, redirect_host, redirect_port,
                       redirect_path_and_query, state, code_challenge, prompt_login, login_hint,
                       browser_binding_hash, browser_session_id, expires_at, completed_at, standard_endpoint
                FROM authorization_requests WHERE id = $1
                """, [id]
            ).first
        else { return nil }
        // Rebuilt from the parts the start stored (sql/008), never parsed again; a row without them is
        // one the migration could not parse, and cannot continue.
        guard let kind = RedirectKind(rawValue: try row.string("redirect_kind")), let scheme = row["redirect_scheme"],
            let pathAndQuery = row["redirect_path_and_query"]
        else { return nil }
        let redirect = RedirectURI(
            raw: try row.string("redirect_uri"), kind: kind, scheme: scheme, host: row["redirect_host"],
            port: row["redirect_port"].flatMap { Int($0) }, pathAndQuery: pathAndQuery)
        return AuthorizationRequestRecord(
            id: try row.string("id"), environmentID: try row.string("environment_id"), redirect: redirect,
            state: try row.string("state"), codeChallenge: try row.string("code_challenge"),
            promptLogin: try row.bool("prompt_login"), loginHint: row["login_hint"],
            browserBindingHash: try row.string("browser_binding_hash"), browserSessionID: row["browser_session_id"],
            expiresAt: try row.date("expires_at"), completedAt: try row.optionalDate("completed_at"),
            standardEndpoint: try row.bool("standard_endpoint"))
    }

    // MARK: - Browser sessions and consent

    /// Starts a ZevID browser session for an account that just entered its password.
    /// - Returns: the browser session's id.
    public func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
        try pool.query(
            """
            INSERT INTO browser_sessions (token_hash, user_id, auth_time, created_at)
            VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8)) RETURNING id
            """, [tokenHash, userID, SQLTime.parameter(now)]
        ).rows[0].string("id")
    }

    /// The live browser session whose cookie hashes to `tokenHash`, with an open account.
    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
        guard
            let row = try pool.query(
                """
                SELECT b.id, b.user_id, b.auth_time FROM browser_sessions b JOIN users u ON u.id = b.user_id
                WHERE b.token_hash = $1 AND b.ended_at IS NULL AND u.closed_at IS NULL
                """, [tokenHash]
            ).first
        else { return nil }
        return BrowserSessionRecord(
            id: try row.string("id"), userID: try row.string("user_id"),
            authTime: try row.date("auth_time"), ended: false)
    }

    /// The live browser session by id, with an open account.
    public func browserSession(id: String) throws -> BrowserSessionRecord? {
        guard UUID(uuidString: id) != nil,
            let row = try pool.query(
                """
                SELECT b.id, b.user_id, b.auth_time FROM browser_sessions b JOIN users u ON u.id = b.user_id
                WHERE b.id = $1 AND b.ended_at IS NULL AND u.closed_at IS NULL
                """, [id]
            ).first
        else { return nil }
        return BrowserSessionRecord(
            id: try row.string("id"), userID: try row.string("user_id"),
            authTime: try row.date("auth_time"), ended: false)
    }

    /// Whether the person has consented to this environment's app before.
    public func hasConsent(userID: String, environmentID: String) throws -> Bool {
        try pool.query("SELECT 1 FROM consents WHERE user_id = $1 AND environment_id = $2", [userID, environmentID]).first != nil
    }

    // MARK: - Sessions

    /// Whether a session is revoked (tests and the conformance client's view of replay).
    public func isSessionRevoked(id: String) throws -> Bool? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query("SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1", [id]).first
            .map { try $0.bool("revoked") }
    }

    /// Answers whether PostgreSQL responds (`/readyz`).
    public func isReady() -> Bool { pool.ping() }
}

extension PostgresStore {
    /// An environment by id.
    public func environment(id: String) throws -> EnvironmentRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query(
            """
            SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id
            WHERE e.id = $1
            """, [id]
        ).first.map(Self.environment(from:))
    }
}
