import Authorize
import Foundation
import Postgres

/// Mobile apps and their Android certificates (docs/protocol.md#apps). The
/// limits live in PostgreSQL (`sql/002_association.sql`); this file maps their errors by constraint name.
extension PostgresStore {
    static let appColumns = """
        a.id, a.environment_id, a.platform, a.team_id, a.bundle_id, a.package_name, a.production_custom_scheme,
        a.created_at,
        COALESCE((SELECT string_agg(f.fingerprint, ',' ORDER BY f.position) FROM android_fingerprints f
                  WHERE f.app_id = a.id), '') AS fingerprints
        """

    /// The host of a `link` callback's URI (`https://host[:port]/…`), as SQL over the alias `c`.
    static let linkHostSQL = "split_part(split_part(substr(c.uri, 9), '/', 1), ':', 1)"

    static func app(from row: PostgresRow) throws -> AppRecord {
        let fingerprints = try row.string("fingerprints")
        return AppRecord(
            id: try row.string("id"), environmentID: try row.string("environment_id"), platform: try row.string("platform"),
            teamID: row["team_id"], bundleID: row["bundle_id"], packageName: row["package_name"],
            fingerprints: fingerprints.isEmpty ? [] : fingerprints.split(separator: ",").map(String.init),
            productionCustomScheme: row["production_custom_scheme"], createdAt: try row.date("created_at"))
    }

    /// Turns a trigger's or index's refusal into `AppLimitError` or `StoreError.duplicate`, by constraint.
    static func mappingAppErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState == .checkViolation && AppLimitError.from(error.constraint) != nil {
            throw AppLimitError.from(error.constraint)!
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw StoreError.duplicate(constraint: error.constraint ?? "mobile_apps")
        }
    }

    /// Registers an iOS app.
    /// - Parameters:
    ///   - teamID: 10 of `A-Z0-9`, already upper-cased.
    ///   - bundleID: as typed (validated by the caller).
    /// - Throws: `AppLimitError.nativeAppLimit` (an 11th iOS app), `.teamMismatch` (another Apple team),
    ///   `StoreError.duplicate("mobile_apps_ios_unique")`, `PostgresError`.
    public func createIOSApp(environmentID: String, teamID: String, bundleID: String, now: Date) throws -> AppRecord {
        try Self.mappingAppErrors {
            let id = try pool.query(
                """
                INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at)
                VALUES ($1, 'ios', $2, $3, to_timestamp($4::float8)) RETURNING id
                """, [environmentID, teamID, bundleID, SQLTime.parameter(now)]
            ).rows[0].string("id")
            guard let app = try app(environmentID: environmentID, id: id) else { throw StoreError.notFound }
            return app
        }
    }

    /// Registers an Android app with its certificates, in one transaction.
    /// - Parameter fingerprints: canonical SHA-256 fingerprints, distinct.
    /// - Throws: `AppLimitError.nativeAppLimit` (an 11th Android app, or a 6th fingerprint),
    ///   `StoreError.duplicate("mobile_apps_android_unique")`, `PostgresError`.
    public func createAndroidApp(environmentID: String, packageName: String, fingerprints: [String], now: Date) throws -> AppRecord {
        try Self.mappingAppErrors {
            let id = try pool.transaction { connection in
                let id = try connection.query(
                    """
                    INSERT INTO mobile_apps (environment_id, platform, package_name, created_at)
                    VALUES ($1, 'android', $2, to_timestamp($3::float8)) RETURNING id
                    """, [environmentID, packageName, SQLTime.parameter(now)]
                ).rows[0].string("id")
                try Self.insertFingerprints(connection, appID: id, fingerprints)
                return id
            }
            guard let app = try app(environmentID: environmentID, id: id) else { throw StoreError.notFound }
            return app
        }
    }

    private static func insertFingerprints(_ connection: PostgresConnection, appID: String, _ fingerprints: [String]) throws {
        for (position, fingerprint) in fingerprints.enumerated() {
            try connection.query(
                "INSERT INTO android_fingerprints (app_id, fingerprint, position) VALUES ($1, $2, $3)",
                [appID, fingerprint, String(position)])
        }
    }

    /// Replaces an Android app's certificates (PATCH `sha256CertFingerprints`), in one transaction.
    /// - Returns: the updated app, or nil when this environment has no such Android app.
    /// - Throws: `AppLimitError.nativeAppLimit` (more than 5), `PostgresError`.
    public func replaceFingerprints(environmentID: String, id: String, fingerprints: [String]) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        let found = try Self.mappingAppErrors {
            try pool.transaction { connection -> Bool in
                guard
                    try connection.query(
                        "SELECT 1 FROM mobile_apps WHERE id = $1 AND environment_id = $2 AND platform = 'android' FOR NO KEY UPDATE",
                        [id, environmentID]
                    ).first != nil
                else { return false }
                try connection.query("DELETE FROM android_fingerprints WHERE app_id = $1", [id])
                try Self.insertFingerprints(connection, appID: id, fingerprints)
                return true
            }
        }
        return found ? try app(environmentID: environmentID, id: id) : nil
    }

    /// Sets or clears the operator's production custom-scheme exception for an app of any environment.
    /// - Returns: the updated app, or nil when there is no such app.
    public func setProductionCustomScheme(id: String, scheme: String?) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        guard
            let row = try pool.query(
                "UPDATE mobile_apps SET production_custom_scheme = $2 WHERE id = $1 RETURNING environment_id", [id, scheme]
            ).first
        else { return nil }
        return try app(environmentID: try row.string("environment_id"), id: id)
    }

    /// An app of this environment.
    public func app(environmentID: String, id: String) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query(
            "SELECT \(Self.appColumns) FROM mobile_apps a WHERE a.id = $1 AND a.environment_id = $2", [id, environmentID]
        ).first.map(Self.app(from:))
    }

    /// An app by id, whatever its environment (the operator's calls).
    public func app(id: String) throws -> AppRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query("SELECT \(Self.appColumns) FROM mobile_apps a WHERE a.id = $1", [id]).first.map(Self.app(from:))
    }

    /// One page of an environment's apps in creation order.
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil.
    ///   - limit: rows to return.
    public func apps(environmentID: String, after: String?, limit: Int) throws -> [AppRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try pool.query(
            """
            SELECT \(Self.appColumns) FROM mobile_apps a
            WHERE a.environment_id = $1
              AND ($2::uuid IS NULL OR (a.created_at, a.id) > (SELECT created_at, id FROM mobile_apps WHERE id = $2::uuid))
            ORDER BY a.created_at, a.id LIMIT $3
            """, [environmentID, cursor, String(limit)]
        ).rows.map(Self.app(from:))
    }

    /// Deletes an app of this environment (its certificates and link states go with it).
    /// - Returns: whether one was deleted.
    public func deleteApp(environmentID: String, id: String) throws -> Bool {
        guard UUID(uuidString: id) != nil else { return false }
        return try pool.query("DELETE FROM mobile_apps WHERE id = $1 AND environment_id = $2", [id, environmentID]).rowsAffected == 1
    }

    /// The distinct domains of an environment's `link` callbacks, alphabetically.
    public func linkDomains(environmentID: String) throws -> [String] {
        try pool.query(
            """
            SELECT DISTINCT \(Self.linkHostSQL) AS domain FROM callbacks c
            WHERE c.environment_id = $1 AND c.kind = 'link' ORDER BY domain
            """, [environmentID]
        ).rows.map { try $0.string("domain") }
    }

    /// Every app of either environment of `projectID` whose environment has a `link` callback on `domain`,
    /// with those callbacks: what the domain's files list (docs/protocol.md#generated-files:
    /// every app of either environment that has a link callback on that domain).
    public func associationApps(projectID: String, domain: String) throws -> [DomainSubject] {
        try subjects(whereClause: "e.project_id = $1 AND \(Self.linkHostSQL) = $2", [projectID, domain])
    }

    /// Every app, of any project, whose environment has a `link` callback on `domain`: what a check of
    /// that domain judges.
    public func domainSubjects(domain: String) throws -> [DomainSubject] {
        try subjects(whereClause: "\(Self.linkHostSQL) = $1", [domain])
    }

    private func subjects(whereClause: String, _ parameters: [String?]) throws -> [DomainSubject] {
        let rows = try pool.query(
            """
            SELECT \(Self.appColumns), e.kind AS environment_kind, e.project_id, c.uri
            FROM mobile_apps a JOIN environments e ON e.id = a.environment_id
            JOIN callbacks c ON c.environment_id = a.environment_id AND c.kind = 'link'
            WHERE \(whereClause)
            ORDER BY a.platform, a.created_at, a.id, c.created_at, c.id
            """, parameters
        ).rows
        var order: [String] = []
        var byApp: [String: (app: AppRecord, kind: String, project: String, uris: [String])] = [:]
        for row in rows {
            let id = try row.string("id")
            if byApp[id] == nil {
                order.append(id)
                byApp[id] = (try Self.app(from: row), try row.string("environment_kind"), try row.string("project_id"), [])
            }
            byApp[id]?.uris.append(try row.string("uri"))
        }
        return order.compactMap { id in
            byApp[id].map { DomainSubject(app: $0.app, environmentKind: $0.kind, projectID: $0.project, callbackURIs: $0.uris) }
        }
    }

    /// The projects that host `domain` (verified and marked `hosted`).
    public func hostingProjects(domain: String) throws -> [String] {
        try pool.query(
            """
            SELECT project_id FROM project_domains
            WHERE domain = $1 AND hosted AND verified_at IS NOT NULL ORDER BY created_at
            """, [domain]
        ).rows.map { try $0.string("project_id") }
    }

    /// Whether `domain` belongs to the project (verified or not).
    public func hasDomain(projectID: String, domain: String) throws -> Bool {
        try pool.query("SELECT 1 FROM project_domains WHERE project_id = $1 AND domain = $2", [projectID, domain]).first != nil
    }

    /// The verification token of a project's domain, or nil when the project has no such domain.
    public func domainVerificationToken(projectID: String, domain: String) throws -> String? {
        try pool.query(
            "SELECT verification_token FROM project_domains WHERE project_id = $1 AND domain = $2", [projectID, domain]
        ).first.map { try $0.string("verification_token") }
    }
}

/// What an environment's apps say about its redirects in production (docs/protocol.md#redirect-kinds): the
/// operator's custom-scheme exceptions, and which link callbacks a check verified.
struct AppRedirectFacts {
    /// Schemes the operator enabled for one of the environment's apps.
    var customSchemes: Set<String> = []
    /// Per domain: whether an Android app is verified there, and the paths iOS apps are verified for.
    var verifiedAndroidDomains: Set<String> = []
    var coveredIOSPaths: [String: Set<String>] = [:]

    /// Whether the domain's latest check verified one of the environment's apps for this link: an
    /// Android app on its domain, or an iOS app with the callback's path covered.
    func verifiesLink(_ uri: RedirectURI) -> Bool {
        guard let host = uri.host else { return false }
        let path = String(uri.pathAndQuery.prefix { $0 != "?" })
        return verifiedAndroidDomains.contains(host) || coveredIOSPaths[host]?.contains(path) == true
    }
}

extension PostgresStore {
    /// The facts `clientEnvironment` needs from the environment's apps, in one statement.
    func appFacts(environmentID: String) throws -> AppRedirectFacts {
        var facts = AppRedirectFacts()
        let rows = try pool.query(
            """
            SELECT a.platform, a.production_custom_scheme, s.domain, s.status,
                   array_to_json(s.covered_paths)::text AS covered_paths
            FROM mobile_apps a LEFT JOIN app_link_states s ON s.app_id = a.id
            WHERE a.environment_id = $1
            """, [environmentID]
        ).rows
        for row in rows {
            if let scheme = row["production_custom_scheme"] { facts.customSchemes.insert(scheme) }
            guard let domain = row["domain"] else { continue }
            if row["platform"] == "android" {
                if row["status"] == "verified" { facts.verifiedAndroidDomains.insert(domain) }
            } else {
                let paths = (try? JSONSerialization.jsonObject(with: Data((row["covered_paths"] ?? "[]").utf8))) as? [String] ?? []
                facts.coveredIOSPaths[domain, default: []].formUnion(paths)
            }
        }
        return facts
    }
}
