import Foundation

/// What signing out of one browser needs from storage.
public protocol SignOutStore: Sendable {
    /// Ends the browser session and revokes only the app sessions made from it, in one transaction.
    /// - Returns: the number of app sessions revoked. - Throws: `StoreUnavailable`.
    func endBrowserSession(id: String, now: Date) throws -> Int
}

/// `Sign out of this browser` (docs/protocol.md#session-ends): this ZevID browser session ends, and with it
/// the app sessions signed in from it; other browsers and their apps stay signed in.
public struct SignOut: Sendable {
    let store: any SignOutStore

    /// - Parameter store: browser sessions.
    public init(store: any SignOutStore) { self.store = store }

    /// - Returns: the number of app sessions revoked. - Throws: `StoreUnavailable`.
    @discardableResult
    public func callAsFunction(browserSessionID: String, now: Date) throws -> Int {
        try store.endBrowserSession(id: browserSessionID, now: now)
    }
}

/// What signing out everywhere needs from storage.
public protocol SignOutEverywhereStore: Sendable {
    /// Ends every browser session, app session and pending second-factor challenge of the person, in one
    /// transaction. - Throws: `StoreUnavailable`.
    func signOutEverywhere(userID: String, now: Date) throws
}

/// `Sign out everywhere` (docs/protocol.md#session-ends): every ZevID browser session and every app session
/// of the person, in every project.
public struct SignOutEverywhere: Sendable {
    let store: any SignOutEverywhereStore

    /// - Parameter store: accounts and sessions.
    public init(store: any SignOutEverywhereStore) { self.store = store }

    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(userID: String, now: Date) throws {
        try store.signOutEverywhere(userID: userID, now: now)
    }
}

/// What removing a connected app needs from storage.
public protocol RemoveConnectedAppStore: Sendable {
    /// Revokes the person's sessions with `app` and forgets its remembered consent, in one transaction:
    /// for an environment, its native apps' sessions and the environment's consent; for a web client, the
    /// client's sessions and every scope set of its remembered consent (sql/026 `web_client_consents`).
    /// - Returns: the number of sessions revoked (0 for an id that names no environment or client).
    /// - Throws: `StoreUnavailable`.
    func removeApp(userID: String, app: ConnectedAppID, now: Date) throws -> Int
}

/// `Remove` on a connected app (docs/protocol.md#connected-apps): the person's sessions with that app end
/// and the next sign-in to it asks for consent again, so `prompt=none` answers `consent_required`.
public struct RemoveConnectedApp: Sendable {
    let store: any RemoveConnectedAppStore

    /// - Parameter store: sessions and consents.
    public init(store: any RemoveConnectedAppStore) { self.store = store }

    /// - Returns: the number of sessions revoked. - Throws: `StoreUnavailable`.
    @discardableResult
    public func callAsFunction(userID: String, app: ConnectedAppID, now: Date) throws -> Int {
        try store.removeApp(userID: userID, app: app, now: now)
    }
}
