import Foundation

/// What the server reads from an `id_token_hint` (OpenID Connect Core 1.0 §3.1.2.1; RP-Initiated Logout
/// 1.0 §2): an ID token this server signed, expired or not. Only these claims are used.
public struct IDTokenHint: Sendable, Equatable {
    /// `sub`: the account's id.
    public let subject: String
    /// `aud`: the client ids (publishable keys) the token was issued to.
    public let audience: [String]
    /// `sid`: the app session the token was issued with, when present.
    public let sessionID: String?
    /// `iat`.
    public let issuedAt: Date
    /// `exp` (the hint is honoured after it too).
    public let expiresAt: Date

    /// A hint from its claims.
    public init(subject: String, audience: [String], sessionID: String?, issuedAt: Date, expiresAt: Date) {
        self.subject = subject
        self.audience = audience
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// Reads an `id_token_hint`: verifies the compact JWS against this server's signing keys and returns its
/// claims.
public protocol IDTokenHintReader: Sendable {
    /// The hint's claims, or `nil` when `compact` is not a JWS compact serialization, is not signed by a
    /// next, current or retired (never a revoked) key of this server with that key's own algorithm
    /// (`alg: none`, HS256 and any mismatch are refused), or names another `iss`. Expiry is not checked: a
    /// hint may be an expired ID token. A malformed hint is ignored as a hint, never an error.
    func read(_ compact: String) -> IDTokenHint?
}
