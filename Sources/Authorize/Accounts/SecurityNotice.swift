import Foundation

/// A message the server emails an account about the account itself (docs/protocol.md, "Security notices").
/// A notice carries no code and no link that signs in; its text names what happened and when.
public enum SecurityNotice: String, Sendable, Equatable, CaseIterable {
    /// The password was changed from the account page.
    case passwordChanged = "password_changed"
    /// The password was reset through "Forgot password?".
    case passwordReset = "password_reset"
    /// An authenticator app (TOTP) was enrolled.
    case mfaEnrolled = "mfa_enrolled"
    /// The authenticator app was removed (by the person or by the operator's MFA reset).
    case mfaRemoved = "mfa_removed"
    /// Someone signed in from a browser this account had not used before.
    case newBrowserSignIn = "new_browser_sign_in"
    /// Someone tried to sign up with this account's address (the sign-up page looks the same either way).
    case signUpAttempted = "sign_up_attempted"
    /// A change of the account's address to another one was asked for (sent to the old address).
    case emailChangeRequested = "email_change_requested"
    /// Code entry is locked for 24 hours after too many codes were ended by wrong attempts.
    case codeEntryLocked = "code_entry_locked"
    /// A passkey was removed from the account page (docs/passkeys.md, "Managing").
    case passkeyRemoved = "passkey_removed"
    /// A passkey's signature counter went backwards, so its sign-in was refused: it may have been copied
    /// (docs/passkeys.md, "Signing in").
    case passkeyCounterRegressed = "passkey_counter_regressed"
}

/// Queues security notices for an account's stored address. The queue is in PostgreSQL and retried, so
/// a mail relay that is down is not an error here.
public protocol SecurityNotices: Sendable {
    /// Queues `notice` for the account `userID` (its stored address, never a typed spelling).
    /// - Throws: `StoreUnavailable` when the database is out of reach.
    func queue(_ notice: SecurityNotice, userID: String, now: Date) throws
}
