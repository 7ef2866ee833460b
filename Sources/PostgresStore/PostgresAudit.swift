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

    /// One statement that makes `change` (whose parameters start at `$11`, and which must end in
    /// `RETURNING id`) and inserts the audit row (`$1`–`$10`, `parameters(_:)`) only when the change touched a
    /// row: a data-modifying CTE, so a single-statement change and its row commit together. The statement
    /// answers the changed rows' `id`.
    public static func sql(insertingAfter change: String) -> String {
        """
        WITH changed AS (\(change)),
        audited AS (
            INSERT INTO audit_log (at, actor_kind, actor_id, action, target, project_id, environment_id, subject_user_id,
                                   client_address, outcome)
            SELECT to_timestamp($1::float8), $2, $3, $4, $5, $6::uuid, $7::uuid, $8::uuid, $9, $10
            WHERE EXISTS (SELECT 1 FROM changed)
        )
        SELECT id::text AS id FROM changed
        """
    }

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

extension PostgresAudit: AuditLogStore {
    static let columns = """
        id, at, actor_kind, actor_id, action, target, project_id, environment_id, subject_user_id, client_address, outcome
        """

    /// One page of the rows `scope` may see, newest first (`at`, then `id`, descending; the index
    /// `audit_log_newest`). A cursor that is not a row id starts from the newest, as the other lists do.
    /// - Throws: `StoreUnavailable`.
    public func auditRows(_ scope: AuditScope, after: String?, limit: Int) throws -> [AuditRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        let filter: String
        var parameters: [String?] = [cursor, String(limit)]
        switch scope {
        case .deployment:
            filter = "TRUE"
        case .environment(let projectID, let environmentID):
            filter = "(environment_id = $3::uuid OR (environment_id IS NULL AND project_id = $4::uuid))"
            parameters += [environmentID, projectID]
        case .subject(let userID):
            filter = "subject_user_id = $3::uuid"
            parameters += [userID]
        }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.columns) FROM audit_log
                WHERE \(filter)
                  AND ($1::uuid IS NULL OR (at, id) < (SELECT at, id FROM audit_log WHERE id = $1::uuid))
                ORDER BY at DESC, id DESC LIMIT $2
                """, parameters
            ).rows.map(Self.record(from:))
        }
    }

    static func record(from row: PostgresRow) throws -> AuditRecord {
        let id = row["actor_id"]
        let actor: AuditActor
        switch try row.string("actor_kind") {
        case "operator_token": actor = .operatorToken
        case "secret_key": actor = .secretKey(id: id ?? "")
        case "account": actor = .account(userID: id ?? "")
        case "system": actor = .system
        default: actor = .unknown
        }
        return AuditRecord(
            id: try row.string("id"),
            entry: AuditEntry(
                actor: actor, action: try row.string("action"), target: row["target"], projectID: row["project_id"],
                environmentID: row["environment_id"], subjectUserID: row["subject_user_id"], clientAddress: row["client_address"],
                outcome: AuditOutcome(rawValue: try row.string("outcome")) ?? .done, at: try row.date("at")))
    }

    /// The retention: rows are kept this many days, then pruned by the housekeeping job (sql/015_audit.sql's
    /// trigger refuses deleting a younger row).
    public static let retentionDays = 400
}

extension AuditEntry {
    /// A change the server makes itself (set-ups outside the admin API, such as `dev`), with no client address.
    static func system(
        _ action: String, target: String? = nil, projectID: String? = nil, environmentID: String? = nil, _ now: Date
    ) -> AuditEntry {
        AuditEntry(
            actor: .system, action: action, target: target, projectID: projectID, environmentID: environmentID, clientAddress: nil,
            at: now)
    }
}

extension PostgresStore {
    /// The audit log over this store's pool.
    public var audit: PostgresAudit { PostgresAudit(pool: pool) }
}
