import Authorize
import Foundation
import Postgres

/// The deployment's upstream OpenID providers and each project's choice of them (sql/023_upstream_providers.sql;
/// docs/federation.md, "Providers"). Secrets arrive sealed and leave sealed; every write inserts its audit
/// row in its own transaction.
public struct PostgresProviders: UpstreamProviderStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    static let columns = """
        p.id, p.kind, p.slug, p.display_name, p.issuer, p.client_id, p.apple_team_id, p.apple_key_id, p.sealed_client_secret,
        p.sealed_apple_private_key, p.created_at, p.updated_at
        """

    static func record(_ row: PostgresRow) throws -> UpstreamProviderRecord {
        guard let kind = UpstreamProviderKind(rawValue: try row.string("kind")) else {
            throw PostgresError(kind: .query, message: "column \"kind\" holds an unknown provider kind")
        }
        return UpstreamProviderRecord(
            id: try row.string("id"), kind: kind, slug: try row.string("slug"), displayName: try row.string("display_name"),
            issuer: try row.string("issuer"), clientID: try row.string("client_id"), appleTeamID: row["apple_team_id"],
            appleKeyID: row["apple_key_id"], sealedClientSecret: row["sealed_client_secret"],
            sealedApplePrivateKey: row["sealed_apple_private_key"], createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }

    /// A unique violation of the slug, raised by an update that takes another provider's slug.
    static func isSlugTaken(_ error: PostgresError) -> Bool {
        error.sqlState == .uniqueViolation && error.constraint == "upstream_providers_slug_unique"
    }

    /// - Throws: `StoreUnavailable`.
    public func providers(after: String?, limit: Int) throws -> [UpstreamProviderRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.columns) FROM upstream_providers p
                WHERE ($1::uuid IS NULL OR (p.created_at, p.id) > (SELECT created_at, id FROM upstream_providers WHERE id = $1::uuid))
                ORDER BY p.created_at, p.id LIMIT $2
                """, [cursor, String(limit)]
            ).rows.map(Self.record)
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func provider(id: String) throws -> UpstreamProviderRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query("SELECT \(Self.columns) FROM upstream_providers p WHERE p.id = $1::uuid", [id]).first.map(Self.record)
        }
    }

    /// `INSERT … ON CONFLICT (slug) DO NOTHING`: no row back means the slug is taken.
    /// - Throws: `ProviderRefusal.slugTaken`; `StoreUnavailable`.
    public func createProvider(
        id: String, kind: UpstreamProviderKind, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry
    ) throws -> UpstreamProviderRecord {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let inserted = try connection.query(
                    """
                    WITH p AS (
                        INSERT INTO upstream_providers (id, kind, slug, display_name, issuer, client_id, sealed_client_secret,
                            apple_team_id, apple_key_id, sealed_apple_private_key, created_at, updated_at)
                        VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, to_timestamp($11::float8), to_timestamp($11::float8))
                        ON CONFLICT (slug) DO NOTHING
                        RETURNING *
                    )
                    SELECT \(Self.columns) FROM p
                    """,
                    [
                        id, kind.rawValue, columns.slug, columns.displayName, columns.issuer, columns.clientID, columns.sealedClientSecret,
                        columns.appleTeamID, columns.appleKeyID, columns.sealedApplePrivateKey, SQLTime.parameter(now),
                    ])
                guard let row = inserted.first else { throw ProviderRefusal.slugTaken }
                try AuditRows.insert(audit, on: connection)
                return try Self.record(row)
            }
        }
    }

    /// One `UPDATE` of the given columns (`COALESCE` keeps the others).
    /// - Throws: `ProviderRefusal.noProvider`, `.slugTaken`; `StoreUnavailable`.
    public func updateProvider(id: String, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry) throws
        -> UpstreamProviderRecord
    {
        guard UUID(uuidString: id) != nil else { throw ProviderRefusal.noProvider }
        do {
            return try PostgresEdge.run {
                try pool.transaction { connection in
                    let updated = try connection.query(
                        """
                        WITH p AS (
                            UPDATE upstream_providers SET slug = COALESCE($2, slug), display_name = COALESCE($3, display_name),
                                issuer = COALESCE($4, issuer), client_id = COALESCE($5, client_id),
                                sealed_client_secret = COALESCE($6, sealed_client_secret),
                                apple_team_id = COALESCE($7, apple_team_id), apple_key_id = COALESCE($8, apple_key_id),
                                sealed_apple_private_key = COALESCE($9, sealed_apple_private_key),
                                updated_at = to_timestamp($10::float8)
                            WHERE id = $1::uuid
                            RETURNING *
                        )
                        SELECT \(Self.columns) FROM p
                        """,
                        [
                            id, columns.slug, columns.displayName, columns.issuer, columns.clientID, columns.sealedClientSecret,
                            columns.appleTeamID, columns.appleKeyID, columns.sealedApplePrivateKey, SQLTime.parameter(now),
                        ])
                    guard let row = updated.first else { throw ProviderRefusal.noProvider }
                    try AuditRows.insert(audit, on: connection)
                    return try Self.record(row)
                }
            }
        } catch let fault as StoreFault
            where fault.sqlState == SQLState.uniqueViolation.rawValue
            && fault.constraint == "upstream_providers_slug_unique"
        {
            throw ProviderRefusal.slugTaken
        }
    }

    /// - Throws: `ProviderRefusal.noProvider`; `StoreUnavailable`.
    public func deleteProvider(id: String, audit: AuditEntry) throws {
        guard UUID(uuidString: id) != nil else { throw ProviderRefusal.noProvider }
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard try connection.query("DELETE FROM upstream_providers WHERE id = $1::uuid", [id]).rowsAffected == 1 else {
                    throw ProviderRefusal.noProvider
                }
                try AuditRows.insert(audit, on: connection)
            }
        }
    }

    /// A project with a production environment (the deployment's own console project has none, and is no
    /// project of the admin API: sql/019_console.sql).
    static let projectExistsSQL = """
        SELECT 1 FROM projects p
        WHERE p.id = $1::uuid AND EXISTS (SELECT 1 FROM environments e WHERE e.project_id = p.id AND e.kind = 'production')
        """

    static func shown(projectID: String, on connection: PostgresConnection) throws -> [UpstreamProviderRecord] {
        try connection.query(
            """
            SELECT \(columns) FROM project_upstream_providers c JOIN upstream_providers p ON p.id = c.provider_id
            WHERE c.project_id = $1::uuid ORDER BY c.position
            """, [projectID]
        ).rows.map(record)
    }

    /// - Throws: `ProviderRefusal.noProject`; `StoreUnavailable`.
    public func projectProviders(projectID: String) throws -> [UpstreamProviderRecord] {
        guard UUID(uuidString: projectID) != nil else { throw ProviderRefusal.noProject }
        return try PostgresEdge.run {
            try pool.withConnection { connection in
                guard try connection.query(Self.projectExistsSQL, [projectID]).first != nil else { throw ProviderRefusal.noProject }
                return try Self.shown(projectID: projectID, on: connection)
            }
        }
    }

    /// Deletes the project's choice and inserts the new one, in one transaction under the project's row lock
    /// (two concurrent choices end as one of them, never mixed). A provider deleted meanwhile makes the
    /// insert's foreign key fail: `unknownProvider`, nothing changed.
    /// - Throws: `ProviderRefusal.noProject`, `.unknownProvider`; `StoreUnavailable`.
    public func setProjectProviders(projectID: String, providerIDs: [String], audit: AuditEntry) throws -> [UpstreamProviderRecord] {
        guard UUID(uuidString: projectID) != nil else { throw ProviderRefusal.noProject }
        do {
            return try PostgresEdge.run {
                try pool.transaction { connection in
                    guard try connection.query(Self.projectExistsSQL + " FOR NO KEY UPDATE OF p", [projectID]).first != nil else {
                        throw ProviderRefusal.noProject
                    }
                    try connection.query("DELETE FROM project_upstream_providers WHERE project_id = $1::uuid", [projectID])
                    for (position, providerID) in providerIDs.enumerated() {
                        try connection.query(
                            "INSERT INTO project_upstream_providers (project_id, provider_id, position) VALUES ($1::uuid, $2::uuid, $3)",
                            [projectID, providerID, String(position)])
                    }
                    try AuditRows.insert(audit, on: connection)
                    return try Self.shown(projectID: projectID, on: connection)
                }
            }
        } catch let fault as StoreFault where fault.sqlState == SQLState.foreignKeyViolation.rawValue {
            throw ProviderRefusal.unknownProvider
        }
    }
}

extension PostgresStore {
    /// The upstream providers' aggregate.
    public var providers: PostgresProviders { PostgresProviders(pool: pool) }
}
