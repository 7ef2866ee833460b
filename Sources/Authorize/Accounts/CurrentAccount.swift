import Foundation

/// What recognising a signed-in browser needs from storage.
public protocol CurrentAccountStore: Sendable {
    /// The live browser session whose cookie secret digests to `tokenHash`, with an open account.
    /// - Throws: `StoreUnavailable`.
    func browserSession(tokenHash: String) throws -> BrowserSessionRecord?
    /// The account with this id, open or closed. - Throws: `StoreUnavailable`.
    func user(id: String) throws -> UserRecord?
}

/// The account area's signed-in browser: its browser-session cookie names a live session of an open
/// account, else the browser is signed out (docs/protocol.md#accounts).
public struct CurrentAccount: Sendable {
    /// A signed-in browser.
    public struct SignedIn: Sendable, Equatable {
        public let session: BrowserSessionRecord
        public let user: UserRecord
    }

    let store: any CurrentAccountStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: browser sessions and accounts.
    ///   - secrets: digests the cookie secret for lookup.
    public init(store: any CurrentAccountStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Parameter token: the browser-session cookie's value, or nil when the browser sent none.
    /// - Returns: the session and its account, or nil when the browser is not signed in.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(token: String?) throws -> SignedIn? {
        guard let token, let session = try store.browserSession(tokenHash: secrets.digest(token)),
            let user = try store.user(id: session.userID), !user.closed
        else { return nil }
        return SignedIn(session: session, user: user)
    }
}
