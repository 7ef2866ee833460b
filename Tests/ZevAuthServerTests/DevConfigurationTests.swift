import Fetch
import Foundation
import HTTPServer
import Postgres
import PostgresStore
import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// `zevauth dev` reads its configuration with the same parser and the same table of keys as `serve`
/// (docs/operations.md, section 1): every `ZEVAUTH_*` variable and flag applies, except the database, the
/// listen address and the issuer, which dev chooses (`--listen` changes the latter two).
@Suite struct DevConfigurationTests {
    /// A readable, non-empty PEM file for `ZEVAUTH_OUTBOUND_CA_FILE`.
    static func caFile() throws -> String {
        let path = NSTemporaryDirectory() + "zevauth-dev-ca-\(UUID().uuidString.prefix(8)).pem"
        try Data("-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func devHonoursTheOutboundRateLimitAndProxyKeysFromTheEnvironmentAndFlags() throws {
        let ca = try Self.caFile()
        let environment = [
            "ZEVAUTH_OUTBOUND_CA_FILE": ca, "ZEVAUTH_OUTBOUND_ALLOW_PRIVATE": "1", "ZEVAUTH_OUTBOUND_TIMEOUT_MS": "4000",
            "ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS": "1500", "ZEVAUTH_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
            "ZEVAUTH_RATE_MFA_PER_ACCOUNT": "7", "ZEVAUTH_LINK_CHECKS": "0", "ZEVAUTH_HTTP_THREADS": "3",
            // Chosen by dev: ignored from the environment.
            "ZEVAUTH_DATABASE_URL": "postgresql://elsewhere/db", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_LISTEN": "127.0.0.1:1",
        ]
        let development = try ConfigurationLoader.loadDevelopment(
            environment: environment,
            arguments: [
                "--outbound-resolve", "acme.test:443:127.0.0.1", "--listen", "127.0.0.1:9123", "--dir", "/tmp/zevauth-dev-x",
                "--rate-window-seconds=60",
            ])
        let configuration = development.configuration
        #expect(configuration.outbound.caFile == ca)
        #expect(configuration.outbound.resolve == [ResolveOverride(host: "acme.test", port: 443, address: "127.0.0.1")])
        #expect(configuration.outbound.allowPrivate)
        #expect(configuration.outbound.timeoutMilliseconds == 4000)
        #expect(configuration.outbound.connectTimeoutMilliseconds == 1500)
        #expect(configuration.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(configuration.linkChecks == false)
        #expect(configuration.httpThreads == 3)
        // Rate limits start generous (the conformance client must pass) and each given threshold replaces its own.
        #expect(configuration.rateLimits.mfaPerAccount == 7)
        #expect(configuration.rateLimits.windowSeconds == 60)
        #expect(configuration.rateLimits.passwordPerAccount == RateLimits.generous.passwordPerAccount)
        // What dev chooses itself.
        #expect(configuration.listenHost == "127.0.0.1")
        #expect(configuration.listenPort == 9123)
        #expect(configuration.issuer == "http://127.0.0.1:9123")
        #expect(configuration.databaseURL.isEmpty)
        #expect(development.directory == "/tmp/zevauth-dev-x")
    }

    /// `--listen localhost:PORT` binds the loopback address but keeps `localhost` as the issuer's host, since
    /// browsers refuse passkeys (WebAuthn) on an IP-address origin; the passkey RP ID follows the issuer.
    @Test func aLocalhostListenKeepsLocalhostInTheIssuer() throws {
        for listen in ["localhost:9124", "LOCALHOST:9124"] {
            let configuration = try ConfigurationLoader.loadDevelopment(environment: [:], arguments: ["--listen", listen]).configuration
            #expect(configuration.listenHost == "127.0.0.1")
            #expect(configuration.listenPort == 9124)
            #expect(configuration.issuer == "http://localhost:9124")
        }
        let literal = try ConfigurationLoader.loadDevelopment(environment: [:], arguments: ["--listen", "[::1]:9125"]).configuration
        #expect(literal.issuer == "http://[::1]:9125")
    }

    @Test func devDefaultsAndAnOperatorTokenFromTheEnvironment() throws {
        let defaults = try ConfigurationLoader.loadDevelopment(environment: [:])
        #expect(defaults.configuration.issuer == "http://127.0.0.1:8080")
        #expect(defaults.directory == ".zevauth")
        #expect(defaults.configuration.operatorToken.isEmpty)
        #expect(defaults.configuration.rateLimits == RateLimits.generous)
        let token = String(repeating: "t", count: 40)
        let given = try ConfigurationLoader.loadDevelopment(environment: ["ZEVAUTH_OPERATOR_TOKEN": token])
        #expect(given.configuration.operatorToken == token)
    }

    @Test(arguments: [
        (["ZEVAUTH_OUTBOUND_ALLOW_PRIVATE": "maybe"], [String](), "ZEVAUTH_OUTBOUND_ALLOW_PRIVATE"),
        ([:], ["--outbound-timeout-ms", "0"], "ZEVAUTH_OUTBOUND_TIMEOUT_MS"),
        ([:], ["--rate-mfa-per-account", "x"], "ZEVAUTH_RATE_MFA_PER_ACCOUNT"),
        (["ZEVAUTH_OPERATOR_TOKEN": "short"], [], "ZEVAUTH_OPERATOR_TOKEN"),
        ([:], ["--database-url", "postgresql:///x"], "--database-url"),
        ([:], ["--issuer", "http://127.0.0.1:1"], "--issuer"),
        ([:], ["--no-such-flag", "1"], "--no-such-flag"),
    ])
    func devRefusesWhatServeRefusesAndWhatItChoosesItself(environment: [String: String], arguments: [String], key: String) {
        do {
            _ = try ConfigurationLoader.loadDevelopment(environment: environment, arguments: arguments)
            Issue.record("accepted \(arguments)")
        } catch let error as ConfigurationError {
            #expect(error.key == key)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func serveAndDevReadTheSameKeysFromOneTable() throws {
        let base = [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "o", count: 32),
        ]
        let arguments = [
            "--outbound-resolve", "acme.test:443:127.0.0.1", "--outbound-allow-private", "true", "--rate-mfa-per-account", "7",
        ]
        let serve = try ConfigurationLoader.load(environment: base, arguments: arguments)
        let dev = try ConfigurationLoader.loadDevelopment(environment: base, arguments: arguments).configuration
        #expect(serve.outbound.resolve == dev.outbound.resolve)
        #expect(serve.outbound.allowPrivate && dev.outbound.allowPrivate)
        #expect(serve.rateLimits.mfaPerAccount == 7 && dev.rateLimits.mfaPerAccount == 7)
        // dev takes every flag of serve but the two it chooses, and its own --dir.
        for option in ConfigurationLoader.options where !["--database-url", "--issuer"].contains(option.flag) {
            #expect(ConfigurationLoader.options.contains { $0.flag == option.flag })
            #expect(throws: Never.self) {
                _ = try ConfigurationLoader.merged(
                    environment: [:], arguments: [option.flag, "v"],
                    options: ConfigurationLoader.options + [ConfigurationLoader.devDirectory])
            }
        }
    }

    @Test func usageListsEveryFlagAndHelpNeverStartsAServer() throws {
        for option in ConfigurationLoader.options {
            #expect(Commands.serveUsage.contains(option.flag + " "), "serve --help misses \(option.flag)")
            #expect(Commands.serveUsage.contains(option.variable ?? option.flag))
        }
        #expect(Commands.serveUsage.contains("--rate-window-seconds"))
        for option in ConfigurationLoader.options where !["--database-url", "--issuer"].contains(option.flag) {
            #expect(DevCommand.usage.contains(option.flag + " "), "dev --help misses \(option.flag)")
        }
        #expect(DevCommand.usage.contains("--dir "))
        var printed: [String] = []
        try Commands.serve(arguments: ["--help"]) { printed.append($0) }
        try Commands.migrate(arguments: ["-h"]) { printed.append($0) }
        try DevCommand.run(arguments: ["--listen", "127.0.0.1:1", "--help"]) { printed.append($0) }
        #expect(printed.count == 3)
        #expect(printed[0].hasPrefix("usage: zevauth serve"))
        #expect(printed[1].hasPrefix("usage: zevauth migrate"))
        #expect(printed[2].hasPrefix("usage: zevauth dev"))
        #expect(!Commands.version.isEmpty)
    }

    /// dev's usage is true of dev: `--listen` without the variable dev ignores, and the operator token
    /// and encryption key optional (dev mints them); serve's lines are unchanged.
    @Test func devUsageShowsWhatDevReadsAndWhatItMints() throws {
        let lines = DevCommand.usage.split(separator: "\n").map(String.init)
        let listen = try #require(lines.first { $0.hasPrefix("  --listen ") })
        #expect(!listen.contains("ZEVAUTH_LISTEN"), "\(listen)")
        #expect(!DevCommand.usage.contains("(required)"))
        let token = try #require(lines.first { $0.hasPrefix("  --operator-token ") })
        #expect(token.hasSuffix("(optional: dev mints one and writes it to dev.json)"), "\(token)")
        let key = try #require(lines.first { $0.hasPrefix("  --encryption-key ") })
        #expect(key.contains("optional: dev makes one"), "\(key)")
        let serveLines = Commands.serveUsage.split(separator: "\n").map(String.init)
        #expect(serveLines.first { $0.hasPrefix("  --listen ") }?.contains("ZEVAUTH_LISTEN") == true)
        #expect(serveLines.first { $0.hasPrefix("  --operator-token ") }?.hasSuffix("(required)") == true)
        #expect(serveLines.first { $0.hasPrefix("  --database-url ") }?.hasSuffix("(required)") == true)
    }

    /// A bad or taken address under dev names `--listen` only, and says dev ignores `ZEVAUTH_LISTEN`
    /// when that is set.
    @Test func devListenErrorsNameTheListenFlag() throws {
        let taken = ServerRunner.listenFailure(.addressInUse(host: "127.0.0.1", port: 8080))
        let ignored = DevCommand.listenError(taken, environment: ["ZEVAUTH_LISTEN": "127.0.0.1:8097"]).description
        #expect(
            ignored
                == "configuration --listen: 127.0.0.1 port 8080 is already in use by another process; dev ignores ZEVAUTH_LISTEN in the environment, so pass --listen HOST:PORT to choose the address"
        )
        #expect(
            DevCommand.listenError(taken, environment: [:]).description
                == "configuration --listen: 127.0.0.1 port 8080 is already in use by another process")
        do {
            try DevCommand.run(arguments: ["--listen", "id.example.com:1"], environment: ["ZEVAUTH_LISTEN": "127.0.0.1:8097"]) { _ in }
            Issue.record("dev accepted a host name")
        } catch let error as ConfigurationError {
            #expect(error.key == "--listen")
            #expect("\(error)".hasPrefix("configuration --listen: "), "\(error)")
            #expect("\(error)".contains("dev ignores ZEVAUTH_LISTEN"))
        }
        let other = ConfigurationError(key: "ZEVAUTH_HTTP_THREADS", problem: "must be 1-256")
        #expect(DevCommand.listenError(other, environment: ["ZEVAUTH_LISTEN": "x"]).description == other.description)
    }

    /// An unknown flag names the help of the command it was given to.
    @Test func anUnknownFlagNamesTheCommandsHelp() {
        #expect(throws: ConfigurationError.self) {
            _ = try ConfigurationLoader.load(environment: [:], arguments: ["--lsiten", "1"])
        }
        do {
            _ = try ConfigurationLoader.load(environment: [:], arguments: ["--lsiten", "1"])
        } catch {
            #expect("\(error)" == "configuration --lsiten: unknown option (zevauth serve --help lists the options)")
        }
        do {
            _ = try ConfigurationLoader.loadDevelopment(environment: [:], arguments: ["--lsiten", "1"])
        } catch {
            #expect("\(error)" == "configuration --lsiten: unknown option (zevauth dev --help lists the options)")
        }
    }

    /// The banner says truly what is in `dev.json`: the keys, token, account and callbacks are listed under
    /// that claim, and the start URL's code verifier, which is not in the file, is said to be printed only here.
    @Test func devBannerSaysWhatIsInDevJSON() throws {
        let seed = DevCommand.DevFile(
            issuer: "http://127.0.0.1:8080", operatorToken: "zop_token", projectId: "p",
            development: .init(publishableKey: "pk_test_a", secretKey: "sk_test_b"),
            production: .init(publishableKey: "pk_live_c", secretKey: "sk_live_d"), user: .init(email: "demo@zevauth.test", password: "pw"),
            callbacks: [DevCommand.loopbackCallback, DevCommand.customSchemeCallback])
        let banner = DevCommand.banner(seed, devFile: "/x/dev.json")
        #expect(!banner.contains("Everything below"))
        let parts = banner.components(separatedBy: "Open this sign-in link")
        #expect(parts.count == 2)
        #expect(parts[0].contains("are also in /x/dev.json"))
        for value in [
            "pk_test_a", "sk_test_b", "pk_live_c", "sk_live_d", "zop_token", "demo@zevauth.test", "pw", DevCommand.loopbackCallback,
        ] {
            #expect(parts[0].contains(value), "\(value)")
        }
        #expect(parts[1].contains("verifier are printed only here, not written to dev.json"))
        let devJSON = String(decoding: try JSONEncoder().encode(seed), as: UTF8.self)
        let verifier = try #require(parts[1].components(separatedBy: "\"codeVerifier\":\"").last?.prefix(43))
        #expect(!devJSON.contains(String(verifier)))
    }

    /// The seed written to `dev.json` carries the project id (and the configuration's issuer); a
    /// `dev.json` from an earlier release, without it, gets it on the next start.
    @Test func devJSONCarriesTheProjectID() throws {
        let store = PostgresStore(pool: TestDatabase.pool)
        let directory = URL(fileURLWithPath: NSTemporaryDirectory() + "zevauth-dev-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let devFile = directory.appendingPathComponent("dev.json")
        var configuration = try ConfigurationLoader.loadDevelopment(environment: [:], arguments: ["--listen", "127.0.0.1:9124"])
            .configuration
        configuration.databaseURL = TestDatabase.url
        let email = "demo-\(UUID().uuidString.lowercased())@zevauth.test"
        let seed = try DevCommand.prepareSeed(store: store, devFile: devFile, configuration: configuration, demoEmail: email)
        SuiteCapture.secret(seed.user.password)
        SuiteCapture.secret(seed.development.secretKey)
        SuiteCapture.secret(seed.production.secretKey)
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: devFile)) as? [String: Any])
        let environment = try #require(try store.environment(publishableKey: seed.development.publishableKey))
        #expect(written["projectId"] as? String == environment.projectID)
        #expect(written["issuer"] as? String == "http://127.0.0.1:9124")
        #expect(
            Set(written.keys) == ["issuer", "operatorToken", "projectId", "development", "production", "user", "callbacks", "webClients"])
        // One development web client per authentication method, each with what its client needs.
        let webClients = try #require(written["webClients"] as? [[String: Any]])
        #expect(
            webClients.compactMap { $0["tokenEndpointAuthMethod"] as? String } == [
                "client_secret_basic", "client_secret_post", "private_key_jwt",
            ])
        #expect(webClients.filter { $0["clientSecret"] is String }.count == 2)
        #expect((webClients.last?["privateKeyPem"] as? String)?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        for client in seed.webClients ?? [] {
            SuiteCapture.secret(client.clientSecret)
            #expect(try store.webClients.webClient(clientID: client.clientId)?.client.environmentID == environment.id)
        }

        // A file of an earlier release (no projectId) is completed, not seeded again.
        var old = written
        old["projectId"] = nil
        try JSONSerialization.data(withJSONObject: old).write(to: devFile)
        let again = try DevCommand.prepareSeed(store: store, devFile: devFile, configuration: configuration, demoEmail: email)
        #expect(again.projectId == environment.projectID)
        #expect(again.development.publishableKey == seed.development.publishableKey)
        let rewritten = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: devFile)) as? [String: Any])
        #expect(rewritten["projectId"] as? String == environment.projectID)
        #expect(again.webClients?.map(\.clientId) == seed.webClients?.map(\.clientId))
    }
}
