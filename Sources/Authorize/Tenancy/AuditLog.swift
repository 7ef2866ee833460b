import Foundation

extension AuditEntry {
    /// The same entry about `target` (and, when given, its project and environment): for a change whose
    /// target's id the store mints (a project, an app, a secret key, an account), the store names it here
    /// before it writes the row in the change's transaction.
    public func naming(_ target: String?, projectID: String? = nil, environmentID: String? = nil) -> AuditEntry {
        AuditEntry(
            actor: actor, action: action, target: target, projectID: projectID ?? self.projectID,
            environmentID: environmentID ?? self.environmentID, subjectUserID: subjectUserID, clientAddress: clientAddress,
            outcome: outcome, at: at)
    }
}

/// One stored row of the audit log, as `GET /v1/admin/audit` lists it (docs/protocol.md#admin-audit).
public struct AuditRecord: Sendable, Equatable {
    /// The row's id (a UUID), also the list's cursor.
    public let id: String
    /// What the row records.
    public let entry: AuditEntry

    /// - Parameters:
    ///   - id: the row's id.
    ///   - entry: its contents.
    public init(id: String, entry: AuditEntry) {
        self.id = id
        self.entry = entry
    }
}

/// Which rows an audit-log reader may see (docs/protocol.md#admin-audit).
public enum AuditScope: Sendable, Equatable {
    /// The operator: every row.
    case deployment
    /// A secret key: its environment's rows and its project's project-level rows (no environment).
    case environment(projectID: String, environmentID: String)
    /// A person on `/account`: the rows whose subject is this account.
    case subject(userID: String)
}

/// What reading and pruning the audit log needs from storage.
public protocol AuditLogStore: Sendable {
    /// One page of the rows `scope` may see, newest first (by time, then id).
    /// - Parameters:
    ///   - after: the id of the last row of the previous page, or nil; an unknown cursor starts from the newest.
    ///   - limit: 1–101 rows (a page and one more, to know whether another follows).
    /// - Throws: `StoreUnavailable`.
    func auditRows(_ scope: AuditScope, after: String?, limit: Int) throws -> [AuditRecord]
}

/// Lists the audit log, newest first, in the list shape of every admin list (docs/protocol.md#admin-audit).
public struct ListAudit: Sendable {
    let store: any AuditLogStore

    /// - Parameter store: the audit log.
    public init(store: any AuditLogStore) { self.store = store }

    /// - Parameters:
    ///   - scope: what the caller may see.
    ///   - cursor: the previous page's `nextCursor`, or nil.
    ///   - limit: 1–100.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(_ scope: AuditScope, cursor: String?, limit: Int) throws -> Page<AuditRecord> {
        Page(rows: try store.auditRows(scope, after: cursor, limit: limit + 1), limit: limit, id: \.id)
    }
}
