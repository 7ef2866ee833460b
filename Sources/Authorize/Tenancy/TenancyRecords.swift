import Foundation

/// An environment as the server needs it: the project, its kind and session settings.
/// Source: docs/protocol.md#credentials, docs/protocol.md#sessions.
public struct EnvironmentRecord: Sendable, Equatable {
    /// The environment's id (a UUID).
    public let id: String
    /// The project it belongs to (a UUID).
    public let projectID: String
    /// The project's name (the app name the consent page shows).
    public let projectName: String
    /// Development (`pk_test_…`/`sk_test_…`) or production (`pk_live_…`/`sk_live_…`).
    public let kind: EnvironmentKind
    /// The OAuth `client_id`.
    public let publishableKey: String
    /// Days from authentication after which a session ends (1–90).
    public let sessionMaxAgeDays: Int
    /// Days without a refresh after which a session ends (1–30).
    public let sessionIdleDays: Int
    /// Minutes an access token lives (5–60).
    public let accessTokenTTLMinutes: Int
    /// Seconds an earlier refresh token keeps working after its rotation (0–60).
    public let refreshReuseGraceSeconds: Int
    /// The JWS algorithm of the environment's ID tokens (`idTokenSigningAlg`, docs/protocol.md, "OpenID
    /// Connect"); RS256 unless changed.
    public var idTokenSigningAlg: SigningAlgorithm = .rs256
    /// Whether a sign-in asks an unverified account for an emailed code after its password
    /// (`requireVerifiedEmail`, default false; docs/protocol.md, "Email verification").
    public let requireVerifiedEmail: Bool
    /// Whether every sign-in must start from a pushed authorization request
    /// (`requirePushedAuthorizationRequests`, default false; RFC 9126 §4; docs/protocol.md#pushed-requests).
    public var requirePushedAuthorizationRequests = false
    /// Whether the exchange and the refresh require a DPoP proof with a server nonce (`requireDPoP`,
    /// default false; RFC 9449; docs/dpop.md, "Requiring DPoP").
    public var requireDPoP = false

    /// Creates an environment record (stores build it from a row; tests from literals).
    public init(
        id: String, projectID: String, projectName: String, kind: EnvironmentKind, publishableKey: String, sessionMaxAgeDays: Int,
        sessionIdleDays: Int, accessTokenTTLMinutes: Int, refreshReuseGraceSeconds: Int, requireVerifiedEmail: Bool = false
    ) {
        self.requireVerifiedEmail = requireVerifiedEmail
        self.id = id
        self.projectID = projectID
        self.projectName = projectName
        self.kind = kind
        self.publishableKey = publishableKey
        self.sessionMaxAgeDays = sessionMaxAgeDays
        self.sessionIdleDays = sessionIdleDays
        self.accessTokenTTLMinutes = accessTokenTTLMinutes
        self.refreshReuseGraceSeconds = refreshReuseGraceSeconds
    }
}

extension EnvironmentKind {
    /// The prefix of this kind's publishable keys (docs/protocol.md#credentials).
    public var publishableKeyPrefix: String { self == .production ? "pk_live_" : "pk_test_" }
    /// The prefix of this kind's secret keys (docs/protocol.md#credentials).
    public var secretKeyPrefix: String { self == .production ? "sk_live_" : "sk_test_" }
}

/// A project as the operator's list shows it: no secret, only the publishable keys (which ship in apps).
public struct ProjectRecord: Sendable, Equatable {
    /// The project's id (a UUID).
    public let id: String
    /// The name given at creation (1–200 characters).
    public let name: String
    /// When the project was created.
    public let createdAt: Date
    /// The development environment's `pk_test_…`.
    public let developmentPublishableKey: String
    /// The production environment's `pk_live_…`.
    public let productionPublishableKey: String

    /// Creates a project record.
    public init(id: String, name: String, createdAt: Date, developmentPublishableKey: String, productionPublishableKey: String) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.developmentPublishableKey = developmentPublishableKey
        self.productionPublishableKey = productionPublishableKey
    }
}

/// A project domain: `verified` once ownership is proven (the token file, or the operator's mark).
public struct DomainRecord: Sendable, Equatable {
    /// The normalized host name (`DomainName`).
    public let domain: String
    /// The token to publish at `https://DOMAIN/.well-known/zevauth-domain-verification`.
    public let verificationToken: String
    /// When ownership was proven, or nil.
    public let verifiedAt: Date?
    /// Whether this server serves the domain's association files (set by the operator).
    public let hosted: Bool

    /// Creates a domain record.
    public init(domain: String, verificationToken: String, verifiedAt: Date?, hosted: Bool) {
        self.domain = domain
        self.verificationToken = verificationToken
        self.verifiedAt = verifiedAt
        self.hosted = hosted
    }

    /// The URL the verification token is fetched from.
    public var verificationURL: String { "https://\(domain)/.well-known/zevauth-domain-verification" }
}

/// Credentials of one environment at creation: the publishable key and the secret key's digest.
public struct NewEnvironmentKeys: Sendable, Equatable {
    /// The `pk_…` key (public: it ships in apps).
    public let publishableKey: String
    /// The lower-case hex SHA-256 of the `sk_…` key (the key itself is never stored).
    public let secretKeyHash: String
    /// The secret key's last 4 characters.
    public let secretKeySuffix: String

    /// Creates the stored form of an environment's first keys.
    public init(publishableKey: String, secretKeyHash: String, secretKeySuffix: String) {
        self.publishableKey = publishableKey
        self.secretKeyHash = secretKeyHash
        self.secretKeySuffix = secretKeySuffix
    }
}

/// A secret key of an environment, without the key (docs/protocol.md#admin-keys, docs/protocol.md#secret-keys).
public struct SecretKeyRecord: Sendable, Equatable {
    /// The key's id (a UUID).
    public let id: String
    /// The key's last 4 characters, to tell keys apart.
    public let suffix: String
    /// When it was created.
    public let createdAt: Date
    /// When it was revoked, or nil while it works.
    public let revokedAt: Date?

    /// Creates a secret-key record.
    public init(id: String, suffix: String, createdAt: Date, revokedAt: Date?) {
        self.id = id
        self.suffix = suffix
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// The environment's session settings, each optional in an update (nil keeps the current value).
public struct SessionSettingsUpdate: Sendable, Equatable {
    public var sessionMaxAgeDays: Int?
    public var sessionIdleDays: Int?
    public var accessTokenTTLMinutes: Int?
    public var refreshReuseGraceSeconds: Int?
    /// The ID tokens' algorithm, or nil to keep it.
    public var idTokenSigningAlg: SigningAlgorithm?
    /// `requireVerifiedEmail` (docs/protocol.md, "Email verification").
    public var requireVerifiedEmail: Bool?
    /// `requirePushedAuthorizationRequests` (docs/protocol.md#pushed-requests), or nil to keep it.
    public var requirePushedAuthorizationRequests: Bool?
    /// `requireDPoP` (docs/dpop.md, "Requiring DPoP"), or nil to keep it.
    public var requireDPoP: Bool?

    /// Creates an update; nil fields keep their value.
    public init(
        sessionMaxAgeDays: Int? = nil, sessionIdleDays: Int? = nil, accessTokenTTLMinutes: Int? = nil,
        refreshReuseGraceSeconds: Int? = nil, requireVerifiedEmail: Bool? = nil
    ) {
        self.requireVerifiedEmail = requireVerifiedEmail
        self.sessionMaxAgeDays = sessionMaxAgeDays
        self.sessionIdleDays = sessionIdleDays
        self.accessTokenTTLMinutes = accessTokenTTLMinutes
        self.refreshReuseGraceSeconds = refreshReuseGraceSeconds
    }
}

/// The outcome of revoking a secret key.
public enum SecretKeyRevocation: Sendable, Equatable {
    /// Revoked now, or already revoked.
    case revoked
    /// No key with this id in this environment.
    case notFound
    /// It is the environment's last live key; an environment never has none.
    case lastKey
}

/// One page of a list call (`{"items": […], "nextCursor": …}`, docs/protocol.md#admin-api).
public struct Page<Item: Sendable>: Sendable {
    /// At most `limit` items.
    public let items: [Item]
    /// The id of the last item when another page follows, else nil.
    public let nextCursor: String?

    /// Cuts `rows` (fetched with `limit + 1`) to a page: a row beyond `limit` means another page follows.
    public init(rows: [Item], limit: Int, id: (Item) -> String) {
        let page = Array(rows.prefix(limit))
        self.items = page
        self.nextCursor = rows.count > limit ? page.last.map(id) : nil
    }
}
