import AdminCLI
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// `zevauth members …`, `zevauth operators …` and `project create --owner-email` against the real server
/// (real HTTP, real PostgreSQL).
@Suite struct MembersCLITests {
    func account(_ server: TestServer) throws -> (id: String, email: String) {
        let email = "cli-member-\(UUID().uuidString.lowercased())@example.com"
        let user = try server.store.createUser(email: email, emailNormalized: email, name: "Cleo", passwordHash: "unused", now: Date())
        return (user.id, email)
    }

    @Test func managesMembersWithTheSecretKeyAndOperatorsWithTheToken() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let owner = try account(server)
        let admin = try account(server)
        let keyEnv = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": fixture.developmentSecret]
        let operatorEnv = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let project = ["--project-id", fixture.projectID]

        let added = runCLI(["members", "add", "--email", owner.email, "--role", "owner"] + project, environment: keyEnv)
        #expect(added.status == 0)
        #expect(added.output.stdout.contains("member \(owner.id)"))
        #expect(runCLI(["members", "add", "--email", admin.email, "--role", "admin"] + project, environment: operatorEnv).status == 0)
        let listed = runCLI(["members", "list"] + project, environment: keyEnv)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains("ROLE"))
        #expect(listed.output.stdout.contains(owner.email) && listed.output.stdout.contains(admin.email))

        let demoted = runCLI(["members", "set-role", admin.id, "--role", "viewer"] + project, environment: keyEnv)
        #expect(demoted.status == 0)
        #expect(demoted.output.stdout.contains("viewer"))
        let lastOwner = runCLI(["members", "remove", owner.id] + project, environment: keyEnv)
        #expect(lastOwner.status == 1)
        #expect(lastOwner.output.stderr.contains("409 conflict: A project keeps at least one owner"))
        let removed = runCLI(["members", "remove", admin.id] + project, environment: keyEnv)
        #expect(removed.status == 0)
        #expect(removed.output.stdout.contains("removed member \(admin.id)"))
        let badRole = runCLI(["members", "add", "--email", admin.email, "--role", "chief"] + project, environment: keyEnv)
        #expect(badRole.output.stderr.contains("400 invalid_request: role"))
        #expect(runCLI(["members", "list"], environment: keyEnv).status == 2)
        #expect(runCLI(["members", "list"] + project, environment: ["ZEVAUTH_ISSUER": server.issuer]).status == 2)

        let marked = runCLI(["operators", "add", "--email", owner.email], environment: operatorEnv)
        #expect(marked.status == 0)
        #expect(marked.output.stdout.contains("operator \(owner.id)"))
        #expect(try server.store.members.isOperator(userID: owner.id))
        let byKey = runCLI(["operators", "add", "--email", owner.email], environment: keyEnv)
        #expect(byKey.status == 2)
        #expect(runCLI(["operators", "remove", owner.id], environment: operatorEnv).status == 0)
        #expect(try !server.store.members.isOperator(userID: owner.id))

        let help = runCLI(["members", "--help"], environment: keyEnv)
        #expect(help.output.stdout.contains("zevauth members set-role USER_ID --project-id ID --role ROLE"))
    }

    @Test func projectCreateNamesTheFirstOwner() throws {
        let server = try TestServer(live: true)
        let owner = try account(server)
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let created = runCLI(["project", "create", "--name", "Owned CLI", "--owner-email", owner.email, "--json"], environment: env)
        #expect(created.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(created.output.stdout.utf8)) as? [String: Any]
        let projectID = try #require(object?["id"] as? String)
        SuiteCapture.secret((object?["development"] as? [String: Any])?["secretKey"] as? String)
        SuiteCapture.secret((object?["production"] as? [String: Any])?["secretKey"] as? String)
        #expect(try server.store.members.role(userID: owner.id, projectID: projectID) == .owner)
        let unknown = runCLI(
            ["project", "create", "--name", "Nobody's", "--owner-email", "nobody-\(UUID())@example.com"], environment: env)
        #expect(unknown.status == 1)
        #expect(unknown.output.stderr.contains("404 not_found: "))
    }
}
