import AdminCLI
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// `zevauth clients list|create|show|update|delete|rotate-secret|revoke-secret` against the real server
/// (real HTTP, real PostgreSQL): the client secret is printed by create and rotate-secret only.
@Suite struct WebClientsCLITests {
    @Test func createsRotatesRevokesAndDeletesAWebClient() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store)
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_SECRET_KEY": fixture.developmentSecret]

        let created = runCLI(
            [
                "clients", "create", "--name", "Acme web", "--redirect-uri", "https://www.acme.example/cb", "--redirect-uri",
                "http://localhost:3000/cb", "--auth-method", "client_secret_post", "--json",
            ], environment: env)
        #expect(created.status == 0, "\(created.output.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(created.output.stdout.utf8)) as? [String: Any])
        let clientID = try #require(json["clientId"] as? String)
        let secret = try #require(json["clientSecret"] as? String)
        SuiteCapture.secret(secret)
        let firstSecretID = try #require((json["secrets"] as? [[String: Any]])?.first?["id"] as? String)

        let shown = runCLI(["clients", "show", clientID], environment: env)
        #expect(shown.status == 0)
        #expect(shown.output.stdout.contains("client_secret_post") && shown.output.stdout.contains("http://localhost:3000/cb"))
        #expect(!shown.output.stdout.contains(secret))
        #expect(runCLI(["clients", "list"], environment: env).output.stdout.contains(clientID))

        let rotated = runCLI(["clients", "rotate-secret", clientID], environment: env)
        #expect(rotated.status == 0)
        #expect(rotated.output.stdout.contains("client secret (shown only now): zcs_"))
        let revoked = runCLI(["clients", "revoke-secret", clientID, "--secret-id", firstSecretID], environment: env)
        #expect(revoked.status == 0, "\(revoked.output.stderr)")
        #expect(revoked.output.stdout.contains("revoked secret \(firstSecretID)"))

        let bad = runCLI(["clients", "update", clientID, "--redirect-uri", "com.acme.app:/cb"], environment: env)
        #expect(bad.status == 1)
        #expect(bad.output.stderr.contains("400 invalid_request: redirectUris "))
        let updated = runCLI(["clients", "update", clientID, "--require-pkce", "false"], environment: env)
        #expect(updated.status == 0)
        #expect(updated.output.stdout.contains("requirePkce") && updated.output.stdout.contains("false"))
        let requiresPAR = runCLI(["clients", "update", clientID, "--require-par", "true"], environment: env)
        #expect(requiresPAR.status == 0, "\(requiresPAR.output.stderr)")
        let parRow = requiresPAR.output.stdout.split(separator: "\n").first { $0.hasPrefix("requirePushedAuthorizationRequests") }
        #expect(parRow?.hasSuffix("true") == true)
        #expect(runCLI(["clients", "update", clientID, "--require-par", "yes"], environment: env).status != 0)

        let deleted = runCLI(["clients", "delete", clientID], environment: env)
        #expect(deleted.output.stdout.contains("deleted web client \(clientID)"))
        #expect(runCLI(["clients", "show", clientID], environment: env).output.stderr.contains("404 not_found: "))
    }
}
