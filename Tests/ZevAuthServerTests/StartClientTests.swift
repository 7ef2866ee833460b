import Authorize
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthTesting

/// The start's one client statement (`PostgresStore.clientEnvironment`) against the real PostgreSQL: the
/// registered callbacks as stored, and the apps' facts the production link rule and the custom-scheme
/// exception need, read in the same row (docs/protocol.md#redirect-kinds).
@Suite struct StartClientTests {
    /// A project with a verified domain `acme.example` and one environment of `kind` with four callbacks:
    /// two links on the verified domain, one on an unverified domain, and two custom schemes.
    static func environment(kind: String) throws -> (key: String, id: String) {
        let key = "pk_\(kind == "production" ? "live" : "test")_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let row = try TestDatabase.pool.query(
            """
            WITH p AS (INSERT INTO projects (name, created_at) VALUES ('Acme', now()) RETURNING id),
            d AS (INSERT INTO project_domains (project_id, domain, verification_token, verified_at, created_at)
                  SELECT id, 'acme.example', 't', now(), now() FROM p),
            e AS (INSERT INTO environments (project_id, kind, publishable_key) SELECT id, $1, $2 FROM p RETURNING id),
            c AS (INSERT INTO callbacks (environment_id, uri, kind, scheme, host, port, path_and_query, created_at)
                  SELECT e.id, v.uri, v.kind, v.scheme, v.host, NULL, v.path, now() + v.n * interval '1 ms' FROM e,
                  (VALUES (1, 'https://acme.example/app/cb', 'link', 'https', 'acme.example', '/app/cb'),
                          (2, 'https://acme.example/other/cb?x=1', 'link', 'https', 'acme.example', '/other/cb?x=1'),
                          (3, 'https://elsewhere.example/cb', 'link', 'https', 'elsewhere.example', '/cb'),
                          (4, 'com.acme.app:/cb', 'custom_scheme', 'com.acme.app', NULL, '/cb'),
                          (5, 'com.acme.other:/cb', 'custom_scheme', 'com.acme.other', NULL, '/cb'))
                  AS v (n, uri, kind, scheme, host, path))
            SELECT id FROM e
            """, [kind, key]
        ).rows[0]
        return (key, try row.string("id"))
    }

    static func redirects(_ key: String) throws -> [String: RegisteredRedirect] {
        let (_, client) = try #require(try PostgresStore(pool: TestDatabase.pool).clientEnvironment(publishableKey: key))
        return Dictionary(uniqueKeysWithValues: client.registeredRedirects.map { ($0.uri.raw, $0) })
    }

    @Test func withoutAppsNoProductionLinkIsVerifiedAndNoCustomSchemeAllowed() throws {
        let production = try Self.redirects(try Self.environment(kind: "production").key)
        #expect(production.count == 5)
        #expect(production.values.allSatisfy { !$0.linkVerified && !$0.productionCustomSchemeAllowed })
        // In development a link needs only the verified project domain.
        let development = try Self.redirects(try Self.environment(kind: "development").key)
        #expect(development["https://acme.example/app/cb"]?.linkVerified == true)
        #expect(development["https://acme.example/other/cb?x=1"]?.linkVerified == true)
        #expect(development["https://elsewhere.example/cb"]?.linkVerified == false)
    }

    @Test func theAppsFactsDecideProductionLinksAndTheCustomSchemeException() throws {
        let (key, environmentID) = try Self.environment(kind: "production")
        // An iOS app verified on acme.example for /app/cb only; an Android app not verified there, with
        // the operator's exception for com.acme.app; an iOS app with no link state at all.
        _ = try TestDatabase.pool.query(
            """
            WITH ios AS (INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at)
                         VALUES ($1::uuid, 'ios', 'ABCDE12345', 'com.acme.app', now()) RETURNING id),
            android AS (INSERT INTO mobile_apps (environment_id, platform, package_name, production_custom_scheme, created_at)
                        VALUES ($1::uuid, 'android', 'com.acme.app', 'com.acme.app', now()) RETURNING id),
            bare AS (INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at)
                     VALUES ($1::uuid, 'ios', 'ABCDE12345', 'com.acme.bare', now()))
            INSERT INTO app_link_states (app_id, domain, status, covered_paths)
            SELECT id, 'acme.example', 'verified', ARRAY['/app/cb'] FROM ios
            UNION ALL SELECT id, 'acme.example', 'not_verified', '{}' FROM android
            """, [environmentID])
        var redirects = try Self.redirects(key)
        #expect(redirects["https://acme.example/app/cb"]?.linkVerified == true)
        #expect(redirects["https://acme.example/other/cb?x=1"]?.linkVerified == false)
        #expect(redirects["https://elsewhere.example/cb"]?.linkVerified == false)
        #expect(redirects["com.acme.app:/cb"]?.productionCustomSchemeAllowed == true)
        #expect(redirects["com.acme.other:/cb"]?.productionCustomSchemeAllowed == false)

        // The Android app verified: every path on its domain, still only on a verified project domain.
        _ = try TestDatabase.pool.query(
            """
            UPDATE app_link_states s SET status = 'verified' FROM mobile_apps a
            WHERE a.id = s.app_id AND a.environment_id = $1::uuid AND a.platform = 'android'
            """, [environmentID])
        redirects = try Self.redirects(key)
        #expect(redirects["https://acme.example/app/cb"]?.linkVerified == true)
        #expect(redirects["https://acme.example/other/cb?x=1"]?.linkVerified == true)
        #expect(redirects["https://elsewhere.example/cb"]?.linkVerified == false)
    }

    @Test func anUnknownKeyIsNoClient() throws {
        #expect(try PostgresStore(pool: TestDatabase.pool).clientEnvironment(publishableKey: "pk_test_nobody") == nil)
    }
}
