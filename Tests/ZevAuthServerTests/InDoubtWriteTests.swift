import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// A connection that drops after the exchange or refresh statement was sent (docs/operations.md,
/// "In-doubt writes"): the request that sent it settles it, so the client gets 200 with working tokens and
/// no retry of its is ever taken for a replay or a reuse.
@Suite struct InDoubtWriteTests {
    /// `Tests/Faults/drop_proxy.py` on a loopback port in front of the test cluster's socket: it drops the
    /// connection once after forwarding a message with each pattern, before the answer comes back.
    final class DropProxy {
        let process = Process()
        let port: UInt16
        let directory: String

        init(patterns: [String]) throws {
            directory = NSTemporaryDirectory() + "zevauth-drop-" + UUID().uuidString.prefix(8)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let portFile = directory + "/port"
            let query = URLComponents(string: TestDatabase.url)?.queryItems ?? []
            let host = query.first { $0.name == "host" }?.value ?? "/tmp"
            let socketPort = query.first { $0.name == "port" }?.value ?? "5432"
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments =
                [
                    TestDatabase.repositoryRoot + "/Tests/Faults/drop_proxy.py", "--socket", "\(host)/.s.PGSQL.\(socketPort)",
                    "--port-file", portFile, "--seconds", "120",
                ] + patterns.flatMap { ["--pattern", $0] }
            try process.run()
            TestProcesses.started(process, "drop proxy (Tests/Faults/drop_proxy.py)")
            var port: UInt16?
            for _ in 0..<100 where port == nil {
                port = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { UInt16($0) }
                if port == nil { usleep(50_000) }
            }
            guard let port else {
                process.terminate()
                process.waitUntilExit()
                TestProcesses.ended(process)
                throw TestHTTPClient.Failure.malformed
            }
            self.port = port
        }

        /// A URL through the proxy, with the server's statements sent unnamed so each carries its SQL text.
        var url: String { "postgresql://postgres@127.0.0.1:\(port)/zevauth?sslmode=disable" }

        deinit {
            process.terminate()
            process.waitUntilExit()
            TestProcesses.ended(process)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func server(through proxy: DropProxy, settleMilliseconds: Int) throws -> TestServer {
        // The shared pool migrates the test database once per process; this test's own pool (through the
        // proxy) does not, so without this line it passes only when another suite happened to migrate first.
        _ = TestDatabase.pool
        var options = PostgresConnectionOptions()
        options.preparedStatements = false
        let pool = PostgresPool(url: proxy.url, size: 6, sharedConnections: 2, options: options)
        return try TestServer(configure: { $0.databaseSettleMilliseconds = settleMilliseconds }, store: PostgresStore(pool: pool))
    }

    /// The exchange's and then the refresh's connection drop right after their statements were sent (and
    /// committed): each request settles its own write and answers 200, the tokens work, and the session
    /// was never revoked.
    @Test func droppedExchangeAndRefreshAnswer200WithWorkingTokens() throws {
        let proxy = try DropProxy(patterns: ["new_session AS", "new_refresh_token AS"])
        let server = try Self.server(through: proxy, settleMilliseconds: 15_000)
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)

        let pair = try driver.signIn()
        #expect(try driver.current(pair.accessToken).status == 200)
        let refreshed = try driver.refresh(pair.refreshToken)
        #expect(refreshed.status == 200)
        let next = try #require(SessionDriver.Pair(refreshed))
        #expect(next.sessionID == pair.sessionID)
        #expect(try driver.current(next.accessToken).status == 200)
        #expect(try server.store.isSessionRevoked(id: pair.sessionID) == false)
        // The rotation landed once: the new refresh token rotates again, the old one is an earlier generation.
        #expect(try driver.refresh(next.refreshToken).status == 200)
        #expect(server.serverFailureLines.filter { $0.contains(" 500 ") }.isEmpty)
    }

    /// Without the settle window (`ZEVAUTH_DATABASE_SETTLE_MS=0`) the same drop answers 503, and the
    /// client's obedient retry meets its own committed write: a replay, which revokes the session. This is
    /// what the window prevents.
    @Test func withoutTheWindowTheRetryIsTakenForAReplay() throws {
        let proxy = try DropProxy(patterns: ["new_session AS"])
        let server = try Self.server(through: proxy, settleMilliseconds: 0)
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let code = try driver.issueCode(path: "/v1/auth/zevid/start")
        let fields = ["code": code.code, "codeVerifier": code.pkce.verifier, "redirectUri": SessionDriver.redirect]
        let first = try SignInDriver(server: server, browser: server.browser()).exchange(clientID: fixture.developmentKey, fields: fields)
        #expect(first.status == 503)
        #expect(first.header("Retry-After") != nil)
        let retry = try SignInDriver(server: server, browser: server.browser()).exchange(clientID: fixture.developmentKey, fields: fields)
        #expect(retry.status == 400)
        #expect(retry.json["error"] as? String == "invalid_grant")
    }
}
