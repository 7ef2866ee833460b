import Foundation
import Postgres
import Testing

@Suite struct PostgresConnectionTests {
    @Test func parametersRoundTripIncludingNullAndHostileText() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        try pool.query("CREATE TABLE notes (id serial PRIMARY KEY, body text, extra text)")
        let hostile = "Robert'); DROP TABLE notes; -- \\ \"quoted\" \\x00 ünïcødé 🦊 $1"
        let inserted = try pool.query(
            "INSERT INTO notes (body, extra) VALUES ($1, $2) RETURNING id", [hostile, nil])
        #expect(inserted.rowsAffected == 1)
        let id = try #require(inserted.first).int("id")

        let row = try #require(try pool.query("SELECT body, extra FROM notes WHERE id = $1::int", [String(id)]).first)
        #expect(try row.string("body") == hostile)
        #expect(row["extra"] == nil)
        #expect(throws: PostgresError.self) { try row.string("extra") }
        #expect(throws: PostgresError.self) { try row.string("no_such_column") }
        #expect(try pool.query("SELECT count(*) AS n FROM notes").first?.int("n") == 1)
    }

    @Test func typedAccessorsReadTextOutput() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1)
        let row = try #require(
            try pool.query(
                """
                SELECT 42::bigint AS n, true AS yes, false AS no,
                       '2026-11-30 11:16:16.123456+00'::timestamptz AS at, NULL::timestamptz AS never,
                       'infinity'::timestamptz AS forever
                """
            ).first)
        #expect(try row.int("n") == 42)
        #expect(try row.bool("yes") == true)
        #expect(try row.bool("no") == false)
        #expect(row["at"] == "2026-11-30 11:16:16.123456+00")  // the connection runs in UTC
        let at = try row.date("at")
        #expect(PostgresTimestamp.format(at) == "2026-11-30 11:16:16.123456+00")
        #expect(try row.optionalDate("never") == nil)
        #expect(throws: PostgresError.self) { try row.date("never") }
        #expect(throws: PostgresError.self) { try row.date("forever") }
        #expect(throws: PostgresError.self) { try row.int("yes") }
    }

    @Test func datesRoundTripThroughTheServerWithMicroseconds() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1)
        let date = Date(timeIntervalSince1970: 1_795_000_000.654321)
        let row = try #require(try pool.query("SELECT $1::timestamptz AS at", [PostgresTimestamp.format(date)]).first)
        let back = try row.date("at")
        #expect(abs(back.timeIntervalSince(date)) < 0.000_001)
        #expect(PostgresTimestamp.format(back) == PostgresTimestamp.format(date))
    }

    @Test(arguments: [
        ("2026-11-30 11:16:16.123456+00", "2026-11-30 11:16:16.123456+00"),
        ("2026-11-30 11:16:16+00", "2026-11-30 11:16:16.000000+00"),
        ("2026-11-30 16:46:16.5+05:30", "2026-11-30 11:16:16.500000+00"),
        ("2026-11-30 08:16:16-03", "2026-11-30 11:16:16.000000+00"),
        ("1900-01-01 00:00:00+00:19:32", "1899-12-31 23:40:28.000000+00"),
        ("2024-02-29 23:59:59.999999+00", "2024-02-29 23:59:59.999999+00"),
        ("0044-03-15 10:00:00+00 BC", "0044-03-15 10:00:00.000000+00 BC"),
        ("12026-01-01 00:00:00+00", "12026-01-01 00:00:00.000000+00"),
    ])
    func timestampTextParses(text: String, normalized: String) throws {
        let date = try #require(PostgresTimestamp.parse(text))
        #expect(PostgresTimestamp.format(date) == normalized)
    }

    @Test(arguments: [
        "", "infinity", "-infinity", "2026-13-01 00:00:00+00", "2026-11-30T11:16:16Z", "2026-11-30 11:16:16.1234567+00",
        "2026-11-30 11:16:16+00 junk",
    ])
    func malformedTimestampTextIsRejected(text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }

    @Test func uniqueViolationCarriesSQLStateAndConstraintButNoValues() throws {
        let schema = try TestSchema()
        let pool = schema.pool()
        try pool.query("CREATE TABLE users (id serial PRIMARY KEY, email text CONSTRAINT users_email_key UNIQUE)")
        try pool.query("INSERT INTO users (email) VALUES ($1)", ["secret-value@example.com"])
        let error = try #require(throws: PostgresError.self) {
            try pool.query("INSERT INTO users (email) VALUES ($1)", ["secret-value@example.com"])
        }
        #expect(error.kind == .query)
        #expect(error.sqlState == .uniqueViolation)
        #expect(error.constraint == "users_email_key")
        #expect(!error.description.contains("secret-value"))
        #expect(!error.message.hasSuffix("\n"))
        // The connection stays usable after a statement error.
        #expect(pool.ping())
    }

    @Test func badInputErrorDoesNotEchoTheValue() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1)
        let error = try #require(throws: PostgresError.self) {
            try pool.query("SELECT $1::uuid", ["not-a-uuid-secret"])
        }
        #expect(error.sqlState == .invalidTextRepresentation)
        #expect(!error.description.contains("secret"))
        #expect(error.message.contains("uuid"))
    }

    @Test func nulByteInParameterIsRefusedBeforeSending() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1)
        let error = try #require(throws: PostgresError.self) { try pool.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error.sqlState == .characterNotInRepertoire)
    }

    @Test func raiseExceptionAndScriptsAndNoticesWork() throws {
        let schema = try TestSchema()
        let connection = try PostgresConnection(url: schema.url)
        #expect(connection.isHealthy)
        try connection.execute(
            script: """
                CREATE TABLE a (id int); CREATE TABLE b (id int);
                DO $$ BEGIN RAISE NOTICE 'this notice must not reach stderr'; END $$;
                """)
        let error = try #require(throws: PostgresError.self) {
            try connection.execute(script: "DO $$ BEGIN RAISE EXCEPTION 'custom failure'; END $$")
        }
        #expect(error.sqlState == .raiseException)
        #expect(error.message == "custom failure")
        let missing = try #require(throws: PostgresError.self) { try connection.query("SELECT * FROM nope") }
        #expect(missing.sqlState == .undefinedTable)
    }

    @Test func badURLFailsWithConnectionError() throws {
        let error = try #require(throws: PostgresError.self) {
            _ = try PostgresConnection(url: "postgresql:///zevauth?host=/nonexistent-dir&port=1&user=postgres&password=hunter2")
        }
        #expect(error.kind == .connection)
        #expect(!error.message.hasSuffix("\n"))
        #expect(!error.description.contains("hunter2"))
    }
}
