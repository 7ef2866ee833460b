import Foundation

/// What closing an account needs from storage.
public protocol CloseUserStore: Sendable {
    /// Sets `closed_at` once and ends every session of the account, in one transaction; a repeat changes
    /// nothing. - Returns: the account and when it was first closed, or nil for an unknown id.
    /// `audit` is written in the same transaction when the account exists (repeats included).
    /// - Throws: `StoreUnavailable`.
    func closeUser(id: String, now: Date, audit: AuditEntry) throws -> (UserRecord, Date)?
}

/// The operator closes an account (`POST /v1/admin/users/{id}/close`, docs/protocol.md#session-ends):
/// idempotent, answering the first closing time on every repeat.
public struct CloseUser: Sendable {
    /// A closed account.
    public struct Closed: Sendable, Equatable {
        public let user: UserRecord
        /// When it was first closed.
        public let closedAt: Date
    }

    let store: any CloseUserStore

    /// - Parameter store: accounts and sessions.
    public init(store: any CloseUserStore) { self.store = store }

    /// - Returns: the closed account, or nil when no account has this id. - Throws: `StoreUnavailable`.
    public func callAsFunction(id: String, now: Date, audit: AuditEntry) throws -> Closed? {
        try store.closeUser(id: id, now: now, audit: audit).map { Closed(user: $0.0, closedAt: $0.1) }
    }
}
