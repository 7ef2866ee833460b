import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// What a fresh reviewer found from outside after the pipeline redesign, each pinned as a person or a client
/// sees it (docs/protocol.md, docs/operations.md).
@Suite struct ReviewFixTests {
    @Test func twoAuthorizationFieldsAreNoCredentialAtAll() throws {
        let driver = try SessionDriver.started()
        let pair = try driver.signIn()
        let body = Array("{\"refreshToken\":\"\(pair.refreshToken)\"}".utf8)
        let doubled = try driver.server.client.send(
            "POST", "/v1/auth/session/refresh",
            headers: [
                ("Content-Type", "application/json"), ("Authorization", "Bearer \(driver.fixture.developmentKey)"),
                ("Authorization", "Bearer x"),
            ], body: body)
        #expect(doubled.status == 401)
        #expect(doubled.json["error"] as? String == "invalid_client")
        // The token was not spent by the refused request: the same refresh with one field still works.
        #expect(try driver.refresh(pair.refreshToken).status == 200)
    }

    @Test func aSecretKeyIsMintedOnlyForNoBodyOrAnEmptyObject() throws {
        let driver = try SessionDriver.started()
        let secret = driver.fixture.developmentSecret
        for garbage in ["garbage", "\u{FEFF}{}", "[]", "{\"name\":\"x\"}", "{"] {
            let refused = try driver.server.client.send(
                "POST", "/v1/admin/keys", headers: [("Authorization", "Bearer \(secret)")], body: Array(garbage.utf8))
            #expect(refused.status == 400, "\(garbage)")
            #expect(refused.json["error"] as? String == "invalid_request")
        }
        #expect(try driver.sendJSON("POST", "/v1/admin/keys", bearer: secret, [:]).status == 201)
        #expect(try driver.sendJSON("POST", "/v1/admin/keys", bearer: secret).status == 201)
    }

    @Test func notReadyTellsWhenToAskAgain() throws {
        let app = InProcessApp(context: InProcessApp.context())
        let answer = try app.get("/readyz")
        #expect(answer.status == 503)
        #expect(answer.header("Retry-After") == "1")
    }

    @Test func aPageRouteWhoseDatabaseIsOutOfReachAnswersThePage() throws {
        let app = InProcessApp(context: InProcessApp.context())
        let page = try app.get("/v1/auth/zevid/signin?request=00000000-0000-4000-8000-000000000001")
        #expect(page.status == 503)
        #expect(page.header("Retry-After") == "1")
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        let asJSON = try app.get(
            "/v1/auth/zevid/signin?request=00000000-0000-4000-8000-000000000001", headers: [("Accept", "application/json")])
        #expect(asJSON.status == 503)
        #expect(asJSON.json["error"] as? String == "temporarily_unavailable")
    }

    @Test func aJoinedRequestIdFromATrustedProxyIsReplaced() {
        let kept = RequestID.resolve(peer: "10.0.0.1", sent: ["abc-123"], trusted: ["10.0.0.1"])
        #expect(kept == "abc-123")
        let joined = RequestID.resolve(peer: "10.0.0.1", sent: ["a,b"], trusted: ["10.0.0.1"])
        #expect(joined != "a,b")
        #expect(joined.count == 32)
    }

    @Test(arguments: ["+2", "-2", " 2", "2 ", "0x2"])
    func wholeNumbersArePlainDecimalDigits(value: String) {
        var environment = [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": "zop_0123456789abcdef0123456789abcdef",
        ]
        environment["ZEVAUTH_PASSWORD_HASH_CONCURRENCY"] = value
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.load(environment: environment) }
    }
}
