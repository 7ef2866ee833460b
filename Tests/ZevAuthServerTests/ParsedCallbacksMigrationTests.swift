import Authorize
import Crypto
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthTesting

/// Migration 008 on a database written by the schema before it (sql/001–007): a session made then keeps
/// refreshing and answering, a registered callback is parsed by the migration's step and matched from its
/// stored parts, and one the current rules refuse is never matched (docs/decisions.md, "Round trip storage").
@Suite struct ParsedCallbacksMigrationTests {
    static func migrations(through last: Int) throws -> [Migration] {
        let directory = TestDatabase.repositoryRoot + "/sql"
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
            .compactMap { file in
                let version = Int(file.prefix(3)) ?? 0
                guard version <= last else { return nil }
                let name = String(file.dropFirst(4).dropLast(4))
                return Migration(
                    version: version, name: name, sql: try String(contentsOfFile: directory + "/" + file, encoding: .utf8))
            }
    }

    @Test func sessionsAndCallbacksWrittenBeforeMigration8KeepWorking() throws {
        let admin = try PostgresConnection(url: TestDatabase.url)
        let schema = "m8_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try admin.query("CREATE SCHEMA \(schema)")
        defer { _ = try? admin.query("DROP SCHEMA \(schema) CASCADE") }
        let url = TestDatabase.url + (TestDatabase.url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        let pool = PostgresPool(url: url, size: 2)
        _ = try Migrator(migrations: try Self.migrations(through: 7)).apply(to: pool)

        // Written as the server before migration 8 wrote them.
        let now = Date()
        let time = String(now.timeIntervalSince1970)
        let refreshToken = try Crypto.mintToken(prefix: "zrt_")
        let accessToken = try Crypto.mintToken(prefix: "zat_")
        SuiteCapture.secret(refreshToken)
        SuiteCapture.secret(accessToken)
        let ids = try pool.query(
            """
            WITH p AS (INSERT INTO projects (name, created_at) VALUES ('Acme', to_timestamp($1::float8)) RETURNING id),
            e AS (INSERT INTO environments (project_id, kind, publishable_key) SELECT id, 'development', 'pk_test_m8' FROM p RETURNING id),
            u AS (INSERT INTO users (email, email_normalized, name, password_hash, password_changed_at, created_at)
                  VALUES ('ada@example.com', 'ada@example.com', 'Ada', 'x', to_timestamp($1::float8), to_timestamp($1::float8)) RETURNING id),
            c AS (INSERT INTO callbacks (environment_id, uri, kind, created_at)
                  SELECT id, v.uri, v.kind, to_timestamp($1::float8) FROM e,
                  (VALUES ('http://127.0.0.1/cb', 'loopback'), ('com.acme.app:/cb?state=planted', 'custom_scheme')) AS v (uri, kind)),
            s AS (INSERT INTO sessions (environment_id, user_id, auth_time, created_at, last_refreshed_at, access_token_hash,
                      access_expires_at, refresh_token_hash)
                  SELECT e.id, u.id, to_timestamp($1::float8), to_timestamp($1::float8), to_timestamp($1::float8), $2,
                      to_timestamp($1::float8) + interval '15 minutes', $3 FROM e, u RETURNING id),
            r AS (INSERT INTO refresh_tokens (token_hash, session_id, generation, issued_at)
                  SELECT $3, id, 1, to_timestamp($1::float8) FROM s)
            SELECT (SELECT id FROM s) AS session_id
            """, [time, Crypto.hexSHA256(accessToken), Crypto.hexSHA256(refreshToken)]
        ).rows[0]
        let sessionID = try ids.string("session_id")

        // Migration 8 and every later one: today's statements run on today's schema.
        _ = try Migrator(migrations: try Self.migrations(through: 999), steps: [CallbackMigration.step]).apply(to: pool)
        let columns = try pool.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'sessions'", [schema]
        ).rows.map { try $0.string("column_name") }
        #expect(!columns.contains("access_token_hash") && !columns.contains("refresh_token_hash"))

        // The session's access token (only in the mirror before) still answers, and its refresh rotates.
        let store = PostgresStore(pool: pool)
        let current = try store.sessions.session(accessTokenHash: Crypto.hexSHA256(accessToken), now: now)
        #expect(current?.sessionID == sessionID)
        let outcome = try store.sessions.refresh(
            RefreshAttempt(
                publishableKey: "pk_test_m8", refreshTokenHash: Crypto.hexSHA256(refreshToken),
                newAccessTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zat_")),
                newRefreshTokenHash: Crypto.hexSHA256(try Crypto.mintToken(prefix: "zrt_")), now: now.addingTimeInterval(60)))
        guard case .refreshed(let refreshed) = outcome else {
            Issue.record("expected a rotation, got \(outcome)")
            return
        }
        #expect(refreshed.sessionID == sessionID)

        // The step parsed the callback the rules accept; the one they refuse has no parts and is never offered.
        let client = try #require(try store.authorizations.startClient(publishableKey: "pk_test_m8")).client
        #expect(client.registeredRedirects.map(\.uri.raw) == ["http://127.0.0.1/cb"])
        let registered = try #require(client.registeredRedirects.first?.uri)
        #expect(registered.kind == .loopback && registered.host == "127.0.0.1" && registered.pathAndQuery == "/cb")
        guard case .success(let requested) = RedirectURI.parse("http://127.0.0.1:5000/cb") else { return }
        #expect(requested.matchesRegistered(registered))
    }
}
