import Foundation

/// The safe fields of a ZevID account that an app sees (docs/protocol.md#exchange-success): never the
/// password hash or anything else the server keeps for itself.
public struct SessionUser: Sendable, Equatable {
    /// The account's id (a UUID).
    public let id: String
    public let email: String
    public let name: String
    /// An absolute URL, or nil when the account has no image (`imageUrl: null` on the wire).
    public let imageURL: String?

    public init(id: String, email: String, name: String, imageURL: String?) {
        self.id = id
        self.email = email
        self.name = name
        self.imageURL = imageURL
    }
}

/// What an exchange, a refresh or the current-session call hands back: the session's windows and the
/// account's safe fields (docs/protocol.md#session-windows).
public struct IssuedSession: Sendable, Equatable {
    public let sessionID: String
    /// When the access token this call issued (or was called with) expires.
    public let accessExpiresAt: Date
    /// Absolute end: authentication time + the environment's maximum age.
    public let expiresAt: Date
    /// End if not refreshed: last refresh + the environment's idle window, never after `expiresAt`.
    public let idleExpiresAt: Date
    public let user: SessionUser
    /// What the session was granted (scope, nonce on the exchange, `amr`, `auth_time`), for its ID token.
    public var grant: SessionGrant
    /// The `jkt` of the DPoP key the session's tokens are bound to (docs/dpop.md, "Binding"), or nil for
    /// bearer tokens.
    public var dpopThumbprint: String?

    public init(
        sessionID: String, accessExpiresAt: Date, expiresAt: Date, idleExpiresAt: Date, user: SessionUser,
        grant: SessionGrant = .plain
    ) {
        self.sessionID = sessionID
        self.accessExpiresAt = accessExpiresAt
        self.expiresAt = expiresAt
        self.idleExpiresAt = idleExpiresAt
        self.user = user
        self.grant = grant
    }

    /// A session's windows from its stored times and the environment's settings, in days
    /// (docs/protocol.md#session-windows): `expiresAt` = auth time + max age; `idleExpiresAt` = last refresh
    /// + idle window, capped at `expiresAt`.
    public static func windows(authTime: Date, lastRefreshedAt: Date, maxAgeDays: Int, idleDays: Int) -> (
        expiresAt: Date, idleExpiresAt: Date
    ) {
        let expiresAt = authTime.addingTimeInterval(Double(maxAgeDays) * 86_400)
        return (expiresAt, min(expiresAt, lastRefreshedAt.addingTimeInterval(Double(idleDays) * 86_400)))
    }
}

/// A failure-counted rate limit checked inside the grant's own statement (`rate_limit_counters`), so a
/// grant's common path is one statement (docs/protocol.md#rate-limits, docs/performance.md).
public struct FailureGate: Sendable, Equatable {
    /// The counter's bucket (the `bucket` column, e.g. `exchange_failure_address`).
    public let bucket: String
    /// The counted key (the client address).
    public let key: String
    /// The start of the current fixed window.
    public let windowStart: Date
    /// The count at which the client is refused.
    public let threshold: Int

    public init(bucket: String, key: String, windowStart: Date, threshold: Int) {
        self.bucket = bucket
        self.key = key
        self.windowStart = windowStart
        self.threshold = threshold
    }
}

/// What a token grant (an exchange or a refresh) decided: a new pair, or why not. The edge renders it
/// on ZevAuth's surface or the standard token endpoint's (RFC 6749 §5.1/§5.2).
public enum GrantOutcome: Sendable, Equatable {
    /// No environment has this publishable key (docs/protocol.md#exchange-row-1).
    case invalidClient
    /// The client's failure counter is at its threshold; nothing was touched.
    case rateLimited
    /// Refused with this error (its code and sentence).
    case refused(OAuthError)
    /// A new pair for `session`. The tokens are the only copies; the store holds their digests.
    case issued(IssuedSession, accessToken: String, refreshToken: String)
}
