import Association
import Authorize
import Encoding
import Foundation
import Postgres

/// Mobile apps and their Android certificates (docs/protocol.md#apps): one type for the aggregate,
/// conforming to the stores of app registration, association files and link checks. The limits live in
/// PostgreSQL (`sql/002_association.sql`); their refusals become `AppLimitError` here, by constraint name.
/// A link callback's host is read from its parsed `RedirectURI`, never cut out of the text in SQL.
public struct PostgresApps: Sendable {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    static let appColumns = """
        a.id, a.environment_id, a.platform, a.team_id, a.bundle_id, a.package_name, a.production_custom_scheme,
        a.created_at,
        COALESCE((SELECT string_agg(f.fingerprint, ',' ORDER BY f.position) FROM android_fingerprints f
                  WHERE f.app_id = a.id), '') AS fingerprints
        """

    static func app(from row: PostgresRow) throws -> AppRecord {
        let identity: AppIdentity
        switch Platform(rawValue: try row.string("platform")) {
        case .ios:
            identity = .ios(
                IOSApp(teamID: TeamID(stored: try row.string("team_id")), bundleID: BundleID(stored: try row.string("bundle_id"))))
        case .android:
            let fingerprints = try row.string("fingerprints")
            identity = .android(
                AndroidApp(
                    packageName: PackageName(stored: try row.string("package_name")),
                    fingerprints: fingerprints.isEmpty
                        ? [] : fingerprints.split(separator: ",").map { CertificateFingerprint(stored: String($0)) }
                ))
        case nil:
            throw PostgresError(kind: .query, message: "column \"platform\" holds an unknown platform")
        }
        return AppRecord(
            id: try row.string("id"), environmentID: try row.string("environment_id"), identity: identity,
            productionCustomScheme: row["production_custom_scheme"], createdAt: try row.date("created_at"))
    }

    /// The constraint names the triggers in `sql/002_association.sql` raise.
    static func limit(_ constraint: String?) -> AppLimitError? {
        switch constraint {
        case "native_app_limit": .nativeAppLimit
        case "native_app_team_mismatch": .teamMismatch
        default: nil
        }
    }

    /// Runs `body` at the store's edge, turning a trigger's or index's refusal into `AppLimitError` or
    /// `DuplicateApp` by constraint, and every other `PostgresError` as `PostgresEdge` does.
    static func edge<T>(_ body: () throws -> T) throws -> T {
        try PostgresEdge.run {
            do {
                return try body()
            } catch let error as PostgresError where error.sqlState == .checkViolation && limit(error.constraint) != nil {
                throw limit(error.constraint)!
            } catch let error as PostgresError where error.sqlState == .uniqueViolation {
                throw DuplicateApp(constraint: error.constraint ?? "mobile_apps")
            }
        }
    }

    /// Registers an app; an Android app with its certificates; with `audit` named after the new app; in one
    /// transaction.
    /// - Throws: `AppLimitError.nativeAppLimit` (an 11th app of the platform, a 6th fingerprint),
    ///   `.teamMismatch` (another Apple team), `DuplicateApp`, `StoreUnavailable`.
    public func createApp(environmentID: String, identity: AppIdentity, now: Date, audit: AuditEntry) throws -> AppRecord {
        try Self.edge {
            let id: String = try pool.transaction { connection in
                let id: String
                switch identity {
                case .ios(let app):
                    id = try connection.query(
                        """
                        INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at)
                        VALUES ($1, 'ios', $2, $3, to_timestamp($4::float8)) RETURNING id
                        """, [environmentID, app.teamID.value, app.bundleID.value, SQLTime.parameter(now)]
                    ).rows[0].string("id")
                case .android(let app):
                    id = try connection.query(
                        """
                        INSERT INTO mobile_apps (environment_id, platform, package_name, created_at)
                        VALUES ($1, 'android', $2, to_timestamp($3::float8)) RETURNING id
                        """, [environmentID, app.packageName.value, SQLTime.parameter(now)]
                    ).rows[0].string("id")
                    try Self.insertFingerprints(connection, appID: id, app.fingerprints)
                }
                try AuditRows.insert(audit.naming(id), on: connection)
                return id
            }
            guard let app = try app(environmentID: environmentID, id: id) else { throw StoreError.notFound }
            return app
        }
    }

    private static func insertFingerprints(_ connection: PostgresConnection, appID: String, _ fingerprints: [CertificateFingerprint]) throws
    {
        for (position, fingerprint) in fingerprints.enumerated() {
            try connection.query(
                "INSERT INTO android_fingerprints (app_id, fingerprint, position) VALUES ($1, $2, $3)",
                [appID, fingerprint.canonical, String(position)])
        }
    }

    /// Replaces an Android app's certificates (PATCH `sha256CertFingerprints`), with `audit`, in one transaction.
    /// - Returns: the updated app, or nil when this environment has no such Android app.
    /// - Throws: `AppLimitError.nativeAppLimit` (more than 5), `StoreUnavailable`.
    public func replaceFingerprints(
        environmentID: String, id: String, fingerprints: [CertificateFingerprint], audit: AuditEntry
    ) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        let found = try Self.edge {
            try pool.transaction { connection -> Bool in
                guard
                    try connection.query(
                        "SELECT 1 FROM mobile_apps WHERE id = $1 AND environment_id = $2 AND platform = 'android' FOR NO KEY UPDATE",
                        [id, environmentID]
                    ).first != nil
                else { return false }
                try connection.query("DELETE FROM android_fingerprints WHERE app_id = $1", [id])
                try Self.insertFingerprints(connection, appID: id, fingerprints)
                try AuditRows.insert(audit, on: connection)
                return true
            }
        }
        return found ? try app(environmentID: environmentID, id: id) : nil
    }

    /// Sets or clears the operator's production custom-scheme exception for an app of any environment.
    /// `audit` is written in the same transaction, with the app's project and environment.
    /// - Returns: the updated app, or nil when there is no such app.
    /// - Throws: `StoreUnavailable`.
    public func setProductionCustomScheme(id: String, scheme: String?, audit: AuditEntry) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            let environmentID: String? = try pool.transaction { connection in
                guard
                    let row = try connection.query(
                        """
                        UPDATE mobile_apps a SET production_custom_scheme = $2 FROM environments e
                        WHERE a.id = $1 AND e.id = a.environment_id RETURNING a.environment_id, e.project_id
                        """, [id, scheme]
                    ).first
                else { return nil }
                let environmentID = try row.string("environment_id")
                try AuditRows.insert(
                    audit.naming(id, projectID: try row.string("project_id"), environmentID: environmentID), on: connection)
                return environmentID
            }
            return try environmentID.flatMap { try app(environmentID: $0, id: id) }
        }
    }

    /// An app of this environment.
    /// - Throws: `StoreUnavailable`.
    public func app(environmentID: String, id: String) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                "SELECT \(Self.appColumns) FROM mobile_apps a WHERE a.id = $1 AND a.environment_id = $2", [id, environmentID]
            ).first.map(Self.app(from:))
        }
    }

    /// One page of an environment's apps in creation order.
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil.
    ///   - limit: rows to return.
    /// - Throws: `StoreUnavailable`.
    public func apps(environmentID: String, after: String?, limit: Int) throws -> [AppRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.appColumns) FROM mobile_apps a
                WHERE a.environment_id = $1
                  AND ($2::uuid IS NULL OR (a.created_at, a.id) > (SELECT created_at, id FROM mobile_apps WHERE id = $2::uuid))
                ORDER BY a.created_at, a.id LIMIT $3
                """, [environmentID, cursor, String(limit)]
            ).rows.map(Self.app(from:))
        }
    }

    /// Deletes an app of this environment (its certificates and link states go with it).
    /// `audit` is written by the same statement (a data-modifying CTE), only when an app is deleted.
    /// - Returns: whether one was deleted.
    /// - Throws: `StoreUnavailable`.
    public func deleteApp(environmentID: String, id: String, audit: AuditEntry) throws -> Bool {
        guard UUID(uuidString: id) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query(
                AuditRows.sql(insertingAfter: "DELETE FROM mobile_apps WHERE id = $11 AND environment_id = $12 RETURNING id"),
                AuditRows.parameters(audit) + [id, environmentID]
            ).first != nil
        }
    }

    // MARK: Link callbacks by domain

    /// The host and path (query excluded) of a stored link callback, from its parsed form.
    static func linkTarget(_ raw: String) -> (host: String, callback: LinkCallback)? {
        guard case .success(let uri) = RedirectURI.parse(raw), uri.kind == .link, let host = uri.host else { return nil }
        return (host, LinkCallback(pathAndQuery: uri.pathAndQuery))
    }

    /// A `LIKE` pattern matching the URIs that start with `https://DOMAIN`: it narrows the rows; the host is
    /// then compared over the parsed URI (`linkTarget`).
    static func linkPrefixPattern(_ domain: String) -> String {
        var escaped = ""
        for character in domain {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return "https://" + escaped + "%"
    }

    /// The distinct hosts of an environment's `link` callbacks, alphabetically.
    /// - Throws: `StoreUnavailable`.
    public func linkDomains(environmentID: String) throws -> [String] {
        let uris = try PostgresEdge.run {
            try pool.query("SELECT uri FROM callbacks WHERE environment_id = $1 AND kind = 'link'", [environmentID]).rows.map {
                try $0.string("uri")
            }
        }
        return Set(uris.compactMap { Self.linkTarget($0)?.host }).sorted()
    }

    /// Every app of either environment of `projectID` whose environment has a `link` callback on `domain`,
    /// with those callbacks' paths: what the domain's files list (docs/protocol.md#generated-files).
    /// - Throws: `StoreUnavailable`.
    public func associationApps(projectID: String, domain: String) throws -> [DomainSubject] {
        try subjects(domain: domain, whereClause: "e.project_id = $2", [projectID])
    }

    /// Every app, of any project, whose environment has a `link` callback on `domain`: what a check of
    /// that domain judges.
    /// - Throws: `StoreUnavailable`.
    public func domainSubjects(domain: String) throws -> [DomainSubject] {
        try subjects(domain: domain, whereClause: "true", [])
    }

    private func subjects(domain: String, whereClause: String, _ parameters: [String?]) throws -> [DomainSubject] {
        let rows = try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.appColumns), e.project_id, c.uri
                FROM mobile_apps a JOIN environments e ON e.id = a.environment_id
                JOIN callbacks c ON c.environment_id = a.environment_id AND c.kind = 'link'
                WHERE c.uri LIKE $1 AND \(whereClause)
                ORDER BY a.platform, a.created_at, a.id, c.created_at, c.id
                """, [Self.linkPrefixPattern(domain)] + parameters
            ).rows
        }
        var order: [String] = []
        var byApp: [String: (app: AppRecord, project: String, callbacks: [LinkCallback])] = [:]
        for row in rows {
            guard let target = Self.linkTarget(try row.string("uri")), target.host == domain else { continue }
            let id = try row.string("id")
            if byApp[id] == nil {
                order.append(id)
                byApp[id] = (try Self.app(from: row), try row.string("project_id"), [])
            }
            if byApp[id]?.callbacks.contains(target.callback) == false { byApp[id]?.callbacks.append(target.callback) }
        }
        return order.compactMap { id in byApp[id].map { DomainSubject(app: $0.app, projectID: $0.project, callbacks: $0.callbacks) } }
    }

    // MARK: Facts for the start and the consent page

    /// The facts the start's production link rule needs from the environment's apps, as one JSON text
    /// column named `app_facts` of an `environments e` row: an array with one element per app and domain,
    /// `[platform, production_custom_scheme|null, domain|null, status|null, covered_paths|null]`, or null
    /// when the environment has no app. The start reads it in its client statement
    /// (`PostgresStore.clientEnvironment`), so the start costs one round trip fewer; `appLinkFacts(json:)`
    /// reads it back.
    static let appFactsColumn = """
        (SELECT json_agg(json_build_array(a.platform, a.production_custom_scheme, s.domain, s.status, s.covered_paths))::text
         FROM mobile_apps a LEFT JOIN app_link_states s ON s.app_id = a.id
         WHERE a.environment_id = e.id) AS app_facts
        """

    /// The facts in an `appFactsColumn` value; nil (no app) gives no facts. An element whose platform or
    /// status this build does not know adds nothing.
    static func appLinkFacts(json text: String?) -> AppLinkFacts {
        var facts = AppLinkFacts()
        guard let text, let apps = (try? JSONValue.parse(Array(text.utf8)))?.arrayValue else { return facts }
        for app in apps {
            guard let fields = app.arrayValue, fields.count == 5 else { continue }
            if let scheme = fields[1].stringValue { facts.customSchemes.insert(scheme) }
            guard let domain = fields[2].stringValue, let platform = fields[0].stringValue.flatMap(Platform.init(rawValue:)),
                let status = fields[3].stringValue.flatMap(LinkStatus.init(rawValue:))
            else { continue }
            facts.add(
                platform: platform, domain: domain, status: status, coveredPaths: (fields[4].arrayValue ?? []).compactMap(\.stringValue))
        }
        return facts
    }

    /// The platforms for which this environment has an app verified on some domain: the consent page
    /// names the device only then.
    /// - Throws: `StoreUnavailable`.
    public func verifiedPlatforms(environmentID: String) throws -> Set<Platform> {
        try PostgresEdge.run {
            Set(
                try pool.query(
                    """
                    SELECT DISTINCT a.platform FROM mobile_apps a JOIN app_link_states s ON s.app_id = a.id
                    WHERE a.environment_id = $1 AND s.status = 'verified'
                    """, [environmentID]
                ).rows.compactMap { Platform(rawValue: try $0.string("platform")) })
        }
    }

    /// The link states of these apps (see `PostgresLinkChecks.linkStates(appIDs:)`).
    public func linkStates(appIDs: [String]) throws -> [String: [LinkStateRecord]] {
        try PostgresLinkChecks(pool: pool).linkStates(appIDs: appIDs)
    }

    /// See `PostgresTenancy.hasDomain`.
    public func hasDomain(projectID: String, domain: String) throws -> Bool {
        try PostgresTenancy(pool: pool).hasDomain(projectID: projectID, domain: domain)
    }

    /// See `PostgresTenancy.hostingProjects`.
    public func hostingProjects(domain: String) throws -> [String] { try PostgresTenancy(pool: pool).hostingProjects(domain: domain) }
}

extension PostgresApps: AppRegistrationStore, AssociationFileStore {}

extension PostgresStore {
    /// The apps aggregate.
    public var apps: PostgresApps { PostgresApps(pool: pool) }

    /// The platforms (`ios`, `android`) for which this environment has an app verified on some domain:
    /// the consent page names the device only then.
    public func verifiedPlatforms(environmentID: String) throws -> Set<String> {
        Set(try apps.verifiedPlatforms(environmentID: environmentID).map(\.rawValue))
    }
}
