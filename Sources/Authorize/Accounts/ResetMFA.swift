import Foundation

/// What the operator's MFA reset needs from storage.
public protocol ResetMFAStore: Sendable {
    /// Deletes the account's TOTP factor (confirmed or pending) and every recovery code, and ends every
    /// session of the account (app sessions, ZevID browser sessions, open MFA challenges), in one
    /// transaction.
    /// - Returns: the account and whether it had a TOTP factor or recovery codes, or nil for an unknown id.
    /// `audit` is written in the same transaction when the account exists.
    /// - Throws: `StoreUnavailable`.
    func resetMFA(userID: String, now: Date, audit: AuditEntry) throws -> (user: UserRecord, hadFactor: Bool)?
}

/// The operator removes an account's two-step verification for a person who lost both the authenticator
/// and the recovery codes (`POST /v1/admin/users/{id}/mfa/reset`, docs/protocol.md#mfa-reset): the factor
/// and the codes go, every session ends (whoever holds a session may be the one who took the phone), and
/// the account is sent an `mfaRemoved` notice. Idempotent: a repeat ends sessions again and sends nothing.
public struct ResetMFA: Sendable {
    /// The account whose two-step verification was reset.
    public struct Reset: Sendable, Equatable {
        public let user: UserRecord
        /// Whether a TOTP factor or recovery codes were removed (false on a repeat).
        public let removed: Bool
    }

    let store: any ResetMFAStore
    let notices: any SecurityNotices

    /// - Parameters:
    ///   - store: factors, codes and sessions.
    ///   - notices: where the `mfaRemoved` notice is queued.
    public init(store: any ResetMFAStore, notices: any SecurityNotices) {
        self.store = store
        self.notices = notices
    }

    /// - Returns: the reset account, or nil when no account has this id.
    /// - Throws: `StoreUnavailable` (the reset, or queueing the notice; a repeat queues it then).
    public func callAsFunction(userID: String, now: Date, audit: AuditEntry) throws -> Reset? {
        guard let (user, hadFactor) = try store.resetMFA(userID: userID, now: now, audit: audit) else { return nil }
        if hadFactor { try notices.queue(.mfaRemoved, userID: user.id, now: now) }
        return Reset(user: user, removed: hadFactor)
    }
}
