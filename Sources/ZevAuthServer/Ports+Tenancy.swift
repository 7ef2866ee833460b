import Authorize
import PostgresStore

/// The store ports of tenancy, mobile apps and association files (projects, environments, keys, callbacks, domains, apps, link checks): one existential per use case's
/// protocol, so handlers can be tested in process with fakes (Tests/ZevAuthTesting).
public struct TenancyPorts: Sendable {
    /// No ports yet: handlers of this area still reach `ServerContext.store`.
    public init() {}

    /// Every port of this area backed by PostgreSQL.
    public init(_ store: PostgresStore) {
        self.init()
    }
}
