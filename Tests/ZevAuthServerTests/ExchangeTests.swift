import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md#exchange-checks: every row in order, single use, the 60-second boundary and concurrent replays.
@Suite struct ExchangeTests {
    static let redirect = "http://127.0.0.1:54321/cb"

    struct Issued {
        let server: TestServer
        let fixture: Fixture
        let driver: SignInDriver
        let pkce: PKCEPair
        let code: String
    }

    static func issue(server: TestServer? = nil, fixture: Fixture? = nil, clientRedirect: String = redirect) throws -> Issued {
        let server = try server ?? TestServer()
        let fixture = try fixture ?? Fixture.make(store: server.store)
        let driver = SignInDriver(server: server, browser: server.browser())
        let pkce = PKCEPair()
        let result = try driver.run(
            clientID: fixture.developmentKey, redirectURI: clientRedirect, state: "s", pkce: pkce,
            email: fixture.email, password: fixture.password)
        return Issued(server: server, fixture: fixture, driver: driver, pkce: pkce, code: try #require(result.code))
    }

    func expectError(_ response: TestResponse, _ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        #expect(response.header("cache-control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test func row1MissingOrUnknownPublishableKey() throws {
        let issued = try Self.issue()
        let body: [String: Any] = ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect]
        expectError(try issued.driver.exchange(clientID: nil, fields: body), 401, "invalid_client")
        expectError(try issued.driver.exchange(clientID: "pk_test_nope", fields: body), 401, "invalid_client")
        // Row 1 comes before row 2: an unknown key with a broken body is still invalid_client.
        expectError(try SignInDriver.exchange(issued.server.client, clientID: "pk_test_nope", body: Array("{".utf8)), 401, "invalid_client")
        // The code was not consumed by those attempts.
        #expect(try issued.driver.exchange(clientID: issued.fixture.developmentKey, fields: body).status == 200)
    }

    @Test(arguments: [
        "", "{", "[]", "null", "{\"code\": 5}", "{\"codeVerifier\": \"x\"}", "\u{FEFF}{\"code\":\"hoc_x\"}", "{\"code\":\"hoc_x\",}",
        "{\"code\":\"hoc_x\",\"redirectUri\":7}", "{\"code\":\"hoc_x\",\"codeVerifier\":[]}", "{\"code\":\"a\",\"code\":\"b\"}",
    ])
    func row2BodyNotStrictJSONOrAFieldOfTheWrongType(body: String) throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        expectError(
            try SignInDriver.exchange(server.client, clientID: fixture.developmentKey, body: Array(body.utf8)), 400, "invalid_request")
    }

    @Test func row3UnknownUsedOrAnotherEnvironmentsCode() throws {
        let issued = try Self.issue()
        let body: [String: Any] = ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect]
        expectError(
            try issued.driver.exchange(clientID: issued.fixture.developmentKey, fields: ["code": "hoc_unknown"]), 400, "invalid_grant")
        // Another environment's key: invalid_grant, and the code stays unused.
        expectError(try issued.driver.exchange(clientID: issued.fixture.productionKey, fields: body), 400, "invalid_grant")
        #expect(try issued.driver.exchange(clientID: issued.fixture.developmentKey, fields: body).status == 200)
        expectError(try issued.driver.exchange(clientID: issued.fixture.developmentKey, fields: body), 400, "invalid_grant")
    }

    @Test(
        arguments: [
            ([:], "redirect_uri_required"),
            (["redirectUri": NSNull()], "redirect_uri_required"),
            (["redirectUri": "http://127.0.0.1:54322/cb"], "redirect_uri_mismatch"),
            (["redirectUri": "http://127.0.0.1/cb"], "redirect_uri_mismatch"),
            (["redirectUri": redirect], "pkce_verification_failed"),
            (["redirectUri": redirect, "codeVerifier": NSNull()], "pkce_verification_failed"),
            (["redirectUri": redirect, "codeVerifier": "short"], "pkce_verification_failed"),
            (["redirectUri": redirect, "codeVerifier": String(repeating: "a", count: 129)], "pkce_verification_failed"),
            (["redirectUri": redirect, "codeVerifier": String(repeating: "a", count: 43)], "pkce_verification_failed"),
            (["redirectUri": redirect, "codeVerifier": String(repeating: "a", count: 42) + "+"], "pkce_verification_failed"),
        ] as [([String: any Sendable], String)])
    func rows4To6RunAfterConsumptionAndBurnTheCode(fields: [String: any Sendable], error: String) throws {
        let issued = try Self.issue()
        var body: [String: Any] = ["code": issued.code]
        for (name, value) in fields { body[name] = value }
        expectError(try issued.driver.exchange(clientID: issued.fixture.developmentKey, fields: body), 400, error)
        // The code was consumed: the right request now gets invalid_grant.
        expectError(
            try issued.driver.exchange(
                clientID: issued.fixture.developmentKey,
                fields: [
                    "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect,
                ]), 400, "invalid_grant")
    }

    @Test(arguments: [(59.0, true), (60.0, false)])
    func codesExpireSixtySecondsAfterIssue(elapsed: Double, redeems: Bool) throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let issued = try Self.issue(server: server)
        clock.advance(by: elapsed)
        let response = try issued.driver.exchange(
            clientID: issued.fixture.developmentKey,
            fields: [
                "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect,
            ])
        if redeems { #expect(response.status == 200) } else { expectError(response, 400, "invalid_grant") }
    }

    @Test func thirtyTwoConcurrentExchangesYieldExactlyOneSessionWhichTheValidReplaysRevoke() throws {
        let issued = try Self.issue()
        let body = try JSONSerialization.data(withJSONObject: [
            "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect,
        ])
        let client = issued.server.client
        let key = issued.fixture.developmentKey
        let results = ConcurrentResults()
        DispatchQueue.concurrentPerform(iterations: 32) { _ in
            results.append(try? SignInDriver.exchange(client, clientID: key, body: Array(body)))
        }
        let responses = results.all
        #expect(responses.count == 32)
        let winners = responses.filter { $0?.status == 200 }
        #expect(winners.count == 1)
        #expect(responses.filter { $0?.status == 400 && $0?.json["error"] as? String == "invalid_grant" }.count == 31)
        let session = try #require(winners.first??.json["session"] as? [String: Any])
        let sessionID = try #require(session["id"] as? String)
        #expect(try issued.server.store.isSessionRevoked(id: sessionID) == true)
        let accessToken = try #require(session["accessToken"] as? String)
        #expect(try client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(accessToken)")]).status == 401)
    }

    @Test func aReplayWithoutTheVerifierRevokesNothing() throws {
        let issued = try Self.issue()
        let key = issued.fixture.developmentKey
        let won = try issued.driver.exchange(
            clientID: key,
            fields: [
                "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect,
            ])
        let sessionID = try #require((won.json["session"] as? [String: Any])?["id"] as? String)
        expectError(
            try issued.driver.exchange(
                clientID: key,
                fields: [
                    "code": issued.code, "codeVerifier": PKCEPair().verifier, "redirectUri": Self.redirect,
                ]), 400, "invalid_grant")
        expectError(
            try issued.driver.exchange(
                clientID: key,
                fields: [
                    "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": "http://127.0.0.1:1/cb",
                ]), 400, "invalid_grant")
        #expect(try issued.server.store.isSessionRevoked(id: sessionID) == false)
        // A valid replay does revoke it.
        expectError(
            try issued.driver.exchange(
                clientID: key,
                fields: [
                    "code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": Self.redirect,
                ]), 400, "invalid_grant")
        #expect(try issued.server.store.isSessionRevoked(id: sessionID) == true)
    }
}

/// Collects results from concurrent workers.
final class ConcurrentResults: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [TestResponse?] = []
    func append(_ item: TestResponse?) { lock.withLock { items.append(item) } }
    var all: [TestResponse?] { lock.withLock { items } }
}
