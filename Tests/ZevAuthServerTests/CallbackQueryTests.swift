import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md "Loopback matching": a callback whose query already carries a response parameter
/// (`code`, `state`, `iss`, `error`, …) is refused at registration, and one registered before the rule
/// answers its start with 400 `redirect_uri_mismatch`, shown (RFC 6749 §3.1.2, RFC 9207 §2).
@Suite struct CallbackQueryTests {
    func make() throws -> SessionDriver {
        return try SessionDriver.started()
    }

    @Test(arguments: [
        "http://127.0.0.1/cb?iss=https%3A%2F%2Fevil.example",
        "http://127.0.0.1/cb?x=1&STATE=planted",
        "com.acme.app:/oauth?%63ode=planted",
        "http://[::1]/cb?error=access_denied",
        "http://localhost/cb?session_state=1",
    ])
    func registrationRefusesAQueryCarryingAResponseParameter(uri: String) throws {
        let driver = try make()
        let response = try driver.sendJSON("POST", "/v1/admin/callbacks", bearer: driver.fixture.developmentSecret, ["uri": uri])
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        let description = response.json["error_description"] as? String ?? ""
        #expect(description.hasPrefix("uri is not a redirect URI this server accepts: its query already carries a parameter"))
        #expect(description.hasSuffix("."))
        #expect(!description.contains("planted") && !description.contains("evil"))
        let list = try driver.sendJSON("GET", "/v1/admin/callbacks", bearer: driver.fixture.developmentSecret)
        let uris = (list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["uri"] as? String }
        #expect(!uris.contains(uri))
    }

    @Test func registrationAcceptsOtherQueries() throws {
        let driver = try make()
        let response = try driver.sendJSON(
            "POST", "/v1/admin/callbacks", bearer: driver.fixture.developmentSecret, ["uri": "http://127.0.0.1/cb?codes=1&tenant=state"])
        #expect(response.status == 201)
    }

    /// A row written before the rule (inserted here straight into the table) is never redirected to.
    @Test(arguments: [
        ("http://127.0.0.1/legacy?iss=https%3A%2F%2Fevil.example", "http://127.0.0.1:5000/legacy?iss=https%3A%2F%2Fevil.example"),
        ("com.acme.legacy:/cb?state=planted", "com.acme.legacy:/cb?state=planted"),
    ])
    func aCallbackRegisteredBeforeTheRuleAnswersItsStartWithAShownMismatch(registered: String, requested: String) throws {
        let driver = try make()
        let environment = try #require(try driver.server.store.environment(publishableKey: driver.fixture.developmentKey))
        let kind = registered.hasPrefix("http:") ? "loopback" : "custom_scheme"
        try TestDatabase.pool.query(
            "INSERT INTO callbacks (environment_id, uri, kind, created_at) VALUES ($1::uuid, $2, $3, now())",
            [environment.id, registered, kind])
        for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
            var pairs = [
                ("client_id", driver.fixture.developmentKey), ("redirect_uri", requested), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]
            if path == "/oauth2/authorize" { pairs.append(("response_type", "code")) }
            let response = try driver.server.browser().get(startTarget(pairs, path: path), headers: [("Accept", "application/json")])
            #expect(response.status == 400)
            #expect(response.header("location") == nil)
            let error = response.json["error"] as? String
            let description = response.json["error_description"] as? String ?? ""
            if path == "/oauth2/authorize" {
                #expect(error == "invalid_request")
                #expect(description.hasPrefix("redirect_uri_mismatch: "))
            } else {
                #expect(error == "redirect_uri_mismatch")
            }
        }
        // The operator still sees the row, so it can be removed.
        let list = try driver.sendJSON("GET", "/v1/admin/callbacks", bearer: driver.fixture.developmentSecret)
        #expect((list.json["items"] as? [[String: Any]] ?? []).contains { $0["uri"] as? String == registered })
    }
}
