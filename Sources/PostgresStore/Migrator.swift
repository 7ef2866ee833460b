import Foundation
import Postgres

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

    /// FNV-1a 64-bit hash of the script's UTF-8 bytes without its comment-only and blank lines, as 16
    /// lower-case hex digits.
    ///
    /// The script is split at `\n`; a line is left out when it is empty or only white space, or when its first
    /// non-space characters are `--`; the remaining lines are hashed verbatim, joined by `\n`. Comments can so
    /// be reworded (for example to cite another document) without changing what was applied, while any edit
    /// to a statement, including a comment at the end of a statement's line, still changes the checksum.
    /// (A line starting with `--` inside a multi-line string literal would be left out too; the migrations
    /// contain none.)
    ///
    /// A change detector for edited migration files, not a security measure: it is not collision-resistant
    /// against someone crafting files. (SHA-256 lives in the `Crypto` module, which this one does not import.)
    public var checksum: String {
        let statements = sql.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            return !trimmed.isEmpty && !trimmed.hasPrefix("--")
        }
        return Self.fnv1a(statements.joined(separator: "\n"))
    }

    /// FNV-1a 64 of the whole script, comments included: the checksum releases before comment-insensitive
    /// checksums recorded (see ``Migrator/earlierChecksums``).
    public var fullFileChecksum: String { Self.fnv1a(sql) }

    private static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// A checksum that an earlier release recorded in `schema_migrations` for one migration file, with the
/// checksum the same file has now (``Migration/checksum``).
public struct EarlierChecksum: Sendable, Hashable {
    /// What the earlier release recorded: FNV-1a 64 of the whole file, comments included
    /// (``Migration/fullFileChecksum``).
    public let recorded: String
    /// ``Migration/checksum`` of the file that release applied. The recorded value is accepted only while
    /// the file still has this checksum, that is while it differs from the released file in comments alone.
    public let current: String

    /// Creates an entry.
    /// - Parameters:
    ///   - recorded: The full-file checksum the earlier release recorded (16 lower-case hex digits).
    ///   - current: The comment-insensitive checksum of the released file (16 lower-case hex digits).
    public init(recorded: String, current: String) {
        self.recorded = recorded
        self.current = current
    }
}

/// Work in Swift that a migration needs beyond its SQL: a value SQL cannot compute (for example a key
/// that needs a C library the database does not have).
///
/// A step runs inside the transaction of its migration, right after the script, so the schema change and
/// the values it needs commit together; it also runs on every later `apply` (under the same lock), for rows
/// that an older server wrote after the migration. A step must therefore be idempotent, and cheap when
/// there is nothing to do.
public struct MigrationStep: Sendable {
    /// The migration this step completes.
    public let version: Int
    /// Does the work on the migrator's connection, inside its transaction.
    /// - Returns: lines for the operator (printed by `zevauth migrate`); empty when there was nothing to say.
    public let run: @Sendable (PostgresConnection) throws -> [String]

    /// Creates a step for migration `version`.
    public init(version: Int, run: @escaping @Sendable (PostgresConnection) throws -> [String]) {
        self.version = version
        self.run = run
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
///
/// Releases before comment-insensitive checksums recorded the checksum of the whole file
/// (``Migration/fullFileChecksum``). Such a recorded value is accepted when ``earlierChecksums`` lists it for
/// that version and the file has changed in comments only since; `apply(to:)` then replaces it with
/// ``Migration/checksum`` in the transaction that verifies the applied migrations.
public struct Migrator: Sendable {
    /// The migrations, sorted by version.
    public let migrations: [Migration]
    /// Swift steps that complete some migrations (`MigrationStep`).
    public let steps: [MigrationStep]
    /// Checksums recorded by earlier releases that are still accepted, by migration version.
    public let earlierChecksums: [Int: EarlierChecksum]

    /// The full-file checksums that releases before comment-insensitive checksums recorded for the
    /// migrations of the repository's `sql/` directory (001–007), each with the comment-insensitive
    /// checksum of the same file. Computed from the files as released; a migration added later has no entry.
    public static let releasedChecksums: [Int: EarlierChecksum] = [
        1: EarlierChecksum(recorded: "7e23703ee2b37884", current: "2c1dbab119e1c04b"),
        2: EarlierChecksum(recorded: "e7a8444c4782dc68", current: "34a974914fb9529b"),
        3: EarlierChecksum(recorded: "f38655f722f663dc", current: "74a44bdf85a8845c"),
        4: EarlierChecksum(recorded: "6cb572e35a7f21c5", current: "076d6c91e67412c8"),
        5: EarlierChecksum(recorded: "2bbc7ffcf420ceb6", current: "34bbe67e511a89e2"),
        6: EarlierChecksum(recorded: "d3483ab49258bdbe", current: "f8ce2fbf6e8133b4"),
        7: EarlierChecksum(recorded: "ff7f9e62fd7ab38b", current: "d2bc9dbeafe13a09"),
    ]

    // An arbitrary constant naming "ZevAuth schema migrations" in the advisory-lock space.
    private static let advisoryLockKey = "7269512604911190263"

    /// Reads every `*.sql` file in a directory; other files are ignored.
    /// - Parameters:
    ///   - directory: A directory of `NNN_name.sql` files, for example `sql/`.
    /// - Throws: `MigrationError` when the directory or a file cannot be read, a `.sql` file is badly named,
    ///   or two files share a version.
    ///   - steps: Swift steps completing some of the migrations.
    ///   - earlierChecksums: Checksums of earlier releases to accept (`releasedChecksums` for `sql/`).
    public init(
        directory: String, steps: [MigrationStep] = [],
        earlierChecksums: [Int: EarlierChecksum] = Migrator.releasedChecksums
    ) throws {
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
        self.init(migrations: migrations, steps: steps, earlierChecksums: earlierChecksums)
    }

    /// Uses migrations built in code (tests, embedded resources). Duplicate versions are reported by
    /// `apply(to:)` and `pending(in:)`.
    /// - Parameters:
    ///   - migrations: The migrations, in any order.
    ///   - steps: Swift steps completing some of them.
    ///   - earlierChecksums: Checksums of earlier releases to accept (`releasedChecksums` for `sql/`).
    public init(
        migrations: [Migration], steps: [MigrationStep] = [],
        earlierChecksums: [Int: EarlierChecksum] = Migrator.releasedChecksums
    ) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.steps = steps
        self.earlierChecksums = earlierChecksums
    }

    /// Applies every pending migration, in version order, each in its own transaction together with its
    /// steps; then runs the steps of migrations applied earlier, each in its own transaction.
    /// - Parameters:
    ///   - pool: The database.
    ///   - note: receives the steps' lines for the operator, after their transaction committed.
    /// - Returns: The migrations applied by this call (empty when the schema was current).
    /// - Throws: `MigrationError.checksumMismatch` (nothing applied), `MigrationError.duplicateVersion`, or
    ///   `PostgresError` from a failing script (that migration rolled back; earlier ones stay applied).
    public func apply(to pool: PostgresPool, note: (String) -> Void = { _ in }) throws -> [Migration] {
        try Self.checkUnique(migrations)
        try Self.unbounded(pool) { connection in
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
            let applied = try applied(connection)
            _ = try pendingAfterVerifying(applied)
            for migration in migrations {
                guard let recorded = applied[migration.version], recorded != migration.checksum else { continue }
                try connection.query(
                    "UPDATE schema_migrations SET checksum = $1 WHERE version = $2::bigint AND checksum = $3",
                    [migration.checksum, String(migration.version), recorded])
            }
        }
        var done: [Migration] = []
        var lines: [String] = []
        for migration in migrations {
            lines = []
            let didApply = try Self.unbounded(pool) { connection -> Bool in
                try lock(connection)
                // Another instance may have applied it while this one waited for the lock.
                let applied = try applied(connection)
                if applied[migration.version] != nil {
                    _ = try pendingAfterVerifying(applied)
                    return false
                }
                try connection.execute(script: migration.sql)
                for step in steps where step.version == migration.version { lines += try step.run(connection) }
                try connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1::bigint, $2, $3)",
                    [String(migration.version), migration.name, migration.checksum])
                return true
            }
            lines.forEach(note)
            lines = []
            if didApply { done.append(migration) }
        }
        for step in steps where !done.contains(where: { $0.version == step.version }) {
            let stepLines = try Self.unbounded(pool) { connection -> [String] in
                try lock(connection)
                let applied = try applied(connection)
                guard applied[step.version] != nil else { return [] }
                return try step.run(connection)
            }
            stepLines.forEach(note)
        }
        return done
    }

    /// The migrations `apply(to:)` would run now; `zevauth serve` refuses to start unless this is empty.
    /// Accepts the checksums of `earlierChecksums` like `apply(to:)` does, but leaves them recorded.
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

    /// One transaction without the statement deadline (`PostgresConnection.withoutDeadline`): a migration's
    /// script, its steps and the wait for another instance's migration lock may take longer than a request.
    private static func unbounded<T>(_ pool: PostgresPool, _ body: (PostgresConnection) throws -> T) throws -> T {
        try pool.transaction { connection in try connection.withoutDeadline { try body(connection) } }
    }

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
            if let recorded = applied[migration.version] {
                guard recorded == migration.checksum || isAcceptedEarlier(recorded, of: migration) else {
                    throw MigrationError.checksumMismatch(version: migration.version, name: migration.name)
                }
            } else {
                pending.append(migration)
            }
        }
        return pending
    }

    /// Whether `recorded` is the checksum an earlier release recorded for `migration`'s file, and the file
    /// has changed in comments only since.
    private func isAcceptedEarlier(_ recorded: String, of migration: Migration) -> Bool {
        guard let earlier = earlierChecksums[migration.version] else { return false }
        return recorded == earlier.recorded && migration.checksum == earlier.current
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
