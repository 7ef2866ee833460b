import Fetch
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Messages people read are sentences: no Swift type or case name (`dnsError("…")`) in an
/// `error_description`, a link problem or console output.
@Suite struct MessageSentenceTests {
    /// A Swift enum dump looks like `caseName(` or `TypeName.caseName`; prose never glues a word to `(`.
    static func looksLikeASwiftDump(_ text: String) -> Bool {
        text.contains(#/[A-Za-z]\(/#) || text.contains("Optional(") || text.contains("\\\"")
    }

    static func verify(_ server: TestServer, secret: String, domain: String) throws -> TestResponse {
        let auth = [("Authorization", "Bearer \(secret)"), ("Content-Type", "application/json")]
        let added = try server.client.send(
            "POST", "/v1/admin/domains", headers: auth, body: Array(try JSONSerialization.data(withJSONObject: ["domain": domain])))
        #expect(added.status == 201)
        return try server.client.send("POST", "/v1/admin/domains/\(domain)/verify", headers: auth)
    }

    @Test func domainVerificationSaysInWordsThatTheNameDoesNotResolve() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        // RFC 6761: a `.invalid` name never resolves, and the resolver answers without asking DNS.
        let domain = "v\(UUID().uuidString.prefix(8).lowercased()).nowhere.invalid"
        let response = try Self.verify(server, secret: fixture.developmentSecret, domain: domain)
        #expect(response.status == 400)
        let description = try #require(response.json["error_description"] as? String)
        #expect(
            description
                == "domain is not verified: https://\(domain)/.well-known/zevauth-domain-verification could not be fetched: "
                + "\(domain) does not resolve (.invalid names never do, RFC 6761).")
        #expect(!Self.looksLikeASwiftDump(description), "\(description)")
    }

    @Test func domainVerificationSaysInWordsThatTheAddressIsRefused() throws {
        let https = try TestHTTPSServer()
        let domain = "v\(UUID().uuidString.prefix(8).lowercased()).acme.test"
        let server = try TestServer { configuration in
            configuration.outbound = https.outbound(for: [domain], allowPrivate: false)
            configuration.outboundPort = https.port
        }
        let fixture = try Fixture.make(store: server.store)
        let response = try Self.verify(server, secret: fixture.developmentSecret, domain: domain)
        #expect(response.status == 400)
        let description = try #require(response.json["error_description"] as? String)
        #expect(
            description.hasSuffix(
                "could not be fetched: \(domain) resolves only to refused addresses: 127.0.0.1 is loopback (127.0.0.0/8)."))
        #expect(!Self.looksLikeASwiftDump(description), "\(description)")
    }

    @Test(arguments: [
        FetchFailure.timeout("the transfer timed out after 10 ms"), .dnsError("a.example does not resolve: no address"),
        .addressRefused("a.example resolves only to refused addresses: 10.0.0.1 is private (10.0.0.0/8)"),
        .tlsError("the certificate is not trusted"), .tooLarge(limit: 4096), .connectionFailed("connection refused"),
    ])
    func everyFetchFailureExplainsItselfInWords(failure: FetchFailure) {
        #expect(!Self.looksLikeASwiftDump(failure.explanation), "\(failure.explanation)")
        #expect(!failure.explanation.isEmpty)
    }
}
