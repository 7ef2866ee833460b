import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The console's Web clients page over real HTTP against PostgreSQL (docs/console.md, "Web clients"): an
/// owner registers a client and sees its secret once, rotates, revokes the old secret, and deletes it; a
/// bad redirect URI is named; a viewer sees the list without the forms.
@Suite struct ConsoleWebClientTests {
    @Test func ownersRegisterRotateRevokeAndDeleteWebClients() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Clients")
        try ConsoleTests.member(fixture.projectID, fixture.userID, "owner")
        var console = ConsoleTests.Console(server, email: fixture.email, password: fixture.password)
        try console.signIn()
        try console.enrolTOTP()
        let page = "/console/projects/\(fixture.projectID)/development/clients"
        let empty = try console.browser.get(page)
        #expect(empty.status == 200)
        #expect(empty.text.contains("<h1>Web clients</h1>") && empty.text.contains("No web client yet."))

        let bad = try console.browser.postForm(
            page,
            [
                ("csrf", try console.csrf(page)), ("name", "Acme web"), ("redirectUris", "com.acme.app:/cb"),
                ("tokenEndpointAuthMethod", "client_secret_basic"), ("requirePkce", "on"),
            ])
        #expect(bad.status == 400)
        #expect(bad.text.contains("redirectUris must use https"))
        #expect(bad.text.contains("aria-invalid=\"true\""))

        let created = try console.browser.postForm(
            page,
            [
                ("csrf", try console.csrf(page)), ("name", "Acme web"),
                ("redirectUris", "https://www.acme.example/cb\nhttp://localhost:3000/cb"),
                ("tokenEndpointAuthMethod", "client_secret_post"), ("requirePkce", "on"),
            ])
        #expect(created.status == 200)
        let secret = try #require(TOTPSignInTests.between(created.text, "id=\"new-secret\">", "<"))
        SuiteCapture.secret(secret)
        #expect(secret.hasPrefix("zcs_"))
        let clientID = try #require(
            try TestDatabase.pool.query(
                "SELECT c.client_id FROM web_clients c JOIN environments e ON e.id = c.environment_id WHERE e.project_id = $1::uuid",
                [fixture.projectID]
            ).first?["client_id"])
        let listed = try console.browser.get(page)
        #expect(listed.text.contains(clientID) && listed.text.contains("http://localhost:3000/cb"))
        #expect(!listed.text.contains(secret))

        let rotated = try console.browser.postForm(page + "/\(clientID)/secrets", [("csrf", try console.csrf(page))])
        #expect(rotated.status == 200)
        let second = try #require(TOTPSignInTests.between(rotated.text, "id=\"new-secret\">", "<"))
        SuiteCapture.secret(second)
        #expect(second != secret)
        let firstID = try #require(
            try TestDatabase.pool.query(
                "SELECT id FROM web_client_secrets WHERE client_id = $1 ORDER BY created_at LIMIT 1", [clientID]
            ).first?["id"])
        let revoked = try console.browser.postForm(page + "/\(clientID)/secrets/\(firstID)/revoke", [("csrf", try console.csrf(page))])
        #expect(revoked.status == 303)
        #expect(try console.browser.get(page).text.contains("revoked "))

        let deleted = try console.browser.postForm(page + "/\(clientID)/delete", [("csrf", try console.csrf(page))])
        #expect(deleted.status == 303)
        #expect(try TestDatabase.pool.query("SELECT 1 FROM web_clients WHERE client_id = $1", [clientID]).rows.isEmpty)
    }
}
