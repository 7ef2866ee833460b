import Foundation

/// What the operator's account search needs from storage.
public protocol FindUserStore: Sendable {
    /// The account whose address key is `emailKey` (`EmailAddress.key`), open or closed, or nil.
    /// - Throws: `StoreUnavailable`.
    func user(emailKey: String) throws -> UserRecord?
}

/// The operator's account search (`POST /v1/admin/users/search`, docs/decisions.md, "Admin API"): the one
/// account, open or closed, whose address key equals `email`'s (at most one: keys are unique).
public struct FindUser: Sendable {
    let store: any FindUserStore

    /// - Parameter store: the accounts.
    public init(store: any FindUserStore) { self.store = store }

    /// - Returns: the account, or nil.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(email: EmailAddress) throws -> UserRecord? {
        try store.user(emailKey: email.key)
    }
}
