import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The audit log (docs/console.md, "Audit log"; docs/protocol.md#admin-audit), over real HTTP against the
/// real PostgreSQL: one row per admin change, written with the change; none for a change that fails; a
/// refused row for a refused call; append-only; scoped listing; pruning after 400 days; never a secret.
@Suite struct AuditLogTests {
    func call(_ server: TestServer, _ method: String, _ path: String, token: String?, json: [String: Any]? = nil) throws -> TestResponse {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try server.client.send(method, path, headers: headers, body: body)
    }

    /// One stored row, as the tests read it.
    struct Row: Equatable, CustomStringConvertible {
        let actorKind: String
        let actorID: String?
        let action: String
        let target: String?
        let environmentID: String?
        let outcome: String
        var description: String { "\(actorKind)/\(actorID ?? "-") \(action) \(target ?? "-") env=\(environmentID ?? "-") \(outcome)" }
    }

    func rows(where condition: String, _ parameters: [String?]) throws -> [Row] {
        try TestDatabase.pool.query(
            """
            SELECT actor_kind, actor_id, action, target, environment_id::text AS environment_id, outcome FROM audit_log
            WHERE \(condition) ORDER BY at, id
            """, parameters
        ).rows.map {
            Row(
                actorKind: try $0.string("actor_kind"), actorID: $0["actor_id"], action: try $0.string("action"), target: $0["target"],
                environmentID: $0["environment_id"], outcome: try $0.string("outcome"))
        }
    }

    /// A project made through the admin API: its id, the development key and its id, the environments.
    struct Project {
        let id: String
        let developmentSecret: String
        let productionSecret: String
        let developmentKeyID: String
        let developmentEnvironmentID: String
    }

    func project(_ server: TestServer) throws -> Project {
        let created = try call(server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": "Audited"])
        #expect(created.status == 201)
        let id = try #require(created.json["id"] as? String)
        let development = try #require((created.json["development"] as? [String: Any])?["secretKey"] as? String)
        let production = try #require((created.json["production"] as? [String: Any])?["secretKey"] as? String)
        let keys = try call(server, "GET", "/v1/admin/keys", token: development)
        let keyID = try #require((keys.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        let environment = try #require(
            try TestDatabase.pool.query("SELECT id FROM environments WHERE project_id = $1 AND kind = 'development'", [id]).first?
                .string("id"))
        return Project(
            id: id, developmentSecret: development, productionSecret: production, developmentKeyID: keyID,
            developmentEnvironmentID: environment)
    }

    @Test func everyAdminChangeLeavesExactlyOneRowWithItsActorActionAndTarget() throws {
        let server = try TestServer(live: true)
        let project = try project(server)
        let key = project.developmentSecret
        let operatorToken = TestServer.operatorToken
        let environment = project.developmentEnvironmentID
        func byKey(_ action: String, _ target: String?, environment: String? = environment) -> Row {
            Row(
                actorKind: "secret_key", actorID: project.developmentKeyID, action: action, target: target, environmentID: environment,
                outcome: "done")
        }
        func byOperator(_ action: String, _ target: String?, environment: String? = nil) -> Row {
            Row(actorKind: "operator_token", actorID: nil, action: action, target: target, environmentID: environment, outcome: "done")
        }

        let callback = try call(server, "POST", "/v1/admin/callbacks", token: key, json: ["uri": "com.audited.app:/cb"])
        let callbackID = try #require(callback.json["id"] as? String)
        #expect(try call(server, "DELETE", "/v1/admin/callbacks/\(callbackID)", token: key).status == 204)
        let domain = "audit-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        #expect(try call(server, "POST", "/v1/admin/domains", token: key, json: ["domain": domain]).status == 201)
        let verify = ["projectId": project.id]
        #expect(try call(server, "POST", "/v1/admin/domains/\(domain)/verify", token: operatorToken, json: verify).status == 200)
        let hosted: [String: Any] = ["projectId": project.id, "hosted": true]
        #expect(try call(server, "POST", "/v1/admin/domains/\(domain)/verify", token: operatorToken, json: hosted).status == 200)
        #expect(try call(server, "PATCH", "/v1/admin/settings", token: key, json: ["sessionIdleDays": 7]).status == 200)
        let newKey = try call(server, "POST", "/v1/admin/keys", token: key)
        let newKeyID = try #require(newKey.json["id"] as? String)
        #expect(try call(server, "DELETE", "/v1/admin/keys/\(newKeyID)", token: key).status == 204)
        let android = try call(
            server, "POST", "/v1/admin/apps", token: key,
            json: [
                "platform": "android", "packageName": "com.audited.app",
                "sha256CertFingerprints": [String(repeating: "AB:", count: 31) + "AB"],
            ])
        #expect(android.status == 201)
        let appID = try #require(android.json["id"] as? String)
        let fingerprints = ["sha256CertFingerprints": [String(repeating: "CD:", count: 31) + "CD"]]
        #expect(try call(server, "PATCH", "/v1/admin/apps/\(appID)", token: key, json: fingerprints).status == 200)
        #expect(
            try call(server, "PATCH", "/v1/admin/apps/\(appID)", token: operatorToken, json: ["productionCustomScheme": "com.audited.app"])
                .status == 200)
        #expect(try call(server, "POST", "/v1/admin/apps/\(appID)/check", token: key).status == 200)
        #expect(try call(server, "DELETE", "/v1/admin/apps/\(appID)", token: key).status == 204)

        #expect(
            try rows(where: "project_id = $1::uuid", [project.id]) == [
                byOperator("project.create", project.id),
                byKey("callback.add", callbackID), byKey("callback.delete", callbackID),
                byKey("domain.add", domain, environment: nil), byOperator("domain.verify", domain),
                byOperator("domain.mark_hosted", domain), byKey("settings.update", nil),
                byKey("secret_key.create", newKeyID), byKey("secret_key.revoke", newKeyID),
                byKey("app.create", appID), byKey("app.update", appID),
                byOperator("app.production_scheme", appID, environment: environment), byKey("app.check", appID),
                byKey("app.delete", appID),
            ])

        // Accounts: the row names the account by id, never by its email address.
        let email = "audited-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let user = try call(
            server, "POST", "/v1/admin/users", token: operatorToken,
            json: ["email": email, "password": "correct horse battery staple", "name": "Audited Person"])
        #expect(user.status == 201)
        let userID = try #require(user.json["id"] as? String)
        #expect(try call(server, "POST", "/v1/admin/users/\(userID)/mfa/reset", token: operatorToken).status == 200)
        #expect(try call(server, "POST", "/v1/admin/users/\(userID)/close", token: operatorToken).status == 200)
        #expect(
            try rows(where: "target = $1 AND actor_kind = 'operator_token'", [userID]) == [
                byOperator("account.create", userID), byOperator("account.mfa_reset", userID), byOperator("account.close", userID),
            ])
        #expect(try rows(where: "position($1 in coalesce(target, '')) > 0", [email]).isEmpty)
        // The client address is the one the edge resolved.
        let addresses = try TestDatabase.pool.query(
            "SELECT DISTINCT client_address FROM audit_log WHERE project_id = $1::uuid AND actor_kind <> 'system'", [project.id])
        #expect(try addresses.rows.map { try $0.string("client_address") } == ["127.0.0.1"])
    }

    @Test func aChangeThatFailsLeavesNoRow() throws {
        let server = try TestServer(live: true)
        let project = try project(server)
        let domain = "dup-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        #expect(try call(server, "POST", "/v1/admin/domains", token: project.developmentSecret, json: ["domain": domain]).status == 201)
        #expect(try call(server, "POST", "/v1/admin/domains", token: project.developmentSecret, json: ["domain": domain]).status == 409)
        let callback = ["uri": "com.dup.app:/cb"]
        #expect(try call(server, "POST", "/v1/admin/callbacks", token: project.developmentSecret, json: callback).status == 201)
        #expect(try call(server, "POST", "/v1/admin/callbacks", token: project.developmentSecret, json: callback).status == 409)
        let missing = UUID().uuidString.lowercased()
        #expect(try call(server, "DELETE", "/v1/admin/callbacks/\(missing)", token: project.developmentSecret).status == 404)
        #expect(try call(server, "DELETE", "/v1/admin/keys/\(project.developmentKeyID)", token: project.developmentSecret).status == 409)
        #expect(try rows(where: "project_id = $1::uuid AND action = 'domain.add'", [project.id]).count == 1)
        #expect(try rows(where: "project_id = $1::uuid AND action = 'callback.add'", [project.id]).count == 1)
        #expect(try rows(where: "action = 'callback.delete' AND target = $1", [missing]).isEmpty)
        #expect(try rows(where: "project_id = $1::uuid AND action = 'secret_key.revoke'", [project.id]).isEmpty)
    }

    @Test func refusedCallsLeaveARefusedRow() throws {
        let server = try TestServer(live: true)
        let project = try project(server)
        // A secret key calling an operator-only change.
        #expect(try call(server, "POST", "/v1/admin/projects", token: project.developmentSecret, json: ["name": "No"]).status == 403)
        #expect(
            try rows(where: "actor_id = $1 AND outcome = 'refused'", [project.developmentKeyID]) == [
                Row(
                    actorKind: "secret_key", actorID: project.developmentKeyID, action: "project.create", target: nil,
                    environmentID: project.developmentEnvironmentID, outcome: "refused")
            ])
        // The operator calling an environment's change.
        let marker = "com.refused\(UUID().uuidString.prefix(8).lowercased()).app"
        #expect(
            try call(server, "POST", "/v1/admin/apps/\(marker)/check", token: TestServer.operatorToken).status == 403)
        #expect(
            try rows(where: "target = $1", [marker]) == [
                Row(actorKind: "operator_token", actorID: nil, action: "app.check", target: marker, environmentID: nil, outcome: "refused")
            ])
        // An unknown secret key: 401, recorded with no identity, and never the key.
        let bogus = "sk_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let unknown = try call(server, "DELETE", "/v1/admin/apps/\(marker)", token: bogus)
        #expect(unknown.status == 401)
        #expect(
            try rows(where: "target = $1 AND action = 'app.delete'", [marker]) == [
                Row(actorKind: "unknown", actorID: nil, action: "app.delete", target: marker, environmentID: nil, outcome: "refused")
            ])
        #expect(try noColumnHolds(bogus))
    }

    /// Whether no audit row holds `secret` (or its tail) in any column.
    func noColumnHolds(_ secret: String) throws -> Bool {
        try TestDatabase.pool.query(
            """
            SELECT count(*) AS n FROM audit_log
            WHERE position($1 in concat_ws(' ', actor_kind, actor_id, action, target, project_id, environment_id, subject_user_id,
                                          client_address, outcome)) > 0
            """, [secret]
        ).rows[0].int("n") == 0
    }

    @Test func noMintedSecretAppearsInAnyRow() throws {
        let server = try TestServer(live: true)
        let created = try call(server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": "Secrets"])
        let development = try #require((created.json["development"] as? [String: Any])?["secretKey"] as? String)
        let production = try #require((created.json["production"] as? [String: Any])?["secretKey"] as? String)
        let minted = try #require(try call(server, "POST", "/v1/admin/keys", token: development).json["secretKey"] as? String)
        let domain = "secret-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        let token = try #require(
            try call(server, "POST", "/v1/admin/domains", token: development, json: ["domain": domain]).json["verificationToken"]
                as? String)
        for secret in [development, production, minted, token, TestServer.operatorToken, "correct horse battery staple"] {
            #expect(try noColumnHolds(secret), "an audit row holds a secret")
        }
    }

    @Test func theTriggerRefusesUpdateAndDeleteOfAFreshRow() throws {
        let id = try TestDatabase.pool.query(
            """
            INSERT INTO audit_log (at, actor_kind, action, outcome) VALUES (now(), 'system', 'test.fresh', 'done') RETURNING id::text AS id
            """
        ).rows[0].string("id")
        #expect(throws: PostgresError.self) { try TestDatabase.pool.query("UPDATE audit_log SET action = 'x' WHERE id = $1::uuid", [id]) }
        #expect(throws: PostgresError.self) { try TestDatabase.pool.query("DELETE FROM audit_log WHERE id = $1::uuid", [id]) }
        #expect(try rows(where: "id = $1::uuid", [id]).map(\.action) == ["test.fresh"])
    }

    @Test func housekeepingPrunesRowsOlderThan400DaysAndKeepsYoungerOnes() throws {
        let server = try TestServer()
        let marker = "prune-\(UUID().uuidString.lowercased())"
        for days in [401, 399] {
            try TestDatabase.pool.query(
                """
                INSERT INTO audit_log (at, actor_kind, action, target, outcome)
                VALUES (now() - make_interval(days => $1::integer), 'system', 'test.prune', $2, 'done')
                """, [String(days), "\(marker)-\(days)"])
        }
        let pruned = try server.store.deleteExpired(before: Date().addingTimeInterval(-86_400))
        #expect(pruned.auditRows >= 1)
        #expect(try rows(where: "target LIKE $1", [marker + "%"]).map(\.target) == ["\(marker)-399"])
    }

    @Test func theListIsNewestFirstAndScopedToTheCaller() throws {
        let server = try TestServer(live: true)
        let project = try project(server)
        let other = try self.project(server)
        #expect(
            try call(server, "POST", "/v1/admin/callbacks", token: project.developmentSecret, json: ["uri": "com.a.app:/cb"]).status == 201)
        #expect(
            try call(server, "POST", "/v1/admin/callbacks", token: project.productionSecret, json: ["uri": "com.b.app:/cb"]).status == 201)
        let domain = "scope-\(UUID().uuidString.prefix(8).lowercased()).example.com"
        #expect(try call(server, "POST", "/v1/admin/domains", token: project.productionSecret, json: ["domain": domain]).status == 201)
        #expect(
            try call(server, "POST", "/v1/admin/callbacks", token: other.developmentSecret, json: ["uri": "com.c.app:/cb"]).status == 201)

        func listed(_ token: String, limit: Int = 100) throws -> [[String: Any]] {
            var items: [[String: Any]] = []
            var cursor: String?
            for _ in 0..<50 {
                let page = try call(server, "GET", "/v1/admin/audit?limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? ""), token: token)
                #expect(page.status == 200)
                items += page.json["items"] as? [[String: Any]] ?? []
                guard let next = page.json["nextCursor"] as? String else { break }
                cursor = next
            }
            return items
        }
        // The development key: its environment's callback and the project-level domain (and the project's
        // creation, which names no environment), never production's callback or another project's rows.
        let mine = try listed(project.developmentSecret, limit: 1)
        #expect(mine.map { $0["action"] as? String } == ["domain.add", "callback.add", "project.create"])
        let first = try #require(mine.first)
        #expect(first["target"] as? String == domain)
        #expect(first["projectId"] as? String == project.id)
        #expect(first["environmentId"] is NSNull)
        #expect(first["clientAddress"] as? String == "127.0.0.1")
        #expect(first["outcome"] as? String == "done")
        #expect((first["actor"] as? [String: Any])?["kind"] as? String == "secret_key")
        #expect((first["id"] as? String).flatMap(UUID.init(uuidString:)) != nil)
        #expect((first["at"] as? String)?.hasSuffix("Z") == true)
        #expect((mine[1]["environmentId"] as? String) == project.developmentEnvironmentID)
        // The operator sees every project's rows.
        let all = try call(server, "GET", "/v1/admin/audit?limit=100", token: TestServer.operatorToken)
        let projects = Set((all.json["items"] as? [[String: Any]] ?? []).compactMap { $0["projectId"] as? String })
        #expect(projects.isSuperset(of: [project.id, other.id]))
        #expect(try call(server, "GET", "/v1/admin/audit?limit=0", token: TestServer.operatorToken).status == 400)
        #expect(try call(server, "GET", "/v1/admin/audit", token: nil).status == 401)
    }

    @Test func aPersonSeesTheirOwnSecurityEventsUnderRecentActivity() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        clock.advance(by: 1)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let wrong = try owner.postForm(
            "/account/password", [("csrf", csrf), ("current_password", "not the password"), ("new_password", "another long password")])
        #expect(wrong.status == 401)
        clock.advance(by: 1)
        let changed = try owner.postForm(
            "/account/password", [("csrf", csrf), ("current_password", fixture.password), ("new_password", "another long password")])
        #expect(changed.status == 303)
        clock.advance(by: 1)
        _ = try OwnAccountTests.enrol(owner, clock: clock)

        #expect(
            try rows(where: "subject_user_id = $1::uuid", [fixture.userID]).map(\.action) == [
                "signin.password", "signin.failed_password", "password.change", "mfa.enrol",
            ])
        #expect(
            try rows(where: "subject_user_id = $1::uuid", [fixture.userID]).allSatisfy {
                $0.actorKind == "account" && $0.actorID == fixture.userID
            })
        let (page, _) = try AccountTests.accountPage(owner)
        let section = try #require(page.text.components(separatedBy: "<h2 id=\"recent-activity\">Recent activity</h2>").last)
        let list = try #require(section.components(separatedBy: "</ul>").first)
        let items = list.components(separatedBy: "<li>").dropFirst().map { String($0.prefix { $0 != "<" }) }
        #expect(
            items == [
                "Two-step verification turned on", "Password changed", "A sign-in failed: the password was wrong",
                "Signed in with your password",
            ])
        #expect(list.contains("<time datetime=\""))
        #expect(list.contains(" from 127.0.0.1"))
        #expect(page.text.contains("<ul aria-labelledby=\"recent-activity\">"))
        // A failed password for an address with no account records nothing (there is no one to record it for).
        #expect(try rows(where: "action = 'signin.failed_password' AND subject_user_id IS NULL", []).isEmpty)
    }

    @Test func signingKeyRotationAndRevocationLeaveOneRowEachAndARefusedRotationNone() throws {
        let keys = SigningKeyTests()
        let clock = ManualClock()
        let (server, schema) = try keys.server(live: true, clock: clock)
        func actions() throws -> [String] {
            try schema.pool.query("SELECT action FROM audit_log WHERE action LIKE 'signing_key.%' ORDER BY at, id").rows.map {
                try $0.string("action")
            }
        }
        let send = { (path: String) in try server.client.send("POST", path, headers: keys.operatorAuth, body: []) }
        // Too early (the next keys were published less than the JWKS cache time ago): 409, no row.
        #expect(try send("/v1/admin/signing-keys/rotate").status == 409)
        #expect(try actions().isEmpty)
        clock.advance(by: 301)
        #expect(try send("/v1/admin/signing-keys/rotate").status == 200)
        let current = try #require(keys.kid(try keys.list(server), "ES256", "current"))
        clock.advance(by: 1)
        #expect(try send("/v1/admin/signing-keys/\(current)/revoke").status == 200)
        #expect(try send("/v1/admin/signing-keys/\(current)/revoke").status == 404)
        #expect(try actions() == ["signing_key.rotate", "signing_key.revoke"])
        let target = try schema.pool.query("SELECT target FROM audit_log WHERE action = 'signing_key.revoke'").rows.map { $0["target"] }
        #expect(target == [current])
    }
}
