import Foundation

/// A live access token as a resource server sees it (RFC 7662 §2.2).
public struct IntrospectedToken: Sendable, Equatable {
    public let sessionID: String
    public let userID: String
    /// The OAuth `client_id` the token was issued to: the web client's `zc_…` id for a web client's session,
    /// else the environment's publishable key (docs/protocol.md#introspect).
    public let clientID: String
    public let issuedAt: Date
    public let expiresAt: Date
    /// The `jkt` of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6.2), or nil.
    public var dpopThumbprint: String? = nil

    public init(sessionID: String, userID: String, clientID: String, issuedAt: Date, expiresAt: Date) {
        self.sessionID = sessionID
        self.userID = userID
        self.clientID = clientID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// Why a session was revoked, as stored in `revoked_reason`.
public enum RevocationReason: String, Sendable, Equatable {
    /// The app signed the person out (docs/protocol.md#revoke, RFC 7009).
    case signedOut = "signed_out"
}

/// The store port of revocation (docs/protocol.md#revoke).
public protocol RevokeStore: Sendable {
    /// The id of the environment whose publishable key this is, or nil.
    /// - Throws: `StoreUnavailable`.
    func environmentID(publishableKey: String) throws -> String?
    /// Revokes the session that issued `tokenHash` (an access or refresh token of any generation) when it
    /// belongs to `environmentID`.
    /// - Returns: whether a live session was revoked (never told to the client, RFC 7009 §2.2).
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    func revokeSession(environmentID: String, tokenHash: String, reason: RevocationReason, now: Date) throws -> Bool
}

/// `POST /v1/auth/session/revoke` and `POST /oauth2/revoke`: ends the session a token belongs to.
public struct Revoke: Sendable {
    let store: any RevokeStore
    let secrets: any Secrets
    let settle: SettleWindow

    /// - Parameter settle: how long an in-doubt revocation settles itself (`.off`: 503 at once).
    public init(store: any RevokeStore, secrets: any Secrets, settle: SettleWindow = .off) {
        self.store = store
        self.secrets = secrets
        self.settle = settle
    }

    /// Ends the session that issued `token` when it is this environment's; anything else (another
    /// environment's token, an unknown one, a string that is no token) is ignored (RFC 7009 §2.2).
    /// In doubt, it runs again within the settle window: a revocation that landed changes nothing the
    /// second time, so there is nothing to look up.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(token: String, environmentID: String, now: Date) throws {
        guard token.hasPrefix("zat_") || token.hasPrefix("zrt_") else { return }
        let tokenHash = secrets.digest(token)
        _ = try Settle.run(
            window: settle,
            write: { try store.revokeSession(environmentID: environmentID, tokenHash: tokenHash, reason: .signedOut, now: now) },
            lookup: { () -> Bool? in nil })
    }
}

/// The store port of introspection (docs/protocol.md#introspect, RFC 7662).
public protocol IntrospectStore: Sendable {
    /// The id of the environment with a live secret key of this digest, or nil (the caller's credential).
    /// - Throws: `StoreUnavailable`.
    func environmentID(secretKeyHash: String) throws -> String?
    /// A live access token of `environmentID`: unexpired, its session unrevoked and inside both windows,
    /// the account open; nil for anything else, including another environment's token.
    /// - Throws: `StoreUnavailable`.
    func introspect(environmentID: String, accessTokenHash: String, now: Date) throws -> IntrospectedToken?
}

/// `POST /oauth2/introspect`'s lookup: whether a token is a live access token of the calling environment.
public struct Introspect: Sendable {
    let store: any IntrospectStore
    let secrets: any Secrets

    public init(store: any IntrospectStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Returns: the token's facts when it is live and this environment's, else nil (`active: false`).
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(token: String, environmentID: String, now: Date) throws -> IntrospectedToken? {
        guard token.hasPrefix("zat_") else { return nil }
        return try store.introspect(environmentID: environmentID, accessTokenHash: secrets.digest(token), now: now)
    }
}

/// The store port of the current-session call (docs/protocol.md#current-session).
public protocol CurrentSessionStore: Sendable {
    /// A live session by its access token, with its windows and account; nil when the token is unknown,
    /// expired, revoked, past a window, or the account is closed.
    /// - Throws: `StoreUnavailable`.
    func session(accessTokenHash: String, now: Date) throws -> IssuedSession?
}

/// `GET /v1/auth/session`: the session a bearer access token belongs to.
public struct CurrentSession: Sendable {
    let store: any CurrentSessionStore
    let secrets: any Secrets

    public init(store: any CurrentSessionStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Returns: the live session, or nil (401 `invalid_token`).
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(accessToken: String, now: Date) throws -> IssuedSession? {
        guard accessToken.hasPrefix("zat_") else { return nil }
        return try store.session(accessTokenHash: secrets.digest(accessToken), now: now)
    }
}
