import Authorize
import Crypto
import Encoding
import Foundation
import PKCE
import PasswordHashing
import Postgres
import PostgresStore

/// `zevauth dev` (issue 2, item 10): a private PostgreSQL for `.zevauth/`, migrated and seeded with a demo
/// project, a ZevID account and development callbacks (one loopback, one custom scheme), serving on
/// 127.0.0.1:8080, printing the keys and a ready-to-open start URL, writing `.zevauth/dev.json` in
/// PRODUCT.md's shape, and stopping everything on Ctrl-C.
public enum DevCommand {
    /// What `.zevauth/dev.json` holds (PRODUCT.md, "`zevauth dev` writes what it seeded").
    struct DevFile: Codable {
        struct Keys: Codable { var publishableKey: String; var secretKey: String }
        struct User: Codable { var email: String; var password: String }
        var issuer: String
        var operatorToken: String
        var development: Keys
        var production: Keys
        var user: User
        var callbacks: [String]
    }

    static let loopbackCallback = "http://127.0.0.1/callback"
    static let customSchemeCallback = "com.example.zevauth.demo:/callback"

    /// Runs the demo until SIGINT/SIGTERM.
    /// - Parameter arguments: `--listen host:port` (default `127.0.0.1:8080`), `--dir` (default `.zevauth`).
    /// - Throws: when PostgreSQL cannot start, the port is taken, or seeding fails.
    public static func run(arguments: [String]) throws {
        var listen = "127.0.0.1:8080"
        var directory = ".zevauth"
        var index = 0
        while index < arguments.count {
            switch (arguments[index], index + 1 < arguments.count ? arguments[index + 1] : nil) {
            case ("--listen", let value?): listen = value
            case ("--dir", let value?): directory = value
            default:
                throw ConfigurationError(key: arguments[index], problem: "unknown option or missing value (dev takes --listen and --dir)")
            }
            index += 2
        }
        let (host, port) = try ConfigurationLoader.parseListen(listen)
        let issuer = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        let root = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        let cluster = LocalPostgresCluster(directory: root.appendingPathComponent("postgres").path, port: 5433)
        say("starting PostgreSQL for \(root.path) …")
        let databaseURL = try cluster.start()
        defer { try? cluster.stop() }
        let pool = PostgresPool(url: databaseURL, size: 8)
        let migrator = try ServerRunner.migrator(configured: nil)
        let applied = try migrator.apply(to: pool)
        if !applied.isEmpty { say("applied \(applied.count) migration(s)") }
        let store = PostgresStore(pool: pool)

        let devFile = root.appendingPathComponent("dev.json")
        var seed = try? JSONDecoder().decode(DevFile.self, from: Data(contentsOf: devFile))
        if let existing = seed, try store.environment(publishableKey: existing.development.publishableKey) == nil {
            seed = nil  // the database was reset: seed again
        }
        if seed == nil {
            seed = try seedDemo(store: store, issuer: issuer)
        }
        guard var seed else { throw ServerFailure.inconsistent("no demo seed") }
        seed.issuer = issuer
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(seed).write(to: devFile, options: [.atomic])
        chmod(devFile.path, 0o600)

        var configuration = ServerConfiguration(databaseURL: databaseURL, issuer: issuer, operatorToken: seed.operatorToken)
        configuration.listenHost = host
        configuration.listenPort = port
        configuration.encryptionKey = try devEncryptionKey(in: root)
        configuration.rateLimits = .generous
        let context = ServerContext(configuration: configuration, store: store)
        try ServerRunner.serve(context, migrator: migrator) { _ in
            printBanner(seed, devFile: devFile.path)
        }
        say("stopping PostgreSQL …")
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
    static func seedDemo(store: PostgresStore, issuer: String) throws -> DevFile {
        let now = Date()
        let development = try AdminHandlers.newKeys(publishablePrefix: "pk_test_", secretPrefix: "sk_test_")
        let production = try AdminHandlers.newKeys(publishablePrefix: "pk_live_", secretPrefix: "sk_live_")
        _ = try store.createProject(name: "Demo app", development: development.stored, production: production.stored, now: now)
        guard let environment = try store.environment(publishableKey: development.stored.publishableKey) else {
            throw ServerFailure.inconsistent("seeded environment not found")
        }
        let password = Base64URL.encode(try Crypto.randomBytes(12))
        let email = "demo@zevauth.test"
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
            issuer: issuer, operatorToken: try Crypto.mintToken(prefix: "zop_"),
            development: .init(publishableKey: development.stored.publishableKey, secretKey: development.secret),
            production: .init(publishableKey: production.stored.publishableKey, secretKey: production.secret),
            user: .init(email: email, password: password), callbacks: [loopbackCallback, customSchemeCallback])
    }

    static func printBanner(_ seed: DevFile, devFile: String) {
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
        print(
            """

            ZevAuth dev server: \(seed.issuer)   (Ctrl-C stops it and its PostgreSQL)
            Everything below is also in \(devFile).

              development publishable key  \(seed.development.publishableKey)
              development secret key       \(seed.development.secretKey)
              production publishable key   \(seed.production.publishableKey)
              production secret key        \(seed.production.secretKey)
              operator token               \(seed.operatorToken)
              demo account                 \(seed.user.email) / \(seed.user.password)
              callbacks (development)      \(seed.callbacks.joined(separator: ", "))

            Open this sign-in link in a browser (a fresh code verifier was made for it):
              \(startURL)

            After you sign in, the browser goes to \(redirect)?code=…  (nothing listens there: copy the
            code from the address bar) and exchange it within 60 seconds:
              curl -s -X POST \(seed.issuer)/v1/auth/handoff/exchange \\
                -H 'Authorization: Bearer \(seed.development.publishableKey)' -H 'Content-Type: application/json' \\
                -d '{"code":"PASTE_CODE","codeVerifier":"\(verifierText)","redirectUri":"\(redirect)"}'

            """)
        fflush(nil)
    }

    static func say(_ line: String) {
        FileHandle.standardError.write(Data("zevauth dev: \(line)\n".utf8))
    }
}
