import Foundation
import Postgres
import PostgresStore

/// A schema of its own in the test database with every migration applied, for suites that change
/// deployment-wide state (the signing keys: rotating or revoking them must not change the keys the other
/// suites sign with). Pass `store` to `TestServer(store:)`.
public final class IsolatedSchema: Sendable {
    /// The test database's URL with this schema first on every connection's `search_path`.
    public let url: String
    public let pool: PostgresPool
    public var store: PostgresStore { PostgresStore(pool: pool) }

    public init() throws {
        let name = "k_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try TestDatabase.pool.query("CREATE SCHEMA \(name)")
        url = TestDatabase.url + (TestDatabase.url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"
        pool = PostgresPool(url: url, size: 8, acquireTimeoutSeconds: 30)
        _ = try Migrator(directory: TestDatabase.repositoryRoot + "/sql").apply(to: pool)
    }
}
