import Foundation

/// What changing a password needs from storage.
public protocol ChangePasswordStore: Sendable {
    /// Sets the new hash, ends every browser and app session and pending second-factor challenge of the
    /// person, and starts a browser session under `newBrowserSessionTokenHash`, in one transaction.
    /// - Returns: the new browser session's id. - Throws: `StoreUnavailable`.
    func changePassword(userID: String, passwordHash: String, newBrowserSessionTokenHash: String, now: Date) throws -> String
}

/// A signed-in person changes their password, after the edge verified the current one (`AccountSignIn`
/// with `expectedAccount`) and parsed the new one (`NewPassword`): every session ends
/// (docs/protocol.md#session-ends) and this browser gets a fresh browser session.
public struct ChangePassword: Sendable {
    let store: any ChangePasswordStore
    let passwords: any PasswordHashingPort
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: accounts and sessions.
    ///   - passwords: Argon2id.
    ///   - secrets: mints the new cookie secret and digests it.
    public init(store: any ChangePasswordStore, passwords: any PasswordHashingPort, secrets: any Secrets) {
        self.store = store
        self.passwords = passwords
        self.secrets = secrets
    }

    /// - Returns: the new browser-session cookie's secret.
    /// - Throws: `StoreUnavailable`, or what hashing or the CSPRNG throw.
    public func callAsFunction(userID: String, newPassword: NewPassword, now: Date) throws -> String {
        let token = try secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        _ = try store.changePassword(
            userID: userID, passwordHash: try passwords.hash(newPassword.text), newBrowserSessionTokenHash: secrets.digest(token),
            now: now)
        return token
    }
}
