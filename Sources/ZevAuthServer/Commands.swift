import Foundation
import Postgres
import PostgresStore

/// The `serve` and `migrate` commands of the `zevauth` executable.
public enum Commands {
    /// `zevauth serve`: the configuration from the environment and flags, then `ServerRunner.serve`.
    /// - Throws: `ConfigurationError` naming a missing or invalid key; startup errors.
    public static func serve(arguments: [String]) throws {
        let configuration = try ConfigurationLoader.load(environment: ProcessInfo.processInfo.environment, arguments: arguments)
        let migrator = try ServerRunner.migrator(configured: configuration.sqlDirectory)
        let pool = PostgresPool(url: configuration.databaseURL, size: configuration.databasePoolSize)
        let context = ServerContext(configuration: configuration, store: PostgresStore(pool: pool))
        try ServerRunner.serve(context, migrator: migrator)
    }

    /// `zevauth migrate`: needs only `ZEVAUTH_DATABASE_URL` (and optionally `ZEVAUTH_SQL_DIR`).
    /// Prints each migration it applied and what its Swift steps report (account ids, never addresses).
    public static func migrate(arguments: [String]) throws {
        let values = try ConfigurationLoader.merged(environment: ProcessInfo.processInfo.environment, arguments: arguments)
        guard let url = values["ZEVAUTH_DATABASE_URL"], !url.isEmpty else {
            throw ConfigurationError(key: "ZEVAUTH_DATABASE_URL", problem: "is required")
        }
        let migrator = try ServerRunner.migrator(configured: values["ZEVAUTH_SQL_DIR"])
        let applied = try ServerRunner.reachingDatabase { try migrator.apply(to: PostgresPool(url: url, size: 1)) { print($0) } }
        print(applied.isEmpty ? "migrations: up to date" : applied.map { "applied \($0.version) \($0.name)" }.joined(separator: "\n"))
    }
}
