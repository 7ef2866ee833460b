import Foundation

/// The console as an OpenID client of its own deployment (docs/console.md, "Signing in"): a built-in
/// first-party client whose `client_id` is `console`, whose one redirect URI is `ISSUER/console/callback`,
/// exempt from link verification and from consent.
public enum ConsoleClient {
    /// The console's `client_id` (the publishable key of the deployment-owned environment, sql/019).
    public static let clientID = "console"
    /// The path of the console's one redirect URI.
    public static let callbackPath = "/console/callback"

    /// The console's redirect URI for `issuer` (an origin with no trailing slash).
    public static func callbackURI(issuer: String) -> String { issuer + callbackPath }
}

/// A console session as stored (sql/019): the digest of its cookie secret, the account, and when it was
/// created, last used and authenticated.
public struct ConsoleSessionRecord: Sendable, Equatable {
    public let idHash: String
    public let userID: String
    public let createdAt: Date
    public let lastSeenAt: Date
    /// When the person last authenticated (the ID token's `auth_time`), which a sensitive action checks.
    public let authTime: Date

    public init(idHash: String, userID: String, createdAt: Date, lastSeenAt: Date, authTime: Date) {
        self.idHash = idHash
        self.userID = userID
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.authTime = authTime
    }
}

/// The console session rules (docs/console.md, "Signing in"): 12 hours at most from the sign-in, 1 hour
/// idle; creating secret keys, rotating or revoking signing keys and changing members need an
/// authentication no older than 10 minutes (OpenID Connect's `max_age=600`).
public enum ConsoleSessionPolicy {
    /// Seconds a console session lasts at most, from its sign-in.
    public static let absoluteSeconds: Double = 12 * 3600
    /// Seconds without a request after which a console session ends.
    public static let idleSeconds: Double = 3600
    /// Seconds an authentication counts as recent for a sensitive action (the `max_age` the console asks).
    public static let recentAuthenticationSeconds = 600

    /// Whether the session is still live at `now`.
    public static func isLive(_ session: ConsoleSessionRecord, now: Date) -> Bool {
        now < session.createdAt.addingTimeInterval(absoluteSeconds) && now < session.lastSeenAt.addingTimeInterval(idleSeconds)
    }

    /// Whether the session's authentication is recent enough for a sensitive action at `now`.
    public static func isRecent(_ session: ConsoleSessionRecord, now: Date) -> Bool {
        now.timeIntervalSince(session.authTime) <= Double(recentAuthenticationSeconds)
    }

    /// Whether an account must enrol TOTP before using the console: operators and project owners must
    /// (docs/console.md, "Signing in").
    public static func mustEnrolTOTP(isOperator: Bool, memberships: [Membership], totpEnabled: Bool) -> Bool {
        !totpEnabled && (isOperator || memberships.contains { $0.role == .owner })
    }
}

/// What the console's sessions need from storage.
public protocol ConsoleSessionStore: Sendable {
    /// Records a new console session.
    /// - Throws: `StoreUnavailable`.
    func createConsoleSession(_ session: ConsoleSessionRecord) throws
    /// The session whose cookie secret digests to `idHash`, when its account is open.
    /// - Throws: `StoreUnavailable`.
    func consoleSession(idHash: String) throws -> ConsoleSessionRecord?
    /// Marks the session used at `now`.
    /// - Throws: `StoreUnavailable`.
    func touchConsoleSession(idHash: String, now: Date) throws
    /// Ends the session (sign-out, or found expired).
    /// - Throws: `StoreUnavailable`.
    func deleteConsoleSession(idHash: String) throws
}
