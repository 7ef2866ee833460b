import Foundation
import Postgres
import Testing

struct MissingTestDatabase: Error, CustomStringConvertible {
    var description: String {
        """
        ZEVAUTH_TEST_DATABASE_URL is not set. These tests need a real PostgreSQL 15; start a throwaway one with
          export ZEVAUTH_TEST_DATABASE_URL=$(bash scripts/test-postgres.sh start /tmp/pgtest-$$)
        and stop it afterwards with `bash scripts/test-postgres.sh stop /tmp/pgtest-$$`.
        """
    }
}

/// The test database URL from the environment; CI always sets it, so its absence fails the test.
func testDatabaseURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["ZEVAUTH_TEST_DATABASE_URL"], !url.isEmpty else {
        throw MissingTestDatabase()
    }
    return url
}

/// A fresh schema for one test, so tests running in parallel do not see each other's tables.
/// The returned URL puts that schema first on every connection's search_path.
final class TestSchema: Sendable {
    let baseURL: String
    let name: String
    let url: String

    init() throws {
        baseURL = try testDatabaseURL()
        name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try PostgresConnection(url: baseURL)
        try admin.query("CREATE SCHEMA \(name)")
        url = baseURL + (baseURL.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"
    }

    func pool(size: Int = 4, acquireTimeoutSeconds: Double = 5) -> PostgresPool {
        PostgresPool(url: url, size: size, acquireTimeoutSeconds: acquireTimeoutSeconds)
    }

    deinit {
        if let admin = try? PostgresConnection(url: baseURL) {
            _ = try? admin.query("DROP SCHEMA \(name) CASCADE")
        }
    }
}
