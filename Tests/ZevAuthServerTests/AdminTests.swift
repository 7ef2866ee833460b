import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The admin API of the round trip: who may call what, validation, and the shapes docs/protocol.md#admin-calls pins.
@Suite struct AdminTests {
    func call(_ server: TestServer, _ method: String, _ path: String, token: String?, json: [String: Any]? = nil) throws -> TestResponse {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try server.client.send(method, path, headers: headers, body: body)
    }

    @Test func theOperatorCreatesAProjectWhoseSecretKeyIsShownOnceAndWorks() throws {
        let server = try TestServer()
        let created = try call(server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": "Acme"])
        #expect(created.status == 201)
        let development = try #require(created.json["development"] as? [String: Any])
        let production = try #require(created.json["production"] as? [String: Any])
        #expect((development["publishableKey"] as? String)?.hasPrefix("pk_test_") == true)
        #expect((production["publishableKey"] as? String)?.hasPrefix("pk_live_") == true)
        let secret = try #require(development["secretKey"] as? String)
        #expect(secret.hasPrefix("sk_test_"))
        // Stored only as a hash.
        let stored = try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM secret_keys WHERE key_hash = $1 OR key_hash = $2", [secret, String(secret.dropFirst(8))])
        #expect(try stored.rows[0].int("n") == 0)

        let callback = try call(server, "POST", "/v1/admin/callbacks", token: secret, json: ["uri": "com.acme.app:/oauth"])
        #expect(callback.status == 201)
        #expect(callback.json["kind"] as? String == "custom_scheme")
        let loopback = try call(server, "POST", "/v1/admin/callbacks", token: secret, json: ["uri": "http://127.0.0.1/cb"])
        #expect(loopback.json["kind"] as? String == "loopback")
        #expect(try call(server, "POST", "/v1/admin/callbacks", token: secret, json: ["uri": "http://127.0.0.1/cb"]).status == 409)
        let list = try call(server, "GET", "/v1/admin/callbacks?limit=1", token: secret)
        #expect((list.json["items"] as? [Any])?.count == 1)
        let cursor = try #require(list.json["nextCursor"] as? String)
        let next = try call(server, "GET", "/v1/admin/callbacks?limit=1&cursor=\(cursor)", token: secret)
        #expect(((next.json["items"] as? [[String: Any]])?.first?["uri"] as? String) == "http://127.0.0.1/cb")
        #expect(next.json["nextCursor"] is NSNull)
        let id = try #require(callback.json["id"] as? String)
        #expect(try call(server, "DELETE", "/v1/admin/callbacks/\(id)", token: secret).status == 204)
        #expect(try call(server, "DELETE", "/v1/admin/callbacks/\(id)", token: secret).json["error"] as? String == "not_found")
    }

    @Test(arguments: [
        "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "myapp://cb", "http://example.com/cb",
        "com.acme.app:/cb#frag", "http://user@127.0.0.1/cb", "/relative", "",
    ])
    func registrationRefusesWhatCouldNeverBeSafe(uri: String) throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let response = try call(server, "POST", "/v1/admin/callbacks", token: fixture.developmentSecret, json: ["uri": uri])
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        #expect((response.json["error_description"] as? String)?.hasPrefix("uri ") == true)
    }

    @Test func aLinkCallbackNeedsAVerifiedDomain() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let domain = "app-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        let uri = "https://\(domain)/callback"
        #expect(try call(server, "POST", "/v1/admin/callbacks", token: fixture.developmentSecret, json: ["uri": uri]).status == 400)
        let added = try call(server, "POST", "/v1/admin/domains", token: fixture.developmentSecret, json: ["domain": domain])
        #expect(added.status == 201)
        #expect(added.json["verified"] as? Bool == false)
        // A secret key's verify fetches the token file, which this domain does not publish.
        #expect(try call(server, "POST", "/v1/admin/domains/\(domain)/verify", token: fixture.developmentSecret, json: [:]).status == 400)
        #expect(
            try call(
                server, "POST", "/v1/admin/domains/\(domain)/verify", token: TestServer.operatorToken,
                json: ["projectId": fixture.projectID]
            ).status == 200)
        let callback = try call(server, "POST", "/v1/admin/callbacks", token: fixture.developmentSecret, json: ["uri": uri])
        #expect(callback.status == 201)
        #expect(callback.json["kind"] as? String == "link")
    }

    @Test func keysActOnlyWithinTheirRole() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        #expect(try call(server, "POST", "/v1/admin/projects", token: nil, json: ["name": "x"]).status == 401)
        #expect(
            try call(server, "POST", "/v1/admin/projects", token: "sk_test_nope", json: ["name": "x"]).json["error"] as? String
                == "invalid_token")
        let forbidden = try call(
            server, "POST", "/v1/admin/users", token: fixture.developmentSecret,
            json: ["email": "a@example.com", "password": "long enough pw", "name": "A"])
        #expect(forbidden.status == 403)
        #expect(forbidden.json["error"] as? String == "forbidden")
        #expect(try call(server, "POST", "/v1/admin/callbacks", token: TestServer.operatorToken, json: ["uri": "com.a.b:/c"]).status == 403)
    }

    @Test func theOperatorCreatesAccountsWithClearValidation() throws {
        let server = try TestServer()
        let email = "new-\(UUID().uuidString.prefix(8))@example.com"
        let created = try call(
            server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
            json: ["email": email, "password": "a good long password", "name": "New Person"])
        #expect(created.status == 201)
        #expect(Set(created.json.keys) == ["id", "email", "name", "passkeys"])
        #expect(created.json["passkeys"] as? Int == 0)
        #expect(
            try call(
                server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
                json: ["email": email.uppercased(), "password": "a good long password", "name": "Again"]
            ).status == 409)
        let short = try call(
            server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
            json: ["email": "x-\(UUID().uuidString.prefix(6))@example.com", "password": "short", "name": "S"])
        #expect(short.status == 400)
        #expect((short.json["error_description"] as? String)?.hasPrefix("password") == true)
        #expect(
            try call(
                server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
                json: ["email": "not-an-email", "password": "a good long password", "name": "S"]
            ).status == 400)
    }

    @Test func composedAndDecomposedSpellingsOfAnEmailAreOneAccount() throws {
        let server = try TestServer()
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let composed = "\u{00FC}ser-\(suffix)@example.com"  // ü as one scalar
        let decomposed = "u\u{0308}ser-\(suffix)@example.com"  // u + combining diaeresis
        #expect(
            try call(
                server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
                json: ["email": composed, "password": "a good long password", "name": "Ü"]
            ).status == 201)
        #expect(
            try call(
                server, "POST", "/v1/admin/users", token: TestServer.operatorToken,
                json: ["email": decomposed.uppercased(), "password": "a good long password", "name": "U"]
            ).status == 409)
    }

    @Test func healthAndReadiness() throws {
        let server = try TestServer()
        #expect(try server.client.send("GET", "/healthz").status == 200)
        #expect(try server.client.send("GET", "/readyz").status == 200)
    }
}
