import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The members and operators calls of the admin API over HTTP against PostgreSQL (docs/console.md,
/// "Members"; docs/protocol.md#admin-calls): who may call, every refusal, one audit row per change, the
/// keep-one-owner rule under concurrent changes, and `ownerEmail` at project creation.
@Suite struct MembersTests {
    func call(_ server: TestServer, _ method: String, _ path: String, token: String?, json: [String: Any]? = nil) throws -> TestResponse {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try server.client.send(method, path, headers: headers, body: body)
    }

    /// A fresh open account; returns its id and address.
    func account(_ server: TestServer, name: String = "Sam Member") throws -> (id: String, email: String) {
        let email = "member-\(UUID().uuidString.lowercased())@example.com"
        let user = try server.store.createUser(email: email, emailNormalized: email, name: name, passwordHash: "unused", now: Date())
        return (user.id, email)
    }

    /// The audit rows of `action` on `target`, as `actor_kind actor_id project_id outcome`.
    func auditRows(_ action: String, target: String) throws -> [String] {
        try TestDatabase.pool.query(
            """
            SELECT actor_kind, coalesce(actor_id, '-') AS actor, coalesce(project_id::text, '-') AS project, outcome
            FROM audit_log WHERE action = $1 AND target = $2 ORDER BY at
            """, [action, target]
        ).rows.map { "\(try $0.string("actor_kind")) \(try $0.string("actor")) \(try $0.string("project")) \(try $0.string("outcome"))" }
    }

    func roles(projectID: String) throws -> [String] {
        try TestDatabase.pool.query("SELECT role FROM project_members WHERE project_id = $1 ORDER BY role", [projectID]).rows.map {
            try $0.string("role")
        }
    }

    /// A closed account owns nothing: the last open owner stays, and the closed owner's membership can go.
    @Test func aClosedAccountNeverCountsAsTheProjectsOwner() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let open = try account(server)
        let closed = try account(server)
        let path = "/v1/admin/projects/\(fixture.projectID)/members"
        for person in [open, closed] {
            #expect(
                try call(server, "POST", path, token: TestServer.operatorToken, json: ["email": person.email, "role": "owner"]).status
                    == 201)
        }
        #expect(try call(server, "POST", "/v1/admin/users/\(closed.id)/close", token: TestServer.operatorToken).status == 200)
        let demoted = try call(server, "PATCH", path + "/\(open.id)", token: TestServer.operatorToken, json: ["role": "admin"])
        #expect(demoted.status == 409)
        #expect(try call(server, "DELETE", path + "/\(closed.id)", token: TestServer.operatorToken).status == 204)
        #expect(try roles(projectID: fixture.projectID) == ["owner"])
    }

    /// Refused members and operators calls leave a refused row; a refused row keeps only an id or a domain
    /// as its target (never an address or a key typed into the path); the console's own project has no members.
    @Test func refusedCallsAreRecordedWithoutWhatTheCallerTyped() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let other = try Fixture.make(store: server.store)
        let person = try account(server)
        let theirs = "/v1/admin/projects/\(other.projectID)/members"
        #expect(
            try call(server, "POST", theirs, token: fixture.developmentSecret, json: ["email": person.email, "role": "viewer"]).status
                == 403)
        #expect(try call(server, "DELETE", theirs + "/\(person.id)", token: fixture.developmentSecret).status == 403)
        #expect(try call(server, "DELETE", "/v1/admin/operators/\(person.id)", token: fixture.developmentSecret).status == 403)
        #expect(try auditRows("member.remove", target: person.id).count == 1)
        #expect(try auditRows("operator.unmark", target: person.id).count == 1)
        #expect(try auditRows("member.remove", target: person.id).allSatisfy { $0.hasPrefix("secret_key ") && $0.hasSuffix(" refused") })
        let typed = "typed-\(UUID().uuidString.lowercased())@victim.example"
        #expect(try call(server, "DELETE", "/v1/admin/callbacks/\(typed)", token: "sk_test_nobody").status == 401)
        let stored = try TestDatabase.pool.query("SELECT count(*) AS n FROM audit_log WHERE target LIKE $1", ["%" + typed.prefix(20) + "%"])
        #expect(try stored.rows[0].int("n") == 0)
        let console = "/v1/admin/projects/00000000-0000-4000-8000-00000000c0de/members"
        let added = try call(server, "POST", console, token: TestServer.operatorToken, json: ["email": person.email, "role": "owner"])
        #expect(added.status == 404)
        #expect(try server.store.members.memberships(userID: person.id).isEmpty)
    }

    @Test func theOperatorAddsListsRerolesAndRemovesMembersWithOneAuditRowEach() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = try account(server, name: "Olive Owner")
        let other = try account(server)
        let path = "/v1/admin/projects/\(fixture.projectID)/members"
        let added = try call(
            server, "POST", path, token: TestServer.operatorToken, json: ["email": owner.email.uppercased(), "role": "owner"])
        #expect(added.status == 201)
        #expect(added.json["userId"] as? String == owner.id)
        #expect(added.json["email"] as? String == owner.email)
        #expect(added.json["name"] as? String == "Olive Owner")
        #expect(added.json["role"] as? String == "owner")
        #expect((added.json["addedAt"] as? String)?.hasSuffix("Z") == true)
        #expect(
            try call(server, "POST", path, token: TestServer.operatorToken, json: ["email": other.email, "role": "admin"]).status == 201)

        let first = try call(server, "GET", path + "?limit=1", token: TestServer.operatorToken)
        #expect(first.status == 200)
        let items = try #require(first.json["items"] as? [[String: Any]])
        #expect(items.map { $0["userId"] as? String } == [owner.id])
        let cursor = try #require(first.json["nextCursor"] as? String)
        let second = try call(server, "GET", path + "?limit=1&cursor=\(cursor)", token: TestServer.operatorToken)
        #expect((second.json["items"] as? [[String: Any]])?.map { $0["role"] as? String } == ["admin"])
        #expect(second.json["nextCursor"] is NSNull)

        let changed = try call(server, "PATCH", path + "/\(other.id)", token: TestServer.operatorToken, json: ["role": "viewer"])
        #expect(changed.status == 200)
        #expect(changed.json["role"] as? String == "viewer")
        #expect(try server.store.members.role(userID: other.id, projectID: fixture.projectID) == .viewer)
        #expect(try call(server, "DELETE", path + "/\(other.id)", token: TestServer.operatorToken).status == 204)
        #expect(try server.store.members.role(userID: other.id, projectID: fixture.projectID) == nil)

        let done = "operator_token - \(fixture.projectID) done"
        #expect(try auditRows("member.add", target: owner.id) == [done])
        #expect(try auditRows("member.add", target: other.id) == [done])
        #expect(try auditRows("member.update", target: other.id) == [done])
        #expect(try auditRows("member.remove", target: other.id) == [done])
    }

    @Test func aSecretKeyManagesItsOwnProjectsMembersOnly() throws {
        let server = try TestServer()
        let mine = try Fixture.make(store: server.store)
        let theirs = try Fixture.make(store: server.store, name: "Other")
        let person = try account(server)
        let forbidden = try call(
            server, "POST", "/v1/admin/projects/\(theirs.projectID)/members", token: mine.developmentSecret,
            json: ["email": person.email, "role": "owner"])
        #expect(forbidden.status == 403)
        #expect(forbidden.json["error"] as? String == "forbidden")
        #expect(try call(server, "GET", "/v1/admin/projects/\(theirs.projectID)/members", token: mine.productionSecret).status == 403)
        #expect(try roles(projectID: theirs.projectID).isEmpty)

        let added = try call(
            server, "POST", "/v1/admin/projects/\(mine.projectID)/members", token: mine.productionSecret,
            json: ["email": person.email, "role": "owner"])
        #expect(added.status == 201)
        let keyID = try TestDatabase.pool.query(
            "SELECT k.id FROM secret_keys k JOIN environments e ON e.id = k.environment_id WHERE e.project_id = $1 AND e.kind = 'production'",
            [mine.projectID]
        ).rows[0].string("id")
        #expect(try auditRows("member.add", target: person.id) == ["secret_key \(keyID) \(mine.projectID) done"])
        let listed = try call(server, "GET", "/v1/admin/projects/\(mine.projectID)/members", token: mine.developmentSecret)
        #expect((listed.json["items"] as? [[String: Any]])?.count == 1)
        #expect(try call(server, "GET", "/v1/admin/projects/\(mine.projectID)/members", token: nil).status == 401)
        #expect(try call(server, "GET", "/v1/admin/projects/\(mine.projectID)/members", token: "sk_test_nobody").status == 401)
    }

    @Test func refusalsNameTheirReasonAndChangeNothing() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = try account(server)
        let path = "/v1/admin/projects/\(fixture.projectID)/members"
        let token = TestServer.operatorToken

        let nobody = try call(server, "POST", path, token: token, json: ["email": "nobody-\(UUID())@example.com", "role": "admin"])
        #expect(nobody.status == 404)
        #expect(nobody.json["error"] as? String == "not_found")
        let badRole = try call(server, "POST", path, token: token, json: ["email": owner.email, "role": "superuser"])
        #expect(badRole.status == 400)
        #expect(badRole.json["error"] as? String == "invalid_request")
        #expect((badRole.json["error_description"] as? String)?.hasPrefix("role ") == true)
        let noEmail = try call(server, "POST", path, token: token, json: ["role": "admin"])
        #expect(noEmail.status == 400)
        #expect((noEmail.json["error_description"] as? String)?.hasPrefix("email ") == true)
        #expect(try call(server, "POST", path, token: token, json: ["email": "not an address", "role": "admin"]).status == 400)
        // A closed account is no account to add.
        let closed = try account(server)
        try TestDatabase.pool.query("UPDATE users SET closed_at = now() WHERE id = $1", [closed.id])
        #expect(try call(server, "POST", path, token: token, json: ["email": closed.email, "role": "viewer"]).status == 404)
        #expect(try call(server, "POST", "/v1/admin/operators", token: token, json: ["email": closed.email]).status == 404)
        #expect(try roles(projectID: fixture.projectID).isEmpty)

        #expect(try call(server, "POST", path, token: token, json: ["email": owner.email, "role": "owner"]).status == 201)
        let duplicate = try call(server, "POST", path, token: token, json: ["email": owner.email, "role": "viewer"])
        #expect(duplicate.status == 409)
        #expect(duplicate.json["error"] as? String == "conflict")

        for (method, body) in [("PATCH", ["role": "admin"]), ("DELETE", nil)] as [(String, [String: Any]?)] {
            let lastOwner = try call(server, method, path + "/\(owner.id)", token: token, json: body)
            #expect(lastOwner.status == 409, "\(method)")
            #expect(lastOwner.json["error"] as? String == "conflict")
            #expect((lastOwner.json["error_description"] as? String)?.contains("keeps at least one owner") == true)
        }
        #expect(try roles(projectID: fixture.projectID) == ["owner"])
        let patchBadRole = try call(server, "PATCH", path + "/\(owner.id)", token: token, json: ["role": "boss"])
        #expect(patchBadRole.status == 400)
        #expect((patchBadRole.json["error_description"] as? String)?.hasPrefix("role ") == true)

        let stranger = try account(server)
        #expect(try call(server, "PATCH", path + "/\(stranger.id)", token: token, json: ["role": "admin"]).status == 404)
        #expect(try call(server, "DELETE", path + "/\(stranger.id)", token: token).status == 404)
        #expect(try call(server, "DELETE", path + "/not-a-uuid", token: token).status == 404)
        let unknownProject = "/v1/admin/projects/\(UUID().uuidString.lowercased())/members"
        #expect(try call(server, "GET", unknownProject, token: token).status == 404)
        #expect(try call(server, "POST", unknownProject, token: token, json: ["email": owner.email, "role": "admin"]).status == 404)
        #expect(try call(server, "GET", "/v1/admin/projects/nope/members", token: token).status == 404)
        #expect(try call(server, "GET", path + "?limit=0", token: token).status == 400)

        // Only the one successful add left a row.
        #expect(try auditRows("member.add", target: owner.id).count == 1)
        #expect(try auditRows("member.update", target: owner.id).isEmpty)
        #expect(try auditRows("member.remove", target: owner.id).isEmpty)
        #expect(server.serverFailureLines.isEmpty)
    }

    @Test func theOperatorTokenMarksAndUnmarksOperators() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let person = try account(server, name: "Opal Operator")
        let marked = try call(server, "POST", "/v1/admin/operators", token: TestServer.operatorToken, json: ["email": person.email])
        #expect(marked.status == 201)
        #expect(marked.json["userId"] as? String == person.id)
        #expect(marked.json["name"] as? String == "Opal Operator")
        #expect(marked.json["markedAt"] is String)
        #expect(try server.store.members.isOperator(userID: person.id))
        #expect(
            try call(server, "POST", "/v1/admin/operators", token: TestServer.operatorToken, json: ["email": person.email]).status == 409)
        let nobody = try call(
            server, "POST", "/v1/admin/operators", token: TestServer.operatorToken, json: ["email": "nobody-\(UUID())@example.com"])
        #expect(nobody.status == 404)
        #expect(nobody.json["error"] as? String == "not_found")
        let byKey = try call(server, "POST", "/v1/admin/operators", token: fixture.developmentSecret, json: ["email": fixture.email])
        #expect(byKey.status == 403)
        #expect(try call(server, "DELETE", "/v1/admin/operators/\(person.id)", token: fixture.developmentSecret).status == 403)
        #expect(try call(server, "POST", "/v1/admin/operators", token: nil, json: ["email": person.email]).status == 401)
        #expect(try !server.store.members.isOperator(userID: fixture.userID))

        #expect(try call(server, "DELETE", "/v1/admin/operators/\(person.id)", token: TestServer.operatorToken).status == 204)
        #expect(try !server.store.members.isOperator(userID: person.id))
        #expect(try call(server, "DELETE", "/v1/admin/operators/\(person.id)", token: TestServer.operatorToken).status == 404)
        #expect(try auditRows("operator.mark", target: person.id) == ["operator_token - - done"])
        // The secret key's refused unmark is recorded too (with the key's project), before the operator's.
        let unmarks = try auditRows("operator.unmark", target: person.id)
        #expect(unmarks.count == 2)
        #expect(unmarks.first?.hasPrefix("secret_key ") == true && unmarks.first?.hasSuffix(" refused") == true)
        #expect(unmarks.last == "operator_token - - done")
    }

    @Test func ownerEmailMakesTheFirstOwnerInTheCreatingTransaction() throws {
        let server = try TestServer()
        let person = try account(server)
        let name = "Owned \(UUID().uuidString.prefix(8))"
        let created = try call(
            server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": name, "ownerEmail": person.email])
        #expect(created.status == 201)
        let projectID = try #require(created.json["id"] as? String)
        #expect(try server.store.members.role(userID: person.id, projectID: projectID) == .owner)
        #expect(try auditRows("member.add", target: person.id) == ["operator_token - \(projectID) done"])

        let orphan = "Orphan \(UUID().uuidString.prefix(8))"
        let refused = try call(
            server, "POST", "/v1/admin/projects", token: TestServer.operatorToken,
            json: ["name": orphan, "ownerEmail": "nobody-\(UUID())@example.com"])
        #expect(refused.status == 404)
        #expect(refused.json["error"] as? String == "not_found")
        #expect(try TestDatabase.pool.query("SELECT 1 FROM projects WHERE name = $1", [orphan]).rows.isEmpty)
        let badEmail = try call(
            server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": orphan, "ownerEmail": "no"])
        #expect(badEmail.status == 400)
        #expect((badEmail.json["error_description"] as? String)?.hasPrefix("ownerEmail ") == true)
        // Without it, a project has no members, as before.
        let plain = try call(server, "POST", "/v1/admin/projects", token: TestServer.operatorToken, json: ["name": orphan])
        #expect(plain.status == 201)
        #expect(try roles(projectID: try #require(plain.json["id"] as? String)).isEmpty)
    }

    /// Two owners demoted (or removed) at once: exactly one change goes through and the project keeps an
    /// owner. Deterministic: the member rows are locked until both changes have reached the database and
    /// wait, so both would have read two owners if the rule were not checked under the project's lock.
    @Test(.serialized, arguments: ["PATCH", "DELETE"])
    func concurrentChangesOfTheLastTwoOwnersLeaveOne(method: String) throws {
        let server = try TestServer()
        let second = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owners = [try account(server), try account(server)]
        let path = "/v1/admin/projects/\(fixture.projectID)/members"
        for owner in owners {
            #expect(
                try call(server, "POST", path, token: TestServer.operatorToken, json: ["email": owner.email, "role": "owner"]).status == 201
            )
        }

        let holder = try PostgresConnection(url: TestDatabase.url)
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM project_members WHERE project_id = $1 FOR UPDATE", [fixture.projectID])
        let results = ConcurrentResults()
        let group = DispatchGroup()
        for (instance, owner) in zip([server, second], owners) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                results.append(
                    try? call(
                        instance, method, path + "/\(owner.id)", token: TestServer.operatorToken,
                        json: method == "PATCH" ? ["role": "admin"] : nil))
            }
        }
        let bothWaited = try TestDatabase.waitForWaiters(blockedBy: holder, count: 2)
        try holder.query("COMMIT")
        #expect(group.wait(timeout: .now() + 10) == .success)
        let statuses = results.all.map { $0?.status ?? 0 }.sorted()
        #expect(bothWaited, "both changes should wait on the project's members; they answered \(statuses)")
        #expect(statuses == [method == "PATCH" ? 200 : 204, 409])
        #expect(try roles(projectID: fixture.projectID).filter { $0 == "owner" }.count == 1)
        let action = method == "PATCH" ? "member.update" : "member.remove"
        #expect(try owners.map { try auditRows(action, target: $0.id).count }.reduce(0, +) == 1)
        withExtendedLifetime(second) {}
    }
}
