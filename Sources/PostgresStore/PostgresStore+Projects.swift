import Association
import Authorize
import Foundation
import Postgres

/// Tenancy's SQL (projects, environments, session settings, secret keys, project domains): one type for the
/// aggregate, conforming to the stores the use cases in Authorize/Tenancy and Association declare. Every
/// statement runs inside `PostgresEdge.run`, so only domain errors leave it.
public struct PostgresTenancy: Sendable {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    // MARK: Projects

    /// Creates a project with its development and production environments and one secret key each, and
    /// the first owner's membership with its `member.add` audit row when `owner` is given, in one
    /// transaction, with `audit` named after the new project.
    /// - Returns: the project's id.
    /// - Throws: `MemberRefusal.noAccount` when the owner's account is gone (nothing created);
    ///   `StoreUnavailable`, `StoreError.unstorableInput`.
    public func createProject(
        name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, owner: NewProjectOwner? = nil, now: Date,
        audit: AuditEntry
    ) throws -> String {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let project = try connection.query(
                    "INSERT INTO projects (name, created_at) VALUES ($1, to_timestamp($2::float8)) RETURNING id",
                    [name, SQLTime.parameter(now)])
                let projectID = try project.rows[0].string("id")
                for (kind, keys) in [(EnvironmentKind.development, development), (.production, production)] {
                    try connection.query(
                        """
                        WITH environment AS (
                            INSERT INTO environments (project_id, kind, publishable_key) VALUES ($1, $2, $3) RETURNING id
                        )
                        INSERT INTO secret_keys (environment_id, key_hash, key_suffix, created_at)
                        SELECT id, $4, $5, to_timestamp($6::float8) FROM environment
                        """,
                        [projectID, kind.rawValue, keys.publishableKey, keys.secretKeyHash, keys.secretKeySuffix, SQLTime.parameter(now)])
                }
                try AuditRows.insert(audit.naming(projectID, projectID: projectID), on: connection)
                if let owner {
                    try PostgresMembers.insertMember(
                        projectID: projectID, userID: owner.userID, role: .owner,
                        audit: owner.origin.entry("member.add", target: owner.userID, projectID: projectID), on: connection)
                }
                return projectID
            }
        }
    }

    /// One page of the deployment's projects in creation order (the operator's `GET /v1/admin/projects`).
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil; a cursor that is not a
    ///     project id starts from the beginning, as the other lists do.
    ///   - limit: 1–101 rows (the caller asks for one more than a page to know whether another follows).
    /// - Throws: `StoreUnavailable`.
    public func projects(after: String?, limit: Int) throws -> [ProjectRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT p.id, p.name, p.created_at, d.publishable_key AS development_key, l.publishable_key AS production_key
                FROM projects p
                JOIN environments d ON d.project_id = p.id AND d.kind = 'development'
                JOIN environments l ON l.project_id = p.id AND l.kind = 'production'
                WHERE ($1::uuid IS NULL OR (p.created_at, p.id) > (SELECT created_at, id FROM projects WHERE id = $1::uuid))
                ORDER BY p.created_at, p.id LIMIT $2
                """, [cursor, String(limit)]
            ).rows.map { row in
                ProjectRecord(
                    id: try row.string("id"), name: try row.string("name"), createdAt: try row.date("created_at"),
                    developmentPublishableKey: try row.string("development_key"),
                    productionPublishableKey: try row.string("production_key"))
            }
        }
    }

    // MARK: Environments

    /// The columns `environment(from:)` reads, over the aliases `e` (environments) and `p` (projects).
    public static let environmentColumns = """
        e.id, e.project_id, p.name AS project_name, e.kind, e.publishable_key, e.session_max_age_days,
        e.session_idle_days, e.access_token_ttl_minutes, e.refresh_reuse_grace_seconds, e.id_token_signing_alg,
        e.require_verified_email, e.require_pushed_authorization_requests, e.require_dpop
        """

    /// An environment from a row with `environmentColumns`.
    /// - Throws: `PostgresError` for a row without them (a fault of the statement).
    public static func environment(from row: PostgresRow) throws -> EnvironmentRecord {
        guard let kind = EnvironmentKind(rawValue: try row.string("kind")) else {
            throw PostgresError(kind: .query, message: "column \"kind\" holds an unknown environment kind")
        }
        var environment = EnvironmentRecord(
            id: try row.string("id"), projectID: try row.string("project_id"), projectName: try row.string("project_name"),
            kind: kind, publishableKey: try row.string("publishable_key"),
            sessionMaxAgeDays: try row.int("session_max_age_days"), sessionIdleDays: try row.int("session_idle_days"),
            accessTokenTTLMinutes: try row.int("access_token_ttl_minutes"),
            refreshReuseGraceSeconds: try row.int("refresh_reuse_grace_seconds"),
            requireVerifiedEmail: row["require_verified_email"] == "t")
        environment.idTokenSigningAlg = row["id_token_signing_alg"].flatMap(SigningAlgorithm.init(rawValue:)) ?? .rs256
        environment.requirePushedAuthorizationRequests = row["require_pushed_authorization_requests"] == "t"
        environment.requireDPoP = row["require_dpop"] == "t"
        return environment
    }

    /// The environment whose unrevoked secret key hashes to `secretKeyHash`.
    /// - Throws: `StoreUnavailable`.
    public func environment(secretKeyHash: String) throws -> EnvironmentRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.environmentColumns) FROM secret_keys k
                JOIN environments e ON e.id = k.environment_id JOIN projects p ON p.id = e.project_id
                WHERE k.key_hash = $1 AND k.revoked_at IS NULL
                """, [secretKeyHash]
            ).first.map(Self.environment(from:))
        }
    }

    /// The environment whose publishable key (OAuth `client_id`) is `publishableKey`.
    /// - Throws: `StoreUnavailable`.
    public func environment(publishableKey: String) throws -> EnvironmentRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id
                WHERE e.publishable_key = $1
                """, [publishableKey]
            ).first.map(Self.environment(from:))
        }
    }

    /// An environment by id.
    /// - Throws: `StoreUnavailable`.
    public func environment(id: String) throws -> EnvironmentRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id
                WHERE e.id = $1
                """, [id]
            ).first.map(Self.environment(from:))
        }
    }

    // MARK: Settings

    /// Applies a settings change to an environment (values already within the contract's bounds; the
    /// table's CHECK constraints hold them too). Serialised per environment by a row lock. When a window
    /// grows, sessions already past the current (shorter) window are ended first with reason `expired`, so
    /// lengthening never revives a session that had ended.
    /// - Returns: the environment with its new settings, or nil when it does not exist.
    /// `audit` is written in the same transaction when the environment exists.
    /// - Throws: `StoreUnavailable`.
    public func updateSessionSettings(
        environmentID: String, _ update: SessionSettingsUpdate, now: Date, audit: AuditEntry
    ) throws -> EnvironmentRecord? {
        try PostgresEdge.run {
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
                        """, [environmentID, SQLTime.parameter(now), String(maxAge), String(idle), PostgresStore.expiredReason])
                }
                try connection.query(
                    """
                    UPDATE environments SET
                        session_max_age_days = COALESCE($2::integer, session_max_age_days),
                        session_idle_days = COALESCE($3::integer, session_idle_days),
                        access_token_ttl_minutes = COALESCE($4::integer, access_token_ttl_minutes),
                        refresh_reuse_grace_seconds = COALESCE($5::integer, refresh_reuse_grace_seconds),
                        id_token_signing_alg = COALESCE($6, id_token_signing_alg),
                        require_verified_email = COALESCE($7::boolean, require_verified_email),
                        require_pushed_authorization_requests = COALESCE($8::boolean, require_pushed_authorization_requests),
                        require_dpop = COALESCE($9::boolean, require_dpop)
                    WHERE id = $1
                    """,
                    [
                        environmentID, update.sessionMaxAgeDays.map(String.init), update.sessionIdleDays.map(String.init),
                        update.accessTokenTTLMinutes.map(String.init), update.refreshReuseGraceSeconds.map(String.init),
                        update.idTokenSigningAlg?.rawValue, update.requireVerifiedEmail.map { $0 ? "true" : "false" },
                        update.requirePushedAuthorizationRequests.map { $0 ? "true" : "false" },
                        update.requireDPoP.map { $0 ? "true" : "false" },
                    ])
                try AuditRows.insert(audit, on: connection)
                return try connection.query(
                    "SELECT \(Self.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id WHERE e.id = $1",
                    [environmentID]
                ).first.map(Self.environment(from:))
            }
        }
    }

    // MARK: Secret keys

    private static func secretKey(from row: PostgresRow) throws -> SecretKeyRecord {
        SecretKeyRecord(
            id: try row.string("id"), suffix: try row.string("key_suffix"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"))
    }

    /// Adds a secret key to an environment; it works at once.
    /// - Parameters:
    ///   - keyHash: SHA-256 hex of the `sk_…` key (the key itself is never stored).
    ///   - suffix: its last 4 characters.
    ///   - audit: the `secret_key.create` row, named after the new key's id, in the same transaction.
    /// - Throws: `StoreUnavailable`.
    public func addSecretKey(environmentID: String, keyHash: String, suffix: String, now: Date, audit: AuditEntry) throws -> SecretKeyRecord
    {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let record = try Self.secretKey(
                    from: connection.query(
                        """
                        INSERT INTO secret_keys (environment_id, key_hash, key_suffix, created_at)
                        VALUES ($1, $2, $3, to_timestamp($4::float8))
                        RETURNING id, key_suffix, created_at, revoked_at
                        """, [environmentID, keyHash, suffix, SQLTime.parameter(now)]
                    ).rows[0])
                try AuditRows.insert(audit.naming(record.id), on: connection)
                return record
            }
        }
    }

    /// The environment's secret keys, live and revoked, oldest first (keyset pagination by creation).
    /// - Throws: `StoreUnavailable`.
    public func secretKeys(environmentID: String, after: String?, limit: Int) throws -> [SecretKeyRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT id, key_suffix, created_at, revoked_at FROM secret_keys
                WHERE environment_id = $1
                  AND ($2::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM secret_keys WHERE id = $2::uuid))
                ORDER BY created_at, id LIMIT $3
                """, [environmentID, cursor, String(limit)]
            ).rows.map(Self.secretKey(from:))
        }
    }

    /// The id of the live key with this hash (the key making a call).
    /// - Throws: `StoreUnavailable`.
    public func secretKeyID(keyHash: String) throws -> String? {
        try PostgresEdge.run {
            try pool.query("SELECT id FROM secret_keys WHERE key_hash = $1 AND revoked_at IS NULL", [keyHash]).first?.string("id")
        }
    }

    /// Revokes a secret key of an environment, never its last live one. The environment row is locked
    /// first, so two concurrent revocations of its last two keys cannot both succeed: the second runs
    /// its check on a snapshot taken after the first committed.
    /// `audit` is written in the same transaction when a live key is revoked.
    /// - Throws: `StoreUnavailable`.
    public func revokeSecretKey(environmentID: String, id: String, now: Date, audit: AuditEntry) throws -> SecretKeyRevocation {
        guard UUID(uuidString: id) != nil else { return .notFound }
        return try PostgresEdge.run {
            try pool.transaction { connection in
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
                guard revoked == 1 else { return .lastKey }
                try AuditRows.insert(audit, on: connection)
                return .revoked
            }
        }
    }

    // MARK: Domains

    /// Adds a domain to a project with the token it must publish.
    /// `audit` is written in the same transaction, so a duplicate leaves no row.
    /// - Throws: `StoreError.duplicate("project_domains_unique")`, `StoreUnavailable`.
    public func addDomain(projectID: String, domain: String, verificationToken: String, now: Date, audit: AuditEntry) throws -> DomainRecord
    {
        try PostgresEdge.run {
            do {
                return try pool.transaction { connection in
                    let record = try Self.domain(
                        from: connection.query(
                            """
                            INSERT INTO project_domains (project_id, domain, verification_token, created_at)
                            VALUES ($1, $2, $3, to_timestamp($4::float8))
                            RETURNING domain, verification_token, verified_at, hosted
                            """, [projectID, domain, verificationToken, SQLTime.parameter(now)]
                        ).rows[0])
                    try AuditRows.insert(audit, on: connection)
                    return record
                }
            } catch let error as PostgresError where error.sqlState == .uniqueViolation {
                throw StoreError.duplicate(constraint: error.constraint ?? "project_domains_unique")
            }
        }
    }

    private static func domain(from row: PostgresRow) throws -> DomainRecord {
        DomainRecord(
            domain: try row.string("domain"), verificationToken: try row.string("verification_token"),
            verifiedAt: try row.optionalDate("verified_at"), hosted: try row.bool("hosted"))
    }

    /// A project's domains, alphabetically.
    /// - Throws: `StoreUnavailable`.
    public func domains(projectID: String) throws -> [DomainRecord] {
        try PostgresEdge.run {
            try pool.query(
                "SELECT domain, verification_token, verified_at, hosted FROM project_domains WHERE project_id = $1 ORDER BY domain",
                [projectID]
            ).rows.map(Self.domain(from:))
        }
    }

    /// Marks a project's domain verified (the token file, or the operator's mark).
    /// `audit` is written in the same transaction when the domain exists.
    /// - Returns: false when the project has no such domain.
    /// - Throws: `StoreUnavailable`.
    public func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date, audit: AuditEntry) throws -> Bool {
        guard UUID(uuidString: projectID) != nil else { return false }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                let marked =
                    try connection.query(
                        """
                        UPDATE project_domains SET verified_at = COALESCE(verified_at, to_timestamp($3::float8)),
                               hosted = COALESCE($4::boolean, hosted)
                        WHERE project_id = $1 AND domain = $2
                        """, [projectID, domain, SQLTime.parameter(now), hosted.map { $0 ? "true" : "false" }]
                    ).rowsAffected == 1
                if marked { try AuditRows.insert(audit, on: connection) }
                return marked
            }
        }
    }

    /// Whether `domain` is a verified domain of the project.
    /// - Throws: `StoreUnavailable`.
    public func isDomainVerified(projectID: String, domain: String) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                "SELECT 1 FROM project_domains WHERE project_id = $1 AND domain = $2 AND verified_at IS NOT NULL",
                [projectID, domain]
            ).first != nil
        }
    }

    /// Whether `domain` belongs to the project (verified or not).
    /// - Throws: `StoreUnavailable`.
    public func hasDomain(projectID: String, domain: String) throws -> Bool {
        try PostgresEdge.run {
            try pool.query("SELECT 1 FROM project_domains WHERE project_id = $1 AND domain = $2", [projectID, domain]).first != nil
        }
    }

    /// The verification token of a project's domain, or nil when the project has no such domain.
    /// - Throws: `StoreUnavailable`.
    public func domainVerificationToken(projectID: String, domain: String) throws -> String? {
        try PostgresEdge.run {
            try pool.query(
                "SELECT verification_token FROM project_domains WHERE project_id = $1 AND domain = $2", [projectID, domain]
            ).first.map { try $0.string("verification_token") }
        }
    }

    /// The projects that host `domain` (verified and marked `hosted`), oldest first.
    /// - Throws: `StoreUnavailable`.
    public func hostingProjects(domain: String) throws -> [String] {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT project_id FROM project_domains
                WHERE domain = $1 AND hosted AND verified_at IS NOT NULL ORDER BY created_at
                """, [domain]
            ).rows.map { try $0.string("project_id") }
        }
    }
}

extension PostgresTenancy: SecretKeyLookupStore, ProjectCreationStore, ProjectListStore, SessionSettingsStore, SecretKeyStore, DomainStore,
    DomainTokenStore
{}

extension PostgresStore {
    /// Tenancy's aggregate (projects, environments, settings, secret keys, domains).
    public var tenancy: PostgresTenancy { PostgresTenancy(pool: pool) }

    /// Credentials of one environment at creation (`Authorize.NewEnvironmentKeys`).
    public typealias NewEnvironmentKeys = Authorize.NewEnvironmentKeys

    /// The columns `environment(from:)` reads (see `PostgresTenancy.environmentColumns`).
    static var environmentColumns: String { PostgresTenancy.environmentColumns }

    /// An environment from a row with `environmentColumns`.
    static func environment(from row: PostgresRow) throws -> EnvironmentRecord { try PostgresTenancy.environment(from: row) }

    // Kept for the callers outside tenancy until they move to their own ports (set-ups outside the admin
    // API, such as `dev`): each change writes its audit row with the server as the actor.

    /// See `PostgresTenancy.createProject`.
    public func createProject(name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, now: Date) throws -> String {
        try tenancy.createProject(
            name: name, development: development, production: production, now: now, audit: .system("project.create", now))
    }
    /// See `PostgresTenancy.environment(secretKeyHash:)`.
    public func environment(secretKeyHash: String) throws -> EnvironmentRecord? { try tenancy.environment(secretKeyHash: secretKeyHash) }
    /// See `PostgresTenancy.environment(publishableKey:)`.
    public func environment(publishableKey: String) throws -> EnvironmentRecord? { try tenancy.environment(publishableKey: publishableKey) }
    /// See `PostgresTenancy.environment(id:)`.
    public func environment(id: String) throws -> EnvironmentRecord? { try tenancy.environment(id: id) }
    /// See `PostgresTenancy.updateSessionSettings`.
    public func updateSessionSettings(environmentID: String, _ update: SessionSettingsUpdate, now: Date) throws -> EnvironmentRecord? {
        try tenancy.updateSessionSettings(
            environmentID: environmentID, update, now: now, audit: .system("settings.update", environmentID: environmentID, now))
    }
    /// See `PostgresTenancy.revokeSecretKey`.
    public func revokeSecretKey(environmentID: String, id: String, now: Date) throws -> SecretKeyRevocation {
        try tenancy.revokeSecretKey(
            environmentID: environmentID, id: id, now: now,
            audit: .system("secret_key.revoke", target: id, environmentID: environmentID, now))
    }
    /// See `PostgresTenancy.addDomain`.
    public func addDomain(projectID: String, domain: String, verificationToken: String, now: Date) throws -> DomainRecord {
        try tenancy.addDomain(
            projectID: projectID, domain: domain, verificationToken: verificationToken, now: now,
            audit: .system("domain.add", target: domain, projectID: projectID, now))
    }
    /// See `PostgresTenancy.domains`.
    public func domains(projectID: String) throws -> [DomainRecord] { try tenancy.domains(projectID: projectID) }
    /// See `PostgresTenancy.markDomainVerified`.
    public func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date) throws -> Bool {
        try tenancy.markDomainVerified(
            projectID: projectID, domain: domain, hosted: hosted, now: now,
            audit: .system(hosted == nil ? "domain.verify" : "domain.mark_hosted", target: domain, projectID: projectID, now))
    }
    /// See `PostgresTenancy.isDomainVerified`.
    public func isDomainVerified(projectID: String, domain: String) throws -> Bool {
        try tenancy.isDomainVerified(projectID: projectID, domain: domain)
    }
}
