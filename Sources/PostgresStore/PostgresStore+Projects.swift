import Foundation
import Postgres

/// A project as the operator's list shows it: no secret, only the publishable keys (which ship in apps).
public struct ProjectRecord: Sendable, Equatable {
    /// The project's id (a UUID).
    public let id: String
    /// The name given at creation (1–200 characters).
    public let name: String
    /// When the project was created.
    public let createdAt: Date
    /// The development environment's `pk_test_…`.
    public let developmentPublishableKey: String
    /// The production environment's `pk_live_…`.
    public let productionPublishableKey: String
}

extension PostgresStore {
    /// One page of the deployment's projects in creation order (the operator's `GET /v1/admin/projects`).
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil; a cursor that is not a
    ///     project id starts from the beginning, as the other lists do.
    ///   - limit: 1–101 rows (the caller asks for one more than a page to know whether another follows).
    /// - Throws: `PostgresError`.
    public func projects(after: String?, limit: Int) throws -> [ProjectRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try pool.query(
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
                developmentPublishableKey: try row.string("development_key"), productionPublishableKey: try row.string("production_key"))
        }
    }
}
