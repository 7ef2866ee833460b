import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

@testable import Conformance

/// The whole conformance suite against the real server (real HTTP, real PostgreSQL).
@Suite struct ConformanceLiveTests {
    static func options(_ server: TestServer, _ fixture: Fixture) -> Options {
        var options = Options()
        options.issuer = server.issuer
        options.clientID = fixture.developmentKey
        options.redirectURI = "http://127.0.0.1/cb"
        options.email = fixture.email
        options.password = fixture.password
        options.productionClientID = fixture.productionKey
        options.secretKey = fixture.developmentSecret
        options.operatorToken = TestServer.operatorToken
        return options
    }

    @Test func everyCheckPassesAgainstTheServerAndNothingSecretIsPrinted() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let options = Self.options(server, fixture)
        let redactor = Redactor()
        let suite = Suite(options: options, agent: Agent(options: options, redactor: redactor))
        let results = suite.run()
        let failures = results.filter { $0.verdict == .fail }
        #expect(failures.isEmpty, "\(failures.map { "\($0.clause) \($0.title): \($0.seen)" })")
        #expect(results.count > 100)
        // A request object is refused at the redirect URI before the state check, on both starts
        // (docs/protocol.md#start-check-4).
        let requestObject = results.filter { $0.clause.contains("protocol.md#start-check-4") }
        #expect(requestObject.count == 2)
        #expect(requestObject.allSatisfy { $0.verdict == .pass })
        let formatter = ReportFormatter(redactor: redactor)
        let output = results.map(formatter.line).joined(separator: "\n") + formatter.json(results) + formatter.junit(results)
        for secret in [fixture.password, fixture.developmentSecret, fixture.productionSecret, TestServer.operatorToken] {
            #expect(!output.contains(secret))
        }
        for prefix in ["hoc_", "zat_", "zrt_", "zbs_", "zbb_"] {
            #expect(!output.contains(prefix), "a \(prefix) value in the output")
        }
    }

    /// With ID tokens signed by the server's own keys (so their signatures verify against its JWKS), every
    /// OpenID check runs and passes.
    @Test func theOpenIDChecksRunAndPassWithASigner() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let options = Self.options(server, fixture)
        let suite = Suite(options: options, agent: Agent(options: options, redactor: Redactor()))
        let results = suite.run()
        let failures = results.filter { $0.verdict == .fail }
        #expect(failures.isEmpty, "\(failures.map { "\($0.clause) \($0.title): \($0.seen)" })")
        let openID = results.filter {
            $0.title.hasPrefix("ID token:") || $0.title.hasPrefix("userinfo:") || $0.title.hasPrefix("discovery:")
        }
        #expect(openID.count >= 15)
        #expect(openID.allSatisfy { $0.verdict == .pass }, "\(openID.filter { $0.verdict != .pass }.map(\.title))")
    }

    @Test func aRateLimitedGroupIsSkippedWithTheReason() throws {
        let server = try TestServer(live: true) { configuration in configuration.rateLimits.exchangeFailuresPerAddress = 1 }
        let fixture = try Fixture.make(store: server.store)
        var options = Self.options(server, fixture)
        options.maxBackoffSeconds = 5
        let sleeps = SleepLog()
        let suite = Suite(options: options, agent: Agent(options: options, redactor: Redactor(), sleep: { sleeps.add($0) }))
        suite.group("protocol.md#exchange", "exchange errors in order", suite.exchangeErrors)
        let skipped = suite.results.filter { $0.verdict == .skip }
        #expect(skipped.count == 1)
        #expect(skipped.first?.seen.contains("rate limited: 429") == true)
        #expect(skipped.first?.seen.contains("Retry-After") == true)
        #expect(sleeps.total == 0, "a Retry-After beyond the bound is not waited out")
    }

    @Test func theCommandExitsNonZeroWhenACheckFails() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        var lines: [String] = []
        // A wrong password: the sign-in stops, so checks fail.
        let status = ConformanceCommand.run(
            arguments: [
                "--issuer", server.issuer, "--client-id", fixture.developmentKey, "--redirect-uri", "http://127.0.0.1/cb", "--email",
                fixture.email,
                "--password", "wrong password 123",
            ],
            write: { lines.append($0) })
        #expect(status == 1)
        #expect(lines.last?.range(of: #"^\d+ passed, [1-9]\d* failed, \d+ skipped$"#, options: .regularExpression) != nil)
        #expect(!lines.joined().contains("wrong password 123"))
    }
}

final class SleepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds = 0
    func add(_ value: Int) { lock.withLock { seconds += value } }
    var total: Int { lock.withLock { seconds } }
}
