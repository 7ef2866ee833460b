import Authorize
import Foundation
import Postgres

/// The console's own reads and its sessions (sql/019; docs/console.md). The console's changes go through
/// the same use cases and store methods as the admin API; only what the pages need to find their way
/// (an environment by project and kind, the project search) and the console sessions live here.
public struct PostgresConsole: ConsoleSessionStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    // MARK: Sessions

    /// - Throws: `StoreUnavailable`.
    public func createConsoleSession(_ session: ConsoleSessionRecord) throws {
        try PostgresEdge.run {
            _ = try pool.query(
                """
                INSERT INTO console_sessions (id_hash, user_id, created_at, last_seen_at, auth_time)
                VALUES ($1, $2::uuid, to_timestamp($3::float8), to_timestamp($4::float8), to_timestamp($5::float8))
                """,
                [
                    session.idHash, session.userID, SQLTime.parameter(session.createdAt), SQLTime.parameter(session.lastSeenAt),
                    SQLTime.parameter(session.authTime),
                ])
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func consoleSession(idHash: String) throws -> ConsoleSessionRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT s.id_hash, s.user_id, s.created_at, s.last_seen_at, s.auth_time FROM console_sessions s
                JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1 AND u.closed_at IS NULL
                """, [idHash]
            ).rows.first.map { row in
                ConsoleSessionRecord(
                    idHash: try row.string("id_hash"), userID: try row.string("user_id"), createdAt: try row.date("created_at"),
                    lastSeenAt: try row.date("last_seen_at"), authTime: try row.date("auth_time"))
            }
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func touchConsoleSession(idHash: String, now: Date) throws {
        try PostgresEdge.run {
            _ = try pool.query(
                "UPDATE console_sessions SET last_seen_at = to_timestamp($2::float8) WHERE id_hash = $1", [idHash, SQLTime.parameter(now)])
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func deleteConsoleSession(idHash: String) throws {
        try PostgresEdge.run { _ = try pool.query("DELETE FROM console_sessions WHERE id_hash = $1", [idHash]) }
    }

    // MARK: Finding the way

    /// A project's environment of `kind`, or nil when the project does not exist (the console's own
    /// project included: it has no production environment and is never a page of the console).
    /// - Throws: `StoreUnavailable`.
    public func environment(projectID: String, kind: EnvironmentKind) throws -> EnvironmentRecord? {
        guard UUID(uuidString: projectID) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(PostgresTenancy.environmentColumns) FROM environments e JOIN projects p ON p.id = e.project_id
                WHERE e.project_id = $1::uuid AND e.kind = $2 AND e.publishable_key <> $3
                """, [projectID, kind.rawValue, ConsoleClient.clientID]
            ).first.map(PostgresTenancy.environment(from:))
        }
    }

    /// Up to 100 projects whose name contains `query` (case-insensitive; every project for an empty
    /// query), by name: the operator's project search. The console's own project is never listed.
    /// - Throws: `StoreUnavailable`.
    public func searchProjects(_ query: String) throws -> [(id: String, name: String)] {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT p.id, p.name FROM projects p
                WHERE EXISTS (SELECT 1 FROM environments e WHERE e.project_id = p.id AND e.kind = 'production')
                  AND ($1 = '' OR position(lower($1) IN lower(p.name)) > 0)
                ORDER BY p.name, p.id LIMIT 100
                """, [query]
            ).rows.map { (id: try $0.string("id"), name: try $0.string("name")) }
        }
    }

    /// The account's address as the person typed it first, when the account is open.
    /// - Throws: `StoreUnavailable`.
    public func openAccountEmail(userID: String) throws -> String? {
        guard UUID(uuidString: userID) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query("SELECT email FROM users WHERE id = $1::uuid AND closed_at IS NULL", [userID]).rows.first.map {
                try $0.string("email")
            }
        }
    }
}

extension PostgresStore {
    /// The console's sessions and reads over this store's pool.
    public var console: PostgresConsole { PostgresConsole(pool: pool) }
}
