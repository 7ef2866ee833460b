import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// DPoP at the native token exchange (docs/dpop.md, "Binding"; docs/federation.md, "Native Sign in with
/// Apple and Google") against PostgreSQL and the upstream OpenID provider: a proof binds the session as at
/// the code exchange, and a refused proof issues nothing and leaves the upstream token usable.
@Suite(.serialized) struct NativeTokenExchangeDPoPTests {
    let world: NativeTokenExchangeTests.World
    let prover: DPoPProver

    init() throws {
        world = try NativeTokenExchangeTests.World()
        prover = try DPoPProver()
    }

    /// A fresh Apple identity token for the app.
    func appleToken() throws -> String {
        let person = NativeTokenExchangeTests.fresh()
        return try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: person.email))
    }

    /// A proof for `method` at `path` of this server, at the server's time.
    func proof(
        _ method: String = "POST", _ path: String = "/oauth2/token", accessToken: String? = nil, nonce: String? = nil,
        identifier: String = UUID().uuidString, by other: DPoPProver? = nil
    ) throws -> String {
        try (other ?? prover).proof(
            method: method, url: world.server.issuer + path, issuedAt: world.clock.now(), accessToken: accessToken, nonce: nonce,
            identifier: identifier)
    }

    /// The token exchange of `token`, with a `DPoP` header when `proof` is given.
    func exchange(_ token: String, proof: String?) throws -> TestResponse {
        try post(
            [
                ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
                ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"), ("subject_token", token), ("nonce", "raw-nonce"),
            ], proof: proof)
    }

    func post(_ fields: [(String, String)], proof: String?) throws -> TestResponse {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let proof { headers.append(("DPoP", proof)) }
        let response = try world.server.client.send(
            "POST", "/oauth2/token", headers: headers,
            body: Array(FormURLEncoding.encode(fields + [("client_id", world.fixture.developmentKey)]).utf8))
        SuiteCapture.secret(response.json["access_token"] as? String)
        SuiteCapture.secret(response.json["refresh_token"] as? String)
        return response
    }

    func expectRefused(_ response: TestResponse, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        #expect(response.json["access_token"] == nil, sourceLocation: sourceLocation)
    }

    @Test func aProofBindsTheExchangedSessionToItsKey() throws {
        let answer = try exchange(try appleToken(), proof: try proof())
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["token_type"] as? String == "DPoP")
        #expect(answer.header("dpop-nonce") != nil)
        let accessToken = try #require(answer.json["access_token"] as? String)
        let refreshToken = try #require(answer.json["refresh_token"] as? String)

        // Userinfo: as a bearer token refused with a DPoP challenge; with a proof of the key, the claims.
        let bearer = try world.server.client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(accessToken)")])
        #expect(bearer.status == 401)
        #expect(bearer.json["error"] as? String == "invalid_token")
        #expect(bearer.header("www-authenticate")?.hasPrefix("DPoP ") == true)
        let userinfo = try world.server.client.send(
            "GET", "/oauth2/userinfo",
            headers: [("Authorization", "DPoP \(accessToken)"), ("DPoP", try proof("GET", "/oauth2/userinfo", accessToken: accessToken))])
        #expect(userinfo.status == 200, "\(userinfo.text)")
        #expect(userinfo.json["sub"] as? String != nil)

        // The refresh: refused without a proof and with another key's, DPoP with a proof of the key.
        let form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        expectRefused(try post(form, proof: nil), "invalid_grant")
        expectRefused(try post(form, proof: try proof(by: try DPoPProver())), "invalid_grant")
        let refreshed = try post(form, proof: try proof())
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(refreshed.json["token_type"] as? String == "DPoP")
    }

    @Test func aRefusedProofIssuesNothingAndLeavesTheUpstreamTokenUsable() throws {
        let token = try appleToken()
        // A proof for another endpoint (htu): refused before anything else.
        let wrongURL = try exchange(token, proof: try proof("POST", "/v1/auth/session/refresh"))
        expectRefused(wrongURL, "invalid_dpop_proof")
        #expect(wrongURL.header("dpop-nonce") != nil)
        // A proof already used at another exchange: refused by the statement, before the token is used.
        let used = try proof()
        #expect(try exchange(try appleToken(), proof: used).status == 200)
        expectRefused(try exchange(token, proof: used), "invalid_dpop_proof")
        // The same upstream token still signs in, once.
        let answer = try exchange(token, proof: try proof())
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["token_type"] as? String == "DPoP")
        expectRefused(try exchange(token, proof: try proof()), "invalid_grant")
    }

    @Test func anEnvironmentThatRequiresDPoPRefusesAnExchangeWithoutAProof() throws {
        let settings = try world.server.client.send(
            "PATCH", "/v1/admin/settings",
            headers: [("Authorization", "Bearer \(world.fixture.developmentSecret)"), ("Content-Type", "application/json")],
            body: Array(#"{"requireDPoP":true}"#.utf8))
        #expect(settings.status == 200, "\(settings.text)")
        let token = try appleToken()
        // No proof: invalid_dpop_proof with the nonce to use.
        let missing = try exchange(token, proof: nil)
        expectRefused(missing, "invalid_dpop_proof")
        #expect(missing.header("dpop-nonce") != nil)
        // A proof without the server's nonce: use_dpop_nonce.
        let asked = try exchange(token, proof: try proof())
        expectRefused(asked, "use_dpop_nonce")
        let nonce = try #require(asked.header("dpop-nonce"))
        // With it: the same upstream token signs in, bound.
        let answer = try exchange(token, proof: try proof(nonce: nonce))
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json["token_type"] as? String == "DPoP")
    }
}
