import Authorize
import Foundation

/// A registered redirect URI (docs/protocol.md#admin-callbacks).
public struct CallbackRecord: Sendable, Equatable {
    public let id: String
    public let uri: String
    /// `link`, `custom_scheme` or `loopback`.
    public let kind: String
    public let createdAt: Date
}

/// A pending sign-in (lives 10 minutes, bound to the browser that started it).
public struct AuthorizationRequestRecord: Sendable, Equatable {
    public let id: String
    public let environmentID: String
    public let redirectURI: String
    /// `link`, `custom_scheme` or `loopback`.
    public let redirectKind: String
    public let state: String
    public let codeChallenge: String
    public let promptLogin: Bool
    public let loginHint: String?
    public let browserBindingHash: String
    /// The ZevID browser session this sign-in is authenticated by, once it is.
    public let browserSessionID: String?
    public let expiresAt: Date
    public let completedAt: Date?
    /// Whether `/oauth2/authorize` started it (its redirected errors use the RFC spelling).
    public let standardEndpoint: Bool
}

/// What an exchange or refresh hands back: the session's windows and the safe user fields.
public struct IssuedSession: Sendable, Equatable {
    public let sessionID: String
    public let accessExpiresAt: Date
    /// Absolute end: authentication time + the environment's maximum age.
    public let expiresAt: Date
    /// End if not refreshed: last refresh + the environment's idle window, never after `expiresAt`.
    public let idleExpiresAt: Date
    public let user: UserRecord
}

/// The outcome of one exchange statement (docs/protocol.md#exchange-row-1,
/// docs/protocol.md#exchange-row-3, docs/protocol.md#exchange-consumption).
public enum ExchangeOutcome: Sendable, Equatable {
    /// Row 1: no environment has this publishable key.
    case unknownClient
    /// The client's failed-exchange counter is at its threshold; no code was touched.
    case rateLimited
    /// Row 3: the code is unknown, expired, already used, or issued to another environment.
    /// `revokedReplay` is true when this presentation was a valid replay that revoked the session.
    case invalidGrant(revokedReplay: Bool)
    /// This attempt consumed the code. `issuedRedirectURI` and `codeChallenge` are the start's, for rows
    /// 4–6; `session` is set when those rows passed in SQL and the account is open.
    case consumed(issuedRedirectURI: String, codeChallenge: String, session: IssuedSession?)
}
