import Authorize
import Foundation
import HTTPServer
import PostgresStore

/// Running the server process: locating migrations, refusing a database that is behind, serving until
/// SIGINT/SIGTERM, and shutting down with in-flight requests finished.
public enum ServerRunner {
    /// Finds the `sql/` folder of migrations: the configured one, else `./sql`, else a `sql/` beside or
    /// above the executable (a checkout's `.build/…/zevauth`), else `/usr/share/zevauth/sql`.
    /// - Returns: the folder's path, or nil.
    public static func sqlDirectory(configured: String?) -> String? {
        let fileManager = FileManager.default
        func hasMigrations(_ path: String) -> Bool {
            ((try? fileManager.contentsOfDirectory(atPath: path)) ?? []).contains { $0.hasSuffix(".sql") }
        }
        if let configured { return configured }
        var candidates = [fileManager.currentDirectoryPath + "/sql"]
        if let executable = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
            for _ in 0..<6 {
                candidates.append(directory.appendingPathComponent("sql").path)
                candidates.append(directory.appendingPathComponent("share/zevauth/sql").path)
                directory = directory.deletingLastPathComponent()
            }
        }
        candidates.append("/usr/share/zevauth/sql")
        return candidates.first(where: hasMigrations)
    }

    /// The migrator for the configured folder, with the Swift steps that complete some migrations
    /// (`PostgresStore.emailKeyStep`, over the server's address rule `EmailAddress`).
    /// - Throws: `ConfigurationError` when no folder is found; `Migrator`'s errors for a bad file.
    public static func migrator(configured: String?) throws -> Migrator {
        guard let directory = sqlDirectory(configured: configured) else {
            throw ConfigurationError(key: "ZEVAUTH_SQL_DIR", problem: "no sql/ folder of migrations was found; set it")
        }
        return try Migrator(directory: directory, steps: [PostgresStore.emailKeyStep { EmailAddress($0)?.key }, CallbackMigration.step])
    }

    /// Serves until SIGINT or SIGTERM, then stops accepting, lets in-flight requests finish (up to 10 s),
    /// and returns.
    /// - Throws: when the database's migrations are behind, or the address cannot be bound.
    public static func serve(_ context: ServerContext, migrator: Migrator, onReady: (UInt16) -> Void = { _ in }) throws {
        let pending = try reachingDatabase { try context.store.pendingMigrations(migrator) }
        guard pending.isEmpty else {
            throw ConfigurationError(
                key: "ZEVAUTH_DATABASE_URL",
                problem: "the database is behind by \(pending.count) migration(s); run `zevauth migrate` first")
        }
        // The first `serve` makes the signing keys (a current and a next key per algorithm); concurrent
        // first starts store one set (docs/operations.md, "Signing keys").
        if context.configuration.encryptionKey != nil {
            try reachingDatabase { try context.roundTrip.signingKeys?.ensureKeys() }
        }
        HTTPServer.blockTerminationSignals()
        var http = HTTPServerConfiguration()
        http.host = context.configuration.listenHost
        http.port = context.configuration.listenPort
        http.threadPoolSize = context.configuration.httpThreads
        http.perIPConnectionLimit = context.configuration.httpConnectionsPerAddress
        http.perIPLimitExemptAddresses = context.configuration.trustedProxies
        http.requestDeadlineSeconds = context.configuration.httpRequestDeadlineSeconds
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: http, handler: ZevAuthApp(context: context))
        } catch let error as HTTPServerError {
            throw listenFailure(error)
        }
        context.log.write("listening on \(context.configuration.listenHost):\(server.port) issuer=\(context.configuration.issuer)")
        let metricsServer = try startMetrics(context, publicServer: server)
        // The daily association checks run inside the server; leases let any number of instances share them.
        let scheduler =
            context.configuration.linkChecks ? LinkScheduler(context: context, housekeeping: Housekeeping(store: context.store)) : nil
        scheduler?.start()
        // Every instance drains the email outbox; leases keep two from sending one message.
        if let smtp = context.configuration.mail.smtp {
            context.log.write("email through \(smtp.redacted)")
        } else if context.configuration.mail.outboxDirectory == nil {
            context.log.write("warning no ZEVAUTH_SMTP_URL: emails are queued but not sent")
        }
        context.mail.start()
        onReady(server.port)
        let signal = HTTPServer.waitForTerminationSignal()
        context.log.write("signal \(signal): stopping; letting in-flight requests finish")
        scheduler?.stop()
        context.mail.stop()
        server.shutdown(gracePeriodSeconds: 10)
        metricsServer?.shutdown(gracePeriodSeconds: 1)
        context.log.write("stopped")
    }

    /// Starts the metrics listener on `ZEVAUTH_METRICS_LISTEN` when it is set: its own `HTTPServer`
    /// (two threads) answering only `GET /metrics`, so the public port never serves metrics. Counts
    /// `publicServer`'s open connections in `zevauth_http_connections_open`.
    /// - Returns: the listener, or nil when none is configured.
    /// - Throws: `ConfigurationError` naming `ZEVAUTH_METRICS_LISTEN` when it cannot bind.
    public static func startMetrics(_ context: ServerContext, publicServer: HTTPServer) throws -> HTTPServer? {
        context.metrics.addOpenConnections { [publicServer] in publicServer.openConnections }
        guard let listen = context.configuration.metricsListen else { return nil }
        var http = HTTPServerConfiguration()
        http.host = listen.host
        http.port = listen.port
        http.threadPoolSize = 2
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: http, handler: MetricsEndpoint(metrics: context.metrics))
        } catch let error as HTTPServerError {
            let failure = listenFailure(error)
            throw ConfigurationError(key: "ZEVAUTH_METRICS_LISTEN", problem: failure.problem)
        }
        context.log.write("metrics on \(listen.host):\(server.port)")
        return server
    }

    /// Runs `work`, the first use of the database; a connection failure (`StoreUnavailable` with reason
    /// `connection`) becomes the configuration error of `ZEVAUTH_DATABASE_URL`, naming its `detail` (libpq's
    /// first line, which names the host or socket, never the password).
    public static func reachingDatabase<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as StoreUnavailable where error.reason == "connection" {
            let reason = error.detail ?? ""
            throw ConfigurationError(key: "ZEVAUTH_DATABASE_URL", problem: "PostgreSQL cannot be reached: \(reason)")
        }
    }

    /// A failure to start the HTTP server as the configuration error of the key that decides it, so the
    /// operator sees what to change (docs/operations.md, "Commands").
    static func listenFailure(_ error: HTTPServerError) -> ConfigurationError {
        switch error {
        case .invalidConfiguration(let field, let reason) where field == "threadPoolSize":
            ConfigurationError(key: "ZEVAUTH_HTTP_THREADS", problem: reason)
        case .invalidConfiguration(let field, let reason):
            ConfigurationError(key: "ZEVAUTH_LISTEN", problem: "the HTTP server refused its \(field): \(reason)")
        case .invalidHost:
            ConfigurationError(key: "ZEVAUTH_LISTEN", problem: "the host must be an IP address literal or localhost")
        case .addressInUse(let host, let port):
            ConfigurationError(key: "ZEVAUTH_LISTEN", problem: "\(host) port \(port) is already in use by another process")
        case .startFailed(let host, let port, let code):
            ConfigurationError(
                key: "ZEVAUTH_LISTEN",
                problem: "the server could not listen on \(host) port \(port)"
                    + (code == 0 ? "" : " (\(String(cString: strerror(code))))"))
        }
    }
}

extension Metrics {
    /// The metrics of a context over `store`: the pool's occupancy read at each scrape, and the process's
    /// statement observer (installed once) feeding the database histogram and error counts.
    static func over(_ store: PostgresStore) -> Metrics {
        PostgresEdge.observe(
            with: StatementObserver { nanoseconds, failure in
                DatabaseMetrics.shared.statement(nanoseconds: nanoseconds, failureKind: failure?.label)
            })
        return Metrics(poolOccupancy: { [store] in store.poolOccupancy })
    }
}
