import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PKCE
import PasswordHashing
import Postgres
import PostgresStore
import ZevAuthServer

/// The real PostgreSQL that the test command (`scripts/test`) starts, migrated once per test process.
public enum TestDatabase {
    /// `ZEVAUTH_TEST_DATABASE_URL`; tests fail (not skip) without it, because the test command always sets it.
    public static var url: String {
        guard let url = ProcessInfo.processInfo.environment["ZEVAUTH_TEST_DATABASE_URL"], !url.isEmpty else {
            fatalError("ZEVAUTH_TEST_DATABASE_URL is not set: run the tests with scripts/test, which starts PostgreSQL")
        }
        return url
    }

    /// A pool on the migrated test database, shared by every test in the process.
    public static let pool: PostgresPool = {
        let pool = PostgresPool(url: url, size: 24, acquireTimeoutSeconds: 30)
        do {
            _ = try Migrator(directory: repositoryRoot + "/sql").apply(to: pool)
        } catch {
            fatalError("migrating the test database failed: \(error)")
        }
        return pool
    }()

    /// Waits (up to 5 s) until at least `count` backends wait, directly or behind one another, on a lock
    /// that `holder` holds, so a race test knows its contenders are queued behind the transaction it keeps
    /// open. It follows `pg_blocking_pids()` from the holder's own backend (`pg_backend_pid()`), so a
    /// statement of a test running beside it, whatever its text, can never satisfy the wait. (The second
    /// waiter for one row waits on the first waiter's tuple lock, not on the holder: hence the chain.)
    /// - Returns: whether they did.
    public static func waitForWaiters(blockedBy holder: PostgresConnection, count: Int = 1) throws -> Bool {
        let pid = try holder.query("SELECT pg_backend_pid() AS pid").rows[0].string("pid")
        // Its own connection, not the shared pool: under the whole suite's parallel load a poll waiting for a
        // pooled connection could outlast the waiters' 5-second statement timeout, so they would give up (503)
        // before being seen.
        let probe = try PostgresConnection(url: url)
        // Up to 30 s: under the whole suite's parallel load the waiters may take a while to reach the lock.
        for _ in 0..<3000 {
            let waiting = try probe.query(
                """
                WITH RECURSIVE waiter (pid) AS (
                    SELECT pid FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))
                    UNION
                    SELECT a.pid FROM pg_stat_activity a JOIN waiter w ON w.pid = ANY (pg_blocking_pids(a.pid))
                )
                SELECT count(*) AS n FROM waiter
                """, [pid]
            ).rows[0].int("n")
            if waiting >= count { return true }
            usleep(10_000)
        }
        return false
    }

    /// The checkout's root (this file lives in Tests/ZevAuthTesting/).
    public static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}

/// Cheap Argon2id parameters for accounts made by tests (the PHC string carries them, so the server
/// verifies them as usual).
public let testPasswordHasher = PasswordHasher(memoryKiB: 1024, iterations: 1, parallelism: 1)

/// The app a test talks to: the real `ZevAuthApp` over the real PostgreSQL, answering in process by default
/// (`TestHTTPClient`'s in-process transport: no daemon, no port bound, the issuer names a fixed fake port),
/// or behind the real libmicrohttpd daemon on an ephemeral loopback port with `live: true`, for what only a
/// socket shows (HTTP framing and limits, connections, shutdown, real HTTP clients, the end-to-end suite).
public final class TestServer: @unchecked Sendable {
    public let context: ServerContext
    public let app: ZevAuthApp
    /// The live daemon; nil in process.
    public let http: HTTPServer?
    public let log: CapturingLog
    public let clock: ManualClock?
    /// The live daemon's port, or `inProcessPort`.
    public let port: UInt16

    public static let operatorToken = "zop_test_operator_token_0123456789abcdef"

    /// The port an in-process server's issuer and `Host` name. Nothing listens there (the discard port,
    /// below the ephemeral range live servers bind in), so a stray real request fails at once.
    public static let inProcessPort: UInt16 = 9

    /// The log lines of this server that show a failure a bad input must never cause: a database error or a
    /// 500 (empty when every answer was the input's ordinary error).
    public var serverFailureLines: [String] {
        log.all.filter { $0.contains("error postgres") || $0.contains(" 500 ") }
    }
    /// The `ZEVAUTH_ENCRYPTION_KEY` test servers use unless a test changes it (32 fixed bytes).
    public static let encryptionKey: [UInt8] = Array(0..<32)

    /// - Parameters:
    ///   - live: start the real HTTP daemon (8 worker threads) and talk to it over loopback; otherwise
    ///     answer in process.
    ///   - clock: a manual clock, or nil for the system clock.
    ///   - issuer: the issuer, else `http://127.0.0.1:<port>`.
    ///   - configure: changes to the configuration (rate limits default to `.generous`, an encryption key is set).
    ///   - ports: changes to the round trip's ports over the real store (e.g. a fake `idTokenHints` reader).
    ///   - store: the database, else the shared test database (a suite that changes deployment-wide state,
    ///     such as the signing keys, passes a store over a schema of its own).
    public init(
        live: Bool = false, clock: ManualClock? = nil, issuer: String? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }, ports: ((inout RoundTripPorts) -> Void)? = nil,
        store: PostgresStore? = nil, upstream: (any UpstreamAuthority)? = nil
    ) throws {
        let log = CapturingLog()
        var server: HTTPServer?
        let box = HandlerBox()
        if live {
            var http = HTTPServerConfiguration()
            http.port = 0
            http.threadPoolSize = 8
            // The issuer names the port, which is known only after binding: the app is set afterwards.
            server = try HTTPServer(configuration: http, handler: box)
        }
        let port = server?.port ?? Self.inProcessPort
        var configuration = Self.configuration(port: port)
        configure(&configuration)
        configuration.issuer = issuer ?? "http://127.0.0.1:\(port)"
        let store = store ?? PostgresStore(pool: TestDatabase.pool)
        let contextClock: any Clock = clock ?? SystemClock()
        var context = ServerContext(
            configuration: configuration, store: store, clock: contextClock, passwordHasher: testPasswordHasher, log: log)
        if ports != nil || upstream != nil {
            var roundTrip = context.roundTrip
            ports?(&roundTrip)
            context = ServerContext(
                configuration: configuration, store: store, roundTrip: roundTrip, tenancy: context.tenancy,
                accounts: context.accounts, clock: contextClock, passwordHasher: testPasswordHasher, log: log, upstream: upstream)
        }
        let app = ZevAuthApp(context: context)
        box.set(app)
        self.context = context
        self.app = app
        self.http = server
        self.log = log
        self.clock = clock
        self.port = port
    }

    /// The configuration test apps start from: issuer `http://127.0.0.1:<port>`, the test operator token
    /// and encryption key, rate limits `.generous`.
    public static func configuration(port: UInt16, databaseURL: String = TestDatabase.url) -> ServerConfiguration {
        var configuration = ServerConfiguration(
            databaseURL: databaseURL, issuer: "http://127.0.0.1:\(port)", operatorToken: operatorToken)
        configuration.listenPort = 0
        configuration.rateLimits = .generous
        configuration.encryptionKey = encryptionKey
        // Email: each server drains only its own messages, into the run's shared mailbox (Mailbox.swift).
        configuration.mail.outboxDirectory = Mailbox.directory
        configuration.mail.scope = "test-" + UUID().uuidString.lowercased()
        configuration.mail.emailsPerHour = 1_000_000
        return configuration
    }

    /// Whether this server is the live daemon.
    public var isLive: Bool { http != nil }
    public var issuer: String { context.configuration.issuer }
    /// A client over loopback when live, else calling `app` in process.
    public var client: TestHTTPClient {
        http == nil ? TestHTTPClient(handler: app, port: port) : TestHTTPClient(port: port)
    }
    public func browser() -> TestBrowser { TestBrowser(client: client) }
    public var store: PostgresStore { context.store }

    deinit {
        http?.shutdown(gracePeriodSeconds: 2)
        // A server that sent mail started its drainer's thread: stop it, or every such test leaves one behind.
        context.mail.stop()
    }
}

/// Lets the live server start before the app (which needs the bound port in its issuer) exists.
final class HandlerBox: HTTPHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var handler: (any HTTPHandler)?
    func set(_ handler: any HTTPHandler) { lock.withLock { self.handler = handler } }
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard let handler = lock.withLock({ self.handler }) else { return HTTPResponse(status: 503) }
        return handler.handle(request)
    }
    /// Where the app places the request (its work queues), as the real server's handler does.
    func placement(for request: HTTPRequest) -> Placement {
        lock.withLock { self.handler }?.placement(for: request) ?? .inline
    }
}

/// A project, an account and callbacks, made directly in the store for one test.
public struct Fixture: Sendable {
    public let projectID: String
    public let developmentKey: String
    public let developmentSecret: String
    public let productionKey: String
    public let productionSecret: String
    public let email: String
    public let password: String
    public let userID: String

    /// Creates a project named `name` with both environments, an account with a unique email, and the
    /// given development and production callbacks (link callbacks' domains are marked verified).
    public static func make(
        store: PostgresStore, name: String = "Acme", development: [String] = ["http://127.0.0.1/cb", "com.acme.app:/callback"],
        production: [String] = [], verifiedDomains: [String] = []
    ) throws -> Fixture {
        let now = Date()
        let dev = try AdminKeys.mint(publishable: "pk_test_", secret: "sk_test_")
        let prod = try AdminKeys.mint(publishable: "pk_live_", secret: "sk_live_")
        let projectID = try store.createProject(name: name, development: dev.keys, production: prod.keys, now: now)
        for domain in verifiedDomains {
            _ = try store.addDomain(projectID: projectID, domain: domain, verificationToken: "t", now: now)
            _ = try store.markDomainVerified(projectID: projectID, domain: domain, hosted: nil, now: now)
        }
        for (key, uris) in [(dev.keys.publishableKey, development), (prod.keys.publishableKey, production)] {
            guard let environment = try store.environment(publishableKey: key) else { fatalError("environment") }
            for uri in uris {
                guard case .success(let parsed) = RedirectURI.parse(uri) else { fatalError("fixture callback \(uri) does not parse") }
                _ = try store.addCallback(environmentID: environment.id, uri: uri, kind: parsed.kind.rawValue, now: now)
            }
        }
        let email = "person-\(UUID().uuidString.lowercased())@example.com"
        let password = "correct horse \(UUID().uuidString.prefix(8))"
        let user = try store.createUser(
            email: email, emailNormalized: email, name: "Pat Person",
            passwordHash: try testPasswordHasher.hash(password), now: now)
        for secret in [email, password, dev.secret, prod.secret] { SuiteCapture.secret(secret) }
        return Fixture(
            projectID: projectID, developmentKey: dev.keys.publishableKey, developmentSecret: dev.secret,
            productionKey: prod.keys.publishableKey, productionSecret: prod.secret,
            email: email, password: password, userID: user.id)
    }
}

enum AdminKeys {
    static func mint(publishable: String, secret: String) throws -> (keys: PostgresStore.NewEnvironmentKeys, secret: String) {
        let secretKey = try Crypto.mintToken(prefix: secret)
        return (
            PostgresStore.NewEnvironmentKeys(
                publishableKey: try Crypto.mintToken(prefix: publishable),
                secretKeyHash: Crypto.hexSHA256(secretKey), secretKeySuffix: String(secretKey.suffix(4))), secretKey
        )
    }
}

/// A fresh PKCE pair (RFC 7636 §4.1–4.2).
public struct PKCEPair: Sendable {
    public let verifier: String
    public let challenge: String

    public init() {
        verifier = Base64URL.encode((try? Crypto.randomBytes(32)) ?? [])
        challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        SuiteCapture.secret(verifier)
    }
}

/// Builds a start URL's query with every pair percent-encoded (RFC 3986 unreserved left bare).
public func startTarget(_ pairs: [(String, String)], path: String = "/v1/auth/zevid/start") -> String {
    path + "?" + FormURLEncoding.encode(pairs)
}
