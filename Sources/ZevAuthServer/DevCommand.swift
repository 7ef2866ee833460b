import Authorize
import Crypto
import Encoding
import Foundation
import PKCE
import PasswordHashing
import PostgresStore

/// `zevauth dev`: a private PostgreSQL for `.zevauth/`, migrated and seeded with a demo
/// project, a ZevID account and development callbacks (one loopback, one custom scheme), serving on
/// 127.0.0.1:8080, printing the keys and a ready-to-open start URL, writing `.zevauth/dev.json`
/// (docs/operations.md, section 1), and stopping everything on Ctrl-C. Every other `serve` key applies.
public enum DevCommand {
    /// What `.zevauth/dev.json` holds (docs/operations.md, section 1, "zevauth dev").
    struct DevFile: Codable {
        struct Keys: Codable { var publishableKey: String; var secretKey: String }
        struct User: Codable { var email: String; var password: String }
        /// A seeded web client (docs/protocol.md, "Web clients"): its secret, or for `private_key_jwt` its
        /// private key (PEM, PKCS#8, P-256) and the key's `kid` in the registered JWKS.
        struct WebClient: Codable {
            var clientId: String
            var tokenEndpointAuthMethod: String
            var redirectUris: [String]
            var clientSecret: String?
            var privateKeyPem: String?
            var keyId: String?
        }
        var issuer: String
        var operatorToken: String
        /// The demo project's id (absent in files written by earlier releases; filled in from the store).
        var projectId: String?
        var development: Keys
        var production: Keys
        var user: User
        var callbacks: [String]
        /// One development web client per authentication method (absent in files of earlier releases;
        /// seeded on the next start).
        var webClients: [WebClient]?
    }

    /// The redirect URI of the seeded web clients (loopback: development only, matched with its port).
    static let webClientRedirect = "http://127.0.0.1:54321/web/callback"

    static let loopbackCallback = "http://127.0.0.1/callback"
    static let customSchemeCallback = "com.example.zevauth.demo:/callback"

    /// The usage of `zevauth dev`, from the one table of configuration keys.
    public static var usage: String {
        """
        usage: zevauth dev [--listen HOST:PORT] [--dir DIR] [--flag value …]
          runs the demo: a private PostgreSQL under DIR, migrated and seeded, serving on HOST:PORT
          (default 127.0.0.1:8080, issuer http://HOST:PORT). Every serve variable and flag applies, except
          the database and the issuer, which dev chooses, and ZEVAUTH_LISTEN (use --listen).
        flags:
        \(Commands.optionLines([ConfigurationLoader.devDirectory] + ConfigurationLoader.options.filter {
            $0.variable.map { !ConfigurationLoader.chosenByDev.contains($0) } ?? true || $0.flag == "--listen"
        }, dev: true))
        """
    }

    /// Runs the demo until SIGINT/SIGTERM.
    /// - Parameters:
    ///   - arguments: any flag of `serve` except `--database-url` and `--issuer`, plus `--dir` (default
    ///     `.zevauth`); `--help` prints the usage and returns.
    ///   - environment: the `ZEVAUTH_*` variables, read as `serve` reads them (docs/operations.md, section 1).
    /// - Throws: `ConfigurationError` for a bad key; when PostgreSQL cannot start, the port is taken, or
    ///   seeding fails.
    public static func run(
        arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment, write: (String) -> Void = { print($0) }
    ) throws {
        if Commands.asksForHelp(arguments) {
            write(usage)
            return
        }
        do {
            try start(arguments: arguments, environment: environment)
        } catch let error as ConfigurationError {
            throw listenError(error, environment: environment)
        }
    }

    /// A listen-address error as dev must word it: dev reads the address from `--listen` only, so the
    /// error names `--listen` (not `ZEVAUTH_LISTEN`, which `serve` reads) and, when `ZEVAUTH_LISTEN` is set,
    /// says dev ignores it (docs/operations.md, "zevauth dev takes the same configuration as serve").
    /// Any other error is returned unchanged.
    static func listenError(_ error: ConfigurationError, environment: [String: String]) -> ConfigurationError {
        guard error.key == "ZEVAUTH_LISTEN" else { return error }
        let ignored =
            environment["ZEVAUTH_LISTEN"] == nil
            ? "" : "; dev ignores ZEVAUTH_LISTEN in the environment, so pass --listen HOST:PORT to choose the address"
        return ConfigurationError(key: "--listen", problem: error.problem + ignored)
    }

    /// `run` after `--help`: the configuration, PostgreSQL, the seed, then the server until a signal.
    private static func start(arguments: [String], environment: [String: String]) throws {
        let development = try ConfigurationLoader.loadDevelopment(environment: environment, arguments: arguments)
        var configuration = development.configuration
        let root = URL(fileURLWithPath: development.directory, isDirectory: true).standardizedFileURL
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        let cluster = LocalPostgresCluster(directory: root.appendingPathComponent("postgres").path, port: 5433)
        say("starting PostgreSQL for \(root.path) …")
        let databaseURL = try cluster.start()
        defer { try? cluster.stop() }
        let store = PostgresStore.connect(
            url: databaseURL, size: configuration.effectiveDatabasePoolSize,
            sharedConnections: configuration.databaseSharedConnections,
            statementTimeoutMilliseconds: configuration.databaseStatementTimeoutMilliseconds,
            preparedStatements: configuration.databasePrepared,
            listenURL: databaseURL)
        let migrator = try ServerRunner.migrator(configured: configuration.sqlDirectory)
        let applied = try store.applyMigrations(migrator)
        if !applied.isEmpty { say("applied \(applied.count) migration(s)") }

        let devFile = root.appendingPathComponent("dev.json")
        let seed = try prepareSeed(store: store, devFile: devFile, configuration: configuration)

        configuration.databaseURL = databaseURL
        configuration.operatorToken = seed.operatorToken
        if configuration.encryptionKey == nil { configuration.encryptionKey = try devEncryptionKey(in: root) }
        if configuration.mail.smtp == nil {
            // No relay: each message becomes DIR/outbox/….eml and its code is printed here.
            configuration.mail.outboxDirectory = root.appendingPathComponent("outbox").path
            configuration.mail.printCodes = true
        }
        let context = ServerContext(configuration: configuration, store: store)
        try ServerRunner.serve(context, migrator: migrator) { _ in
            printBanner(seed, devFile: devFile.path)
        }
        say("stopping PostgreSQL …")
    }

    /// Reads `dev.json` (seeding the demo when it is missing or the database was reset), brings it up to
    /// date with the configuration in effect (issuer, an operator token given by `ZEVAUTH_OPERATOR_TOKEN`,
    /// the project id) and writes it back, mode 0600.
    /// - Throws: store errors; `ConfigurationError` when the demo account exists without its `dev.json`.
    /// - Parameter demoEmail: the demo account's address (tests pass their own: the suite shares one database).
    static func prepareSeed(
        store: PostgresStore, devFile: URL, configuration: ServerConfiguration, demoEmail: String = "demo@zevauth.test"
    ) throws -> DevFile {
        var seed = try? JSONDecoder().decode(DevFile.self, from: Data(contentsOf: devFile))
        var environment = try seed.flatMap { try store.environment(publishableKey: $0.development.publishableKey) }
        if environment == nil {
            seed = try seedDemo(store: store, issuer: configuration.issuer, email: demoEmail)  // none yet, or the database was reset
            environment = try seed.flatMap { try store.environment(publishableKey: $0.development.publishableKey) }
        }
        guard var seed, let environment else { throw ServerFailure.inconsistent("no demo seed") }
        if seed.webClients == nil { seed.webClients = try seedWebClients(store: store, environmentID: environment.id) }
        seed.issuer = configuration.issuer
        seed.projectId = environment.projectID
        if !configuration.operatorToken.isEmpty { seed.operatorToken = configuration.operatorToken }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(seed).write(to: devFile, options: [.atomic])
        chmod(devFile.path, 0o600)
        return seed
    }

    /// The demo's `ZEVAUTH_ENCRYPTION_KEY`: 32 random bytes kept base64 in `.zevauth/encryption.key` (mode
    /// 0600), made on first run, so enrolled TOTP secrets survive restarts. `dev.json`'s shape is pinned,
    /// so the key lives beside it.
    static func devEncryptionKey(in root: URL) throws -> [UInt8] {
        let file = root.appendingPathComponent("encryption.key")
        if let text = try? String(contentsOf: file, encoding: .utf8),
            let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32
        {
            return Array(bytes)
        }
        let key = try Crypto.randomBytes(32)
        try Data((Data(key).base64EncodedString() + "\n").utf8).write(to: file, options: [.atomic])
        chmod(file.path, 0o600)
        return key
    }

    /// Seeds a demo project, an account and the development callbacks.
    /// - Parameter email: the demo account's address (tests pass their own, the suite shares one database).
    static func seedDemo(store: PostgresStore, issuer: String, email: String = "demo@zevauth.test") throws -> DevFile {
        let now = Date()
        let development = try AdminHandlers.newKeys(publishablePrefix: "pk_test_", secretPrefix: "sk_test_")
        let production = try AdminHandlers.newKeys(publishablePrefix: "pk_live_", secretPrefix: "sk_live_")
        let projectID = try store.createProject(
            name: "Demo app", development: development.stored, production: production.stored, now: now)
        guard let environment = try store.environment(publishableKey: development.stored.publishableKey) else {
            throw ServerFailure.inconsistent("seeded environment not found")
        }
        let password = Base64URL.encode(try Crypto.randomBytes(12))
        let key = EmailAddress(email)?.key ?? email
        if try store.user(emailNormalized: key) == nil {
            _ = try store.createUser(
                email: email, emailNormalized: key, name: "Demo Person",
                passwordHash: try PasswordHasher().hash(password), now: now)
        } else {
            throw ConfigurationError(
                key: ".zevauth", problem: "the demo account exists but dev.json is gone; delete .zevauth/ to start over")
        }
        for uri in [loopbackCallback, customSchemeCallback] {
            guard case .success(let parsed) = RedirectURI.parse(uri) else { throw ServerFailure.inconsistent("demo callback") }
            _ = try store.addCallback(environmentID: environment.id, uri: uri, kind: parsed.kind.rawValue, now: now)
        }
        return DevFile(
            issuer: issuer, operatorToken: try Crypto.mintToken(prefix: "zop_"), projectId: projectID,
            development: .init(publishableKey: development.stored.publishableKey, secretKey: development.secret),
            production: .init(publishableKey: production.stored.publishableKey, secretKey: production.secret),
            user: .init(email: email, password: password), callbacks: [loopbackCallback, customSchemeCallback])
    }

    /// Registers one development web client per authentication method, named for it: `client_secret_basic`
    /// and `client_secret_post` with their secret, `private_key_jwt` with a fresh P-256 key whose public half
    /// is the client's JWKS (`kid` `dev-1`).
    static func seedWebClients(store: PostgresStore, environmentID: String) throws -> [DevFile.WebClient] {
        let now = Date()
        let registry = WebClients(store: store.webClients, secrets: OpenSSLSecrets())
        var seeded: [DevFile.WebClient] = []
        for method in TokenEndpointAuthMethod.allCases {
            var fields = WebClientFields()
            fields.name = "Demo website (\(method.rawValue))"
            fields.redirectURIs = [webClientRedirect]
            fields.authMethod = method.rawValue
            var privateKeyPem: String?
            if method == .privateKeyJWT {
                let key = try Crypto.SigningKey.generate(.p256)
                guard case .p256(let x, let y) = try key.publicParameters() else { throw ServerFailure.inconsistent("demo key") }
                fields.jwks = .some([
                    "keys": [
                        [
                            "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y)),
                            "kid": "dev-1",
                            "use": "sig", "alg": "ES256",
                        ]
                    ]
                ])
                let base64 = Data(try key.pkcs8()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                privateKeyPem = "-----BEGIN PRIVATE KEY-----\n\(base64)\n-----END PRIVATE KEY-----\n"
            }
            guard case .success(let columns) = WebClientColumns.parse(fields, over: nil, kind: .development) else {
                throw ServerFailure.inconsistent("demo web client")
            }
            let created = try registry.create(environmentID: environmentID, columns, now: now) {
                AuditEntry(actor: .system, action: "client.create", target: $0, environmentID: environmentID, clientAddress: nil, at: now)
            }
            seeded.append(
                DevFile.WebClient(
                    clientId: created.client.client.clientID, tokenEndpointAuthMethod: method.rawValue, redirectUris: [webClientRedirect],
                    clientSecret: created.secret, privateKeyPem: privateKeyPem, keyId: privateKeyPem == nil ? nil : "dev-1"))
        }
        return seeded
    }

    static func printBanner(_ seed: DevFile, devFile: String) {
        print(banner(seed, devFile: devFile))
        fflush(nil)
    }

    /// The text printed once the server listens: the seeded keys, token, account and callbacks (all in
    /// `dev.json`), then a start URL with a fresh code verifier, which is printed only here.
    static func banner(_ seed: DevFile, devFile: String) -> String {
        let verifierBytes = (try? Crypto.randomBytes(32)) ?? []
        let verifierText = Base64URL.encode(verifierBytes)
        let state = Base64URL.encode((try? Crypto.randomBytes(12)) ?? [])
        let challenge = CodeVerifier(verifierText).map { PKCE.s256Challenge(for: $0, sha256: { Crypto.sha256($0) }).value } ?? ""
        let redirect = "http://127.0.0.1:54321/callback"
        let startURL =
            "\(seed.issuer)/v1/auth/zevid/start?"
            + FormURLEncoding.encode([
                ("client_id", seed.development.publishableKey), ("redirect_uri", redirect), ("state", state),
                ("code_challenge", challenge), ("code_challenge_method", "S256"),
            ])
        return """

            ZevAuth dev server: \(seed.issuer)   (Ctrl-C stops it and its PostgreSQL)
            These keys, the operator token, the demo account and the callbacks are also in \(devFile):

              development publishable key  \(seed.development.publishableKey)
              development secret key       \(seed.development.secretKey)
              production publishable key   \(seed.production.publishableKey)
              production secret key        \(seed.production.secretKey)
              operator token               \(seed.operatorToken)
              demo account                 \(seed.user.email) / \(seed.user.password)
              callbacks (development)      \(seed.callbacks.joined(separator: ", "))
              web clients (development)    \((seed.webClients ?? []).map { "\($0.clientId) (\($0.tokenEndpointAuthMethod))" }.joined(separator: ", "))

            Open this sign-in link in a browser (a fresh code verifier was made for it; the link and its
            verifier are printed only here, not written to dev.json):
              \(startURL)

            After you sign in, the browser goes to \(redirect)?code=…  (nothing listens there: copy the
            code from the address bar) and exchange it within 60 seconds:
              curl -s -X POST \(seed.issuer)/v1/auth/handoff/exchange \\
                -H 'Authorization: Bearer \(seed.development.publishableKey)' -H 'Content-Type: application/json' \\
                -d '{"code":"PASTE_CODE","codeVerifier":"\(verifierText)","redirectUri":"\(redirect)"}'

            """
    }

    static func say(_ line: String) {
        FileHandle.standardError.write(Data("zevauth dev: \(line)\n".utf8))
    }
}
