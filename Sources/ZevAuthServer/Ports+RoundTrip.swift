import Authorize
import Foundation
import PostgresStore

/// The store ports of the round trip and sessions (exchange, refresh, revoke, introspect, current session,
/// rate limits): one existential per use case's protocol, so handlers can be tested in process with fakes
/// (Tests/ZevAuthTesting/Fakes+RoundTrip.swift).
public struct RoundTripPorts: Sendable {
    /// The start's client read and its one-statement write (`Start`).
    public var start: any StartStore
    /// Issuing the code or ending the pending sign-in (`Consent`).
    public var consent: any ConsentStore
    /// The one-statement exchange (`Exchange`).
    public var exchange: any ExchangeStore
    /// The one-statement refresh (`Refresh`).
    public var refresh: any RefreshStore
    /// Revocation (`Revoke`).
    public var revoke: any RevokeStore
    /// Introspection (`Introspect`).
    public var introspect: any IntrospectStore
    /// The current session (`CurrentSession`).
    public var currentSession: any CurrentSessionStore
    /// The rate-limit counters (`RateLimiter`).
    public var rateLimits: any RateLimitStore
    /// The hosted pages' pending sign-ins (`LoadPendingSignIn`).
    public var pendingSignIns: any PendingSignInStore
    /// The browser binding ids on record (`BrowserBinding`).
    public var browserBindings: any BrowserBindingStore
    /// The registered callbacks (`RegisterCallback`, the callback admin calls).
    public var callbacks: any CallbackStore
    /// `/readyz`.
    public var readiness: any ReadinessProbe
    /// Reads `id_token_hint`s against the signing keys (docs/protocol.md, OpenID Connect).
    public var idTokenHints: any IDTokenHintReader = NoIDTokenHints()
    /// Signs ID tokens with the current key (docs/protocol.md, OpenID Connect).
    public var idTokenSigner: any IDTokenSigner = NoSigningKeys()
    /// The pushed authorization requests (`PushAuthorizationRequest`, `Start`; RFC 9126).
    public var pushedRequests: any PushedRequestStore = UnavailableStores()
    /// RP-initiated logout's app session named by a hint's `sid` (`LogoutStore`).
    public var logout: any LogoutStore = UnavailableStores()
    /// A DPoP proof's single use at a resource (`DPoPProofUseStore`; docs/dpop.md).
    public var dpopProofUses: any DPoPProofUseStore = UnavailableStores()
    /// The signing keys behind the JWKS and the operator's key calls (nil: those answer 503).
    public var signingKeys: SigningKeyRing?
    /// The native token exchange's client, providers and one-statement session (`TokenExchangeHandler`).
    public var tokenExchange: any TokenExchangeStore = UnavailableStores()

    /// Ports over explicit stores (fakes in tests).
    public init(
        start: any StartStore, consent: any ConsentStore, exchange: any ExchangeStore, refresh: any RefreshStore, revoke: any RevokeStore,
        introspect: any IntrospectStore,
        currentSession: any CurrentSessionStore, rateLimits: any RateLimitStore,
        pendingSignIns: any PendingSignInStore = UnavailableStores(), browserBindings: any BrowserBindingStore = UnavailableStores(),
        callbacks: any CallbackStore = UnavailableStores(), readiness: any ReadinessProbe = UnavailableStores()
    ) {
        self.start = start
        self.consent = consent
        self.exchange = exchange
        self.refresh = refresh
        self.revoke = revoke
        self.introspect = introspect
        self.currentSession = currentSession
        self.rateLimits = rateLimits
        self.pendingSignIns = pendingSignIns
        self.browserBindings = browserBindings
        self.callbacks = callbacks
        self.readiness = readiness
    }

    /// Every port of this area backed by PostgreSQL. With `encryptionKey`, ID tokens are signed and
    /// `id_token_hint`s verified with the signing keys in PostgreSQL (`SigningKeyRing`, one shared set for
    /// every instance); without it, no ID token can be signed and every hint is ignored.
    public init(_ store: PostgresStore, issuer: String = "", encryptionKey: [UInt8]? = nil, clock: any Clock = SystemClock()) {
        let sessions = store.sessions
        self.init(
            start: store.authorizations, consent: store.authorizations, exchange: store.authorizations, refresh: sessions, revoke: sessions,
            introspect: sessions,
            currentSession: sessions,
            rateLimits: store.rateLimits, pendingSignIns: store, browserBindings: store.browserBindings,
            callbacks: store.callbacks, readiness: store)
        logout = store.browserSessions
        pushedRequests = store.authorizations
        tokenExchange = store.tokenExchange
        dpopProofUses = sessions
        let ring = SigningKeyRing(store: store.signingKeys, encryptionKey: encryptionKey, issuer: issuer, clock: clock)
        signingKeys = ring
        if encryptionKey != nil {
            idTokenSigner = ring
            idTokenHints = ring
        }
    }
}

/// Ports with no database behind them: every call answers `StoreUnavailable` (a 503), and `/readyz` is not
/// ready. For test contexts that leave an area out.
public struct UnavailableStores: PendingSignInStore, BrowserBindingStore, CallbackStore, ReadinessProbe, LogoutStore,
    PushedRequestStore
{
    public init() {}
    private static let unavailable = StoreUnavailable(reason: "no_store")
    public func authorizationRequest(id: String) throws -> AuthorizationRequestRecord? { throw Self.unavailable }
    public func environment(id: String) throws -> EnvironmentRecord? { throw Self.unavailable }
    public func rebindAuthorizationRequest(requestID: String, browserBindingHash: String, browserSessionID: String?) throws {
        throw Self.unavailable
    }
    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? { throw Self.unavailable }
    public func hasConsent(userID: String, environmentID: String) throws -> Bool { throw Self.unavailable }
    public func user(id: String) throws -> UserRecord? { throw Self.unavailable }
    public func verifiedPlatforms(environmentID: String) throws -> Set<String> { throw Self.unavailable }
    public func recordBrowserBinding(bindingHash: String, now: Date, lifetimeSeconds: Double) throws { throw Self.unavailable }
    public func isBrowserBindingOnRecord(bindingHash: String, until: Date) throws -> Bool { throw Self.unavailable }
    public func isDomainVerified(projectID: String, domain: String) throws -> Bool { throw Self.unavailable }
    public func addCallback(environmentID: String, uri: RedirectURI, now: Date, audit: AuditEntry) throws -> CallbackRecord {
        throw Self.unavailable
    }
    public func callbacks(environmentID: String, after: String?, limit: Int) throws -> [CallbackRecord] { throw Self.unavailable }
    public func deleteCallback(environmentID: String, id: String, audit: AuditEntry) throws -> Bool { throw Self.unavailable }
    public func isReady() -> Bool { false }
    public func endAppSession(id: String, userID: String, now: Date) throws -> Bool { throw Self.unavailable }
    public func recordPushedRequest(_ request: PushedRequest) throws { throw Self.unavailable }
    public func consumePushedRequest(referenceHash: String, environmentID: String, now: Date) throws -> [String: String]? {
        throw Self.unavailable
    }
}

/// No signing keys to check a hint against: every `id_token_hint` is ignored as a hint.
struct NoIDTokenHints: IDTokenHintReader {
    func read(_ compact: String) -> IDTokenHint? { nil }
}

/// No signing keys: an ID token cannot be signed, so the request answers 503.
struct NoSigningKeys: IDTokenSigner {
    func sign(claims: [UInt8], algorithm: SigningAlgorithm, now: Date) throws -> String {
        throw StoreUnavailable(reason: "no_signing_keys")
    }
}

extension UnavailableStores: TokenExchangeStore {
    public func tokenExchangeClient(publishableKey: String) throws -> TokenExchangeClient? { throw StoreUnavailable(reason: "no_store") }
    public func exchangeProviders(projectID: String) throws -> [UpstreamProviderRecord] { throw StoreUnavailable(reason: "no_store") }
    public func createFederatedSession(_ attempt: FederatedSessionAttempt) throws -> FederatedSessionFacts {
        throw StoreUnavailable(reason: "no_store")
    }
}
