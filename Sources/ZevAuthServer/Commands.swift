import Authorize
import Encoding
import Foundation
import PostgresStore

/// The `serve` and `migrate` commands of the `zevauth` executable, and the usage text every command
/// prints for `--help` (generated from `ConfigurationLoader.options`, so it lists every flag).
public enum Commands {
    /// The release, printed by `zevauth --version`.
    public static let version = "0.1.0"

    /// Whether the arguments ask for the usage (`--help` or `-h` anywhere).
    public static func asksForHelp(_ arguments: [String]) -> Bool {
        arguments.contains("--help") || arguments.contains("-h")
    }

    /// One usage line per option: `  --flag VALUE   ZEVAUTH_VARIABLE  what it does`, aligned.
    /// - Parameter dev: lines for `zevauth dev`: a variable dev ignores (`ZEVAUTH_LISTEN`) is left out, and
    ///   each key's `devNote` replaces `(required)`.
    public static func optionLines(_ options: [ConfigurationOption], dev: Bool = false) -> String {
        let left = options.map { "\($0.flag) \($0.placeholder)" }
        let width = left.map(\.count).max() ?? 0
        let middle = options.map { option in
            option.variable.map { dev && ConfigurationLoader.chosenByDev.contains($0) ? "" : $0 } ?? ""
        }
        let middleWidth = middle.map(\.count).max() ?? 0
        return zip(options, zip(left, middle)).map { option, columns in
            "  " + columns.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + columns.1.padding(toLength: middleWidth, withPad: " ", startingAt: 0) + "  " + option.help
                + (dev ? option.devNote.map { " (\($0))" } ?? "" : option.required ? " (required)" : "")
        }.joined(separator: "\n")
    }

    /// The usage of `zevauth serve`.
    public static var serveUsage: String {
        """
        usage: zevauth serve [--flag value | --flag=value …]
          runs the server from the ZEVAUTH_* variables; each flag mirrors its variable and wins over it.
        flags:
        \(optionLines(ConfigurationLoader.options))
        """
    }

    /// The usage of `zevauth migrate`.
    public static var migrateUsage: String {
        """
        usage: zevauth migrate [--database-url URL] [--sql-dir DIR]
          applies the sql/ migrations to ZEVAUTH_DATABASE_URL (idempotent); with ZEVAUTH_ENCRYPTION_KEY set,
          also makes the missing ID-token signing keys (else the first `serve` does).
        flags:
        \(optionLines(ConfigurationLoader.options.filter { ["--database-url", "--sql-dir"].contains($0.flag) }))
        """
    }

    /// `zevauth serve`: the configuration from the environment and flags, then `ServerRunner.serve`;
    /// `--help` prints `serveUsage` and returns.
    /// - Throws: `ConfigurationError` naming a missing or invalid key; startup errors.
    public static func serve(arguments: [String], write: (String) -> Void = { print($0) }) throws {
        if asksForHelp(arguments) { return write(serveUsage) }
        let configuration = try ConfigurationLoader.load(environment: ProcessInfo.processInfo.environment, arguments: arguments)
        let migrator = try ServerRunner.migrator(configured: configuration.sqlDirectory)
        let store = PostgresStore.connect(
            url: configuration.databaseURL, size: configuration.effectiveDatabasePoolSize,
            sharedConnections: configuration.databaseSharedConnections,
            statementTimeoutMilliseconds: configuration.databaseStatementTimeoutMilliseconds,
            preparedStatements: configuration.databasePrepared, listenURL: configuration.effectiveDatabaseListenURL)
        let context = ServerContext(configuration: configuration, store: store)
        try ServerRunner.serve(context, migrator: migrator)
    }

    /// `zevauth statements`: prints the hot path's SQL statements as one JSON object, name → text
    /// (`HotPathStatements.all`), for the pipeline benchmark's pgbench ceilings (docs/performance.md). Needs no
    /// database and no configuration.
    public static func statements(write: (String) -> Void = { print($0) }) {
        let members = HotPathStatements.all.map { ($0.name, JSONValue.string($0.sql)) }
        write(String(decoding: JSONWriter.encode(JSONValue.object(members)), as: UTF8.self))
    }

    /// `zevauth migrate`: needs only `ZEVAUTH_DATABASE_URL` (and optionally `ZEVAUTH_SQL_DIR`).
    /// Prints each migration it applied and what its Swift steps report (account ids, never addresses);
    /// `--help` prints `migrateUsage`.
    public static func migrate(arguments: [String], write: (String) -> Void = { print($0) }) throws {
        if asksForHelp(arguments) { return write(migrateUsage) }
        let values = try ConfigurationLoader.merged(
            environment: ProcessInfo.processInfo.environment, arguments: arguments,
            command: "migrate")
        guard let url = values["ZEVAUTH_DATABASE_URL"], !url.isEmpty else {
            throw ConfigurationError(key: "ZEVAUTH_DATABASE_URL", problem: "is required")
        }
        let migrator = try ServerRunner.migrator(configured: values["ZEVAUTH_SQL_DIR"])
        let store = PostgresStore.connect(url: url, size: 1, statementTimeoutMilliseconds: 0)
        let applied = try ServerRunner.reachingDatabase {
            try store.applyMigrations(migrator) { write($0) }
        }
        write(applied.isEmpty ? "migrations: up to date" : applied.map { "applied \($0.version) \($0.name)" }.joined(separator: "\n"))
        try ensureSigningKeys(store, values: values, write: write)
    }

    /// With `ZEVAUTH_ENCRYPTION_KEY` set, `migrate` also makes the missing signing keys (docs/operations.md,
    /// "Signing keys"); without it, the first `serve` does.
    static func ensureSigningKeys(_ store: PostgresStore, values: [String: String], write: (String) -> Void) throws {
        guard let text = values["ZEVAUTH_ENCRYPTION_KEY"], !text.isEmpty else { return }
        guard let key = Data(base64Encoded: text), key.count == 32 else {
            throw ConfigurationError(key: "ZEVAUTH_ENCRYPTION_KEY", problem: "must be 32 bytes, base64-encoded")
        }
        let ring = SigningKeyRing(store: store.signingKeys, encryptionKey: Array(key), issuer: "", clock: SystemClock())
        let made = try ServerRunner.reachingDatabase {
            try EnsureSigningKeys(store: store.signingKeys, maker: ring.maker!)(now: SystemClock().now())
        }
        if made > 0 { write("signing keys: made \(made)") }
    }
}
