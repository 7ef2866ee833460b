import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The web clients of the admin API over HTTP against PostgreSQL (docs/protocol.md, "Web clients"): create
/// shows the secret once and stores only its digest, list/show/update never show it, rotation keeps the old
/// secret until it is revoked, the registration rules per environment kind, another environment's client
/// is not found, and the audit rows.
@Suite struct WebClientAdminTests {
    func call(_ server: TestServer, _ method: String, _ path: String, token: String?, json: [String: Any]? = nil) throws -> TestResponse {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try server.client.send(method, path, headers: headers, body: body)
    }

    func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static var basic: [String: Any] {
        [
            "name": "Acme website", "redirectUris": ["https://www.acme.example/callback"],
            "postLogoutRedirectUris": ["https://www.acme.example/"], "tokenEndpointAuthMethod": "client_secret_basic",
        ]
    }

    @Test func createShowsTheSecretOnceAndStoresOnlyItsDigest() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let created = try call(server, "POST", "/v1/admin/clients", token: fixture.developmentSecret, json: Self.basic)
        #expect(created.status == 201)
        let body = try object(created)
        let clientID = try #require(body["clientId"] as? String)
        let secret = try #require(body["clientSecret"] as? String)
        SuiteCapture.secret(secret)
        #expect(clientID.hasPrefix("zc_") && clientID.count > 40)
        #expect(secret.hasPrefix("zcs_") && secret.count > 40)
        #expect(body["requirePkce"] as? Bool == true)
        #expect(body["redirectUris"] as? [String] == ["https://www.acme.example/callback"])
        #expect(body["jwks"] is NSNull)
        let secrets = try #require(body["secrets"] as? [[String: Any]])
        #expect(secrets.count == 1 && secrets[0]["suffix"] as? String == String(secret.suffix(4)))

        let stored = try TestDatabase.pool.query("SELECT secret_hash FROM web_client_secrets WHERE client_id = $1", [clientID])
        #expect(try stored.rows.map { try $0.string("secret_hash") } == [Crypto.hexSHA256(secret)])

        let shown = try call(server, "GET", "/v1/admin/clients/\(clientID)", token: fixture.developmentSecret)
        #expect(shown.status == 200)
        #expect(!shown.text.contains(secret) && !shown.text.contains("clientSecret"))
        let listed = try call(server, "GET", "/v1/admin/clients?limit=100", token: fixture.developmentSecret)
        #expect(listed.status == 200)
        #expect(!listed.text.contains(secret) && !listed.text.contains("clientSecret"))
        #expect((try object(listed)["items"] as? [[String: Any]])?.compactMap { $0["clientId"] as? String } == [clientID])

        let updated = try call(
            server, "PATCH", "/v1/admin/clients/\(clientID)", token: fixture.developmentSecret,
            json: ["name": "Acme web", "requirePkce": false])
        #expect(updated.status == 200)
        #expect(!updated.text.contains(secret))
        #expect(try object(updated)["name"] as? String == "Acme web")
        #expect(try object(updated)["requirePkce"] as? Bool == false)
        #expect(try auditRows("client.create", target: clientID) == ["secret_key done"])
        #expect(try auditRows("client.update", target: clientID) == ["secret_key done"])

        let deleted = try call(server, "DELETE", "/v1/admin/clients/\(clientID)", token: fixture.developmentSecret)
        #expect(deleted.status == 204)
        #expect(try call(server, "GET", "/v1/admin/clients/\(clientID)", token: fixture.developmentSecret).status == 404)
        #expect(try TestDatabase.pool.query("SELECT 1 FROM web_client_secrets WHERE client_id = $1", [clientID]).rows.isEmpty)
    }

    func auditRows(_ action: String, target: String) throws -> [String] {
        try TestDatabase.pool.query(
            "SELECT actor_kind, outcome FROM audit_log WHERE action = $1 AND target = $2 ORDER BY at", [action, target]
        ).rows.map { "\(try $0.string("actor_kind")) \(try $0.string("outcome"))" }
    }

    @Test func rotationAddsASecretShownOnceAndTheLastLiveOneCannotBeRevoked() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let key = fixture.developmentSecret
        let created = try object(try call(server, "POST", "/v1/admin/clients", token: key, json: Self.basic))
        let clientID = try #require(created["clientId"] as? String)
        let firstID = try #require((created["secrets"] as? [[String: Any]])?.first?["id"] as? String)

        let rotated = try call(server, "POST", "/v1/admin/clients/\(clientID)/secrets", token: key)
        #expect(rotated.status == 201)
        let second = try object(rotated)
        let secondSecret = try #require(second["clientSecret"] as? String)
        SuiteCapture.secret(secondSecret)
        let secondID = try #require(second["id"] as? String)
        #expect(second["revokedAt"] is NSNull)
        let shown = try object(try call(server, "GET", "/v1/admin/clients/\(clientID)", token: key))
        let live = (shown["secrets"] as? [[String: Any]] ?? []).filter { $0["revokedAt"] is NSNull }
        #expect(live.count == 2)

        let revoked = try call(server, "DELETE", "/v1/admin/clients/\(clientID)/secrets/\(firstID)", token: key)
        #expect(revoked.status == 200)
        #expect(try object(revoked)["revokedAt"] is String)
        let last = try call(server, "DELETE", "/v1/admin/clients/\(clientID)/secrets/\(secondID)", token: key)
        #expect(last.status == 409)
        #expect(try object(last)["error"] as? String == "conflict")
        #expect(try call(server, "DELETE", "/v1/admin/clients/\(clientID)/secrets/\(UUID().uuidString)", token: key).status == 404)
        #expect(try auditRows("client.secret.rotate", target: clientID) == ["secret_key done"])
        #expect(try auditRows("client.secret.revoke", target: clientID) == ["secret_key done"])
    }

    @Test func registrationRulesFollowTheEnvironmentKind() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        func create(_ key: String, _ changes: [String: Any]) throws -> TestResponse {
            try call(server, "POST", "/v1/admin/clients", token: key, json: Self.basic.merging(changes) { $1 })
        }
        // Development takes loopback and localhost; production refuses them.
        #expect(try create(fixture.developmentSecret, ["redirectUris": ["http://localhost:8080/cb", "http://127.0.0.1/cb"]]).status == 201)
        let production = try create(fixture.productionSecret, ["redirectUris": ["http://localhost:8080/cb"]])
        #expect(production.status == 400)
        #expect(
            try object(production)["error_description"] as? String
                == "redirectUris must use https in production (loopback is for development).")
        #expect(try create(fixture.productionSecret, [:]).status == 201)
        // Custom schemes, fragments, http on a public host, none, too many.
        for uris in [
            ["com.acme.app:/cb"], ["https://acme.example/cb#x"], ["http://acme.example/cb"], [],
            (0...10).map { "https://acme.example/\($0)" },
        ] {
            let refused = try create(fixture.developmentSecret, ["redirectUris": uris])
            #expect(refused.status == 400)
            #expect((try object(refused)["error_description"] as? String)?.hasPrefix("redirectUris ") == true)
        }
        let method = try create(fixture.developmentSecret, ["tokenEndpointAuthMethod": "none"])
        #expect(method.status == 400)
        #expect((try object(method)["error_description"] as? String)?.hasPrefix("tokenEndpointAuthMethod ") == true)
        // private_key_jwt needs exactly one key source, and gets no secret.
        #expect(try create(fixture.developmentSecret, ["tokenEndpointAuthMethod": "private_key_jwt"]).status == 400)
        let jwks: [String: Any] = [
            "keys": [
                [
                    "kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
                ]
            ]
        ]
        let both = try create(
            fixture.developmentSecret, ["tokenEndpointAuthMethod": "private_key_jwt", "jwks": jwks, "jwksUri": "https://acme.example/jwks"])
        #expect(both.status == 400)
        let keyed = try create(fixture.developmentSecret, ["tokenEndpointAuthMethod": "private_key_jwt", "jwks": jwks])
        #expect(keyed.status == 201)
        #expect(try object(keyed)["clientSecret"] == nil)
        #expect((try object(keyed)["jwks"] as? [String: Any])?["keys"] != nil)
        #expect(try create(fixture.developmentSecret, ["jwks": jwks]).status == 400)
        #expect(try create(fixture.developmentSecret, ["colour": "blue"]).status == 400)
    }

    @Test func anotherEnvironmentsClientIsNotFoundAndTheOperatorIsRefused() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let other = try Fixture.make(store: server.store)
        let created = try object(try call(server, "POST", "/v1/admin/clients", token: fixture.developmentSecret, json: Self.basic))
        let clientID = try #require(created["clientId"] as? String)
        for key in [other.developmentSecret, fixture.productionSecret] {
            #expect(try call(server, "GET", "/v1/admin/clients/\(clientID)", token: key).status == 404)
            #expect(try call(server, "DELETE", "/v1/admin/clients/\(clientID)", token: key).status == 404)
            #expect(try call(server, "POST", "/v1/admin/clients/\(clientID)/secrets", token: key).status == 404)
        }
        #expect(try call(server, "GET", "/v1/admin/clients", token: TestServer.operatorToken).status == 403)
        #expect(try call(server, "POST", "/v1/admin/clients", token: nil, json: Self.basic).status == 401)
        #expect(try call(server, "GET", "/v1/admin/clients/\(clientID)", token: fixture.developmentSecret).status == 200)
    }
}
