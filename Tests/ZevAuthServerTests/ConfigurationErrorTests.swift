import Foundation
import HTTPServer
import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// Configuration errors name the key they are about, as the variable and its flag (docs/operations.md,
/// "Commands"), and `ZEVAUTH_LISTEN` takes `localhost`.
@Suite struct ConfigurationErrorTests {
    static let base = [
        "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
        "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "o", count: 32),
    ]

    func loadError(_ environment: [String: String], arguments: [String] = []) -> String? {
        do {
            _ = try ConfigurationLoader.load(environment: environment, arguments: arguments)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: ["localhost:8095", "LOCALHOST:8095", "[localhost]:8095"])
    func localhostIsTheLoopbackAddress(listen: String) throws {
        var environment = Self.base
        environment["ZEVAUTH_LISTEN"] = listen
        let configuration = try ConfigurationLoader.load(environment: environment)
        #expect(configuration.listenHost == "127.0.0.1")
        #expect(configuration.listenPort == 8095)
    }

    @Test(arguments: [("0.0.0.0:80", "0.0.0.0"), ("[::1]:8080", "::1"), ("10.0.0.5:0", "10.0.0.5")])
    func addressLiteralsAreAccepted(listen: String, host: String) throws {
        #expect(try ConfigurationLoader.parseListen(listen).0 == host)
    }

    @Test(arguments: ["id.example.com:8095", "::1:8080", "[127.0.0.1]:80", "127.0.0.1", "127.0.0.1:99999", ":80", "[::1]"])
    func badListenValuesNameTheKey(listen: String) {
        var environment = Self.base
        environment["ZEVAUTH_LISTEN"] = listen
        let message = loadError(environment)
        #expect(message?.hasPrefix("configuration ZEVAUTH_LISTEN (--listen): ") == true, "\(message ?? "no error")")
        #expect(message?.contains("IPv4 or IPv6 address literal") == false)
        let fromFlag = loadError(Self.base, arguments: ["--listen", listen])
        #expect(fromFlag?.hasPrefix("configuration ZEVAUTH_LISTEN (--listen): ") == true)
    }

    @Test(arguments: [
        ("ZEVAUTH_ISSUER", "ftp://id.example.com"), ("ZEVAUTH_ISSUER", "https://id.example.com/"),
        ("ZEVAUTH_ISSUER", "https://id.example.com/auth"), ("ZEVAUTH_ISSUER", "https://user@id.example.com"),
        ("ZEVAUTH_ISSUER", "https://id.example.com?x=1"),
        ("ZEVAUTH_OPERATOR_TOKEN", "short"), ("ZEVAUTH_DATABASE_URL", ""), ("ZEVAUTH_ENCRYPTION_KEY", "abc"),
        ("ZEVAUTH_TRUSTED_PROXIES", "proxy.internal"), ("ZEVAUTH_TRUSTED_PROXIES", "10.0.0.0/8"),
        ("ZEVAUTH_HTTP_THREADS", "0"), ("ZEVAUTH_DATABASE_POOL_SIZE", "many"), ("ZEVAUTH_LINK_CHECKS", "maybe"),
        ("ZEVAUTH_PASSWORD_HASH_CONCURRENCY", "0"), ("ZEVAUTH_PASSWORD_HASH_CONCURRENCY", "65"),
        ("ZEVAUTH_OUTBOUND_TIMEOUT_MS", "0"), ("ZEVAUTH_OUTBOUND_ALLOW_PRIVATE", "maybe"),
        ("ZEVAUTH_OUTBOUND_RESOLVE", "nonsense"), ("ZEVAUTH_OUTBOUND_CA_FILE", "/nonexistent/ca.pem"),
        ("ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT", "0"),
    ])
    func everyConfigurationErrorNamesItsVariableAndFlag(key: String, value: String) throws {
        var environment = Self.base
        environment[key] = value
        let flag = try #require(ConfigurationLoader.options.first { $0.variable == key }?.flag)
        let message = loadError(environment)
        #expect(message?.hasPrefix("configuration \(key) (\(flag)): ") == true, "\(message ?? "no error")")
        if key == "ZEVAUTH_OPERATOR_TOKEN" || key == "ZEVAUTH_ENCRYPTION_KEY" {
            #expect(message?.contains(value) == false)
        }
    }

    @Test func failuresToListenNameTheListenKey() throws {
        let taken = try HTTPServer(
            configuration: {
                var configuration = HTTPServerConfiguration()
                configuration.port = 0
                configuration.threadPoolSize = 1
                return configuration
            }(), handler: Router())
        defer { taken.shutdown(gracePeriodSeconds: 0) }
        var configuration = HTTPServerConfiguration()
        configuration.port = taken.port
        do {
            _ = try HTTPServer(configuration: configuration, handler: Router())
            Issue.record("a second server bound the same port")
        } catch let error as HTTPServerError {
            #expect(
                ServerRunner.listenFailure(error).description
                    == "configuration ZEVAUTH_LISTEN (--listen): 127.0.0.1 port \(taken.port) is already in use by another process")
        }
        #expect(
            ServerRunner.listenFailure(.invalidHost("id.example.com")).description.hasPrefix(
                "configuration ZEVAUTH_LISTEN (--listen): "))
        #expect(
            ServerRunner.listenFailure(.invalidConfiguration(field: "threadPoolSize", reason: "must be 1...1024"))
                .description.hasPrefix("configuration ZEVAUTH_HTTP_THREADS (--http-threads): "))
    }

    /// The executable prints one line naming the key and exits 2 (when the test build has built it).
    @Test(arguments: [
        ("ZEVAUTH_LISTEN", "id.example.com:8095", "ZEVAUTH_LISTEN (--listen)"),
        ("ZEVAUTH_DATABASE_URL", "postgresql://zevauth@127.0.0.1:1/zevauth", "ZEVAUTH_DATABASE_URL (--database-url)"),
    ])
    func theExecutableNamesTheKeyAndExits2(key: String, value: String, named: String) throws {
        var environment = Self.base
        environment["ZEVAUTH_SQL_DIR"] = FileManager.default.currentDirectoryPath + "/sql"
        environment[key] = value
        guard let (status, text) = try runZevauth(["serve"], environment: environment) else { return }
        #expect(status == 2)
        #expect(text.hasPrefix("zevauth: configuration \(named): "), "\(text)")
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }
}

/// A first word that is no command gets a sentence saying so, then the usage (when the test build has
/// built the executable).
@Suite struct UnknownCommandTests {
    @Test func theExecutableSaysThereIsNoSuchCommand() throws {
        guard let (status, text) = try runZevauth(["frobnicate"], environment: [:]) else { return }
        #expect(status == 2)
        #expect(text.hasPrefix("zevauth: there is no command \"frobnicate\".\nusage: zevauth <command>"), "\(text)")
    }
}

/// The JSON errors the HTTP layer answers itself on the token endpoints of the real app (docs/protocol.md,
/// "Conventions") carry `Cache-Control: no-store` and `Pragma: no-cache`.
@Suite struct HTTPLayerCachingTests {
    @Test func layerErrorsOnTheTokenEndpointsAreNotCached() throws {
        let server = try TestServer(live: true)
        let client = server.client
        let many = Array(repeating: "a", count: 600).joined(separator: "&")
        let bigHeaders = (0...100).map { ("X-Filler-\($0)", "a") }
        for endpoint in ["/oauth2/token", "/v1/auth/handoff/exchange", "/v1/auth/session/refresh"] {
            let answers = [
                (405, try client.send("GET", endpoint)),
                // Declared, not sent: the 413 goes out before the body is read.
                (413, try client.send("GET", endpoint, headers: [("Content-Length", "70000")])),
                (414, try client.send("POST", endpoint + "?" + many)),
                (431, try client.send("POST", endpoint, headers: bigHeaders)),
                (404, try client.send("POST", endpoint + "/nope")),
            ]
            for (status, response) in answers {
                #expect(response.status == status, "\(endpoint) \(status)")
                #expect(response.header("Content-Type") == "application/json", "\(endpoint) \(status)")
                #expect(response.header("Cache-Control") == "no-store", "\(endpoint) \(status)")
                #expect(response.header("Pragma") == "no-cache", "\(endpoint) \(status)")
            }
        }
    }
}

/// Runs the built `zevauth` executable beside the test binary with `arguments` and exactly `environment`.
/// - Returns: its exit status and standard error, or nil when the test build has not built the executable.
func runZevauth(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String)? {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("zevauth")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else { return nil }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = Pipe()
    try process.run()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
}
