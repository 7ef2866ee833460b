import Authorize
import Foundation
import Postgres

/// Project members and operators (sql/016_members.sql; docs/console.md, "Roles", "Members").
public struct PostgresMembers: MembershipLookup {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    /// - Throws: `StoreUnavailable`.
    public func role(userID: String, projectID: String) throws -> ProjectRole? {
        guard UUID(uuidString: userID) != nil, UUID(uuidString: projectID) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                "SELECT role FROM project_members WHERE user_id = $1::uuid AND project_id = $2::uuid", [userID, projectID]
            ).rows.first.map { try $0.string("role") }.flatMap { ProjectRole(wire: $0) }
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func isOperator(userID: String) throws -> Bool {
        guard UUID(uuidString: userID) != nil else { return false }
        return try PostgresEdge.run {
            !(try pool.query("SELECT 1 FROM operators WHERE user_id = $1::uuid", [userID]).rows.isEmpty)
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func memberships(userID: String) throws -> [Membership] {
        guard UUID(uuidString: userID) != nil else { return [] }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT m.project_id, p.name, m.role FROM project_members m JOIN projects p ON p.id = m.project_id
                WHERE m.user_id = $1::uuid ORDER BY p.name, p.id
                """, [userID]
            ).rows.compactMap { row -> Membership? in
                guard let role = ProjectRole(wire: try row.string("role")) else { return nil }
                return Membership(projectID: try row.string("project_id"), projectName: try row.string("name"), role: role)
            }
        }
    }
}

extension PostgresStore {
    /// Project members and operators over this store's pool.
    public var members: PostgresMembers { PostgresMembers(pool: pool) }
}
