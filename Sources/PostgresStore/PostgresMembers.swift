import Authorize
import Foundation
import Postgres

/// Project members and operators (sql/016_members.sql; docs/console.md, "Roles", "Members"): the reads the
/// permission rule needs, and the writes of `ProjectMembers`, each with its audit row in its transaction.
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

// MARK: Writes

extension PostgresMembers: ProjectMemberStore {
    /// The columns `member(from:)` reads, over the aliases `m` (project_members) and `u` (users).
    static let memberColumns = "m.user_id, u.email, u.name, m.role, m.added_at"

    static func member(from row: PostgresRow) throws -> ProjectMember {
        guard let role = ProjectRole(wire: try row.string("role")) else {
            throw PostgresError(kind: .query, message: "column \"role\" holds an unknown role")
        }
        return ProjectMember(
            userID: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"), role: role,
            addedAt: try row.date("added_at"))
    }

    /// Locks the project's row (`FOR NO KEY UPDATE`: rows that merely reference the project are not held
    /// up), so changes of one project's members run one after another; each statement after it reads what
    /// the previous change committed (READ COMMITTED takes a snapshot per statement).
    /// - Returns: whether the project exists.
    static func lockProject(_ projectID: String, on connection: PostgresConnection) throws -> Bool {
        // A project with a production environment: the deployment's own console project has none and has
        // no members (sql/019_console.sql), as the project lists never show it.
        try connection.query(
            """
            SELECT p.id FROM projects p
            WHERE p.id = $1::uuid AND EXISTS (SELECT 1 FROM environments e WHERE e.project_id = p.id AND e.kind = 'production')
            FOR NO KEY UPDATE OF p
            """, [projectID]
        ).first != nil
    }

    /// Inserts a membership of an open account and its audit row, inside the caller's transaction.
    /// - Throws: `MemberRefusal.noAccount` (no open account has the id), `.alreadyMember`; `PostgresError`.
    static func insertMember(
        projectID: String, userID: String, role: ProjectRole, audit: AuditEntry, on connection: PostgresConnection
    ) throws -> ProjectMember {
        let inserted = try connection.query(
            """
            WITH m AS (
                INSERT INTO project_members (project_id, user_id, role, added_at)
                SELECT $1::uuid, u.id, $3, to_timestamp($4::float8) FROM users u WHERE u.id = $2::uuid AND u.closed_at IS NULL
                ON CONFLICT (project_id, user_id) DO NOTHING
                RETURNING user_id, role, added_at
            )
            SELECT \(memberColumns) FROM m JOIN users u ON u.id = m.user_id
            """, [projectID, userID, role.rawValue, SQLTime.parameter(audit.at)])
        guard let row = inserted.first else {
            let existing = try connection.query(
                "SELECT 1 FROM project_members WHERE project_id = $1::uuid AND user_id = $2::uuid", [projectID, userID])
            throw existing.first == nil ? MemberRefusal.noAccount : MemberRefusal.alreadyMember
        }
        try AuditRows.insert(audit, on: connection)
        return try member(from: row)
    }

    /// - Throws: `StoreUnavailable`.
    public func projectExists(projectID: String) throws -> Bool {
        guard UUID(uuidString: projectID) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT 1 FROM projects p
                WHERE p.id = $1::uuid AND EXISTS (SELECT 1 FROM environments e WHERE e.project_id = p.id AND e.kind = 'production')
                """, [projectID]
            ).first != nil
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func openAccountID(emailKey: String) throws -> String? {
        try PostgresEdge.run {
            try pool.query("SELECT id FROM users WHERE email_normalized = $1 AND closed_at IS NULL", [emailKey]).first?.string("id")
        }
    }

    /// Members in the order they were added (keyset pagination on `(added_at, user_id)`).
    /// - Throws: `StoreUnavailable`.
    public func members(projectID: String, after: String?, limit: Int) throws -> [ProjectMember] {
        guard UUID(uuidString: projectID) != nil else { return [] }
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.memberColumns) FROM project_members m JOIN users u ON u.id = m.user_id
                WHERE m.project_id = $1::uuid
                  AND ($2::uuid IS NULL OR (m.added_at, m.user_id) >
                       (SELECT added_at, user_id FROM project_members WHERE project_id = $1::uuid AND user_id = $2::uuid))
                ORDER BY m.added_at, m.user_id LIMIT $3
                """, [projectID, cursor, String(limit)]
            ).rows.map(Self.member(from:))
        }
    }

    /// - Throws: `MemberRefusal.noProject`, `.noAccount`, `.alreadyMember`; `StoreUnavailable`.
    public func addMember(projectID: String, userID: String, role: ProjectRole, audit: AuditEntry) throws -> ProjectMember {
        guard UUID(uuidString: projectID) != nil else { throw MemberRefusal.noProject }
        guard UUID(uuidString: userID) != nil else { throw MemberRefusal.noAccount }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                guard try Self.lockProject(projectID, on: connection) else { throw MemberRefusal.noProject }
                return try Self.insertMember(projectID: projectID, userID: userID, role: role, audit: audit, on: connection)
            }
        }
    }

    /// Under the project's lock, reads every member's role, asks `rule` about the roles after the change,
    /// and only then updates or deletes the row, with its audit row.
    /// - Throws: `MemberRefusal.noProject`, `.notMember`, `.lastOwner`; `StoreUnavailable`.
    public func changeMember(
        projectID: String, userID: String, role: ProjectRole?, rule: OwnerRule, audit: AuditEntry
    ) throws -> ProjectMember? {
        guard UUID(uuidString: projectID) != nil else { throw MemberRefusal.noProject }
        guard UUID(uuidString: userID) != nil else { throw MemberRefusal.notMember }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                guard try Self.lockProject(projectID, on: connection) else { throw MemberRefusal.noProject }
                // Only open accounts own a project: a closed account's membership never counts as its owner,
                // and changing or removing it never leaves the project without one (docs/console.md, "Members").
                let members = try connection.query(
                    """
                    SELECT m.user_id, m.role, u.closed_at IS NULL AS open
                    FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1::uuid
                    """, [projectID]
                ).rows.map { (id: try $0.string("user_id"), role: ProjectRole(wire: try $0.string("role")), open: $0["open"] == "t") }
                guard let target = members.first(where: { $0.id == userID }) else { throw MemberRefusal.notMember }
                if target.open {
                    let after = members.filter(\.open).compactMap { $0.id == userID ? role : $0.role }
                    guard rule(after) else { throw MemberRefusal.lastOwner }
                }
                let changed: PostgresRow?
                if let role {
                    changed = try connection.query(
                        """
                        WITH m AS (
                            UPDATE project_members SET role = $3 WHERE project_id = $1::uuid AND user_id = $2::uuid
                            RETURNING user_id, role, added_at
                        )
                        SELECT \(Self.memberColumns) FROM m JOIN users u ON u.id = m.user_id
                        """, [projectID, userID, role.rawValue]
                    ).first
                } else {
                    try connection.query(
                        "DELETE FROM project_members WHERE project_id = $1::uuid AND user_id = $2::uuid", [projectID, userID])
                    changed = nil
                }
                try AuditRows.insert(audit, on: connection)
                return try changed.map(Self.member(from:))
            }
        }
    }

    /// - Throws: `OperatorRefusal.noAccount`, `.alreadyOperator`; `StoreUnavailable`.
    public func markOperator(userID: String, audit: AuditEntry) throws -> OperatorRecord {
        guard UUID(uuidString: userID) != nil else { throw OperatorRefusal.noAccount }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                let marked = try connection.query(
                    """
                    WITH o AS (
                        INSERT INTO operators (user_id, marked_at)
                        SELECT u.id, to_timestamp($2::float8) FROM users u WHERE u.id = $1::uuid AND u.closed_at IS NULL
                        ON CONFLICT (user_id) DO NOTHING
                        RETURNING user_id, marked_at
                    )
                    SELECT o.user_id, u.email, u.name, o.marked_at FROM o JOIN users u ON u.id = o.user_id
                    """, [userID, SQLTime.parameter(audit.at)])
                guard let row = marked.first else {
                    let existing = try connection.query("SELECT 1 FROM operators WHERE user_id = $1::uuid", [userID])
                    throw existing.first == nil ? OperatorRefusal.noAccount : OperatorRefusal.alreadyOperator
                }
                try AuditRows.insert(audit, on: connection)
                return OperatorRecord(
                    userID: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                    markedAt: try row.date("marked_at"))
            }
        }
    }

    /// - Throws: `OperatorRefusal.notOperator`; `StoreUnavailable`.
    public func unmarkOperator(userID: String, audit: AuditEntry) throws {
        guard UUID(uuidString: userID) != nil else { throw OperatorRefusal.notOperator }
        try PostgresEdge.run {
            try pool.transaction { connection in
                let removed = try connection.query("DELETE FROM operators WHERE user_id = $1::uuid", [userID]).rowsAffected
                guard removed == 1 else { throw OperatorRefusal.notOperator }
                try AuditRows.insert(audit, on: connection)
            }
        }
    }
}

extension PostgresStore {
    /// Project members and operators over this store's pool.
    public var members: PostgresMembers { PostgresMembers(pool: pool) }
}
