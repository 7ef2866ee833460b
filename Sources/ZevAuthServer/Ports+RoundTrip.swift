import Authorize
import PostgresStore

/// The store ports of the round trip and sessions (start, sign-in, consent, exchange, refresh, revoke, introspect): one existential per use case's
/// protocol, so handlers can be tested in process with fakes (Tests/ZevAuthTesting).
public struct RoundTripPorts: Sendable {
    /// No ports yet: handlers of this area still reach `ServerContext.store`.
    public init() {}

    /// Every port of this area backed by PostgreSQL.
    public init(_ store: PostgresStore) {
        self.init()
    }
}
