import Authorize
import Foundation

/// An environment as the server needs it: the project, its kind and session settings.
/// Source: docs/protocol.md#credentials, docs/protocol.md#sessions.
public struct EnvironmentRecord: Sendable, Equatable {
    public let id: String
    public let projectID: String
    public let projectName: String
    /// `development` or `production`.
    public let kind: String
    public let publishableKey: String
    /// Days from authentication after which a session ends (1–90).
    public let sessionMaxAgeDays: Int
    /// Days without a refresh after which a session ends (1–30).
    public let sessionIdleDays: Int
    /// Minutes an access token lives (5–60).
    public let accessTokenTTLMinutes: Int
    /// Seconds an earlier refresh token keeps working after its rotation (0–60).
    public let refreshReuseGraceSeconds: Int
}

/// A ZevID account's safe fields plus what sign-in needs. `passwordHash` never leaves the server.
public struct UserRecord: Sendable, Equatable {
    public let id: String
    public let email: String
    public let name: String
    public let imageURL: String?
    public let passwordHash: String
    public let closed: Bool
}

/// A registered redirect URI (docs/protocol.md#admin-callbacks).
public struct CallbackRecord: Sendable, Equatable {
    public let id: String
    public let uri: String
    public let kind: RedirectKind
    public let createdAt: Date
}

/// A project domain: `verified` once ownership is proven (in this release: marked by the operator).
public struct DomainRecord: Sendable, Equatable {
    public let domain: String
    public let verificationToken: String
    public let verifiedAt: Date?
    public let hosted: Bool
}

/// A pending sign-in (lives 10 minutes, bound to the browser that started it).
public struct AuthorizationRequestRecord: Sendable, Equatable {
    public let id: String
    public let environmentID: String
    /// The redirect URI the start accepted (as requested, loopback with its port), stored parsed.
    public let redirect: RedirectURI
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

/// A ZevID browser session with its account.
public struct BrowserSessionRecord: Sendable, Equatable {
    public let id: String
    public let userID: String
    /// When the person last entered their password in this browser.
    public let authTime: Date
    public let ended: Bool
}
