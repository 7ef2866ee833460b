import Authorize
import Encoding
import Fetch
import Foundation
import IDNA

/// The server's configuration (docs/operations.md#configuration). Every field has a documented
/// default or is required; `ConfigurationLoader` fills it from environment variables and flags and
/// validates it, because configuration is untrusted input.
public struct ServerConfiguration: Sendable {
    /// libpq connection URI (`ZEVAUTH_DATABASE_URL`). Required.
    public var databaseURL: String
    /// Address to bind (`ZEVAUTH_LISTEN`, `host:port`; default `127.0.0.1:8080`). IPv6 as `[::1]:8080`.
    public var listenHost: String = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    /// Public base URL, the `iss` value (RFC 9207) and the base of every link the server prints
    /// (`ZEVAUTH_ISSUER`). Required; `https` unless it is `http` on a loopback host (development).
    public var issuer: String
    /// Token that runs the deployment (`ZEVAUTH_OPERATOR_TOKEN`); at least 32 characters. Required.
    public var operatorToken: String
    /// 32-byte key for AES-256-GCM of TOTP secrets (`ZEVAUTH_ENCRYPTION_KEY`, base64). Optional until TOTP.
    public var encryptionKey: [UInt8]?
    /// IP literals of reverse proxies whose `X-Forwarded-For`/`X-Forwarded-Proto` are believed
    /// (`ZEVAUTH_TRUSTED_PROXIES`, comma-separated; default none).
    public var trustedProxies: [String] = []
    /// Worker threads of the HTTP server (`ZEVAUTH_HTTP_THREADS`, 1–256, default 16). Handlers block on
    /// PostgreSQL and Argon2id, so this bounds concurrent requests.
    public var httpThreads: Int = 16
    /// PostgreSQL connections per instance (`ZEVAUTH_DATABASE_POOL_SIZE`, 1–200). Default (nil): one per
    /// thread that uses the database, `databasePoolSizeForThreads`.
    public var databasePoolSize: Int?
    /// Argon2id hashes computed at once (`ZEVAUTH_PASSWORD_HASH_CONCURRENCY`, 1–64, default 2): the threads
    /// of the password-hashing work queue. Each hash holds 19 MiB while it runs, so this bounds that memory.
    public var passwordHashConcurrency: Int = 2
    /// Threads of the outbound-fetch work queue (domain verification, "Check again"): fixed at 4, the
    /// instance's outbound slots (`OutboundSlots`).
    public static let outboundFetchThreads = 4
    /// Connections of the pool shared by threads that have none of their own (the link scheduler, a nested
    /// use): fixed at 4.
    public static let sharedDatabaseConnections = 4

    /// How many hot-path database requests (the exchange, the refresh, the token endpoint, the native start)
    /// run on the HTTP workers at once, instead of on the database queue: half the HTTP workers, at least 1
    /// (docs/decisions.md, "The database never holds an HTTP worker"). Each takes a shared connection.
    public var inlineDatabaseRequests: Int { max(1, httpThreads / 2) }

    /// The pool's shared connections: `sharedDatabaseConnections` plus one per inline database request.
    public var databaseSharedConnections: Int { Self.sharedDatabaseConnections + inlineDatabaseRequests }

    /// The pool size when `ZEVAUTH_DATABASE_POOL_SIZE` is not set: one connection for each database-queue
    /// thread and each other work-queue thread, plus the shared ones (docs/operations.md, "Sizing").
    public var databasePoolSizeForThreads: Int {
        httpThreads + passwordHashConcurrency + Self.outboundFetchThreads + databaseSharedConnections
    }

    /// The pool size in effect: `databasePoolSize` when set, else `databasePoolSizeForThreads`.
    public var effectiveDatabasePoolSize: Int { databasePoolSize ?? databasePoolSizeForThreads }
    // MARK: Database faults (docs/operations.md, "Database deadlines" and "PostgreSQL high availability")

    /// Whether the hot statements are prepared on the server (`ZEVAUTH_DATABASE_PREPARED`, default on). Off
    /// for PgBouncer in transaction mode, where consecutive statements may reach different server
    /// connections: every statement is then sent unnamed (`PQsendQueryParams`).
    public var databasePrepared: Bool = true
    /// Where the configuration listener connects (`ZEVAUTH_DATABASE_LISTEN_URL`): PostgreSQL directly or
    /// through session pooling, since PgBouncer's transaction mode does not carry `LISTEN`. Nil: the
    /// database URL, unless `databasePrepared` is off (taken to mean PgBouncer in transaction mode), when no
    /// listener runs and the configuration is read from PostgreSQL on every request (docs/operations.md,
    /// "Configuration in memory").
    public var databaseListenURL: String?

    /// The URL the configuration listener uses, or nil for none (see `databaseListenURL`).
    public var effectiveDatabaseListenURL: String? { databaseListenURL ?? (databasePrepared ? databaseURL : nil) }
    /// Every statement's deadline in milliseconds (`ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS`, 100–600000,
    /// default 5000): PostgreSQL's `statement_timeout` on each connection, and the server's own wait on the
    /// socket one second past it. A request whose statement passes it answers 503 with `Retry-After`.
    public var databaseStatementTimeoutMilliseconds: Int = 5000
    /// How long an exchange or refresh whose statement's fate is unknown (the connection broke after it was
    /// sent) settles itself before answering 503 (`ZEVAUTH_DATABASE_SETTLE_MS`, 0–120000, default 15000; 0
    /// answers 503 at once).
    public var databaseSettleMilliseconds: Int = 15_000

    /// Folder of `NNN_name.sql` migrations (`ZEVAUTH_SQL_DIR`; default: the `sql/` found from the working
    /// directory or the executable's location).
    public var sqlDirectory: String?
    /// Outbound HTTPS for association and domain-token checks (`ZEVAUTH_OUTBOUND_CA_FILE`,
    /// `ZEVAUTH_OUTBOUND_RESOLVE`, `ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`, `ZEVAUTH_OUTBOUND_TIMEOUT_MS`,
    /// `ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS`); defaults: system CAs, private addresses refused, 10 s / 5 s.
    public var outbound = OutboundConfiguration()
    /// The port association and token files are fetched from: 443. Tests only (no variable sets it),
    /// because a test HTTPS server cannot bind 443 beside others.
    public var outboundPort: Int = 443
    /// Whether `serve` runs the daily association-check scheduler (`ZEVAUTH_LINK_CHECKS`, default on).
    public var linkChecks: Bool = true
    /// Rate-limit thresholds (`ZEVAUTH_RATE_*`; see `RateLimits` for the variables and defaults).
    public var rateLimits = RateLimits()
    /// Log line format (`ZEVAUTH_LOG_FORMAT`, `json` or `text`): `serve` defaults to `json`, `zevauth dev`
    /// to `text`; a configuration built in code (tests) starts as `text`.
    public var logFormat: LogFormat = .text
    /// Where the Prometheus metrics listener binds (`ZEVAUTH_METRICS_LISTEN`, `host:port` like
    /// `ZEVAUTH_LISTEN`); nil (the default): no metrics listener.
    public var metricsListen: (host: String, port: UInt16)?
    /// Outbound email (`ZEVAUTH_SMTP_*`, `ZEVAUTH_RATE_EMAILS_PER_HOUR`; docs/operations.md, "Outbound email").
    public var mail = MailSettings()

    // MARK: Slow and greedy clients (docs/operations.md, "Slow and greedy clients")
    /// Connections one client address may hold open at once (`ZEVAUTH_HTTP_CONNECTIONS_PER_ADDRESS`,
    /// 0–100 000, default 256; 0 = no limit). The trusted proxies are exempt.
    public var httpConnectionsPerAddress: Int = 256
    /// Seconds a request may take to arrive whole, headers and body (`ZEVAUTH_HTTP_REQUEST_DEADLINE_SECONDS`,
    /// 1–3600, default 20), from the connection's opening or the previous response.
    public var httpRequestDeadlineSeconds: Int = 20
    /// The passkeys' relying party ID (`ZEVAUTH_PASSKEY_RP_ID`, docs/passkeys.md, "Relying party"): nil for
    /// the issuer's host; otherwise the issuer's host or a registrable parent of it, lower-case A-labels.
    public var passkeyRPID: String?

    public init(databaseURL: String, issuer: String, operatorToken: String) {
        self.databaseURL = databaseURL
        self.issuer = issuer
        self.operatorToken = operatorToken
    }

    /// The passkeys' relying party: `passkeyRPID` or the issuer's host, and the issuer as the one origin.
    public var relyingParty: RelyingParty {
        RelyingParty(id: passkeyRPID ?? ConfigurationLoader.issuerHost(issuer), origin: issuer)
    }

    /// Whether cookies carry `Secure`: always, except when the issuer is `http` on loopback (development).
    public var secureCookies: Bool { issuer.hasPrefix("https://") }
}

/// A configuration key that is missing or invalid; the message names the key and never echoes a secret.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The environment variable (`ZEVAUTH_LISTEN`), or the command-line argument when it is not one.
    public let key: String
    /// Why the value cannot be used, a sentence fragment that continues the key (`must be host:port`).
    public let problem: String

    /// A configuration error about `key`.
    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    /// `configuration ZEVAUTH_LISTEN (--listen): …`: the variable and the flag that mirrors it.
    public var description: String {
        guard let flag = ConfigurationLoader.options.first(where: { $0.variable == key })?.flag else {
            return "configuration \(key): \(problem)"
        }
        return "configuration \(key) (\(flag)): \(problem)"
    }
}

/// One configuration key: the environment variable, the flag that mirrors it, and its usage line. The one
/// table of keys (`ConfigurationLoader.options`) drives parsing for `serve`, `migrate` and `dev` and the
/// usage text, so the two cannot drift apart (docs/operations.md, section 2).
public struct ConfigurationOption: Sendable {
    /// `ZEVAUTH_…`, or nil for a flag that has no variable (`dev --dir`).
    public let variable: String?
    /// `--…`.
    public let flag: String
    /// The value's placeholder in the usage, e.g. `URL`.
    public let placeholder: String
    /// One line saying what the key does.
    public let help: String
    /// Whether `serve` needs it (its usage line ends `(required)`).
    public let required: Bool
    /// How `zevauth dev` treats it when that differs from `serve` (dev's usage line ends with it in
    /// parentheses), e.g. that dev mints the value when it is not given.
    public let devNote: String?

    init(variable: String?, flag: String, placeholder: String, help: String, required: Bool = false, devNote: String? = nil) {
        self.variable = variable
        self.flag = flag
        self.placeholder = placeholder
        self.help = help
        self.required = required
        self.devNote = devNote
    }

    /// The key under which `ConfigurationLoader.merged` files the value: the variable, else the flag.
    public var key: String { variable ?? flag }
}

/// Reads `ServerConfiguration` from environment variables and `--flag value` pairs (flags win).
public enum ConfigurationLoader {
    /// Every variable of `serve` and the flag that mirrors it, in usage order.
    public static let options: [ConfigurationOption] =
        [
            .init(
                variable: "ZEVAUTH_DATABASE_URL", flag: "--database-url", placeholder: "URL", help: "libpq connection URI", required: true),
            .init(variable: "ZEVAUTH_LISTEN", flag: "--listen", placeholder: "HOST:PORT", help: "address to bind (default 127.0.0.1:8080)"),
            .init(variable: "ZEVAUTH_ISSUER", flag: "--issuer", placeholder: "URL", help: "public base URL, the iss value", required: true),
            .init(
                variable: "ZEVAUTH_OPERATOR_TOKEN", flag: "--operator-token", placeholder: "TOKEN",
                help: "bearer of operator admin calls, at least 32 characters", required: true,
                devNote: "optional: dev mints one and writes it to dev.json"),
            .init(
                variable: "ZEVAUTH_ENCRYPTION_KEY", flag: "--encryption-key", placeholder: "BASE64",
                help: "32-byte key sealing TOTP secrets", devNote: "optional: dev makes one in DIR/encryption.key"),
            .init(
                variable: "ZEVAUTH_TRUSTED_PROXIES", flag: "--trusted-proxies", placeholder: "IP,…",
                help: "reverse proxies whose X-Forwarded-* are believed"),
            .init(variable: "ZEVAUTH_HTTP_THREADS", flag: "--http-threads", placeholder: "N", help: "worker threads, 1-256 (default 16)"),
            .init(
                variable: "ZEVAUTH_DATABASE_POOL_SIZE", flag: "--database-pool-size", placeholder: "N",
                help: "PostgreSQL connections, 1-200 (default: HTTP threads + hash concurrency + 8)"),
            .init(
                variable: "ZEVAUTH_PASSWORD_HASH_CONCURRENCY", flag: "--password-hash-concurrency", placeholder: "N",
                help: "Argon2id password hashes at once, 1-64 (default 2)"),
            .init(variable: "ZEVAUTH_SQL_DIR", flag: "--sql-dir", placeholder: "DIR", help: "folder of the sql/ migrations"),
            .init(
                variable: "ZEVAUTH_OUTBOUND_CA_FILE", flag: "--outbound-ca-file", placeholder: "PEM",
                help: "extra trusted CAs for outbound fetches"),
            .init(
                variable: "ZEVAUTH_OUTBOUND_RESOLVE", flag: "--outbound-resolve", placeholder: "HOST:PORT:ADDR;…",
                help: "address overrides for outbound fetches"),
            .init(
                variable: "ZEVAUTH_OUTBOUND_ALLOW_PRIVATE", flag: "--outbound-allow-private", placeholder: "1|0",
                help: "let outbound fetches reach private addresses (default off)"),
            .init(
                variable: "ZEVAUTH_OUTBOUND_TIMEOUT_MS", flag: "--outbound-timeout-ms", placeholder: "MS",
                help: "whole outbound transfer (default 10000)"),
            .init(
                variable: "ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS", flag: "--outbound-connect-timeout-ms", placeholder: "MS",
                help: "outbound connect and TLS (default 5000)"),
            .init(
                variable: "ZEVAUTH_LINK_CHECKS", flag: "--link-checks", placeholder: "1|0",
                help: "run the association-check scheduler and housekeeping (default on)"),
            .init(
                variable: "ZEVAUTH_LOG_FORMAT", flag: "--log-format", placeholder: "json|text",
                help: "log lines as JSON objects or text (serve's default json, dev's text)"),
            .init(
                variable: "ZEVAUTH_METRICS_LISTEN", flag: "--metrics-listen", placeholder: "HOST:PORT",
                help: "address of the Prometheus /metrics listener (default off)"),
            .init(
                variable: "ZEVAUTH_DATABASE_PREPARED", flag: "--database-prepared", placeholder: "1|0",
                help: "prepare hot statements on the server; 0 for PgBouncer in transaction mode (default on)"),
            .init(
                variable: "ZEVAUTH_DATABASE_LISTEN_URL", flag: "--database-listen-url", placeholder: "URL",
                help: "where the configuration listener connects, not through PgBouncer transaction mode (default the database URL)"),
            .init(
                variable: "ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS", flag: "--database-statement-timeout-ms", placeholder: "MS",
                help: "every statement's deadline, 100-600000 (default 5000)"),
            .init(
                variable: "ZEVAUTH_DATABASE_SETTLE_MS", flag: "--database-settle-ms", placeholder: "MS",
                help: "how long an in-doubt exchange or refresh settles itself, 0-120000 (default 15000)"),
            // Slow and greedy clients.
            .init(
                variable: "ZEVAUTH_HTTP_CONNECTIONS_PER_ADDRESS", flag: "--http-connections-per-address", placeholder: "N",
                help: "open connections per client address, 0-100000, 0 = no limit; proxies exempt (default 256)"),
            .init(
                variable: "ZEVAUTH_HTTP_REQUEST_DEADLINE_SECONDS", flag: "--http-request-deadline-seconds", placeholder: "N",
                help: "seconds a request may take to arrive, headers and body, 1-3600 (default 20)"),
            .init(
                variable: "ZEVAUTH_PASSKEY_RP_ID", flag: "--passkey-rp-id", placeholder: "DOMAIN",
                help: "passkeys' relying party ID: the issuer's host or a parent domain (default the issuer's host)"),
        ]
        + MailSettings.options
        + RateLimits.variables.map {
            .init(
                variable: $0.variable, flag: $0.flag, placeholder: "N",
                help: "rate limit, \($0.range.lowerBound)-\($0.range.upperBound) (default \(RateLimits()[keyPath: $0.path]))")
        }

    /// The flag only `zevauth dev` takes: the folder of its PostgreSQL and `dev.json` (default `.zevauth`).
    public static let devDirectory = ConfigurationOption(
        variable: nil, flag: "--dir", placeholder: "DIR", help: "folder of the demo's PostgreSQL and dev.json (default .zevauth)")

    /// The keys `zevauth dev` chooses itself (docs/operations.md, section 1): its own PostgreSQL, and the
    /// listen address and issuer, which only its `--listen` flag changes.
    static let chosenByDev: Set<String> = ["ZEVAUTH_DATABASE_URL", "ZEVAUTH_ISSUER", "ZEVAUTH_LISTEN"]

    /// Merges variables and flags into one `key → value` map (keys as `ConfigurationOption.key`).
    /// - Parameters:
    ///   - options: the keys accepted; `serve`'s by default.
    ///   - command: the command whose `--help` lists `options` (`serve`, `migrate`, `dev`), named by the
    ///     error for an unknown flag.
    /// - Throws: `ConfigurationError` for an unknown flag or a flag without a value.
    public static func merged(
        environment: [String: String], arguments: [String], options: [ConfigurationOption] = ConfigurationLoader.options,
        command: String = "serve"
    ) throws -> [String: String] {
        var values: [String: String] = [:]
        for option in options {
            if let variable = option.variable, let value = environment[variable] { values[variable] = value }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let (flag, inline) =
                argument.split(separator: "=", maxSplits: 1).count == 2 && argument.hasPrefix("--")
                ? (String(argument.split(separator: "=", maxSplits: 1)[0]), String(argument.split(separator: "=", maxSplits: 1)[1]))
                : (argument, nil)
            guard let option = options.first(where: { $0.flag == flag }) else {
                throw ConfigurationError(key: argument, problem: "unknown option (zevauth \(command) --help lists the options)")
            }
            if let inline {
                values[option.key] = inline
                index += 1
            } else {
                guard index + 1 < arguments.count else { throw ConfigurationError(key: flag, problem: "needs a value") }
                values[option.key] = arguments[index + 1]
                index += 2
            }
        }
        return values
    }

    /// Builds and validates the configuration of `serve`.
    /// - Throws: `ConfigurationError` naming the first key that is missing or invalid.
    public static func load(environment: [String: String], arguments: [String] = []) throws -> ServerConfiguration {
        let values = try merged(environment: environment, arguments: arguments)
        func required(_ key: String) throws -> String {
            guard let value = values[key], !value.isEmpty else { throw ConfigurationError(key: key, problem: "is required") }
            return value
        }
        var configuration = ServerConfiguration(
            databaseURL: try required("ZEVAUTH_DATABASE_URL"), issuer: try required("ZEVAUTH_ISSUER"),
            operatorToken: try required("ZEVAUTH_OPERATOR_TOKEN"))
        try validateIssuer(configuration.issuer)
        if let listen = values["ZEVAUTH_LISTEN"] {
            (configuration.listenHost, configuration.listenPort) = try parseListen(listen)
        }
        configuration.logFormat = .json
        try applyShared(values, to: &configuration)
        return configuration
    }

    /// What `zevauth dev` runs with, read by the same parser as `serve` (docs/operations.md, section 1).
    public struct Development: Sendable {
        /// Everything `serve` would read except the database (`databaseURL` is empty until dev starts its
        /// PostgreSQL) and the issuer, which is `http://` + the listen address. `operatorToken` is empty
        /// unless `ZEVAUTH_OPERATOR_TOKEN` was given (dev then uses the seeded one), `encryptionKey` nil
        /// unless `ZEVAUTH_ENCRYPTION_KEY` was given. Rate limits start from `RateLimits.generous`; each
        /// `ZEVAUTH_RATE_*` given replaces its threshold.
        public var configuration: ServerConfiguration
        /// The folder of the demo's PostgreSQL and `dev.json` (`--dir`, default `.zevauth`).
        public var directory: String
    }

    /// Builds and validates the configuration of `zevauth dev`: every `serve` key from the environment and
    /// the flags, except `ZEVAUTH_DATABASE_URL`, `ZEVAUTH_ISSUER` and `ZEVAUTH_LISTEN` in the environment,
    /// which are ignored (dev chooses them; `--listen` sets the address and so the issuer, whose host is
    /// `localhost` when `--listen` names it, else the address), plus `--dir`.
    /// - Throws: `ConfigurationError` naming the first invalid key, or `--database-url` / `--issuer`, which
    ///   dev does not take.
    public static func loadDevelopment(environment: [String: String], arguments: [String] = []) throws -> Development {
        let values = try merged(
            environment: environment.filter { !chosenByDev.contains($0.key) }, arguments: arguments, options: options + [devDirectory],
            command: "dev")
        if values["ZEVAUTH_DATABASE_URL"] != nil {
            throw ConfigurationError(key: "--database-url", problem: "is not taken by dev, which runs its own PostgreSQL")
        }
        if values["ZEVAUTH_ISSUER"] != nil {
            throw ConfigurationError(key: "--issuer", problem: "is not taken by dev: its issuer is http:// and the --listen address")
        }
        let listen = values["ZEVAUTH_LISTEN"] ?? "127.0.0.1:8080"
        let (host, port) = try parseListen(listen)
        // `localhost` binds 127.0.0.1 but stays the issuer's host: browsers refuse WebAuthn on an IP-address
        // origin (WebAuthn Level 3 §5.1.3: the RP ID must be a valid domain), so passkeys need it.
        let named = ["localhost:", "localhost.:"].contains { listen.lowercased().hasPrefix($0) }
        let issuer = "http://\(named ? "localhost" : host.contains(":") ? "[\(host)]" : host):\(port)"
        var configuration = ServerConfiguration(databaseURL: "", issuer: issuer, operatorToken: values["ZEVAUTH_OPERATOR_TOKEN"] ?? "")
        configuration.listenHost = host
        configuration.listenPort = port
        try applyShared(values, to: &configuration, rateLimits: .generous)
        return Development(configuration: configuration, directory: values[devDirectory.key] ?? ".zevauth")
    }

    /// The keys `serve` and `dev` read alike: everything but the database, the issuer and the listen address.
    /// - Parameter rateLimits: the thresholds a `ZEVAUTH_RATE_*` that is not given keeps.
    static func applyShared(
        _ values: [String: String], to configuration: inout ServerConfiguration, rateLimits: RateLimits = RateLimits()
    ) throws {
        if let token = values["ZEVAUTH_OPERATOR_TOKEN"] {
            guard token.count >= 32 else {
                throw ConfigurationError(key: "ZEVAUTH_OPERATOR_TOKEN", problem: "must be at least 32 characters")
            }
            configuration.operatorToken = token
        }
        if let key = values["ZEVAUTH_ENCRYPTION_KEY"], !key.isEmpty {
            guard let bytes = Data(base64Encoded: key), bytes.count == 32 else {
                throw ConfigurationError(key: "ZEVAUTH_ENCRYPTION_KEY", problem: "must be 32 bytes, base64-encoded")
            }
            configuration.encryptionKey = Array(bytes)
        }
        if let proxies = values["ZEVAUTH_TRUSTED_PROXIES"] {
            configuration.trustedProxies = proxies.split(separator: ",").map { $0.filter { !$0.isWhitespace } }
                .filter { !$0.isEmpty }
            for proxy in configuration.trustedProxies
            where !isIPLiteral(proxy, family: AF_INET) && !isIPLiteral(proxy, family: AF_INET6) {
                throw ConfigurationError(
                    key: "ZEVAUTH_TRUSTED_PROXIES",
                    problem: "must be IP address literals separated by commas (no host names or CIDR ranges)")
            }
        }
        configuration.httpThreads = try integer(values, "ZEVAUTH_HTTP_THREADS", in: 1...256) ?? configuration.httpThreads
        // Slow and greedy clients.
        configuration.httpConnectionsPerAddress =
            try integer(values, "ZEVAUTH_HTTP_CONNECTIONS_PER_ADDRESS", in: 0...100_000)
            ?? configuration.httpConnectionsPerAddress
        configuration.httpRequestDeadlineSeconds =
            try integer(values, "ZEVAUTH_HTTP_REQUEST_DEADLINE_SECONDS", in: 1...3600)
            ?? configuration.httpRequestDeadlineSeconds
        configuration.databasePoolSize =
            try integer(values, "ZEVAUTH_DATABASE_POOL_SIZE", in: 1...200)
            ?? configuration.databasePoolSize
        configuration.passwordHashConcurrency =
            try integer(values, "ZEVAUTH_PASSWORD_HASH_CONCURRENCY", in: 1...64)
            ?? configuration.passwordHashConcurrency
        configuration.sqlDirectory = values["ZEVAUTH_SQL_DIR"]
        do {
            configuration.outbound = try OutboundConfiguration.fromEnvironment(values.filter { $0.key.hasPrefix("ZEVAUTH_OUTBOUND_") })
        } catch let error as OutboundConfigurationError {
            throw ConfigurationError(key: error.key, problem: error.message)
        }
        if let text = values["ZEVAUTH_LINK_CHECKS"] {
            switch text.lowercased() {
            case "1", "true": configuration.linkChecks = true
            case "", "0", "false": configuration.linkChecks = false
            default: throw ConfigurationError(key: "ZEVAUTH_LINK_CHECKS", problem: "must be 1, true, 0 or false")
            }
        }
        if let text = values["ZEVAUTH_DATABASE_PREPARED"] {
            switch text.lowercased() {
            case "1", "true": configuration.databasePrepared = true
            case "", "0", "false": configuration.databasePrepared = false
            default: throw ConfigurationError(key: "ZEVAUTH_DATABASE_PREPARED", problem: "must be 1, true, 0 or false")
            }
        }
        if let text = values["ZEVAUTH_DATABASE_LISTEN_URL"], !text.isEmpty { configuration.databaseListenURL = text }
        configuration.databaseStatementTimeoutMilliseconds =
            try integer(values, "ZEVAUTH_DATABASE_STATEMENT_TIMEOUT_MS", in: 100...600_000)
            ?? configuration.databaseStatementTimeoutMilliseconds
        configuration.databaseSettleMilliseconds =
            try integer(values, "ZEVAUTH_DATABASE_SETTLE_MS", in: 0...120_000) ?? configuration.databaseSettleMilliseconds
        configuration.rateLimits = try RateLimits.load(values, base: rateLimits)
        if let text = values["ZEVAUTH_LOG_FORMAT"] {
            guard let format = LogFormat(rawValue: text.lowercased()) else {
                throw ConfigurationError(key: "ZEVAUTH_LOG_FORMAT", problem: "must be json or text")
            }
            configuration.logFormat = format
        }
        configuration.mail = try MailSettings.load(values, base: configuration.mail)
        if let rpID = values["ZEVAUTH_PASSKEY_RP_ID"], !rpID.isEmpty {
            configuration.passkeyRPID = try passkeyRPID(rpID, issuer: configuration.issuer)
        }
        if let listen = values["ZEVAUTH_METRICS_LISTEN"], !listen.isEmpty {
            do {
                configuration.metricsListen = try parseListen(listen)
            } catch let error as ConfigurationError {
                throw ConfigurationError(key: "ZEVAUTH_METRICS_LISTEN", problem: error.problem)
            }
        }
    }

    /// The issuer must be an origin (`https://host[:port]`: no path, query, fragment, user information or
    /// trailing slash; the discovery document's `issuer` and every ID token's `iss` are this text byte for
    /// byte, docs/protocol.md, "OpenID Connect"), `https`, or `http` on a loopback host.
    static func validateIssuer(_ issuer: String) throws {
        guard let url = URL(string: issuer), let scheme = url.scheme, let host = url.host, !host.isEmpty,
            url.query == nil, url.fragment == nil, url.user == nil, url.password == nil, url.path.isEmpty,
            !issuer.hasSuffix("/"), issuer.hasPrefix(scheme + "://")
        else {
            throw ConfigurationError(
                key: "ZEVAUTH_ISSUER",
                problem: "must be an origin such as https://id.example.com: no path, query, fragment or trailing slash")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw ConfigurationError(key: "ZEVAUTH_ISSUER", problem: "must use https (http only on a loopback host, for development)")
        }
    }

    /// The issuer's host, lower-case, without the brackets of an IPv6 literal.
    static func issuerHost(_ issuer: String) -> String {
        let host = URL(string: issuer)?.host ?? ""
        return host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    }

    /// Checks `ZEVAUTH_PASSKEY_RP_ID` (docs/passkeys.md, "Relying party"; WebAuthn Level 3 §5.1.4.1 and
    /// HTML's "is a registrable domain suffix of or is equal to"): the issuer's host itself, or a parent
    /// domain of it of at least two labels. A browser refuses an RP ID that is a public suffix; without the
    /// Public Suffix List here, a single-label parent (`com`) is refused and a multi-label public suffix
    /// (`co.uk`) is the operator's to avoid. An internationalised name is taken in its A-label form
    /// (IDNA2008, libidn2).
    /// - Returns: the RP ID, lower-case ASCII.
    /// - Throws: `ConfigurationError` naming `ZEVAUTH_PASSKEY_RP_ID`.
    static func passkeyRPID(_ raw: String, issuer: String) throws -> String {
        let host = issuerHost(issuer)
        let refuse = { (problem: String) in ConfigurationError(key: "ZEVAUTH_PASSKEY_RP_ID", problem: problem) }
        guard let id = IDNA.toASCII(raw.trimmingCharacters(in: .whitespaces).lowercased())?.lowercased(), !id.isEmpty else {
            throw refuse("must be a domain name")
        }
        if id == host { return id }
        guard !isIPLiteral(host, family: AF_INET), !isIPLiteral(host, family: AF_INET6) else {
            throw refuse("must equal the issuer's host, which is an IP address")
        }
        guard host.hasSuffix("." + id) else { throw refuse("must be the issuer's host or a parent domain of it") }
        guard id.split(separator: ".", omittingEmptySubsequences: false).count >= 2,
            !id.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
        else {
            throw refuse("must have at least two labels: a top-level domain alone is a public suffix")
        }
        return id
    }

    /// Parses `ZEVAUTH_LISTEN`: `host:port` or `[v6]:port`, where host is an IPv4 literal, an IPv6 literal in
    /// brackets, or `localhost`. `localhost` is the loopback address by definition (RFC 6761 §6.3), so it is
    /// bound as `127.0.0.1` without a lookup. Returns the host to bind (an address literal) and the port.
    /// - Throws: `ConfigurationError` naming `ZEVAUTH_LISTEN` (and its flag) for anything else.
    public static func parseListen(_ value: String) throws -> (String, UInt16) {
        let host: Substring
        let port: Substring
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
            host = value[value.index(after: value.startIndex)..<close]
            port = value[value.index(after: close)...].dropFirst()
        } else if let colon = value.lastIndex(of: ":") {
            host = value[..<colon]
            port = value[value.index(after: colon)...]
        } else {
            throw ConfigurationError(key: "ZEVAUTH_LISTEN", problem: "must be host:port")
        }
        guard !host.isEmpty, let number = UInt16(port) else {
            throw ConfigurationError(key: "ZEVAUTH_LISTEN", problem: "must be host:port with a port from 0 to 65535")
        }
        if ["localhost", "localhost."].contains(host.lowercased()) { return ("127.0.0.1", number) }
        let bracketed = value.hasPrefix("[")
        guard bracketed ? isIPLiteral(String(host), family: AF_INET6) : isIPLiteral(String(host), family: AF_INET) else {
            throw ConfigurationError(
                key: "ZEVAUTH_LISTEN",
                problem:
                    "the host must be an IP address literal (such as 0.0.0.0 or 10.0.0.5, IPv6 in brackets as [::1]:8080) or localhost")
        }
        return (String(host), number)
    }

    /// Whether `text` is an address literal of `family` (`AF_INET` or `AF_INET6`), by `inet_pton`.
    static func isIPLiteral(_ text: String, family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(family, text, &buffer) == 1
    }

    static func integer(_ values: [String: String], _ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = values[key] else { return nil }
        // Plain decimal digits only (`Int("+2")` would also take a sign).
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(text), range.contains(number) else {
            throw ConfigurationError(key: key, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}

/// Outbound email settings (docs/operations.md, "Outbound email").
public struct MailSettings: Sendable {
    /// The relay (`ZEVAUTH_SMTP_URL` with `ZEVAUTH_SMTP_FROM` and `ZEVAUTH_SMTP_TIMEOUT_MS`); nil: none.
    public var smtp: SMTPConfiguration?
    /// Where messages are written as `.eml` files when there is no relay (`zevauth dev`'s `.zevauth/outbox/`,
    /// tests); nil: nowhere (they wait in the queue).
    public var outboxDirectory: String?
    /// Whether a code written to `outboxDirectory` is also printed on the console (`zevauth dev`).
    public var printCodes = false
    /// Emails the deployment sends per hour at most (`ZEVAUTH_RATE_EMAILS_PER_HOUR`, default 1000).
    public var emailsPerHour = 1000
    /// Tests only (no variable sets it): messages are queued and drained under this scope, so test
    /// servers sharing one database send only their own.
    public var scope: String?

    public init() {}

    /// The From address when `ZEVAUTH_SMTP_FROM` is not given.
    static let defaultFrom: MailFrom = {
        do { return try MailFrom(parsing: "no-reply@zevauth.invalid") } catch { preconditionFailure("the default From address parses") }
    }()

    static let options: [ConfigurationOption] = [
        .init(
            variable: "ZEVAUTH_SMTP_URL", flag: "--smtp-url", placeholder: "URL",
            help: "mail relay, smtp://[user:password@]host:port (STARTTLS when offered) or smtps://",
            devNote: "optional: without it dev writes messages to DIR/outbox/"),
        .init(
            variable: "ZEVAUTH_SMTP_FROM", flag: "--smtp-from", placeholder: "ADDRESS",
            help: "the From of emails: no-reply@example.com or ZevAuth <no-reply@example.com>"),
        .init(
            variable: "ZEVAUTH_SMTP_TIMEOUT_MS", flag: "--smtp-timeout-ms", placeholder: "MS",
            help: "one SMTP transaction, 100-600000 (default 10000)"),
        .init(
            variable: "ZEVAUTH_RATE_EMAILS_PER_HOUR", flag: "--rate-emails-per-hour", placeholder: "N",
            help: "emails the deployment sends per hour, 1-1000000 (default 1000)"),
    ]

    /// Reads the settings from merged configuration values.
    /// - Throws: `ConfigurationError` naming the key that cannot be used (never its value).
    static func load(_ values: [String: String], base: MailSettings) throws -> MailSettings {
        var settings = base
        settings.emailsPerHour =
            try ConfigurationLoader.integer(values, "ZEVAUTH_RATE_EMAILS_PER_HOUR", in: 1...1_000_000) ?? settings.emailsPerHour
        let timeout = try ConfigurationLoader.integer(values, "ZEVAUTH_SMTP_TIMEOUT_MS", in: 100...600_000) ?? 10_000
        do {
            // Parsed whether or not a relay is set, so `serve` refuses a bad value at start either way.
            let from = try values["ZEVAUTH_SMTP_FROM"].map { value throws(SMTPConfigurationError) in try MailFrom(parsing: value) }
            if let url = values["ZEVAUTH_SMTP_URL"], !url.isEmpty {
                settings.smtp = try SMTPConfiguration(
                    url: url, from: from ?? defaultFrom, timeoutMilliseconds: timeout, caFile: values["ZEVAUTH_OUTBOUND_CA_FILE"])
            } else if let from {
                settings.fromWithoutRelay = from
            }
        } catch {
            throw ConfigurationError(key: error.key, problem: error.message)
        }
        return settings
    }

    /// The From in effect: its header and its bare address (the envelope sender).
    public var from: MailFrom { smtp?.from ?? fromWithoutRelay ?? Self.defaultFrom }
    /// `ZEVAUTH_SMTP_FROM` given without a relay (the outbox files' From).
    var fromWithoutRelay: MailFrom?
}
