import Foundation
import Testing

@testable import Conformance

/// The pure parts of the web client modules: the form_post page parser, the Basic credentials, the PEM
/// key loader and the web client options.
@Suite struct WebClientParsingTests {
    let page = """
        <!doctype html><html><head><script src="/assets/form-post.js" defer></script></head><body>
        <form method="post" action="https://rp.example/cb?x=1&amp;y=2" id="form-post">
        <input type="hidden" name="code" value="hoc_abc">
        <input type="hidden" name="state" value="a &quot;b&quot; &amp; &lt;c&gt; é">
        <input type="hidden" name="iss" value="https://auth.example">
        <noscript><button type="submit">Continue</button></noscript>
        </form></body></html>
        """

    @Test func formPostPageGivesTheActionAndTheFieldsUnescapedInOrder() throws {
        let observed = Observed(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: page)
        let answer = try #require(FormPostAnswer.parse(observed))
        #expect(answer.action == "https://rp.example/cb?x=1&y=2")
        #expect(answer.fields.map(\.name) == ["code", "state", "iss"])
        #expect(answer.value("state") == "a \"b\" & <c> é")
        #expect(answer.value("iss") == "https://auth.example")
        #expect(answer.value("error") == nil)
    }

    @Test func formPostNeedsA200HTMLPageWithAPostForm() {
        #expect(FormPostAnswer.parse(Observed(status: 400, headers: [("Content-Type", "text/html")], body: page)) == nil)
        #expect(FormPostAnswer.parse(Observed(status: 200, headers: [("Content-Type", "application/json")], body: page)) == nil)
        let getForm = page.replacingOccurrences(of: "method=\"post\"", with: "method=\"get\"")
        #expect(FormPostAnswer.parse(Observed(status: 200, headers: [("Content-Type", "text/html")], body: getForm)) == nil)
        let noMethod = page.replacingOccurrences(of: "method=\"post\" ", with: "")
        #expect(FormPostAnswer.parse(Observed(status: 200, headers: [("Content-Type", "text/html")], body: noMethod)) == nil)
        #expect(FormPostAnswer.parse(Observed(status: 200, headers: [("Content-Type", "text/html")], body: "<p>no form</p>")) == nil)
    }

    @Test func basicCredentialsAreFormEncodedBeforeBase64() {
        // RFC 6749 §2.3.1: "a+b:c" is sent as base64("a%2Bb:c%3A").
        #expect(Suite.basicAuthorization("a+b", "c:") == "Basic " + Data("a%2Bb:c%3A".utf8).base64EncodedString())
        #expect(Suite.basicAuthorization("zc_A-z", "zcs_0_9") == "Basic " + Data("zc_A-z:zcs_0_9".utf8).base64EncodedString())
    }

    @Test func aPEMPrivateKeyLoadsAndGarbageDoesNot() throws {
        let pem = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgYikDaLgNi1cFwjvK
            JtbCajLsFZ8HlGCF3+IQkxdh45KhRANCAASTSVwBXMkeaMPBb5VScBm87zKF5EIn
            e9K6YC3WYo85QP2ZV2symQzWK2Xnv1eyoyu4nrpo8h4HZOBcJo4LF76q
            -----END PRIVATE KEY-----
            """
        let key = try #require(Suite.signingKey(pem: pem))
        #expect(key.type == .p256)
        #expect(Suite.signingKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") == nil)
    }

    @Test func webClientsComeFromDevJSONOrFromTheFlags() throws {
        let dev = """
            {"issuer":"http://127.0.0.1:8080","development":{"publishableKey":"pk_test_a"},"user":{"email":"a@b.test","password":"p"},
             "callbacks":["http://127.0.0.1/callback"],
             "webClients":[{"clientId":"zc_basic","tokenEndpointAuthMethod":"client_secret_basic","redirectUris":["http://127.0.0.1:54321/web/callback"],
                            "clientSecret":"zcs_secret"},
                           {"clientId":"zc_jwt","tokenEndpointAuthMethod":"private_key_jwt","redirectUris":["http://127.0.0.1:54321/web/callback"],
                            "privateKeyPem":"-----BEGIN PRIVATE KEY-----\\nAA\\n-----END PRIVATE KEY-----\\n","keyId":"dev-1"}]}
            """
        let fromDev = try Options.parse(["--dev-json", "dev.json"]) { _ in Data(dev.utf8) }
        #expect(fromDev.webClients.map(\.clientID) == ["zc_basic", "zc_jwt"])
        #expect(fromDev.webClients[1].keyID == "dev-1")
        #expect(fromDev.secrets.contains("zcs_secret"))

        let files: [String: String] = ["dev.json": dev, "key.pem": "-----BEGIN PRIVATE KEY-----\nAA\n-----END PRIVATE KEY-----\n"]
        let read: (String) throws -> Data = { path in
            guard let text = files[path] else { throw CocoaError(.fileNoSuchFile) }
            return Data(text.utf8)
        }
        let flagged = try Options.parse(
            [
                "--dev-json", "dev.json", "--web-client-id", "zc_mine", "--web-client-key-file", "key.pem", "--web-client-redirect-uri",
                "https://rp.example/cb", "--web-client-post-logout-redirect-uri", "https://rp.example/bye",
            ], readFile: read)
        #expect(flagged.webClients.count == 1)
        #expect(flagged.webClients.first?.authMethod == "private_key_jwt")
        #expect(flagged.webClients.first?.postLogoutRedirectURI == "https://rp.example/bye")

        #expect(throws: Options.Problem.self) {
            try Options.parse(["--dev-json", "dev.json", "--web-client-secret", "s"], readFile: read)
        }
        #expect(throws: Options.Problem.self) {
            try Options.parse(["--dev-json", "dev.json", "--web-client-id", "zc_x", "--web-client-secret", "s"], readFile: read)
        }
        #expect(throws: Options.Problem.self) {
            try Options.parse(
                [
                    "--dev-json", "dev.json", "--web-client-id", "zc_x", "--web-client-redirect-uri", "https://rp.example/cb",
                    "--web-client-auth-method", "private_key_jwt", "--web-client-secret", "s",
                ], readFile: read)
        }
    }
}
