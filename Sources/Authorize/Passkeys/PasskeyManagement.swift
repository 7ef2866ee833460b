import Foundation

/// What the account page's passkey list, rename and remove need from storage, and the offer after a
/// sign-in.
public protocol PasskeyManagementStore: Sendable {
    /// The account's passkeys, oldest first. - Throws: `StoreUnavailable`.
    func passkeys(userID: String) throws -> [PasskeyRecord]
    /// Renames one of the account's passkeys. - Returns: whether it exists. - Throws: `StoreUnavailable`.
    func renamePasskey(userID: String, id: String, name: PasskeyName) throws -> Bool
    /// Deletes one of the account's passkeys. - Returns: it, or nil when the account has none with this id.
    /// - Throws: `StoreUnavailable`.
    func removePasskey(userID: String, id: String) throws -> PasskeyRecord?
    /// How many passkeys the account holds, and when it last said "Not now" to the offer.
    /// - Throws: `StoreUnavailable`.
    func passkeyOfferFacts(userID: String) throws -> (count: Int, skippedAt: Date?)
    /// Records "Not now" at `now`. - Throws: `StoreUnavailable`.
    func skipPasskeyOffer(userID: String, now: Date) throws
    /// How many passkeys the account holds (the admin API's and the console's count).
    /// - Throws: `StoreUnavailable`.
    func passkeyCount(userID: String) throws -> Int
}

/// Whether to offer "Create a passkey" after a sign-up or a password sign-in (docs/passkeys.md,
/// "Creating"): only to an account with no passkey that did not say "Not now" in the last 30 days.
public struct ShouldOfferPasskey: Sendable {
    let store: any PasskeyManagementStore

    /// - Parameter store: the account's passkey facts.
    public init(store: any PasskeyManagementStore) { self.store = store }

    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(userID: String, now: Date) throws -> Bool {
        let facts = try store.passkeyOfferFacts(userID: userID)
        guard facts.count == 0 else { return false }
        guard let skipped = facts.skippedAt else { return true }
        return now.timeIntervalSince(skipped) >= PasskeyRules.offerSkipSeconds
    }
}

/// Removing a passkey (docs/passkeys.md, "Managing"): only with a sign-in younger than 10 minutes.
public struct RemovePasskey: Sendable {
    /// The outcome.
    public enum Outcome: Sendable, Equatable {
        case removed(PasskeyRecord)
        /// The account has no passkey with this id.
        case notFound
        /// The browser session's sign-in is 10 minutes old or older: sign in again first.
        case signInTooOld
    }

    let store: any PasskeyManagementStore

    /// - Parameter store: the passkeys.
    public init(store: any PasskeyManagementStore) { self.store = store }

    /// - Parameters:
    ///   - authTime: when the browser session's person last authenticated.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(userID: String, id: String, authTime: Date, now: Date) throws -> Outcome {
        guard now.timeIntervalSince(authTime) < PasskeyRules.recentSignInSeconds else { return .signInTooOld }
        guard UUID(uuidString: id) != nil, let removed = try store.removePasskey(userID: userID, id: id) else { return .notFound }
        return .removed(removed)
    }
}

/// Every store protocol of passkeys, for a store that serves them all.
public typealias PasskeyStores = PasskeyRegistrationStore & PasskeySignInStore & PasskeyManagementStore
