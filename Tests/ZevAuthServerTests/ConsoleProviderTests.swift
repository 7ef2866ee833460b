import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The console's Providers page and a project's shown providers (docs/console.md, "Pages";
/// docs/federation.md, "Providers") over real HTTP against PostgreSQL: operators only, secrets write-only,
/// each refusal a sentence on the page.
@Suite struct ConsoleProviderTests {
    static let secret = "GOCSPX-console-secret-value"

    func sealedSecret(_ slug: String) throws -> String? {
        try TestDatabase.pool.query("SELECT sealed_client_secret FROM upstream_providers WHERE slug = $1", [slug]).first?[
            "sealed_client_secret"]
    }

    @Test func operatorsAddEditAndDeleteProvidersWithWriteOnlySecrets() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Providers")
        let operatorAccount = try ConsoleTests.account(server)
        try ConsoleTests.markOperator(operatorAccount.id)
        var console = ConsoleTests.Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try console.signIn()
        try console.enrolTOTP()

        let page = try console.browser.get("/console/providers")
        #expect(page.status == 200)
        #expect(page.text.contains("<h1>Providers</h1>") && page.text.contains("Add Apple") && page.text.contains("Add Google"))
        let slug = "c-" + UUID().uuidString.lowercased().prefix(12)
        let bad = try console.browser.postForm(
            "/console/providers",
            [
                ("csrf", try console.csrf("/console/providers")), ("kind", "google"), ("slug", slug), ("clientId", ""),
                ("clientSecret", Self.secret),
            ])
        #expect(bad.status == 400)
        #expect(bad.text.contains("Client ID must be 1 to 255 visible ASCII characters."))
        #expect(bad.text.contains("aria-invalid=\"true\""))
        #expect(!bad.text.contains(Self.secret))

        let added = try console.browser.postForm(
            "/console/providers",
            [
                ("csrf", try console.csrf("/console/providers")), ("kind", "google"), ("slug", slug), ("clientId", "1.apps.example"),
                ("clientSecret", Self.secret),
            ])
        #expect(added.status == 303)
        let sealed = try #require(try sealedSecret(slug))
        let id = try #require(
            try TestDatabase.pool.query("SELECT id::text AS id FROM upstream_providers WHERE slug = $1", [slug]).first?["id"])
        let edit = try console.browser.get("/console/providers/\(id)")
        #expect(edit.status == 200)
        #expect(edit.text.contains("value=\"1.apps.example\"") && !edit.text.contains(Self.secret))
        #expect(edit.text.contains("Leave empty to keep the stored secret"))

        let saved = try console.browser.postForm(
            "/console/providers/\(id)",
            [("csrf", try console.csrf("/console/providers/\(id)")), ("slug", slug), ("clientId", "2.apps.example"), ("clientSecret", "")])
        #expect(saved.status == 303)
        #expect(try sealedSecret(slug) == sealed)
        #expect(try console.browser.get("/console/providers/\(id)").text.contains("value=\"2.apps.example\""))

        // The project's owner-side choice, on the sessions page.
        let sessions = "/console/projects/\(fixture.projectID)/development/sessions"
        #expect(try console.browser.get(sessions).text.contains("<h2>Sign-in providers</h2>"))
        let chosen = try console.browser.postForm(
            "/console/projects/\(fixture.projectID)/development/providers",
            [("csrf", try console.csrf(sessions)), ("provider-\(id)", "on")])
        #expect(chosen.status == 303)
        #expect(
            try ConsoleTests.count(
                "SELECT count(*) AS n FROM project_upstream_providers WHERE project_id = $1::uuid AND provider_id = $2::uuid",
                [fixture.projectID, id]) == 1)
        #expect(try console.browser.get(sessions).text.contains("name=\"provider-\(id)\" value=\"on\" checked"))

        let deleted = try console.browser.postForm("/console/providers/\(id)/delete", [("csrf", try console.csrf("/console/providers"))])
        #expect(deleted.status == 303)
        #expect(try sealedSecret(slug) == nil)
    }

    @Test func aMemberWhoIsNoOperatorIsRefusedAndRecorded() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Providers Refused")
        let member = try ConsoleTests.account(server)
        try ConsoleTests.member(fixture.projectID, member.id, "admin")
        var console = ConsoleTests.Console(server, email: member.email, password: member.password)
        try console.signIn()
        #expect(try console.browser.get("/console/providers").status == 403)
        let refused = try console.browser.postForm(
            "/console/providers",
            [("csrf", try console.csrf()), ("kind", "google"), ("clientId", "x"), ("clientSecret", Self.secret)])
        #expect(refused.status == 403)
        #expect(
            try ConsoleTests.count(
                "SELECT count(*) AS n FROM audit_log WHERE action = 'provider.create' AND actor_id = $1 AND outcome = 'refused'",
                [member.id]) == 1)
    }
}
