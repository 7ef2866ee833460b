import Authorize
import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Web clients with pushed authorization requests and DPoP over HTTP against PostgreSQL: a web client
/// authenticates at `/oauth2/par` as at the token endpoint (RFC 9126 §2; docs/protocol.md#pushed-requests),
/// and a DPoP proof binds its code exchange and refresh at `/oauth2/token` as a native app's (RFC 9449 §5;
/// docs/dpop.md, "Binding"). A web client may require pushed requests itself (RFC 9126 §6).
@Suite struct WebClientPushedAndDPoPTests {
    typealias T = WebClientTokenTests

    static func push(_ server: TestServer, _ fields: [(String, String)], headers: [(String, String)] = []) throws -> TestResponse {
        try server.client.send(
            "POST", "/oauth2/par", headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(FormURLEncoding.encode(fields).utf8))
    }

    @Test func aWebClientPushesARequestAuthenticatedAsAtTheTokenEndpoint() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_basic")
        let secret = try #require(client.secret)
        let pkce = PKCEPair()
        let fields = [
            ("response_type", "code"), ("redirect_uri", T.redirect), ("state", "st"), ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"),
        ]

        // A wrong secret, or none, is 401 invalid_client challenging Basic; nothing is stored.
        let wrong = try Self.push(server, fields, headers: [T.basic(client.id, "zcs_wrong")])
        #expect(wrong.status == 401)
        #expect(try T.json(wrong)["error"] as? String == "invalid_client")
        #expect(wrong.header("www-authenticate")?.hasPrefix("Basic") == true)
        let unauthenticated = try Self.push(server, fields + [("client_id", client.id)])
        #expect(unauthenticated.status == 401)
        #expect(try T.json(unauthenticated)["error"] as? String == "invalid_client")

        // With its secret: 201, client_id taken from Basic; the request URI completes the sign-in.
        let pushed = try Self.push(server, fields, headers: [T.basic(client.id, secret)])
        #expect(pushed.status == 201, "\(pushed.text)")
        let requestURI = try #require(try T.json(pushed)["request_uri"] as? String)
        let code = try #require(
            try T.signIn(server, fixture, clientID: client.id, pkce: nil, extra: [("request_uri", requestURI)])["code"])
        let exchanged = try T.token(
            server,
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier)],
            headers: [T.basic(client.id, secret)])
        #expect(exchanged.status == 200, "\(exchanged.text)")

        // Another client of the environment cannot resume the web client's pushed request.
        let again = try Self.push(server, fields, headers: [T.basic(client.id, secret)])
        let otherURI = try #require(try T.json(again)["request_uri"] as? String)
        let native = try server.browser().get(
            startTarget([("client_id", fixture.developmentKey), ("request_uri", otherURI)], path: "/oauth2/authorize"))
        #expect(native.status == 400)
        #expect(native.text.contains("invalid_request_uri"))
    }

    /// An admin API call under the development secret key, answered as JSON.
    static func admin(_ server: TestServer, _ fixture: Fixture, _ method: String, _ path: String, _ body: [String: Any]? = nil) throws
        -> (status: Int, json: [String: Any])
    {
        let response = try server.client.send(
            method, path, headers: [("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/json")],
            body: try body.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? [])
        return (response.status, try T.json(response))
    }

    @Test func aWebClientThatRequiresPushedRequestsStartsOnlyThroughPAR() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let strict = try T.register(server, fixture, method: "client_secret_basic", extra: ["requirePushedAuthorizationRequests": true])
        let secret = try #require(strict.secret)
        let plain = try T.register(server, fixture, method: "client_secret_basic")

        // The flag round-trips through the admin API: shown, listed, and false by default.
        let shown = try Self.admin(server, fixture, "GET", "/v1/admin/clients/\(strict.id)")
        #expect(shown.status == 200)
        #expect(shown.json["requirePushedAuthorizationRequests"] as? Bool == true)
        let listed = try Self.admin(server, fixture, "GET", "/v1/admin/clients")
        let items = try #require(listed.json["items"] as? [[String: Any]])
        let flags = Dictionary(
            uniqueKeysWithValues: items.map { ($0["clientId"] as? String ?? "", $0["requirePushedAuthorizationRequests"] as? Bool) })
        #expect(flags[strict.id] == true)
        #expect(flags[plain.id] == false)
        let wrong = try Self.admin(
            server, fixture, "PATCH", "/v1/admin/clients/\(strict.id)", ["requirePushedAuthorizationRequests": "yes"])
        #expect(wrong.status == 400)
        #expect(wrong.json["error"] as? String == "invalid_request")

        // A plain start is refused with the environment rule's redirected invalid_request, the state kept.
        let refused = try T.signIn(server, fixture, clientID: strict.id, pkce: PKCEPair())
        #expect(refused["error"] == "invalid_request")
        #expect(refused["state"] == "st")
        #expect(refused["code"] == nil)

        // Through PAR it signs in.
        let pkce = PKCEPair()
        let pushed = try Self.push(
            server,
            [
                ("response_type", "code"), ("redirect_uri", T.redirect), ("state", "st"), ("code_challenge", pkce.challenge),
                ("code_challenge_method", "S256"),
            ], headers: [T.basic(strict.id, secret)])
        #expect(pushed.status == 201, "\(pushed.text)")
        let requestURI = try #require(try T.json(pushed)["request_uri"] as? String)
        let resumed = try T.signIn(server, fixture, clientID: strict.id, pkce: nil, extra: [("request_uri", requestURI)])
        #expect(resumed["code"] != nil, "\(resumed)")

        // A client without the flag still starts plainly; turning the flag off lets the strict one too.
        #expect(try T.signIn(server, fixture, clientID: plain.id, pkce: PKCEPair())["code"] != nil)
        let updated = try Self.admin(
            server, fixture, "PATCH", "/v1/admin/clients/\(strict.id)", ["requirePushedAuthorizationRequests": false])
        #expect(updated.status == 200)
        #expect(updated.json["requirePushedAuthorizationRequests"] as? Bool == false)
        #expect(try T.signIn(server, fixture, clientID: strict.id, pkce: PKCEPair())["code"] != nil)
    }

    @Test func aDPoPProofBindsAWebClientsExchangeAndRefresh() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let client = try T.register(server, fixture, method: "client_secret_post")
        let secret = try #require(client.secret)
        let prover = try DPoPProver()
        func proof() throws -> String {
            try prover.proof(method: "POST", url: server.issuer + "/oauth2/token", issuedAt: Date())
        }
        let credentials = [("client_id", client.id), ("client_secret", secret)]
        let pkce = PKCEPair()
        let code = try #require(try T.signIn(server, fixture, clientID: client.id, pkce: pkce)["code"])
        let exchanged = try T.token(
            server,
            credentials + [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", T.redirect), ("code_verifier", pkce.verifier),
            ], headers: [("DPoP", try proof())])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        let body = try T.json(exchanged)
        #expect(body["token_type"] as? String == "DPoP")
        let refreshToken = try #require(body["refresh_token"] as? String)
        SuiteCapture.secret(refreshToken)

        // The session is bound to the key: a refresh without a proof, or with another key's, is refused.
        let refresh = credentials + [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        let bare = try T.token(server, refresh)
        #expect(bare.status == 400)
        #expect(try T.json(bare)["error"] as? String == "invalid_grant")
        let otherKey = try T.token(
            server, refresh,
            headers: [("DPoP", try DPoPProver().proof(method: "POST", url: server.issuer + "/oauth2/token", issuedAt: Date()))])
        #expect(otherKey.status == 400)
        let refreshed = try T.token(server, refresh, headers: [("DPoP", try proof())])
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(try T.json(refreshed)["token_type"] as? String == "DPoP")
        #expect(refreshed.header("dpop-nonce") != nil)
    }
}
