import Foundation

/// A pending sign-in (lives 10 minutes, bound to the browser that started it; docs/protocol.md#pending-sign-in).
public struct AuthorizationRequestRecord: Sendable, Equatable {
    public let id: String
    public let environmentID: String
    /// The redirect URI the start accepted (as requested, loopback with its port), stored parsed.
    public let redirect: RedirectURI
    public let state: String
    public let codeChallenge: String
    public let promptLogin: Bool
    public let loginHint: String?
    /// SHA-256 hex of the browser binding secret the pending sign-in belongs to.
    public let browserBindingHash: String
    /// The ZevID browser session this sign-in is authenticated by, once it is.
    public let browserSessionID: String?
    public let expiresAt: Date
    public let completedAt: Date?
    /// Whether `/oauth2/authorize` started it (its redirected errors use the RFC spelling).
    public let standardEndpoint: Bool
    /// `prompt=consent`: show the consent page even when consent is remembered (OpenID Connect Core
    /// §3.1.2.1; sql/014).
    public var promptConsent = false
    /// The web client the sign-in is for (sql/026); nil for the environment's native apps.
    public var webClientID: String?
    /// The scope the start granted (its remembered consent is per scope set for a web client).
    public var scope: GrantedScope = .none
    /// `response_mode=form_post`: the answer goes back as an auto-submitting form (sql/026).
    public var formPost = false

    /// A stored pending sign-in.
    public init(
        id: String, environmentID: String, redirect: RedirectURI, state: String, codeChallenge: String, promptLogin: Bool,
        loginHint: String?, browserBindingHash: String, browserSessionID: String?, expiresAt: Date, completedAt: Date?,
        standardEndpoint: Bool
    ) {
        self.id = id
        self.environmentID = environmentID
        self.redirect = redirect
        self.state = state
        self.codeChallenge = codeChallenge
        self.promptLogin = promptLogin
        self.loginHint = loginHint
        self.browserBindingHash = browserBindingHash
        self.browserSessionID = browserSessionID
        self.expiresAt = expiresAt
        self.completedAt = completedAt
        self.standardEndpoint = standardEndpoint
    }
}

/// What the hosted sign-in's pages need between the start and consent.
public protocol PendingSignInStore: Sendable {
    /// A pending sign-in by id, whatever its state. - Throws: `StoreUnavailable`.
    func authorizationRequest(id: String) throws -> AuthorizationRequestRecord?
    /// The environment a pending sign-in belongs to. - Throws: `StoreUnavailable`.
    func environment(id: String) throws -> EnvironmentRecord?
    /// Moves a live pending sign-in to the browser binding minted when the person authenticated, and
    /// attaches the browser session that authenticated it (nil while a second factor is due).
    /// - Throws: `StoreUnavailable`.
    func rebindAuthorizationRequest(requestID: String, browserBindingHash: String, browserSessionID: String?) throws
    /// The live browser session whose cookie secret digests to `tokenHash`. - Throws: `StoreUnavailable`.
    func browserSession(tokenHash: String) throws -> BrowserSessionRecord?
    /// Whether the person consented to this environment's app before. - Throws: `StoreUnavailable`.
    func hasConsent(userID: String, environmentID: String) throws -> Bool
    /// The account by id. - Throws: `StoreUnavailable`.
    func user(id: String) throws -> UserRecord?
    /// The platforms (`ios`, `android`) with a verified link in this environment, for naming the app.
    /// - Throws: `StoreUnavailable`.
    func verifiedPlatforms(environmentID: String) throws -> Set<String>
}

/// Loading a pending sign-in for one of its pages (docs/protocol.md#pending-sign-in): it must exist, be
/// live (not completed, not expired) and belong to the browser presenting it — the digest of the browser's
/// binding secret equals the one the start recorded, compared in constant time.
public struct LoadPendingSignIn: Sendable {
    /// What a page may do with the id it was given.
    public enum Loaded: Sendable, Equatable {
        /// No such pending sign-in (or its environment is gone).
        case unknown
        /// Completed or expired.
        case over
        /// Another browser started it (or this one holds no binding).
        case otherBrowser
        /// Live and this browser's.
        case live(AuthorizationRequestRecord, EnvironmentRecord)
    }

    let store: any PendingSignInStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: pending sign-ins and their environment.
    ///   - secrets: digests the binding secret; compares in constant time.
    public init(store: any PendingSignInStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Parameters:
    ///   - id: the id the page was given (any text; a non-UUID is unknown).
    ///   - binding: this browser's binding secret (its cookie), or nil.
    ///   - now: the request's time.
    /// - Throws: `StoreUnavailable`.
    public func load(id: String?, binding: String?, now: Date) throws -> Loaded {
        guard let id, let record = try store.authorizationRequest(id: id),
            let environment = try store.environment(id: record.environmentID)
        else { return .unknown }
        guard record.completedAt == nil, record.expiresAt > now else { return .over }
        guard let binding,
            secrets.constantTimeEquals(Array(secrets.digest(binding).utf8), Array(record.browserBindingHash.utf8))
        else { return .otherBrowser }
        return .live(record, environment)
    }
}

/// The browser binding ids the server minted (docs/threat-model.md, "Planted browser cookies").
public protocol BrowserBindingStore: Sendable {
    /// Records a binding id the server just minted, by its digest. - Throws: `StoreUnavailable`.
    func recordBrowserBinding(bindingHash: String, now: Date, lifetimeSeconds: Double) throws
    /// Whether a binding id with this digest was minted here and is on record until at least `until`.
    /// - Throws: `StoreUnavailable`.
    func isBrowserBindingOnRecord(bindingHash: String, until: Date) throws -> Bool
}

/// Whether the database accepts statements now (`/readyz`).
public protocol ReadinessProbe: Sendable {
    /// True when PostgreSQL answers.
    func isReady() -> Bool
}
