import Foundation

/// One schema change: the SQL of a file named `NNN_name.sql`.
public struct Migration: Sendable, Hashable {
    /// The number from the file name (`001_init.sql` → 1); migrations run in ascending order.
    public let version: Int
    /// The rest of the file name without `.sql` (`001_init.sql` → `init`).
    public let name: String
    /// The script. It runs inside the migrator's transaction, so it must not contain `BEGIN`, `COMMIT` or
    /// statements that refuse transactions (`CREATE INDEX CONCURRENTLY`, `VACUUM`).
    public let sql: String

    /// Creates a migration.
    /// - Parameters:
    ///   - version: Positive ordering number, unique within a migrator.
    ///   - name: A short name, recorded in `schema_migrations`.
    ///   - sql: The script.
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// FNV-1a 64-bit hash of the script's UTF-8 bytes, as 16 lower-case hex digits.
    ///
    /// A change detector for edited migration files, not a security measure: it is not collision-resistant
    /// against someone crafting files. (SHA-256 lives in the `Crypto` module, which this one does not import.)
    public var checksum: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Why the migrator refused to run.
public enum MigrationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The directory could not be listed or a file could not be read (path given).
    case unreadable(String)
    /// A `.sql` file whose name is not `NNN_name.sql` (digits, underscore, then letters, digits, `_`, `-`).
    case badFileName(String)
    /// Two migrations share a version number.
    case duplicateVersion(Int)
    /// An applied migration's file changed since it was applied (version, name).
    case checksumMismatch(version: Int, name: String)

    /// A one-line explanation naming the file or version.
    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read migrations at \(path)"
        case .badFileName(let file): "migration file \(file) is not named NNN_name.sql"
        case .duplicateVersion(let version): "two migrations have version \(version)"
        case .checksumMismatch(let version, let name):
            "migration \(version)_\(name) was changed after it was applied; add a new migration instead"
        }
    }
}

/// Applies `NNN_name.sql` migrations in order, recording each in `schema_migrations`.
///
/// Each migration runs in its own transaction together with the insert of its row
/// `schema_migrations(version, name, checksum, applied_at)`, so it is applied entirely or not at all.
/// A transaction-scoped advisory lock (`pg_advisory_xact_lock`) makes two instances migrating at once take
/// turns; the second one finds the work done. Applied migrations whose file has changed stop the run before
/// anything is applied. Versions recorded in the table but missing from the files are ignored (a newer
/// release migrated this database).
public struct Migrator: Sendable {
    /// The migrations, sorted by version.
    public let migrations: [Migration]

    // An arbitrary constant naming "ZevAuth schema migrations" in the advisory-lock space.
    private static let advisoryLockKey = "7269512604911190263"

    /// Reads every `*.sql` file in a directory; other files are ignored.
    /// - Parameter directory: A directory of `NNN_name.sql` files, for example `sql/`.
    /// - Throws: `MigrationError` when the directory or a file cannot be read, a `.sql` file is badly named,
    ///   or two files share a version.
    public init(directory: String) throws {
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw MigrationError.unreadable(directory)
        }
        var migrations: [Migration] = []
        for file in files where file.hasSuffix(".sql") {
            guard let (version, name) = Self.parse(fileName: file) else { throw MigrationError.badFileName(file) }
            let path = (directory as NSString).appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: path), let sql = String(data: data, encoding: .utf8)
            else { throw MigrationError.unreadable(path) }
            migrations.append(Migration(version: version, name: name, sql: sql))
        }
        try Self.checkUnique(migrations)
        self.init(migrations: migrations)
    }

    /// Uses migrations built in code (tests, embedded resources). Duplicate versions are reported by
    /// `apply(to:)` and `pending(in:)`.
    /// - Parameter migrations: The migrations, in any order.
    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies every pending migration, in version order, each in its own transaction.
    /// - Parameter pool: The database.
    /// - Returns: The migrations applied by this call (empty when the schema was current).
    /// - Throws: `MigrationError.checksumMismatch` (nothing applied), `MigrationError.duplicateVersion`, or
    ///   `PostgresError` from a failing script (that migration rolled back; earlier ones stay applied).
    public func apply(to pool: PostgresPool) throws -> [Migration] {
        try Self.checkUnique(migrations)
        try pool.transaction { connection in
            try lock(connection)
            try connection.execute(
                script: """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version bigint PRIMARY KEY,
                        name text NOT NULL,
                        checksum text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
            _ = try pendingAfterVerifying(try applied(connection))
        }
        var done: [Migration] = []
        for migration in migrations {
            let didApply = try pool.transaction { connection -> Bool in
                try lock(connection)
                // Another instance may have applied it while this one waited for the lock.
                let applied = try applied(connection)
                if applied[migration.version] != nil {
                    _ = try pendingAfterVerifying(applied)
                    return false
                }
                try connection.execute(script: migration.sql)
                try connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1::bigint, $2, $3)",
                    [String(migration.version), migration.name, migration.checksum])
                return true
            }
            if didApply { done.append(migration) }
        }
        return done
    }

    /// The migrations `apply(to:)` would run now; `zevauth serve` refuses to start unless this is empty.
    /// - Parameter pool: The database.
    /// - Returns: Pending migrations in version order (all of them when `schema_migrations` does not exist).
    /// - Throws: `MigrationError.checksumMismatch` when an applied file changed, `duplicateVersion`, or
    ///   `PostgresError`.
    public func pending(in pool: PostgresPool) throws -> [Migration] {
        try Self.checkUnique(migrations)
        return try pool.withConnection { connection in
            let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
            guard try exists.first?.bool("present") == true else { return migrations }
            return try pendingAfterVerifying(try applied(connection))
        }
    }

    // MARK: Helpers

    private func lock(_ connection: PostgresConnection) throws {
        try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [Self.advisoryLockKey])
    }

    /// Applied versions and their recorded checksums.
    private func applied(_ connection: PostgresConnection) throws -> [Int: String] {
        let rows = try connection.query("SELECT version, checksum FROM schema_migrations").rows
        var applied: [Int: String] = [:]
        for row in rows { applied[try row.int("version")] = try row.string("checksum") }
        return applied
    }

    private func pendingAfterVerifying(_ applied: [Int: String]) throws -> [Migration] {
        var pending: [Migration] = []
        for migration in migrations {
            if let checksum = applied[migration.version] {
                guard checksum == migration.checksum else {
                    throw MigrationError.checksumMismatch(version: migration.version, name: migration.name)
                }
            } else {
                pending.append(migration)
            }
        }
        return pending
    }

    private static func checkUnique(_ migrations: [Migration]) throws {
        var seen = Set<Int>()
        for migration in migrations where !seen.insert(migration.version).inserted {
            throw MigrationError.duplicateVersion(migration.version)
        }
    }

    /// `001_create_clients.sql` → (1, "create_clients").
    static func parse(fileName: String) -> (Int, String)? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_") else { return nil }
        let digits = stem[..<underscore]
        let name = stem[stem.index(after: underscore)...]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            !name.isEmpty,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }),
            let version = Int(digits)
        else { return nil }
        return (version, String(name))
    }
}
