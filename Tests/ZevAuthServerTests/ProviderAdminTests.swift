import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The upstream providers of the admin API over HTTP against PostgreSQL (docs/federation.md, "Providers"):
/// each kind created, listed, shown, updated and deleted by the operator; no answer ever carries a secret;
/// secrets are sealed in the table; each refusal's status and the field it names; the audit rows; and a
/// project's choice of shown providers.
@Suite struct ProviderAdminTests {
    static let clientSecret = "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lue"

    /// A `.p8`-shaped PEM of a fresh key (`type` P-256, or RSA to be refused).
    static func pem(_ type: Crypto.SigningKeyType = .p256) throws -> (pem: String, key: Crypto.SigningKey) {
        let key = try Crypto.SigningKey.generate(type)
        let base64 = Data(try key.pkcs8()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return ("-----BEGIN PRIVATE KEY-----\n\(base64)\n-----END PRIVATE KEY-----\n", key)
    }

    static func slug() -> String { "t-" + UUID().uuidString.lowercased().prefix(18) }

    func call(_ server: TestServer, _ method: String, _ path: String, token: String? = TestServer.operatorToken, json: [String: Any]? = nil)
        throws -> TestResponse
    {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try server.client.send(method, path, headers: headers, body: body)
    }

    func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    func apple(_ server: TestServer, pem: String, slug: String = ProviderAdminTests.slug()) throws -> TestResponse {
        try call(
            server, "POST", "/v1/admin/providers",
            json: [
                "kind": "apple", "slug": slug, "clientId": "com.acme.signin", "teamId": "abcde12345", "keyId": "KEY1234567",
                "privateKey": pem,
            ])
    }

    func google(_ server: TestServer, slug: String = ProviderAdminTests.slug()) throws -> TestResponse {
        try call(
            server, "POST", "/v1/admin/providers",
            json: ["kind": "google", "slug": slug, "clientId": "123.apps.googleusercontent.com", "clientSecret": Self.clientSecret])
    }

    func oidc(_ server: TestServer, issuer: String = "https://id.acme.example/realm", slug: String = ProviderAdminTests.slug()) throws
        -> TestResponse
    {
        try call(
            server, "POST", "/v1/admin/providers",
            json: [
                "kind": "oidc", "slug": slug, "displayName": "Acme SSO", "issuer": issuer, "clientId": "zevauth",
                "clientSecret": Self.clientSecret,
            ])
    }

    /// No secret or key material in `response`: neither the client secret, nor any line of the PEM, nor a
    /// sealed box.
    func expectNoSecret(_ response: TestResponse, pem: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(!response.text.contains(Self.clientSecret), sourceLocation: sourceLocation)
        for line in (pem ?? "").split(separator: "\n") where !line.hasPrefix("-----") {
            #expect(!response.text.contains(String(line.prefix(40))), sourceLocation: sourceLocation)
        }
        #expect(!response.text.contains("sealed"), sourceLocation: sourceLocation)
        #expect(!response.text.contains("privateKey\""), sourceLocation: sourceLocation)
        #expect(!response.text.contains("clientSecret\""), sourceLocation: sourceLocation)
    }

    func auditRows(_ action: String, target: String) throws -> [String] {
        try TestDatabase.pool.query(
            "SELECT actor_kind, outcome FROM audit_log WHERE action = $1 AND target = $2 ORDER BY at", [action, target]
        ).rows.map { "\(try $0.string("actor_kind")) \(try $0.string("outcome"))" }
    }

    @Test func eachKindIsCreatedWithItsFixedOrGivenIssuerAndNoSecretInTheAnswer() throws {
        let server = try TestServer()
        let (pem, _) = try Self.pem()
        let apple = try apple(server, pem: pem)
        #expect(apple.status == 201)
        try expectNoSecret(apple, pem: pem)
        let appleBody = try object(apple)
        #expect(appleBody["kind"] as? String == "apple")
        #expect(appleBody["issuer"] as? String == "https://appleid.apple.com")
        #expect(appleBody["displayName"] as? String == "Apple")
        #expect(appleBody["teamId"] as? String == "ABCDE12345")
        #expect(appleBody["keyId"] as? String == "KEY1234567")
        #expect(appleBody["hasPrivateKey"] as? Bool == true)
        #expect(appleBody["hasClientSecret"] as? Bool == false)

        let google = try google(server)
        #expect(google.status == 201)
        try expectNoSecret(google)
        let googleBody = try object(google)
        #expect(googleBody["issuer"] as? String == "https://accounts.google.com")
        #expect(googleBody["displayName"] as? String == "Google")
        #expect(googleBody["hasClientSecret"] as? Bool == true)
        #expect(googleBody["teamId"] is NSNull)

        let oidc = try oidc(server)
        #expect(oidc.status == 201)
        try expectNoSecret(oidc)
        #expect(try object(oidc)["issuer"] as? String == "https://id.acme.example/realm")
        #expect(try object(oidc)["displayName"] as? String == "Acme SSO")
    }

    @Test func listShowUpdateAndDeleteNeverEchoASecret() throws {
        let server = try TestServer()
        let (pem, _) = try Self.pem()
        let id = try #require(try object(try apple(server, pem: pem))["id"] as? String)
        let googleID = try #require(try object(try google(server))["id"] as? String)

        var cursor: String?
        var listed: [String] = []
        repeat {
            let page = try call(server, "GET", "/v1/admin/providers?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.status == 200)
            try expectNoSecret(page, pem: pem)
            let body = try object(page)
            listed += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = body["nextCursor"] as? String
        } while cursor != nil
        #expect(listed.contains(id) && listed.contains(googleID))

        let shown = try call(server, "GET", "/v1/admin/providers/\(id)")
        #expect(shown.status == 200)
        try expectNoSecret(shown, pem: pem)
        #expect(try object(shown)["clientId"] as? String == "com.acme.signin")

        let newSlug = Self.slug()
        let updated = try call(server, "PATCH", "/v1/admin/providers/\(id)", json: ["slug": newSlug, "keyId": "NEWKEY0001"])
        #expect(updated.status == 200)
        try expectNoSecret(updated, pem: pem)
        #expect(try object(updated)["slug"] as? String == newSlug)
        #expect(try object(updated)["keyId"] as? String == "NEWKEY0001")
        #expect(try object(updated)["hasPrivateKey"] as? Bool == true)

        let secretChanged = try call(server, "PATCH", "/v1/admin/providers/\(googleID)", json: ["clientSecret": Self.clientSecret + "2"])
        #expect(secretChanged.status == 200)
        #expect(!secretChanged.text.contains(Self.clientSecret))

        #expect(try call(server, "DELETE", "/v1/admin/providers/\(id)").status == 204)
        #expect(try call(server, "GET", "/v1/admin/providers/\(id)").status == 404)
        #expect(try call(server, "DELETE", "/v1/admin/providers/\(id)").status == 404)
        #expect(try auditRows("provider.create", target: id) == ["operator_token done"])
        #expect(try auditRows("provider.update", target: id) == ["operator_token done"])
        #expect(try auditRows("provider.delete", target: id) == ["operator_token done"])
    }

    /// The table holds sealed boxes, never the secret or the key, and a box opens only for its own provider
    /// and column.
    @Test func secretsAreSealedInTheTable() throws {
        let server = try TestServer()
        let (pem, key) = try Self.pem()
        let appleID = try #require(try object(try apple(server, pem: pem))["id"] as? String)
        let googleID = try #require(try object(try google(server))["id"] as? String)
        let rows = try TestDatabase.pool.query(
            "SELECT id::text AS id, coalesce(sealed_client_secret, '') AS s, coalesce(sealed_apple_private_key, '') AS k, "
                + "upstream_providers::text AS whole FROM upstream_providers WHERE id = ANY ($1::uuid[])",
            ["{\(appleID),\(googleID)}"]
        ).rows
        #expect(rows.count == 2)
        let der = try key.pkcs8()
        let sealer = UpstreamProviders(
            store: server.context.tenancy.providers, sealer: AESGCMSealerForTests(key: TestServer.encryptionKey), keys: NoKeys())
        for row in rows {
            let whole = try row.string("whole")
            #expect(!whole.contains(Self.clientSecret))
            #expect(!whole.contains(Data(der).base64EncodedString()))
            #expect(!whole.contains("BEGIN PRIVATE KEY"))
            if try row.string("id") == googleID {
                let sealed = try row.string("s")
                #expect(sealer.open(sealed, providerID: googleID, field: "clientSecret") == Array(Self.clientSecret.utf8))
                #expect(sealer.open(sealed, providerID: appleID, field: "clientSecret") == nil)
                #expect(sealer.open(sealed, providerID: googleID, field: "privateKey") == nil)
            } else {
                #expect(sealer.open(try row.string("k"), providerID: appleID, field: "privateKey") == der)
            }
        }
    }

    @Test func badFieldsAreRefusedNamingTheField() throws {
        let server = try TestServer()
        let (pem, _) = try Self.pem()
        let (rsa, _) = try Self.pem(.rsa2048)
        func refused(_ json: [String: Any], naming field: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let response = try call(server, "POST", "/v1/admin/providers", json: json)
            #expect(response.status == 400, sourceLocation: sourceLocation)
            let body = try object(response)
            #expect(body["error"] as? String == "invalid_request", sourceLocation: sourceLocation)
            #expect((body["error_description"] as? String)?.hasPrefix(field + " ") == true, "\(body)", sourceLocation: sourceLocation)
            try expectNoSecret(response, pem: pem)
        }
        let apple: [String: Any] = [
            "kind": "apple", "slug": Self.slug(), "clientId": "com.acme.signin", "teamId": "ABCDE12345", "keyId": "KEY1234567",
            "privateKey": pem,
        ]
        try refused(apple.merging(["kind": "facebook"]) { $1 }, naming: "kind")
        try refused(apple.merging(["teamId": "ABCDE1234"]) { $1 }, naming: "teamId")
        try refused(apple.merging(["keyId": "KEY-123456"]) { $1 }, naming: "keyId")
        try refused(apple.merging(["privateKey": "not a key"]) { $1 }, naming: "privateKey")
        try refused(apple.merging(["privateKey": rsa]) { $1 }, naming: "privateKey")
        try refused(apple.merging(["slug": "Not A Slug"]) { $1 }, naming: "slug")
        try refused(apple.merging(["teamId": 12]) { $1 }, naming: "teamId")
        var missing = apple
        missing["keyId"] = nil
        try refused(missing, naming: "keyId")
        let oidc: [String: Any] = [
            "kind": "oidc", "slug": Self.slug(), "displayName": "Acme", "issuer": "http://id.acme.example", "clientId": "c",
            "clientSecret": "s",
        ]
        try refused(oidc, naming: "issuer")
        try refused(oidc.merging(["issuer": "https://id.acme.example?tenant=1"]) { $1 }, naming: "issuer")
        let google = try #require(try object(try google(server))["id"] as? String)
        let patch = try call(server, "PATCH", "/v1/admin/providers/\(google)", json: ["clientSecret": "two words"])
        #expect(patch.status == 400)
        #expect((try object(patch)["error_description"] as? String)?.hasPrefix("clientSecret ") == true)
        #expect(try call(server, "PATCH", "/v1/admin/providers/\(google)", json: ["kind": "oidc"]).status == 400)
        #expect(try call(server, "PATCH", "/v1/admin/providers/\(google)", json: [:]).status == 400)
        #expect(try call(server, "PATCH", "/v1/admin/providers/\(google)", json: ["issuer": "https://x.example"]).status == 400)
    }

    /// A loopback upstream's `http://` issuer is accepted only where outbound fetches may reach private
    /// addresses (`ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`).
    @Test func httpIssuerOnlyWithPrivateOutboundAllowed() throws {
        let strict = try TestServer { $0.outbound.allowPrivate = false }
        #expect(try oidc(strict, issuer: "http://127.0.0.1:8443/op").status == 400)
        let loose = try TestServer { $0.outbound.allowPrivate = true }
        #expect(try oidc(loose, issuer: "http://127.0.0.1:8443/op").status == 201)
    }

    @Test func unknownIDsDuplicateSlugsAndWrongCallersAreRefused() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let unknown = UUID().uuidString.lowercased()
        #expect(try call(server, "GET", "/v1/admin/providers/\(unknown)").status == 404)
        #expect(try call(server, "GET", "/v1/admin/providers/not-a-uuid").status == 404)
        #expect(try call(server, "PATCH", "/v1/admin/providers/\(unknown)", json: ["slug": "x"]).status == 404)
        #expect(try call(server, "DELETE", "/v1/admin/providers/\(unknown)").status == 404)

        let slug = Self.slug()
        #expect(try google(server, slug: slug).status == 201)
        let duplicate = try google(server, slug: slug)
        #expect(duplicate.status == 409)
        #expect(try object(duplicate)["error"] as? String == "conflict")
        let other = try #require(try object(try google(server))["id"] as? String)
        #expect(try call(server, "PATCH", "/v1/admin/providers/\(other)", json: ["slug": slug]).status == 409)

        #expect(try call(server, "GET", "/v1/admin/providers", token: nil).status == 401)
        #expect(try call(server, "GET", "/v1/admin/providers", token: "zop_wrong").status == 401)
        #expect(try call(server, "GET", "/v1/admin/providers", token: fixture.developmentSecret).status == 403)
        let byKey = try call(server, "DELETE", "/v1/admin/providers/\(other)", token: fixture.developmentSecret)
        #expect(byKey.status == 403)
        #expect(try call(server, "DELETE", "/v1/admin/providers/\(other)", token: "zop_wrong").status == 401)
        #expect(try auditRows("provider.delete", target: other) == ["secret_key refused", "unknown refused"])
        #expect(try call(server, "GET", "/v1/admin/providers/\(other)").status == 200)
    }

    @Test func aProjectChoosesItsShownProvidersInOrder() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let other = try Fixture.make(store: server.store)
        let a = try #require(try object(try google(server))["id"] as? String)
        let b = try #require(try object(try oidc(server))["id"] as? String)
        let path = "/v1/admin/projects/\(fixture.projectID)/providers"
        #expect(try object(try call(server, "GET", path, token: fixture.productionSecret))["items"] as? [Any] != nil)

        let set = try call(server, "PUT", path, token: fixture.developmentSecret, json: ["providerIds": [b, a]])
        #expect(set.status == 200)
        try expectNoSecret(set)
        let order = (try object(set)["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(order == [b, a])
        let read = try call(server, "GET", path, token: TestServer.operatorToken)
        #expect((try object(read)["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == [b, a])

        #expect(try call(server, "PUT", path, token: other.developmentSecret, json: ["providerIds": [a]]).status == 403)
        #expect(try call(server, "GET", path, token: other.developmentSecret).status == 403)
        #expect(try call(server, "PUT", path, token: nil, json: ["providerIds": [a]]).status == 401)
        let unknown = try call(server, "PUT", path, json: ["providerIds": [UUID().uuidString]])
        #expect(unknown.status == 400)
        #expect((try object(unknown)["error_description"] as? String)?.hasPrefix("providerIds ") == true)
        #expect(try call(server, "PUT", path, json: ["providerIds": [a, a]]).status == 400)
        #expect(try call(server, "PUT", path, json: ["providers": [a]]).status == 400)
        #expect(try call(server, "PUT", "/v1/admin/projects/\(UUID().uuidString)/providers", json: ["providerIds": []]).status == 404)

        // Deleting a provider removes it from every project's choice.
        #expect(try call(server, "DELETE", "/v1/admin/providers/\(b)").status == 204)
        let after = try call(server, "GET", path)
        #expect((try object(after)["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == [a])
        #expect(try auditRows("project.providers.update", target: fixture.projectID).first == "secret_key done")
    }
}

/// AES-256-GCM as the server seals (the server's own sealer is internal).
struct AESGCMSealerForTests: SecretSealing {
    let key: [UInt8]
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try Crypto.aesGCMSeal(key: key, plaintext: plaintext, associatedData: associatedData)
    }
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try Crypto.aesGCMOpen(key: key, sealed: sealed, associatedData: associatedData)
    }
}

/// A loader that accepts nothing (the tests that use it only open boxes).
struct NoKeys: P256KeyLoading {
    func isP256PrivateKey(_ der: [UInt8]) -> Bool { false }
}
