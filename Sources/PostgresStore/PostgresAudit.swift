import Authorize
import Foundation
import Postgres

/// The audit log's SQL (docs/console.md, "Audit log"). A change writes its row with `AuditRows.insert`
/// on the connection of its own transaction, so the row exists exactly when the change does; refused
/// actions go through `PostgresAudit.record`.
public enum AuditRows {
    /// Inserts `entry` on `connection` (inside the caller's transaction).
    /// - Throws: `PostgresError` (the caller's `PostgresEdge.run` translates it).
    public static func insert(_ entry: AuditEntry, on connection: PostgresConnection) throws {
        try connection.query(insertSQL, parameters(entry))
    }

    /// One `INSERT INTO audit_log` with the ten parameters `parameters(_:)` gives (`$1`–`$10`).
    public static let insertSQL = """
        INSERT INTO audit_log (at, actor_kind, actor_id, action, target, project_id, environment_id, subject_user_id,
                               client_address, outcome)
        VALUES (to_timestamp($1::float8), $2, $3, $4, $5, $6::uuid, $7::uuid, $8::uuid, $9, $10)
        """

    /// The parameters of `insertSQL`, in order.
    public static func parameters(_ entry: AuditEntry) -> [String?] {
        [
            SQLTime.parameter(entry.at), entry.actor.kind, entry.actor.id, entry.action, entry.target, entry.projectID,
            entry.environmentID, entry.subjectUserID, entry.clientAddress, entry.outcome.rawValue,
        ]
    }
}

/// Records entries that accompany no change of their own (refused actions, sign-in events).
public struct PostgresAudit: AuditRecorder {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    /// - Throws: `StoreUnavailable`, `StoreError.unstorableInput`.
    public func record(_ entry: AuditEntry) throws {
        try PostgresEdge.run { _ = try pool.query(AuditRows.insertSQL, AuditRows.parameters(entry)) }
    }
}

extension PostgresStore {
    /// The audit log over this store's pool.
    public var audit: PostgresAudit { PostgresAudit(pool: pool) }
}
