import Authorize
import PostgresStore

/// The store ports of the round trip and sessions (exchange, refresh, revoke, introspect, current session,
/// rate limits): one existential per use case's protocol, so handlers can be tested in process with fakes
/// (Tests/ZevAuthTesting/Fakes+RoundTrip.swift).
public struct RoundTripPorts: Sendable {
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
        exchange: any ExchangeStore, refresh: any RefreshStore, revoke: any RevokeStore, introspect: any IntrospectStore,
        currentSession: any CurrentSessionStore, rateLimits: any RateLimitStore
    ) {
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
            exchange: store.authorizations, refresh: sessions, revoke: sessions, introspect: sessions, currentSession: sessions,
            rateLimits: store.rateLimits)
    }
}
