import AdminCLI
import Crypto
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// `zevauth providers list|create|show|update|delete` against the real server (real HTTP, real
/// PostgreSQL): secrets travel from files, never the command line, and are never printed.
@Suite struct ProvidersCLITests {
    static func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "zevauth-provider-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func createsShowsUpdatesAndDeletesAnAppleProvider() throws {
        let server = try TestServer(live: true)
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let key = try Crypto.SigningKey.generate(.p256)
        let base64 = Data(try key.pkcs8()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let keyFile = try Self.write("-----BEGIN PRIVATE KEY-----\n\(base64)\n-----END PRIVATE KEY-----\n")
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let slug = "cli-" + UUID().uuidString.lowercased().prefix(12)

        let created = runCLI(
            [
                "providers", "create", "--kind", "apple", "--slug", slug, "--client-id", "com.acme.signin", "--team-id", "ABCDE12345",
                "--key-id", "KEY1234567", "--private-key-file", keyFile, "--json",
            ], environment: env)
        #expect(created.status == 0, "\(created.output.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(created.output.stdout.utf8)) as? [String: Any])
        let id = try #require(json["id"] as? String)
        #expect(json["hasPrivateKey"] as? Bool == true)
        #expect(!created.output.stdout.contains(String(base64.prefix(40))))

        let shown = runCLI(["providers", "show", id], environment: env)
        #expect(shown.status == 0)
        #expect(shown.output.stdout.contains("teamId") && shown.output.stdout.contains("ABCDE12345"))
        #expect(shown.output.stdout.contains("https://appleid.apple.com"))

        let listed = runCLI(["providers", "list", "--limit", "100"], environment: env)
        #expect(listed.status == 0)
        #expect(listed.output.stdout.contains("SLUG"))

        let updated = runCLI(["providers", "update", id, "--key-id", "NEWKEY0001"], environment: env)
        #expect(updated.status == 0)
        #expect(updated.output.stdout.contains("NEWKEY0001"))

        let bad = runCLI(["providers", "update", id, "--team-id", "short"], environment: env)
        #expect(bad.status == 1)
        #expect(bad.output.stderr.contains("400 invalid_request: teamId "))

        let deleted = runCLI(["providers", "delete", id], environment: env)
        #expect(deleted.status == 0)
        #expect(deleted.output.stdout.contains("deleted provider \(id)"))
        #expect(runCLI(["providers", "show", id], environment: env).output.stderr.contains("404 not_found: "))
    }

    @Test func aGoogleClientSecretComesFromItsFileWithoutTheLineBreak() throws {
        let server = try TestServer(live: true)
        let env = ["ZEVAUTH_ISSUER": server.issuer, "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let secretFile = try Self.write("GOCSPX-from-a-file\n")
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let created = runCLI(
            [
                "providers", "create", "--kind", "google", "--slug", "g-" + UUID().uuidString.lowercased().prefix(12), "--client-id",
                "1.apps.googleusercontent.com", "--client-secret-file", secretFile,
            ], environment: env)
        #expect(created.status == 0, "\(created.output.stderr)")
        #expect(created.output.stdout.contains("hasClientSecret  true"))
        #expect(!created.output.stdout.contains("GOCSPX"))
    }

    @Test func secretsAreNeverTakenFromTheCommandLine() {
        let env = ["ZEVAUTH_ISSUER": "http://127.0.0.1:9", "ZEVAUTH_OPERATOR_TOKEN": TestServer.operatorToken]
        let inline = runCLI(["providers", "create", "--kind", "google", "--client-id", "x", "--client-secret", "s"], environment: env)
        #expect(inline.status == 2)
        #expect(inline.output.stderr.contains("has no option --client-secret"))
        let missing = runCLI(["providers", "create", "--kind", "apple", "--private-key-file", "/nonexistent/key.p8"], environment: env)
        #expect(missing.status == 2)
        #expect(missing.output.stderr.contains("--private-key-file /nonexistent/key.p8 cannot be read"))
        let empty = runCLI(["providers", "update", UUID().uuidString], environment: env)
        #expect(empty.status == 2)
        #expect(empty.output.stderr.contains("at least one field flag"))
        let help = runCLI(["providers", "--help"], environment: env)
        #expect(help.status == 0)
        #expect(help.output.stdout.contains("zevauth providers create --kind apple|google|oidc"))
        #expect(help.output.stdout.contains("[--private-key-file KEY.p8]"))
    }
}
