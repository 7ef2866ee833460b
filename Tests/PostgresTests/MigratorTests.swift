import Foundation
import Postgres
import PostgresStore
import Synchronization
import Testing

@Suite struct MigratorTests {
    let first = Migration(version: 1, name: "create_clients", sql: "CREATE TABLE clients (id text PRIMARY KEY);")
    let second = Migration(
        version: 2, name: "add_name",
        sql: "ALTER TABLE clients ADD COLUMN name text;\nCREATE INDEX clients_name ON clients (name);")

    @Test func appliesPendingOnceAndRecordsVersions() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        let migrator = Migrator(migrations: [second, first])
        #expect(try migrator.pending(in: pool) == [first, second])

        #expect(try migrator.apply(to: pool) == [first, second])
        #expect(try migrator.apply(to: pool) == [])
        #expect(try migrator.pending(in: pool) == [])

        let rows = try pool.query("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version").rows
        #expect(try rows.map { try $0.int("version") } == [1, 2])
        #expect(try rows.map { try $0.string("name") } == ["create_clients", "add_name"])
        #expect(try rows.map { try $0.string("checksum") } == [first.checksum, second.checksum])
        _ = try rows.map { try $0.date("applied_at") }
        try pool.query("INSERT INTO clients (id, name) VALUES ('a', 'b')")

        let third = Migration(version: 3, name: "more", sql: "ALTER TABLE clients ADD COLUMN more int;")
        let later = Migrator(migrations: [first, second, third])
        #expect(try later.pending(in: pool) == [third])
        #expect(try later.apply(to: pool) == [third])
    }

    @Test func refusesChangedChecksum() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        _ = try Migrator(migrations: [first]).apply(to: pool)
        let edited = Migration(version: 1, name: "create_clients", sql: first.sql + " -- edited")
        let extra = Migration(version: 2, name: "x", sql: "CREATE TABLE x (id int);")
        let migrator = Migrator(migrations: [edited, extra])
        #expect(throws: MigrationError.checksumMismatch(version: 1, name: "create_clients")) {
            try migrator.apply(to: pool)
        }
        #expect(throws: MigrationError.checksumMismatch(version: 1, name: "create_clients")) {
            try migrator.pending(in: pool)
        }
        // Nothing after the mismatch was applied.
        #expect(try pool.query("SELECT to_regclass('x') IS NULL AS absent").first?.bool("absent") == true)
    }

    @Test func failingMigrationRollsBackAndStopsTheRun() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        let broken = Migration(version: 2, name: "broken", sql: "CREATE TABLE half (id int); SELECT nope;")
        let error = try #require(throws: PostgresError.self) {
            try Migrator(migrations: [first, broken]).apply(to: pool)
        }
        #expect(error.sqlState == .undefinedColumn)
        #expect(try Migrator(migrations: [first, broken]).pending(in: pool) == [broken])
        #expect(try pool.query("SELECT to_regclass('half') IS NULL AS absent").first?.bool("absent") == true)
    }

    @Test func concurrentMigratorsApplyEachMigrationOnce() throws {
        let schema = try TestSchema()
        let migrator = Migrator(migrations: [first, second])
        let group = DispatchGroup()
        let counts = Mutex<[Int]>([])
        for _ in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                let applied = (try? migrator.apply(to: schema.pool(size: 1)))?.count ?? -1
                counts.withLock { $0.append(applied) }
            }.start()
        }
        group.wait()
        // Instances may take turns per migration, but every migration is applied exactly once.
        #expect(counts.withLock { $0.reduce(0, +) } == 2)
        #expect(!counts.withLock { $0.contains(-1) })
        let versions = try schema.pool().query("SELECT version FROM schema_migrations ORDER BY version").rows
        #expect(try versions.map { try $0.int("version") } == [1, 2])
    }

    @Test func readsDirectorySortedAndRejectsBadNames() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mig-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "CREATE TABLE b (id int);".write(toFile: directory + "/010_second.sql", atomically: true, encoding: .utf8)
        try "CREATE TABLE a (id int);".write(toFile: directory + "/002_first-one.sql", atomically: true, encoding: .utf8)
        try "notes".write(toFile: directory + "/README.md", atomically: true, encoding: .utf8)
        let migrator = try Migrator(directory: directory)
        #expect(migrator.migrations.map(\.version) == [2, 10])
        #expect(migrator.migrations.map(\.name) == ["first-one", "second"])

        try "".write(toFile: directory + "/02_first.sql", atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.duplicateVersion(2)) { try Migrator(directory: directory) }
        try FileManager.default.removeItem(atPath: directory + "/02_first.sql")

        try "".write(toFile: directory + "/third.sql", atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.badFileName("third.sql")) { try Migrator(directory: directory) }
    }

    @Test func commentOnlyChangesKeepTheChecksumAndStatementChangesDoNot() throws {
        let commented = Migration(
            version: 1, name: "create_clients",
            sql: "-- Clients (see the old document).\nCREATE TABLE clients (id text PRIMARY KEY);\n")
        let schema = try TestSchema()
        let pool = schema.pool()
        _ = try Migrator(migrations: [commented]).apply(to: pool)

        let reworded = Migration(
            version: 1, name: "create_clients",
            sql: "-- Clients: docs/protocol.md#credentials.\n  -- A second comment line.\n\nCREATE TABLE clients (id text PRIMARY KEY);\n")
        #expect(reworded.checksum == commented.checksum)
        #expect(try Migrator(migrations: [reworded]).pending(in: pool) == [])
        #expect(try Migrator(migrations: [reworded]).apply(to: pool) == [])

        for sql in [
            "-- Clients: docs/protocol.md#credentials.\nCREATE TABLE clients (id text PRIMARY KEY, name text);\n",
            "CREATE TABLE clients (id text PRIMARY KEY); -- a comment after a statement counts\n",
        ] {
            let changed = Migration(version: 1, name: "create_clients", sql: sql)
            #expect(throws: MigrationError.checksumMismatch(version: 1, name: "create_clients")) {
                try Migrator(migrations: [changed]).apply(to: pool)
            }
        }
    }

    @Test func earlierFullFileChecksumIsAcceptedOnlyForACommentOnlyChange() throws {
        let released = Migration(
            version: 1, name: "create_clients", sql: "-- Clients (old wording).\nCREATE TABLE clients (id text);\n")
        let earlier = [1: EarlierChecksum(recorded: released.fullFileChecksum, current: released.checksum)]
        let schema = try TestSchema()
        let pool = schema.pool()
        _ = try Migrator(migrations: [released]).apply(to: pool)
        // What an earlier release recorded: the checksum of the whole file.
        try pool.query("UPDATE schema_migrations SET checksum = $1", [released.fullFileChecksum])

        let changed = Migration(version: 1, name: "create_clients", sql: "CREATE TABLE clients (id bigint);\n")
        #expect(throws: MigrationError.checksumMismatch(version: 1, name: "create_clients")) {
            try Migrator(migrations: [changed], earlierChecksums: earlier).apply(to: pool)
        }
        // Without the table the earlier checksum is a mismatch.
        let reworded = Migration(
            version: 1, name: "create_clients", sql: "-- Clients (new wording).\nCREATE TABLE clients (id text);\n")
        #expect(throws: MigrationError.checksumMismatch(version: 1, name: "create_clients")) {
            try Migrator(migrations: [reworded], earlierChecksums: [:]).pending(in: pool)
        }

        let migrator = Migrator(migrations: [reworded], earlierChecksums: earlier)
        #expect(try migrator.pending(in: pool) == [])
        #expect(try migrator.apply(to: pool) == [])
        let recorded = try pool.query("SELECT checksum FROM schema_migrations").rows.map { try $0.string("checksum") }
        #expect(recorded == [reworded.checksum])
    }

    @Test func databaseMigratedByAnEarlierReleaseMigratesCleanly() throws {
        let sqlDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("sql").path
        let migrator = try Migrator(directory: sqlDirectory)
        let released = Migrator.releasedChecksums
        #expect(Set(released.keys).isSubset(of: Set(migrator.migrations.map(\.version))))
        // Every released file changed in comments only since its release.
        for migration in migrator.migrations {
            if let earlier = released[migration.version] { #expect(migration.checksum == earlier.current) }
        }

        let schema = try TestSchema()
        let pool = schema.pool()
        _ = try migrator.apply(to: pool)
        // The rows an earlier release left: full-file checksums of the released files.
        for (version, earlier) in released {
            try pool.query(
                "UPDATE schema_migrations SET checksum = $1 WHERE version = $2::bigint",
                [earlier.recorded, String(version)])
        }
        #expect(try migrator.pending(in: pool) == [])
        #expect(try migrator.apply(to: pool) == [])
        let rows = try pool.query("SELECT version, checksum FROM schema_migrations ORDER BY version").rows
        #expect(try rows.map { try $0.string("checksum") } == migrator.migrations.map(\.checksum))
        #expect(try rows.map { try $0.int("version") } == migrator.migrations.map(\.version))
    }

    @Test func checksumIsStableFNV1a() {
        // FNV-1a 64 of "" and "a" (published test values).
        #expect(Migration(version: 1, name: "e", sql: "").checksum == "cbf29ce484222325")
        #expect(Migration(version: 1, name: "a", sql: "a").checksum == "af63dc4c8601ec8c")
    }
}
