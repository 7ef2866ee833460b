import Authorize
import Foundation
import Postgres
import Synchronization
import Testing
import ZevAuthTesting

@testable import PostgresStore

/// The configuration kept in memory (docs/operations.md, "Configuration in memory"): a lookup is served
/// from memory only while the listener listens and nothing was notified since its load; another
/// instance's change is seen within a second; a lost listener makes the instance unready, and what changed
/// meanwhile is seen once it listens again. The tests are synchronous, so each runs on one thread and so
/// sees one thread's cache.
@Suite(.serialized) struct ConfigurationSnapshotTests {
    /// One server instance: its own pool, snapshot and listener on the shared test database.
    final class Instance: Sendable {
        let store: PostgresStore

        init(listenURL: String = TestDatabase.url) {
            store = PostgresStore.connect(url: TestDatabase.url, size: 2, listenURL: listenURL)
        }

        deinit { store.configuration?.stopListening() }

        func start(_ key: String) throws -> StartClient? { try store.authorizations.startClient(publishableKey: key) }
    }

    /// A development environment with one custom-scheme callback; its publishable key and id.
    static func environment() throws -> (key: String, id: String) {
        let key = "pk_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let row = try TestDatabase.pool.query(
            """
            WITH p AS (INSERT INTO projects (name, created_at) VALUES ('Snapshot', now()) RETURNING id),
            e AS (INSERT INTO environments (project_id, kind, publishable_key) SELECT id, 'development', $1 FROM p RETURNING id)
            INSERT INTO callbacks (environment_id, uri, kind, scheme, host, port, path_and_query, created_at)
            SELECT id, 'com.snapshot.app:/cb', 'custom_scheme', 'com.snapshot.app', NULL, NULL, '/cb', now() FROM e
            RETURNING environment_id
            """, [key]
        ).rows[0]
        return (key, try row.string("environment_id"))
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` passed; whether it held.
    static func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    static func listening(_ instance: Instance) -> Bool {
        eventually(within: 5) { instance.store.configuration?.isListening == true }
    }

    /// A snapshot that calls `count` on each load: start clients are never found, and the exchange's
    /// environment is `environment` when `countsExchange`, else nil without a call.
    private static func counting(
        _ count: @escaping @Sendable () -> Void, environment: ExchangeEnvironment? = nil, countsExchange: Bool = true
    ) -> ConfigurationSnapshot {
        ConfigurationSnapshot(
            loadStartClient: { _ in
                count()
                return nil
            },
            loadExchangeEnvironment: { _ in
                guard countsExchange else { return nil }
                count()
                return environment
            })
    }

    /// A listener that connected is trusted only once a probe it was sent comes back: until then every
    /// lookup reads; the probe's notification is not a change; readiness follows the connection.
    @Test func cachingWaitsForAProbeToComeBack() throws {
        let loads = Atomic<Int>(0)
        let sent = Mutex<[String]>([])
        let snapshot = Self.counting({ loads.add(1, ordering: .relaxed) }, countsExchange: false)
        snapshot.startDeliveryCheck { payload in sent.withLock { $0.append(payload) } }
        defer { snapshot.stopListening() }
        snapshot.receive(.listening)
        #expect(snapshot.isReady)
        #expect(Self.eventually(within: 2) { !sent.withLock { $0 }.isEmpty }, "no probe was sent")
        _ = try snapshot.startClient(publishableKey: "pk_test_probe")
        _ = try snapshot.startClient(publishableKey: "pk_test_probe")
        #expect(loads.load(ordering: .relaxed) == 2, "cached before the probe came back")
        #expect(!snapshot.isListening)

        let probe = try #require(sent.withLock { $0.last })
        snapshot.receive(.notification(payload: probe))
        #expect(Self.eventually(within: 2) { snapshot.isListening }, "the returned probe did not enable the cache")
        _ = try snapshot.startClient(publishableKey: "pk_test_probe")
        _ = try snapshot.startClient(publishableKey: "pk_test_probe")
        #expect(loads.load(ordering: .relaxed) == 3)
        // Another instance's probe is no change: the entry stays.
        snapshot.receive(.notification(payload: "probe:another-instance"))
        _ = try snapshot.startClient(publishableKey: "pk_test_probe")
        #expect(loads.load(ordering: .relaxed) == 3)
    }

    /// A probe that never comes back (a pooler that swallowed the LISTEN): nothing is ever cached, though the
    /// instance is ready.
    @Test func aProbeThatNeverComesBackKeepsEveryLookupReading() throws {
        let loads = Atomic<Int>(0)
        let snapshot = Self.counting({ loads.add(1, ordering: .relaxed) }, countsExchange: false)
        snapshot.startDeliveryCheck { _ in }
        defer { snapshot.stopListening() }
        snapshot.receive(.listening)
        Thread.sleep(forTimeInterval: 0.5)
        for _ in 0..<3 { _ = try snapshot.startClient(publishableKey: "pk_test_probe") }
        #expect(loads.load(ordering: .relaxed) == 3)
        #expect(!snapshot.isListening)
        #expect(snapshot.isReady)
    }

    /// A key longer than any real one is looked up every time and never kept, so made-up keys cannot fill
    /// the caches' memory.
    @Test func aKeyLongerThanAnyRealOneIsNeverKept() throws {
        let loads = Atomic<Int>(0)
        let snapshot = Self.counting({ loads.add(1, ordering: .relaxed) })
        snapshot.receive(.listening)
        let long = "pk_test_" + String(repeating: "x", count: ConfigurationSnapshot.maximumKeyBytes)
        _ = try snapshot.exchangeEnvironment(publishableKey: long)
        _ = try snapshot.exchangeEnvironment(publishableKey: long)
        #expect(loads.load(ordering: .relaxed) == 2)
        let real = "pk_test_" + String(repeating: "x", count: 32)
        _ = try snapshot.startClient(publishableKey: real)
        _ = try snapshot.startClient(publishableKey: real)
        #expect(loads.load(ordering: .relaxed) == 3)
    }

    @Test func aSecondLookupIsServedFromMemoryUntilANotification() throws {
        let loads = Atomic<Int>(0)
        let answer = ExchangeEnvironment(
            id: "e", sessionMaxAgeDays: 30, sessionIdleDays: 7, accessTokenTTLMinutes: 10, idTokenSigningAlg: .rs256, requireDPoP: false)
        let snapshot = Self.counting({ loads.add(1, ordering: .relaxed) }, environment: answer)
        // No listener yet: every lookup reads.
        _ = try snapshot.startClient(publishableKey: "pk_test_a")
        _ = try snapshot.startClient(publishableKey: "pk_test_a")
        #expect(loads.load(ordering: .relaxed) == 2)

        snapshot.receive(.listening)
        #expect(try snapshot.exchangeEnvironment(publishableKey: "pk_test_a") == answer)
        #expect(try snapshot.exchangeEnvironment(publishableKey: "pk_test_a") == answer)
        #expect(try snapshot.startClient(publishableKey: "pk_test_a") == nil)
        #expect(try snapshot.startClient(publishableKey: "pk_test_a") == nil, "an unknown key is cached too")
        #expect(loads.load(ordering: .relaxed) == 4)

        snapshot.receive(.notification(payload: "callbacks"))
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_a")
        #expect(loads.load(ordering: .relaxed) == 5)

        snapshot.receive(.lost)
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_a")
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_a")
        #expect(loads.load(ordering: .relaxed) == 7, "while the listener is down every lookup reads")
        #expect(!snapshot.isListening)
        snapshot.receive(.listening)
        #expect(snapshot.isListening)
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_a")
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_a")
        #expect(loads.load(ordering: .relaxed) == 8)
    }

    @Test func aChangeNotifiedDuringALoadIsNotServedAfterIt() throws {
        let loads = Atomic<Int>(0)
        let box = Mutex<ConfigurationSnapshot?>(nil)
        let snapshot = ConfigurationSnapshot(
            loadStartClient: { _ in nil },
            loadExchangeEnvironment: { _ in
                // The first load races a change: its notification arrives before the load returns.
                if loads.add(1, ordering: .relaxed).newValue == 1 { box.withLock { $0 }?.receive(.notification(payload: "environments")) }
                return nil
            })
        box.withLock { $0 = snapshot }
        snapshot.receive(.listening)
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_b")
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_b")
        _ = try snapshot.exchangeEnvironment(publishableKey: "pk_test_b")
        #expect(loads.load(ordering: .relaxed) == 2)
    }

    @Test func anotherInstancesChangesAreSeenWithinOneSecond() throws {
        let (key, environmentID) = try Self.environment()
        let a = Instance()
        let b = Instance()
        #expect(Self.listening(a) && Self.listening(b))
        #expect(a.store.isReady())

        let before = try #require(try a.start(key))
        #expect(before.client.registeredRedirects.map(\.uri.raw) == ["com.snapshot.app:/cb"])
        #expect(!before.client.requiresPushedRequests)
        #expect(try a.start(key) == before)

        // Instance B deletes the callback and makes the environment require pushed requests.
        try b.store.pool.query("DELETE FROM callbacks WHERE environment_id = $1::uuid", [environmentID])
        #expect(try Self.eventually(within: 1) { try a.start(key)?.client.registeredRedirects.isEmpty == true })
        try b.store.pool.query(
            "UPDATE environments SET require_pushed_authorization_requests = true WHERE id = $1::uuid", [environmentID])
        #expect(try Self.eventually(within: 1) { try a.start(key)?.client.requiresPushedRequests == true })
        // The exchange's environment the same way.
        #expect(try a.store.authorizations.exchangeEnvironment(publishableKey: key)?.requireDPoP == false)
        try b.store.pool.query("UPDATE environments SET require_dpop = true WHERE id = $1::uuid", [environmentID])
        #expect(try Self.eventually(within: 1) { try a.store.authorizations.exchangeEnvironment(publishableKey: key)?.requireDPoP == true })
    }

    @Test func aDeletedWebClientIsUnknownWithinOneSecond() throws {
        let (_, environmentID) = try Self.environment()
        let clientID = "zc_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try TestDatabase.pool.query(
            """
            INSERT INTO web_clients (client_id, environment_id, name, redirect_uris, token_endpoint_auth_method, created_at, updated_at)
            VALUES ($1, $2::uuid, 'Web', ARRAY['https://web.example/cb'], 'client_secret_basic', now(), now())
            """, [clientID, environmentID])
        let a = Instance()
        let b = Instance()
        #expect(Self.listening(a) && Self.listening(b))
        #expect(try a.start(clientID)?.client.webClient?.clientID == clientID)
        try b.store.pool.query("DELETE FROM web_clients WHERE client_id = $1", [clientID])
        #expect(try Self.eventually(within: 1) { try a.start(clientID) == nil })
    }

    @Test func aLostListenerIsUnreadyUntilItListensAgainAndThenSeesWhatChanged() throws {
        // The listener logs in as its own role, so the test can refuse its reconnection for a while and end
        // only its backend (other suites' listeners are left alone).
        let role = "zevauth_listener_probe"
        try TestDatabase.pool.query(
            "DO $$ BEGIN CREATE ROLE \(role) LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        try TestDatabase.pool.query("ALTER ROLE \(role) LOGIN")
        let separator = TestDatabase.url.contains("?") ? "&" : "?"
        let (key, environmentID) = try Self.environment()
        let a = Instance(listenURL: TestDatabase.url + separator + "user=\(role)")
        #expect(Self.listening(a))
        #expect(try a.start(key)?.client.registeredRedirects.count == 1)

        try TestDatabase.pool.query("ALTER ROLE \(role) NOLOGIN")
        try TestDatabase.pool.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = '\(PostgresListener.applicationName)' AND usename = '\(role)'
            """)
        #expect(Self.eventually(within: 2) { !a.store.isReady() })
        // Changed while nobody listened: no notification reaches instance A.
        try TestDatabase.pool.query("DELETE FROM callbacks WHERE environment_id = $1::uuid", [environmentID])
        Thread.sleep(forTimeInterval: 0.3)
        #expect(!a.store.isReady())

        try TestDatabase.pool.query("ALTER ROLE \(role) LOGIN")
        #expect(Self.eventually(within: 5) { a.store.isReady() })
        #expect(try a.start(key)?.client.registeredRedirects.isEmpty == true)
    }
}
