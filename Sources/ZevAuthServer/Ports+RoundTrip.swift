import Authorize
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

    /// Ports over explicit stores (fakes in tests).
    public init(
        start: any StartStore, consent: any ConsentStore, exchange: any ExchangeStore, refresh: any RefreshStore, revoke: any RevokeStore,
        introspect: any IntrospectStore,
        currentSession: any CurrentSessionStore, rateLimits: any RateLimitStore
    ) {
        self.start = start
        self.consent = consent
        self.exchange = exchange
        self.refresh = refresh
        self.revoke = revoke
        self.introspect = introspect
        self.currentSession = currentSession
        self.rateLimits = rateLimits
    }

    /// Every port of this area backed by PostgreSQL.
    public init(_ store: PostgresStore) {
        let sessions = store.sessions
        self.init(
            start: store.authorizations, consent: store.authorizations, exchange: store.authorizations, refresh: sessions, revoke: sessions,
            introspect: sessions,
            currentSession: sessions,
            rateLimits: store.rateLimits)
    }
}
