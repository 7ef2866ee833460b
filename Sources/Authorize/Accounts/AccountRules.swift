/// A new password as chosen by a person or an operator, checked once at the edge against the one password
/// rule (NIST SP 800-63B §5.1.1.2; docs/protocol.md#accounts, docs/decisions.md): at least 10 characters,
/// at most 1024 bytes of UTF-8, not one of the 1,000 most common passwords (`CommonPasswords`). Nothing else is required of it (no composition rules).
public struct NewPassword: Sendable, Equatable {
    /// The password as typed. Never logged, never stored: only its Argon2id hash is.
    public let text: String

    /// The fewest characters (extended grapheme clusters) a password may have.
    public static let minimumCharacters = 10
    /// The most UTF-8 bytes a password may have (also the longest the sign-in ever verifies).
    public static let maximumBytes = 1024

    /// Why a password is refused.
    public enum Problem: Error, Sendable, Equatable {
        case tooShort
        case tooLong
        /// On the list of the 1,000 most common passwords (`CommonPasswords`).
        case common

        /// What follows the field's name (`password must be …`), a phrase without the password.
        public var explanation: String {
            switch self {
            case .tooShort: "must be at least \(NewPassword.minimumCharacters) characters"
            case .tooLong: "must be at most \(NewPassword.maximumBytes) bytes"
            case .common: "is one of the most common passwords; choose one that is harder to guess"
            }
        }
    }

    /// Checks `text` against the rule.
    /// - Returns: the password, or the rule it breaks (too short first).
    public static func parse(_ text: String) -> Result<NewPassword, Problem> {
        if text.count < minimumCharacters { return .failure(.tooShort) }
        if text.utf8.count > maximumBytes { return .failure(.tooLong) }
        if CommonPasswords.contains(text) { return .failure(.common) }
        return .success(NewPassword(text: text))
    }

    private init(text: String) { self.text = text }
}

/// Rules for ZevID accounts.
public enum AccountRules {
    /// The password rule (`NewPassword.parse`), as the phrase that follows the field's name.
    /// - Returns: what is wrong, or nil.
    public static func passwordProblem(_ password: String) -> String? {
        if case .failure(let problem) = NewPassword.parse(password) { return problem.explanation }
        return nil
    }

    /// How long a sign-in may wait for its second factor, in seconds.
    public static let mfaChallengeLifetimeSeconds: Double = 600

    /// How long the browser-session cookie is kept, in seconds: the longest session window (90 days), so
    /// the person is recognised on the next sign-in.
    public static let browserSessionCookieSeconds = 90 * 86_400

    /// The prefix of a ZevID browser-session cookie's secret.
    public static let browserSessionTokenPrefix = "zbs_"
}
