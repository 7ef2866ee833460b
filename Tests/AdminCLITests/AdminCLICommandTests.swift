import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

@testable import AdminCLI

/// Every admin command against the real server (real HTTP, real PostgreSQL): a happy path printing a
/// table (and `--json` where the shape matters), and an error path printing one sentence with a non-zero exit.
@Suite struct AdminCLICommandTests {
    let server: TestServer
    let fixture: Fixture

    init() throws {
        server = try TestServer(live: true)
        fixture = try Fixture.make(store: server.store)
    }

    var operatorEnv: [String: String] { ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken] }
    var secretEnv: [String: String] { ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": fixture.developmentSecret] }

    func json(_ output: Output) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any])
    }

    /// The error line is one sentence: `zevauth: ` and the text, ending with a full stop (or an ellipsis).
    func expectSentence(_ output: Output, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let first = output.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("zevauth: "), sourceLocation: sourceLocation)
        #expect(first.hasSuffix(".") || first.hasSuffix("…"), "\(first)", sourceLocation: sourceLocation)
        #expect(first.contains(fragment), "\(first)", sourceLocation: sourceLocation)
        #expect(!first.contains("UsageError") && !first.contains("Optional("), sourceLocation: sourceLocation)
    }

    @Test func projectListPagesThroughTheDeploymentsProjects() throws {
        var cursor: String?
        var found: [String: Any]?
        for _ in 0..<1000 where found == nil {
            let page = runCLI(
                ["project", "list", "--json", "--limit", "100"] + (cursor.map { ["--cursor", $0] } ?? []), environment: operatorEnv)
            #expect(page.status == 0)
            let object = try json(page.output)
            found = (object["items"] as? [[String: Any]])?.first { $0["id"] as? String == fixture.projectID }
            cursor = object["nextCursor"] as? String
            if cursor == nil { break }
        }
        let project = try #require(found)
        #expect(project["name"] as? String == "Acme")
        #expect((project["development"] as? [String: Any])?["publishableKey"] as? String == fixture.developmentKey)
        #expect((project["production"] as? [String: Any])?["publishableKey"] as? String == fixture.productionKey)
        #expect(project["secretKey"] == nil && !"\(project)".contains("sk_"))
        _ = try Fixture.make(store: server.store, name: "Second")
        let table = runCLI(["project", "list", "--limit", "1"], environment: operatorEnv)
        #expect(table.status == 0)
        #expect(table.output.stdout.hasPrefix("ID"))
        #expect(table.output.stdout.contains("DEVELOPMENT KEY"))
        #expect(table.output.stdout.contains("more: repeat with --cursor "))

        let badLimit = runCLI(["project", "list", "--limit", "0"], environment: operatorEnv)
        #expect(badLimit.status == 1)
        expectSentence(badLimit.output, "400 invalid_request: limit")
        let withKey = runCLI(["project", "list"], environment: secretEnv)
        #expect(withKey.status == 2)
        expectSentence(withKey.output, "needs --operator-token")
        // The API itself refuses a secret key.
        let refused = try server.client.send(
            "GET", "/v1/admin/projects", headers: [("Authorization", "Bearer \(fixture.developmentSecret)")])
        #expect(refused.status == 403)
    }

    @Test func userListFindsTheAccountByItsNormalisedEmailWithoutLoggingIt() throws {
        let typed = fixture.email.uppercased()
        let found = runCLI(["user", "list", "--email", typed], environment: operatorEnv)
        #expect(found.status == 0)
        #expect(found.output.stdout.contains(fixture.userID))
        #expect(found.output.stdout.contains("EMAIL"))
        let asJSON = try json(runCLI(["user", "list", "--email", fixture.email, "--json"], environment: operatorEnv).output)
        let items = try #require(asJSON["items"] as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items.first?["id"] as? String == fixture.userID)
        #expect(items.first?["closed"] as? Bool == false)
        #expect(asJSON.keys.contains("nextCursor"))
        let unknown = runCLI(["user", "list", "--email", "nobody-\(UUID().uuidString)@example.com"], environment: operatorEnv)
        #expect(unknown.status == 0)
        #expect(unknown.output.stdout == "no account has this email")
        #expect(!server.log.all.contains { $0.lowercased().contains(fixture.email) })

        let invalid = runCLI(["user", "list", "--email", "not-an-address"], environment: operatorEnv)
        #expect(invalid.status == 1)
        expectSentence(invalid.output, "400 invalid_request: email")
        #expect(runCLI(["user", "list"], environment: operatorEnv).status == 2)
        let withKey = try server.client.send(
            "POST", "/v1/admin/users/search", headers: [("Authorization", "Bearer \(fixture.developmentSecret)")],
            body: Array(#"{"email":"a@example.com"}"#.utf8))
        #expect(withKey.status == 403)
        // A NUL never reaches PostgreSQL: it is the field's ordinary 400.
        let nul = try server.client.send(
            "POST", "/v1/admin/users/search", headers: [("Authorization", "Bearer \(TestServer.operatorToken)")],
            body: Array(#"{"email":"a\u0000b@example.com"}"#.utf8))
        #expect(nul.status == 400)
        #expect(nul.json["error"] as? String == "invalid_request")
    }

    @Test func userCloseClosesTheAccountOnce() throws {
        let closed = runCLI(["user", "close", fixture.userID], environment: operatorEnv)
        #expect(closed.status == 0)
        #expect(closed.output.stdout.contains("closedAt"))
        let listed = try json(runCLI(["user", "list", "--email", fixture.email, "--json"], environment: operatorEnv).output)
        #expect((listed["items"] as? [[String: Any]])?.first?["closed"] as? Bool == true)
        let unknown = runCLI(["user", "close", UUID().uuidString.lowercased()], environment: operatorEnv)
        #expect(unknown.status == 1)
        expectSentence(unknown.output, "404 not_found")
        #expect(runCLI(["user", "close"], environment: operatorEnv).status == 2)
        // A path operand is one percent-encoded segment: `../keys` reaches the server as data, not as a path.
        let dotted = runCLI(["user", "close", "../keys"], environment: operatorEnv)
        #expect(dotted.status == 1)
        expectSentence(dotted.output, "404 not_found")
    }

    @Test func callbackListAndRemove() throws {
        let listed = runCLI(["callback", "list"], environment: secretEnv)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains("loopback"))
        #expect(listed.output.stdout.contains("com.acme.app:/callback"))
        let items = try #require(
            try json(runCLI(["callback", "list", "--json"], environment: secretEnv).output)["items"] as? [[String: Any]])
        let id = try #require(items.first { $0["kind"] as? String == "custom_scheme" }?["id"] as? String)
        let removed = runCLI(["callback", "remove", id], environment: secretEnv)
        #expect(removed.status == 0)
        #expect(removed.output.stdout == "removed callback \(id)")
        #expect(!runCLI(["callback", "list"], environment: secretEnv).output.stdout.contains("com.acme.app:/callback"))
        let again = runCLI(["callback", "remove", id], environment: secretEnv)
        #expect(again.status == 1)
        expectSentence(again.output, "404 not_found")
    }

    @Test func appListShowCheckAndRemove() throws {
        let added = runCLI(
            ["app", "add", "ios", "--bundle-id", "com.acme.cli", "--team-id", "ABCDE12345", "--json"], environment: secretEnv)
        #expect(added.status == 0)
        let id = try #require(try json(added.output)["id"] as? String)
        let listed = runCLI(["app", "list"], environment: secretEnv)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains(id))
        #expect(listed.output.stdout.contains("ABCDE12345.com.acme.cli"))
        let shown = runCLI(["app", "show", id], environment: secretEnv)
        #expect(shown.status == 0)
        #expect(shown.output.stdout.contains("bundleId"))
        #expect(shown.output.stdout.contains("LINK"))
        let checked = runCLI(["app", "check", id], environment: secretEnv)
        #expect(checked.status == 0)
        #expect(checked.output.stdout.contains("LINK"))
        let removed = runCLI(["app", "remove", id], environment: secretEnv)
        #expect(removed.status == 0)
        #expect(removed.output.stdout == "removed app \(id)")
        let gone = runCLI(["app", "show", id], environment: secretEnv)
        #expect(gone.status == 1)
        expectSentence(gone.output, "404 not_found")
        let removedAgain = runCLI(["app", "remove", id, "--json"], environment: secretEnv)
        #expect(removedAgain.status == 1)
        #expect(runCLI(["app", "show"], environment: secretEnv).status == 2)
    }

    @Test func keysCreateListAndRevoke() throws {
        let created = runCLI(["keys", "create", "--json"], environment: secretEnv)
        #expect(created.status == 0)
        let object = try json(created.output)
        let newKey = try #require(object["secretKey"] as? String)
        SuiteCapture.secret(newKey)
        let newID = try #require(object["id"] as? String)
        let listed = runCLI(["keys", "list"], environment: ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": newKey])
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains("CURRENT"))
        #expect(listed.output.stdout.contains(newID))
        #expect(!listed.output.stdout.contains(newKey))
        let revoked = runCLI(["keys", "revoke", newID], environment: secretEnv)
        #expect(revoked.status == 0)
        #expect(revoked.output.stdout == "revoked key \(newID)")
        let refused = runCLI(["keys", "list"], environment: ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": newKey])
        #expect(refused.status == 1)
        expectSentence(refused.output, "401 invalid_token")
        let unknown = runCLI(["keys", "revoke", UUID().uuidString.lowercased()], environment: secretEnv)
        #expect(unknown.status == 1)
        expectSentence(unknown.output, "404 not_found")
    }

    @Test func settingsShowAndSet() throws {
        let shown = runCLI(["settings", "show"], environment: secretEnv)
        #expect(shown.status == 0)
        #expect(shown.output.stdout.contains("sessionMaxAgeDays"))
        let set = runCLI(["settings", "set", "--session-idle-days", "7", "--json"], environment: secretEnv)
        #expect(set.status == 0)
        #expect(try json(set.output)["sessionIdleDays"] as? Int == 7)
        let outOfBounds = runCLI(["settings", "set", "--access-token-ttl-minutes", "500"], environment: secretEnv)
        #expect(outOfBounds.status == 1)
        expectSentence(outOfBounds.output, "400 invalid_request: accessTokenTtlMinutes")
        let nothing = runCLI(["settings", "set"], environment: secretEnv)
        #expect(nothing.status == 2)
        expectSentence(nothing.output, "at least one setting")
        #expect(runCLI(["settings", "set", "--session-idle-days", "seven"], environment: secretEnv).status == 2)
        let algorithm = runCLI(["settings", "set", "--id-token-signing-alg", "ES256", "--json"], environment: secretEnv)
        #expect(algorithm.status == 0)
        #expect(try json(algorithm.output)["idTokenSigningAlg"] as? String == "ES256")
        let refusedAlgorithm = runCLI(["settings", "set", "--id-token-signing-alg", "none"], environment: secretEnv)
        #expect(refusedAlgorithm.status == 1)
        expectSentence(refusedAlgorithm.output, "400 invalid_request: idTokenSigningAlg")
    }

    /// An operand goes to the server as given (percent-encoded when it is a path segment), so a bad one gets
    /// the server's own sentence rather than a usage error; only an empty one is refused locally.
    @Test func operandsReachTheServerAsGivenAndTheServerExplains() throws {
        for bad in ["bad domain", "HTTPS://Acme.test/"] {
            let added = runCLI(["domain", "add", bad], environment: secretEnv)
            #expect(added.status == 1, "\(bad)")
            expectSentence(added.output, "400 invalid_request: domain must be a DNS host name")
        }
        let unicode = runCLI(["domain", "add", "bücher.example"], environment: secretEnv)
        #expect(unicode.status != 2)
        #expect(!unicode.output.stderr.contains("takes one"), "\(unicode.output.stderr)")
        let verify = runCLI(["domain", "verify", "bad domain"], environment: secretEnv)
        #expect(verify.status == 1)
        expectSentence(verify.output, "400 invalid_request: domain")
        for id in ["a/b?c#d", "%zz", "ü"] {
            let shown = runCLI(["app", "show", id], environment: secretEnv)
            #expect(shown.status == 1, "\(id)")
            #expect(
                shown.output.stderr.hasPrefix("zevauth: 404 not_found: ") || shown.output.stderr.hasPrefix("zevauth: 400 "),
                "\(shown.output.stderr)")
        }
        let empty = runCLI(["domain", "add", ""], environment: secretEnv)
        #expect(empty.status == 2)
        expectSentence(empty.output, "the DOMAIN given to domain add is empty.")
        let two = runCLI(["domain", "add", "a.test", "b.test"], environment: secretEnv)
        #expect(two.status == 2)
        expectSentence(two.output, "domain add takes one DOMAIN, but 2 words were given.")
        let invocation = AdminCLI.Invocation(flags: AdminCLI.Flags([]), operand: "a b/ü%~._-")
        #expect(invocation.pathID == "a%20b%2F%C3%BC%25~._-")
        #expect(invocation.id == "a b/ü%~._-")
    }

    @Test func everyCommandHasHelpAndRefusesUnknownOptions() throws {
        for command in AdminCLI.commands {
            let help = runCLI(command.words + ["--help"])
            #expect(help.status == 0, "\(command.words)")
            #expect(help.output.stdout.contains(command.synopsis))
            let bogus = runCLI(command.words + ["--bogus", "x"], environment: operatorEnv)
            #expect(bogus.status == 2, "\(command.words)")
            expectSentence(bogus.output, "has no option --bogus")
            // As the last word, without a value, it is still an option the command does not have.
            let last = runCLI(command.words + ["--bogus"], environment: operatorEnv)
            #expect(last.status == 2, "\(command.words)")
            expectSentence(last.output, "\(command.words.joined(separator: " ")) has no option --bogus.")
        }
        let noValue = runCLI(["app", "list", "--limit"], environment: secretEnv)
        #expect(noValue.status == 2)
        expectSentence(noValue.output, "--limit needs a value.")
        let group = runCLI(["domain", "--help"])
        #expect(group.status == 0)
        #expect(group.output.stdout.contains("zevauth domain mark-hosted DOMAIN --project-id ID"))
        #expect(!group.output.stdout.contains("zevauth app"))
        let unknown = runCLI(["domain", "frobnicate"], environment: operatorEnv)
        #expect(unknown.status == 2)
        expectSentence(unknown.output, "there is no admin command")
        #expect(AdminCLI.usage.contains("zevauth association-files --domain DOMAIN"))
    }
}

/// The domain and association-file commands, with a local HTTPS server standing in for the project's
/// domain (the server fetches the token from it).
@Suite struct AdminCLIDomainTests {
    let https: TestHTTPSServer
    let server: TestServer
    let fixture: Fixture
    let domain: String

    init() throws {
        let https = try TestHTTPSServer()
        let domain = "c\(UUID().uuidString.prefix(8).lowercased()).acme.test"
        let linked = "l\(UUID().uuidString.prefix(8).lowercased()).acme.test"
        server = try TestServer(live: true) { configuration in
            configuration.outbound = https.outbound(for: [domain, linked])
            configuration.outboundPort = https.port
        }
        fixture = try Fixture.make(store: server.store, development: ["https://\(linked)/app/cb"], verifiedDomains: [linked])
        self.https = https
        self.domain = domain
    }

    var secretEnv: [String: String] { ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": fixture.developmentSecret] }

    @Test func domainAddListVerifyAndMarkHosted() throws {
        let added = runCLI(["domain", "add", domain, "--json"], environment: secretEnv)
        #expect(added.status == 0)
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(added.output.stdout.utf8)) as? [String: Any])?["verificationToken"] as? String)
        let duplicate = runCLI(["domain", "add", domain], environment: secretEnv)
        #expect(duplicate.status == 1)
        #expect(duplicate.output.stderr.contains("409 conflict: "))
        let listed = runCLI(["domain", "list"], environment: secretEnv)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains(domain))
        #expect(listed.output.stdout.contains("VERIFIED"))

        let unpublished = runCLI(["domain", "verify", domain], environment: secretEnv)
        #expect(unpublished.status == 1)
        #expect(unpublished.output.stderr.contains("400 invalid_request: domain is not verified"))
        https.set("/.well-known/zevauth-domain-verification", contentType: "text/plain", body: Array("\(token)\n".utf8))
        let verified = runCLI(["domain", "verify", domain], environment: secretEnv)
        #expect(verified.status == 0)
        #expect(verified.output.stdout.contains("verified"))

        let operatorEnv = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let hosted = runCLI(["domain", "mark-hosted", domain, "--project-id", fixture.projectID], environment: operatorEnv)
        #expect(hosted.status == 0)
        let rows = hosted.output.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.contains(["hosted", "true"]), "\(hosted.output.stdout)")
        #expect(rows.contains(["verified", "true"]), "\(hosted.output.stdout)")
        let items = try #require(
            (try JSONSerialization.jsonObject(with: Data(runCLI(["domain", "list", "--json"], environment: secretEnv).output.stdout.utf8))
                as? [String: Any])?["items"] as? [[String: Any]])
        #expect(items.first { $0["domain"] as? String == domain }?["hosted"] as? Bool == true)
        let noProject = runCLI(["domain", "mark-hosted", domain], environment: operatorEnv)
        #expect(noProject.status == 2)
        let otherProject = runCLI(
            ["domain", "mark-hosted", "nowhere.acme.test", "--project-id", fixture.projectID], environment: operatorEnv)
        #expect(otherProject.status == 1)
        #expect(otherProject.output.stderr.contains("404 not_found"))
        // With only a secret key, mark-hosted does not quietly fetch the token instead.
        #expect(runCLI(["domain", "mark-hosted", domain, "--project-id", fixture.projectID], environment: secretEnv).status == 2)
    }

    @Test func associationFilesListTheAppsOfADomain() throws {
        let linked = try #require(try server.store.domains(projectID: fixture.projectID).first?.domain)
        #expect(
            runCLI(["app", "add", "ios", "--bundle-id", "com.acme.files", "--team-id", "ABCDE12345"], environment: secretEnv).status == 0)
        let files = runCLI(["association-files", "--domain", linked], environment: secretEnv)
        #expect(files.status == 0)
        #expect(files.output.stdout.contains("apple-app-site-association"))
        #expect(files.output.stdout.contains("ABCDE12345.com.acme.files"))
        let raw = runCLI(["association-files", "--domain", linked, "--json"], environment: secretEnv)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(raw.output.stdout.utf8)) as? [String: Any])
        #expect(object["appleAppSiteAssociation"] != nil && object["assetlinks"] != nil)
        let unknown = runCLI(["association-files", "--domain", "unknown.acme.test"], environment: secretEnv)
        #expect(unknown.status == 1)
        #expect(unknown.output.stderr.contains("404 not_found"))
        #expect(runCLI(["association-files"], environment: secretEnv).status == 2)
    }
}
