import AdminCLI
import Fetch
import Foundation
import HTTPServer
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// What one CLI run printed.
final class Output: @unchecked Sendable {
    private let lock = NSLock()
    private var out: [String] = []
    private var err: [String] = []
    func write(_ line: String) { lock.withLock { out.append(line) } }
    func writeError(_ line: String) { lock.withLock { err.append(line) } }
    var stdout: String { lock.withLock { out.joined(separator: "\n") } }
    var stderr: String { lock.withLock { err.joined(separator: "\n") } }
}

func runCLI(_ arguments: [String], environment: [String: String] = [:], password: String? = nil) -> (status: Int32, output: Output) {
    let output = Output()
    let cli = AdminCLI(
        environment: environment, write: output.write, writeError: output.writeError, readPassword: { _ in password })
    return (cli.run(arguments), output)
}

/// The admin commands against the real server (real HTTP, real PostgreSQL).
@Suite struct AdminCLITests {
    let server: TestServer

    init() throws { server = try TestServer(live: true) }

    var operatorEnv: [String: String] { ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken] }

    @Test func createsAProjectAndPrintsBothEnvironmentsKeys() throws {
        let table = runCLI(["project", "create", "--name", "Acme CLI"], environment: operatorEnv)
        #expect(table.status == 0)
        #expect(table.output.stdout.contains("ENVIRONMENT"))
        #expect(table.output.stdout.contains("pk_test_"))
        #expect(table.output.stdout.contains("sk_live_"))
        let json = runCLI(["project", "create", "--name", "Acme JSON", "--json", "--server", server.issuer], environment: operatorEnv)
        let object = try JSONSerialization.jsonObject(with: Data(json.output.stdout.utf8)) as? [String: Any]
        #expect((object?["development"] as? [String: Any])?["secretKey"] as? String != nil)
        SuiteCapture.secret(((object?["development"] as? [String: Any])?["secretKey"] as? String))
    }

    @Test func addsACallbackWithTheSecretKeyAndShowsConflicts() throws {
        let fixture = try Fixture.make(store: server.store, development: [])
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": fixture.developmentSecret]
        let added = runCLI(["callback", "add", "--uri", "com.acme.cli:/callback"], environment: env)
        #expect(added.status == 0)
        #expect(added.output.stdout.contains("custom_scheme"))
        let again = runCLI(["callback", "add", "--uri", "com.acme.cli:/callback"], environment: env)
        #expect(again.status == 1)
        #expect(again.output.stderr.contains("409 conflict: "))
        let refused = runCLI(["callback", "add", "--uri", "myapp:/cb", "--json"], environment: env)
        #expect(refused.status == 1)
        #expect(refused.output.stderr.contains("400 invalid_request: uri"))
    }

    @Test func createsAUserWithThePasswordFromThePromptOrStdin() throws {
        let email = "cli-\(UUID().uuidString.lowercased())@example.com"
        let created = runCLI(
            ["user", "create", "--email", email, "--name", "Cli Person", "--password-stdin"], environment: operatorEnv,
            password: "a long enough password")
        #expect(created.status == 0)
        #expect(created.output.stdout.contains(email))
        #expect(!created.output.stdout.contains("a long enough password"))
        let duplicate = runCLI(
            ["user", "create", "--email", email, "--name", "Cli Person", "--password", "another long password"], environment: operatorEnv)
        #expect(duplicate.status == 1)
        #expect(duplicate.output.stderr.contains("conflict"))
        let noPassword = runCLI(["user", "create", "--email", "x@example.com", "--name", "X"], environment: operatorEnv, password: nil)
        #expect(noPassword.status == 2)
    }

    @Test func refusesBadCommandLinesAndMissingCredentials() {
        #expect(runCLI(["project", "create"], environment: operatorEnv).status == 2)
        #expect(runCLI(["project", "create", "--name", "A", "--bogus", "x"], environment: operatorEnv).status == 2)
        #expect(runCLI(["callback", "add", "--uri", "com.a.b:/c"], environment: ["ZEVAUTH_ISSUER": server.issuer]).status == 2)
        #expect(runCLI(["project", "create", "--name", "A"], environment: ["ZEVAUTH_OPERATOR_TOKEN": "x"]).status == 2)
        #expect(runCLI(["app", "add", "windows"], environment: operatorEnv).status == 2)
        let wrongToken = runCLI(
            ["project", "create", "--name", "A"], environment: ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": "zop_wrong"])
        #expect(wrongToken.status == 1)
        #expect(wrongToken.output.stderr.contains("401 invalid_token"))
        let unreachable = runCLI(["project", "create", "--name", "A", "--server", "http://127.0.0.1:1"], environment: operatorEnv)
        #expect(unreachable.status == 1)
    }
}

/// The app commands against a stand-in for the admin API's app calls (docs/protocol.md#admin-calls shapes),
/// checking what the CLI sends and how it prints the `link`.
@Suite struct AdminCLIAppTests {
    final class Handler: HTTPHandler, Sendable {
        let seen = Mutex<[(String, String, [UInt8], String?)]>([])
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            seen.withLock { $0.append((request.method, request.path, request.body, request.headers["authorization"])) }
            let link =
                #""link":{"status":"not_verified","checkedAt":"2026-01-01T00:00:00Z","nextCheckAt":null,"problems":[{"code":"file_missing","message":"404 at https://acme.example/.well-known/assetlinks.json"}]}"#
            if request.path.hasSuffix("/check") {
                return HTTPResponse(
                    status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{\(link)}".utf8))
            }
            let body = #"{"id":"app_1","platform":"android","packageName":"com.acme.app","sha256CertFingerprints":["AB:CD"],\#(link)}"#
            return HTTPResponse(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(body.utf8))
        }
    }

    @Test func addsAnAndroidAppAndChecksIt() throws {
        let handler = Handler()
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threadPoolSize = 1
        let server = try HTTPServer(configuration: configuration, handler: handler)
        defer { server.shutdown(gracePeriodSeconds: 1) }
        let env = ["ZEVAUTH_ISSUER": "http://127.0.0.1:\(server.port)", "ZEVAUTH_SECRET_KEY": "sk_test_cli"]
        let added = runCLI(
            ["app", "add", "android", "--package-name", "com.acme.app", "--fingerprint", "ab:cd", "--fingerprint", "EF01"], environment: env
        )
        #expect(added.status == 0)
        #expect(added.output.stdout.contains("not_verified"))
        #expect(added.output.stdout.contains("file_missing"))
        let checked = runCLI(["app", "check", "app_1"], environment: env)
        #expect(checked.status == 0)
        #expect(checked.output.stdout.contains("PROBLEM"))
        let ios = runCLI(["app", "add", "ios", "--bundle-id", "com.acme.app", "--team-id", "abcde12345", "--json"], environment: env)
        #expect(ios.status == 0)
        let seen = handler.seen.withLock { $0 }
        #expect(seen.map(\.1) == ["/v1/admin/apps", "/v1/admin/apps/app_1/check", "/v1/admin/apps"])
        #expect(seen.allSatisfy { $0.0 == "POST" && $0.3 == "Bearer sk_test_cli" })
        let android = try JSONSerialization.jsonObject(with: Data(seen[0].2)) as? [String: Any]
        #expect(android?["platform"] as? String == "android")
        #expect(android?["sha256CertFingerprints"] as? [String] == ["ab:cd", "EF01"])
        let iosBody = try JSONSerialization.jsonObject(with: Data(seen[2].2)) as? [String: Any]
        #expect(iosBody?["bundleId"] as? String == "com.acme.app")
        #expect(iosBody?["teamId"] as? String == "abcde12345")
    }
}
