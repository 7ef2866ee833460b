import Authorize
import Foundation

/// A registered redirect URI (docs/protocol.md#admin-callbacks).
public struct CallbackRecord: Sendable, Equatable {
    public let id: String
    public let uri: String
    public let kind: RedirectKind
    public let createdAt: Date
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
