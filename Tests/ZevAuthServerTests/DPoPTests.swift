import Encoding
import Foundation
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// DPoP against PostgreSQL (docs/dpop.md): the native exchange, the token endpoint and their refresh bind
/// the session to the proof's key; the resources then take the token only with a proof of that key; every
/// refused proof leaves the code untouched and issues nothing; a `jti` is used once on every instance.
@Suite struct DPoPTests {
    static let exchangePath = "/v1/auth/handoff/exchange"
    static let refreshPath = "/v1/auth/session/refresh"
    static let sessionPath = "/v1/auth/session"

    let driver: SessionDriver
    let prover: DPoPProver

    init() throws {
        driver = try SessionDriver.started()
        prover = try DPoPProver()
    }

    var issuer: String { driver.server.issuer }

    func proof(
        _ method: String, _ path: String, accessToken: String? = nil, nonce: String? = nil, issuedAt: Date = Date(),
        by prover: DPoPProver? = nil, header: [(String, JSONValue)] = [], claims: [(String, JSONValue)] = []
    ) throws -> String {
        try (prover ?? self.prover).proof(
            method: method, url: issuer + path, issuedAt: issuedAt, accessToken: accessToken, nonce: nonce, header: header,
            claims: claims)
    }

    /// `POST /v1/auth/handoff/exchange` of `code` with a `DPoP` header when `proof` is given.
    func exchange(_ code: (code: String, pkce: PKCEPair), proof: String?, on server: TestServer? = nil) throws -> TestResponse {
        var headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(driver.fixture.developmentKey)")]
        if let proof { headers.append(("DPoP", proof)) }
        let body = try JSONSerialization.data(withJSONObject: [
            "code": code.code, "codeVerifier": code.pkce.verifier, "redirectUri": SessionDriver.redirect,
        ])
        let response = try (server ?? driver.server).client.send("POST", Self.exchangePath, headers: headers, body: Array(body))
        if let session = response.json["session"] as? [String: Any] {
            SuiteCapture.secret(session["accessToken"] as? String)
            SuiteCapture.secret(session["refreshToken"] as? String)
        }
        return response
    }

    func refresh(_ refreshToken: String, proof: String?) throws -> TestResponse {
        var headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(driver.fixture.developmentKey)")]
        if let proof { headers.append(("DPoP", proof)) }
        let body = try JSONSerialization.data(withJSONObject: ["refreshToken": refreshToken])
        let response = try driver.server.client.send("POST", Self.refreshPath, headers: headers, body: Array(body))
        if let session = response.json["session"] as? [String: Any] {
            SuiteCapture.secret(session["accessToken"] as? String)
            SuiteCapture.secret(session["refreshToken"] as? String)
        }
        return response
    }

    func current(_ accessToken: String, scheme: String = "DPoP", proof: String?, on server: TestServer? = nil) throws -> TestResponse {
        var headers = [("Authorization", "\(scheme) \(accessToken)")]
        if let proof { headers.append(("DPoP", proof)) }
        return try (server ?? driver.server).client.send("GET", Self.sessionPath, headers: headers)
    }

    func expectRefused(
        _ response: TestResponse, _ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        #expect(response.json["session"] == nil && response.json["access_token"] == nil, sourceLocation: sourceLocation)
    }

    /// A session bound to `prover`'s key through the native exchange.
    func boundSession() throws -> SessionDriver.Pair {
        let code = try driver.issueCode(path: "/v1/auth/zevid/start")
        let response = try exchange(code, proof: try proof("POST", Self.exchangePath))
        return try #require(SessionDriver.Pair(response))
    }

    @Test func theExchangeBindsTheSessionAndTheResourceWantsAProofOfItsKey() throws {
        let code = try driver.issueCode(path: "/v1/auth/zevid/start")
        let response = try exchange(code, proof: try proof("POST", Self.exchangePath))
        #expect(response.status == 200)
        let session = try #require(response.json["session"] as? [String: Any])
        #expect(session["tokenType"] as? String == "DPoP")
        #expect(response.header("dpop-nonce") != nil)
        let pair = try #require(SessionDriver.Pair(response))

        // As a bearer token: 401 invalid_token with a DPoP challenge (RFC 9449 §7.1).
        let bearer = try current(pair.accessToken, scheme: "Bearer", proof: nil)
        expectRefused(bearer, 401, "invalid_token")
        #expect(bearer.header("www-authenticate") == #"DPoP error="invalid_token", algs="ES256 EdDSA PS256 RS256""#)
        // With a proof of the key and its ath: the session.
        let good = try proof("GET", Self.sessionPath, accessToken: pair.accessToken)
        let answered = try current(pair.accessToken, proof: good)
        #expect(answered.status == 200)
        #expect((answered.json["session"] as? [String: Any])?["id"] as? String == pair.sessionID)
        #expect(answered.header("dpop-nonce") != nil)
        // The same proof again: a replay.
        let replayed = try current(pair.accessToken, proof: good)
        expectRefused(replayed, 401, "invalid_dpop_proof")
        #expect(replayed.header("www-authenticate") == #"DPoP error="invalid_dpop_proof", algs="ES256 EdDSA PS256 RS256""#)
        // A proof of another key, a wrong ath, no proof at all.
        let other = try DPoPProver()
        expectRefused(
            try current(pair.accessToken, proof: try proof("GET", Self.sessionPath, accessToken: pair.accessToken, by: other)), 401,
            "invalid_dpop_proof")
        expectRefused(
            try current(pair.accessToken, proof: try proof("GET", Self.sessionPath, accessToken: "zat_other")), 401, "invalid_dpop_proof")
        expectRefused(try current(pair.accessToken, proof: nil), 401, "invalid_dpop_proof")
    }

    @Test func aBoundRefreshTokenRotatesOnlyWithAProofOfItsKey() throws {
        let pair = try boundSession()
        expectRefused(try refresh(pair.refreshToken, proof: nil), 400, "invalid_grant")
        let other = try DPoPProver()
        expectRefused(try refresh(pair.refreshToken, proof: try proof("POST", Self.refreshPath, by: other)), 400, "invalid_grant")
        // Neither attempt touched the session: the right key still rotates the same refresh token.
        let rotated = try refresh(pair.refreshToken, proof: try proof("POST", Self.refreshPath))
        #expect(rotated.status == 200)
        #expect((rotated.json["session"] as? [String: Any])?["tokenType"] as? String == "DPoP")
        let next = try #require(SessionDriver.Pair(rotated))
        #expect(next.sessionID == pair.sessionID)
        #expect(try current(next.accessToken, proof: try proof("GET", Self.sessionPath, accessToken: next.accessToken)).status == 200)
    }

    @Test func introspectionNamesTheKey() throws {
        let pair = try boundSession()
        let answer = try driver.postForm(
            "/oauth2/introspect", [("token", pair.accessToken)], headers: [("Authorization", "Bearer \(driver.fixture.developmentSecret)")])
        #expect(answer.json["active"] as? Bool == true)
        #expect(answer.json["token_type"] as? String == "DPoP")
        #expect((answer.json["cnf"] as? [String: Any])?["jkt"] as? String == prover.thumbprint)
    }

    @Test func anUnboundTokenKeepsWorkingAsABearerToken() throws {
        let pair = try driver.signIn()
        #expect(try driver.current(pair.accessToken).status == 200)
        let dpop = try current(pair.accessToken, proof: try proof("GET", Self.sessionPath, accessToken: pair.accessToken))
        expectRefused(dpop, 401, "invalid_token")
    }

    @Test func theTokenEndpointAndUserinfoTakeDPoP() throws {
        let code = try driver.issueCode(path: "/oauth2/authorize")
        let answer = try driver.postForm(
            "/oauth2/token",
            [
                ("grant_type", "authorization_code"), ("code", code.code), ("redirect_uri", SessionDriver.redirect),
                ("code_verifier", code.pkce.verifier), ("client_id", driver.fixture.developmentKey),
            ], headers: [("DPoP", try proof("POST", "/oauth2/token"))])
        #expect(answer.status == 200)
        #expect(answer.json["token_type"] as? String == "DPoP")
        #expect(answer.header("dpop-nonce") != nil)
        let accessToken = try #require(answer.json["access_token"] as? String)
        let refreshToken = try #require(answer.json["refresh_token"] as? String)
        // Userinfo: as a bearer token refused with a DPoP challenge; with a proof, past the binding (this
        // sign-in has no openid scope, so the next answer is userinfo's own 403).
        let bearer = try driver.server.client.send("GET", "/oauth2/userinfo", headers: [("Authorization", "Bearer \(accessToken)")])
        expectRefused(bearer, 401, "invalid_token")
        #expect(bearer.header("www-authenticate")?.hasPrefix("DPoP ") == true)
        let withProof = try driver.server.client.send(
            "GET", "/oauth2/userinfo",
            headers: [
                ("Authorization", "DPoP \(accessToken)"), ("DPoP", try proof("GET", "/oauth2/userinfo", accessToken: accessToken)),
            ])
        #expect(withProof.status == 403)
        // The refresh grant: refused without a proof, DPoP with one.
        let form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", driver.fixture.developmentKey)]
        expectRefused(try driver.postForm("/oauth2/token", form), 400, "invalid_grant")
        let refreshed = try driver.postForm("/oauth2/token", form, headers: [("DPoP", try proof("POST", "/oauth2/token"))])
        #expect(refreshed.status == 200)
        #expect(refreshed.json["token_type"] as? String == "DPoP")
    }

    /// One rule broken at the exchange.
    enum Broken: String, CaseIterable {
        case method, otherHost, staleIssuedAt, futureIssuedAt, algNone, privateKey, typ
    }

    @Test(arguments: Broken.allCases)
    func aBrokenProofAtTheExchangeIsRefusedAndLeavesTheCode(_ broken: Broken) throws {
        let code = try driver.issueCode(path: "/v1/auth/zevid/start")
        let bad: String
        switch broken {
        case .method: bad = try proof("PUT", Self.exchangePath)
        case .otherHost: bad = try prover.proof(method: "POST", url: "https://evil.example" + Self.exchangePath, issuedAt: Date())
        case .staleIssuedAt: bad = try proof("POST", Self.exchangePath, issuedAt: Date() - 120)
        case .futureIssuedAt: bad = try proof("POST", Self.exchangePath, issuedAt: Date() + 60)
        case .typ: bad = try proof("POST", Self.exchangePath, header: [("typ", "JWT")])
        case .privateKey:
            guard case .object(var members) = prover.jwk else { return }
            members.append(("d", "AQAB"))
            bad = try proof("POST", Self.exchangePath, header: [("jwk", .object(members))])
        case .algNone:
            let header = Base64URL.encode(JSONWriter.encode(["typ": "dpop+jwt", "alg": "none", "jwk": prover.jwk] as JSONValue))
            let claims = Base64URL.encode(
                JSONWriter.encode(
                    [
                        "jti": "j", "htm": "POST", "htu": .string(issuer + Self.exchangePath),
                        "iat": .int(Int(Date().timeIntervalSince1970)),
                    ] as JSONValue))
            bad = header + "." + claims + "."
        }
        let refused = try exchange(code, proof: bad)
        expectRefused(refused, 400, "invalid_dpop_proof")
        #expect(refused.header("dpop-nonce") != nil)
        // Nothing was issued and the code was not touched: it still exchanges, once.
        #expect(try exchange(code, proof: try proof("POST", Self.exchangePath)).status == 200)
    }

    @Test func aProofIsUsedOnceAcrossTwoInstances() throws {
        let second = try TestServer()
        // At the exchange: the same proof on another instance is a replay, and its code stays untouched.
        let one = try driver.issueCode(path: "/v1/auth/zevid/start")
        let two = try driver.issueCode(path: "/v1/auth/zevid/start")
        let shared = try proof("POST", Self.exchangePath)
        let first = try exchange(one, proof: shared)
        #expect(first.status == 200)
        expectRefused(try exchange(two, proof: shared, on: second), 400, "invalid_dpop_proof")
        #expect(try exchange(two, proof: try proof("POST", Self.exchangePath), on: second).status == 200)
        // At a resource too.
        let pair = try #require(SessionDriver.Pair(first))
        let read = try proof("GET", Self.sessionPath, accessToken: pair.accessToken)
        #expect(try current(pair.accessToken, proof: read).status == 200)
        expectRefused(try current(pair.accessToken, proof: read, on: second), 401, "invalid_dpop_proof")
    }

    @Test func dpopJKTAtTheStartBindsTheCode() throws {
        let bound = [("dpop_jkt", prover.thumbprint)]
        // Without a proof, and with another key's: refused after the code was consumed, nothing issued.
        let first = try driver.issueCode(path: "/v1/auth/zevid/start", parameters: bound)
        let unproven = try exchange(first, proof: nil)
        expectRefused(unproven, 400, "invalid_dpop_proof")
        #expect((unproven.json["error_description"] as? String)?.contains("send a DPoP proof made with it") == true, "\(unproven.text)")
        expectRefused(try exchange(first, proof: try proof("POST", Self.exchangePath)), 400, "invalid_grant")
        let second = try driver.issueCode(path: "/oauth2/authorize", parameters: bound)
        let otherKey = try exchange(second, proof: try proof("POST", Self.exchangePath, by: try DPoPProver()))
        expectRefused(otherKey, 400, "invalid_dpop_proof")
        #expect((otherKey.json["error_description"] as? String)?.contains("signed by another key") == true, "\(otherKey.text)")
        // With a proof of that key: a session bound to it.
        let third = try driver.issueCode(path: "/v1/auth/zevid/start", parameters: bound)
        let answered = try exchange(third, proof: try proof("POST", Self.exchangePath))
        #expect((answered.json["session"] as? [String: Any])?["tokenType"] as? String == "DPoP")
    }

    @Test func aProofAtThePushedRequestEndpointBindsTheCode() throws {
        let form = [
            ("client_id", driver.fixture.developmentKey), ("redirect_uri", SessionDriver.redirect), ("response_type", "code"),
            ("state", "s"), ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
        ]
        let pushed = try driver.postForm("/oauth2/par", form, headers: [("DPoP", try proof("POST", "/oauth2/par"))])
        #expect(pushed.status == 201)
        let stored = try driver.server.store.pool.query(
            """
            SELECT count(*) AS n FROM pushed_authorization_requests
            WHERE environment_id = (SELECT id FROM environments WHERE publishable_key = $1) AND parameters->>'dpop_jkt' = $2
            """, [driver.fixture.developmentKey, prover.thumbprint])
        #expect(try stored.rows[0].int("n") == 1)
        // A dpop_jkt of another key than the proof's, and a broken proof.
        let other = try DPoPProver()
        expectRefused(
            try driver.postForm(
                "/oauth2/par", form + [("dpop_jkt", other.thumbprint)], headers: [("DPoP", try proof("POST", "/oauth2/par"))]),
            400, "invalid_dpop_proof")
        expectRefused(
            try driver.postForm("/oauth2/par", form, headers: [("DPoP", try proof("GET", "/oauth2/par"))]), 400, "invalid_dpop_proof")
    }

    @Test func aMalformedDPoPJKTIsRedirectedAsInvalidRequest() throws {
        let start = try driver.server.browser().get(
            startTarget([
                ("client_id", driver.fixture.developmentKey), ("redirect_uri", SessionDriver.redirect), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"), ("dpop_jkt", "not-a-thumbprint"),
            ]))
        #expect(start.status == 303)
        let location = try #require(start.header("location"))
        #expect(location.hasPrefix(SessionDriver.redirect + "?error=invalid_request"))
    }

    @Test func discoveryListsTheProofAlgorithms() throws {
        let metadata = try driver.server.client.send("GET", "/.well-known/oauth-authorization-server")
        #expect(metadata.json["dpop_signing_alg_values_supported"] as? [String] == ["ES256", "EdDSA", "PS256", "RS256"])
    }

    @Test func anEnvironmentThatRequiresDPoPAsksForANonce() throws {
        let settings = try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, ["requireDPoP": true])
        #expect(settings.status == 200)
        #expect(settings.json["requireDPoP"] as? Bool == true)
        expectRefused(
            try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, ["requireDPoP": "yes"]), 400,
            "invalid_request")
        let code = try driver.issueCode(path: "/v1/auth/zevid/start")
        // No proof at all.
        expectRefused(try exchange(code, proof: nil), 400, "invalid_dpop_proof")
        // A proof without a nonce: use_dpop_nonce with the nonce to use.
        let asked = try exchange(code, proof: try proof("POST", Self.exchangePath))
        expectRefused(asked, 400, "use_dpop_nonce")
        let nonce = try #require(asked.header("dpop-nonce"))
        // A nonce the server never gave.
        expectRefused(try exchange(code, proof: try proof("POST", Self.exchangePath, nonce: "made-up")), 400, "use_dpop_nonce")
        // With it: the exchange goes on (the code was never touched).
        let answered = try exchange(code, proof: try proof("POST", Self.exchangePath, nonce: nonce))
        #expect(answered.status == 200)
        #expect((answered.json["session"] as? [String: Any])?["tokenType"] as? String == "DPoP")
    }
}
