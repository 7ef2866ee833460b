import Fetch
import Foundation
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
        #expect(Set(written.keys) == ["issuer", "operatorToken", "projectId", "development", "production", "user", "callbacks"])

        // A file of an earlier release (no projectId) is completed, not seeded again.
        var old = written
        old["projectId"] = nil
        try JSONSerialization.data(withJSONObject: old).write(to: devFile)
        let again = try DevCommand.prepareSeed(store: store, devFile: devFile, configuration: configuration, demoEmail: email)
        #expect(again.projectId == environment.projectID)
        #expect(again.development.publishableKey == seed.development.publishableKey)
        let rewritten = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: devFile)) as? [String: Any])
        #expect(rewritten["projectId"] as? String == environment.projectID)
    }
}
