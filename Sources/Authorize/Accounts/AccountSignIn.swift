import Foundation

/// What the password check needs from storage.
public protocol AccountSignInStore: Sendable {
    /// The account whose address key is `emailKey` (`EmailAddress.key`), open or closed, or nil.
    /// - Throws: `StoreUnavailable`.
    func user(emailKey: String) throws -> UserRecord?
}

/// The password check of every sign-in (the app's hosted sign-in, the account area's, and a signed-in
/// person confirming their password), after the edge counted the attempt against its rate limits
/// (docs/protocol.md#rate-limits): Argon2id against the account's hash; an unknown or closed account costs
/// one dummy verification, so neither the answer nor its timing tells which accounts exist.
public struct AccountSignIn: Sendable {
    /// The answer, one for every failure.
    public enum Outcome: Sendable, Equatable {
        case verified(UserRecord)
        /// Wrong email or password, a closed account, or (with `expectedAccount`) another account.
        case wrong
    }

    let store: any AccountSignInStore
    let passwords: any PasswordHashingPort

    /// - Parameters:
    ///   - store: where accounts live.
    ///   - passwords: Argon2id.
    public init(store: any AccountSignInStore, passwords: any PasswordHashingPort) {
        self.store = store
        self.passwords = passwords
    }

    /// Checks `password` for the account of `email`.
    /// - Parameter expectedAccount: when set (a signed-in person confirming their password), the address
    ///   must lead to this account id, else the answer is `.wrong`.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(email: EmailAddress, password: String, expectedAccount: String? = nil) throws -> Outcome {
        let user = try store.user(emailKey: email.key)
        let matches: Bool
        // A self-sign-up whose address was never verified cannot sign in (docs/protocol.md, "Sign-up").
        // An account without a password (made by an upstream sign-in) costs the same dummy verification.
        if let user, !user.closed, user.hasPassword, !(user.selfSignedUp && !user.emailVerified),
            password.utf8.count <= NewPassword.maximumBytes
        {
            matches = passwords.verify(password, against: user.passwordHash)
        } else {
            passwords.verifyDummy(password)
            matches = false
        }
        guard let user, matches, !(user.selfSignedUp && !user.emailVerified), expectedAccount == nil || expectedAccount == user.id else {
            return .wrong
        }
        return .verified(user)
    }
}
