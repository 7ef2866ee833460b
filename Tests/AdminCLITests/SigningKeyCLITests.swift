import AdminCLI
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// `zevauth signing-keys list|rotate|revoke` against the real server (real HTTP, real PostgreSQL), on a
/// schema of its own so the other suites' keys never change.
@Suite struct SigningKeyCLITests {
    @Test func listsRotatesAndRevokesTheSigningKeys() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock, store: try IsolatedSchema().store)
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]

        let listed = runCLI(["signing-keys", "list"], environment: env)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains("KID"))
        #expect(listed.output.stdout.contains("RS256") && listed.output.stdout.contains("ES256"))
        #expect(listed.output.stdout.contains("current") && listed.output.stdout.contains("next"))

        let early = runCLI(["signing-keys", "rotate"], environment: env)
        #expect(early.status == 1)
        #expect(early.output.stderr.contains("409 conflict: "))
        #expect(early.output.stderr.contains("rotation is possible from"))

        clock.advance(by: 301)
        let rotated = runCLI(["signing-keys", "rotate", "--json"], environment: env)
        #expect(rotated.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(rotated.output.stdout.utf8)) as? [String: Any]
        let items = json?["items"] as? [[String: Any]] ?? []
        #expect(items.filter { $0["state"] as? String == "retired" }.count == 2)
        let current = try #require(
            items.first { $0["alg"] as? String == "RS256" && $0["state"] as? String == "current" }?["kid"] as? String)

        let revoked = runCLI(["signing-keys", "revoke", current], environment: env)
        #expect(revoked.status == 0)
        #expect(revoked.output.stdout.contains("revoked signing key \(current)"))
        #expect(revoked.output.stdout.contains("signs now"))
        let again = runCLI(["signing-keys", "revoke", current], environment: env)
        #expect(again.status == 1)
        #expect(again.output.stderr.contains("404 not_found: "))

        let noToken = runCLI(["signing-keys", "list"], environment: ["ZEVAUTH_ISSUER": server.issuer])
        #expect(noToken.status != 0)
        let help = runCLI(["signing-keys", "--help"], environment: env)
        #expect(help.status == 0)
        #expect(help.output.stdout.contains("zevauth signing-keys revoke KID"))
    }
}
