import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Claims of an ID token as the server would write them (the claims builder is another module's; these
/// tests need only a well-formed payload).
func idTokenClaims(issuer: String, subject: String = "usr_1", audience: String = "pk_test_1", issuedAt: Date, lifetime: Double = 3600)
    -> [UInt8]
{
    var writer = JSONWriter()
    writer.object { claims in
        claims.field("iss", issuer)
        claims.field("sub", subject)
        claims.field("aud", audience)
        claims.field("iat", Int(issuedAt.timeIntervalSince1970))
        claims.field("exp", Int(issuedAt.timeIntervalSince1970 + lifetime))
        claims.field("sid", "ses_1")
    }
    return writer.bytes
}

/// The header of a compact JWS as JSON.
func jwsHeader(_ compact: String) -> [String: Any] {
    let first = String(compact.split(separator: ".")[0])
    return (try? JSONSerialization.jsonObject(with: Data(Base64URL.decodeCanonical(first) ?? []))) as? [String: Any] ?? [:]
}

/// The JWKS, the operator's signing-key calls and the ID-token signer and hint reader over the real
/// PostgreSQL (docs/operations.md, "Signing keys"; docs/protocol.md, "JWKS").
@Suite(.serialized) struct SigningKeyTests {
    let operatorAuth = [("Authorization", "Bearer \(TestServer.operatorToken)")]

    func server(live: Bool = false, clock: ManualClock? = nil) throws -> (TestServer, IsolatedSchema) {
        let schema = try IsolatedSchema()
        return (try TestServer(live: live, clock: clock, store: schema.store), schema)
    }

    func jwks(_ server: TestServer) throws -> [[String: Any]] {
        let response = try server.client.send("GET", "/.well-known/jwks.json")
        #expect(response.status == 200)
        #expect(response.header("Cache-Control") == "public, max-age=300")
        #expect(response.header("Content-Type") == "application/json")
        return response.json["keys"] as? [[String: Any]] ?? []
    }

    func list(_ server: TestServer) throws -> [[String: Any]] {
        let response = try server.client.send("GET", "/v1/admin/signing-keys", headers: operatorAuth)
        #expect(response.status == 200)
        return response.json["items"] as? [[String: Any]] ?? []
    }

    func kid(_ items: [[String: Any]], _ alg: String, _ state: String) -> String? {
        items.first { $0["alg"] as? String == alg && $0["state"] as? String == state }?["kid"] as? String
    }

    @Test func theJWKSListsACurrentAndANextKeyPerAlgorithmWithTheirPublicParametersOnly() throws {
        let (server, _) = try server(live: true)
        let keys = try jwks(server)
        #expect(keys.count == 4)
        #expect(Set(keys.compactMap { $0["kid"] as? String }).count == 4)
        for key in keys {
            #expect(key["use"] as? String == "sig")
            #expect(key["d"] == nil && key["p"] == nil)
            switch key["alg"] as? String {
            case "RS256":
                #expect(key["kty"] as? String == "RSA")
                #expect(Base64URL.decodeCanonical(key["n"] as? String ?? "")?.count == 256)
                #expect(key["e"] as? String == "AQAB")
            case "ES256":
                #expect(key["kty"] as? String == "EC")
                #expect(key["crv"] as? String == "P-256")
                #expect(Base64URL.decodeCanonical(key["x"] as? String ?? "")?.count == 32)
                #expect(Base64URL.decodeCanonical(key["y"] as? String ?? "")?.count == 32)
            default: Issue.record("a key with alg \(String(describing: key["alg"]))")
            }
        }
        let listed = try list(server)
        #expect(Set(listed.compactMap { $0["state"] as? String }) == ["current", "next"])
        #expect(listed.allSatisfy { $0["createdAt"] as? String != nil && $0["sealedPrivateKey"] == nil })
        // The private keys are sealed at rest: no PKCS#8 DER in the column.
        let sealed = try server.store.signingKeys.signingKeys(now: Date()).map(\.sealedPrivateKey)
        #expect(sealed.count == 4 && sealed.allSatisfy { !$0.hasPrefix("MI") })
    }

    @Test func rotationWaitsForTheJWKSCacheTimeThenPromotesTheNextKeyAndRetiresTheCurrentOne() throws {
        let clock = ManualClock()
        let (server, _) = try server(clock: clock)
        let before = try list(server)
        let signer = server.context.roundTrip.idTokenSigner
        let oldToken = try signer.sign(
            claims: idTokenClaims(issuer: server.issuer, issuedAt: clock.now()), algorithm: .rs256, now: clock.now())

        let early = try server.client.send("POST", "/v1/admin/signing-keys/rotate", headers: operatorAuth, body: Array("{}".utf8))
        #expect(early.status == 409)
        #expect(early.json["error"] as? String == "conflict")
        #expect((early.json["error_description"] as? String)?.contains("rotation is possible from") == true)
        #expect(early.header("Retry-After") == "300")
        #expect(try list(server).count == 4)

        clock.advance(by: 301)
        let rotated = try server.client.send("POST", "/v1/admin/signing-keys/rotate", headers: operatorAuth, body: [])
        #expect(rotated.status == 200)
        let after = rotated.json["items"] as? [[String: Any]] ?? []
        for alg in ["RS256", "ES256"] {
            #expect(kid(after, alg, "current") == kid(before, alg, "next"))
            #expect(kid(after, alg, "retired") == kid(before, alg, "current"))
            #expect(kid(after, alg, "next") != nil && kid(after, alg, "next") != kid(before, alg, "next"))
        }
        let retired = try #require(after.first { $0["state"] as? String == "retired" })
        #expect(retired["retiresAt"] as? String == Timestamp.rfc3339(secondsSinceEpoch: Int64(clock.now().timeIntervalSince1970) + 3600))
        #expect(try jwks(server).count == 6)
        // New tokens carry the promoted kid; a token the retired key signed still reads as a hint.
        let newToken = try signer.sign(
            claims: idTokenClaims(issuer: server.issuer, issuedAt: clock.now()), algorithm: .rs256, now: clock.now())
        #expect(jwsHeader(newToken)["kid"] as? String == kid(before, "RS256", "next"))
        #expect(server.context.roundTrip.idTokenHints.read(oldToken)?.subject == "usr_1")
        // Immediately again: the new next keys are too young.
        #expect(try server.client.send("POST", "/v1/admin/signing-keys/rotate", headers: operatorAuth, body: []).status == 409)
        // After every token the retired key signed has expired, it leaves the JWKS and the list.
        clock.advance(by: 3601)
        #expect(try jwks(server).count == 4)
        #expect(server.context.roundTrip.idTokenHints.read(oldToken) == nil)
    }

    @Test func rotateRefusesABodyWithFieldsAndEveryoneButTheOperator() throws {
        let (server, _) = try server()
        let withField = try server.client.send(
            "POST", "/v1/admin/signing-keys/rotate", headers: operatorAuth, body: Array(#"{"force":true}"#.utf8))
        #expect(withField.status == 400)
        #expect(try server.client.send("POST", "/v1/admin/signing-keys/rotate", headers: [], body: []).status == 401)
        #expect(try server.client.send("GET", "/v1/admin/signing-keys").status == 401)
        #expect(try server.client.send("POST", "/v1/admin/signing-keys/x/revoke", headers: [], body: []).status == 401)
    }

    @Test func revokeRemovesTheKeyAtOncePromotesTheNextKeyAndInvalidatesItsHints() throws {
        let clock = ManualClock()
        let (server, schema) = try server(clock: clock)
        let before = try list(server)
        let current = try #require(kid(before, "ES256", "current"))
        let signer = server.context.roundTrip.idTokenSigner
        let hints = server.context.roundTrip.idTokenHints
        let token = try signer.sign(
            claims: idTokenClaims(issuer: server.issuer, issuedAt: clock.now()), algorithm: .es256, now: clock.now())
        #expect(hints.read(token)?.subject == "usr_1")

        let revoked = try server.client.send("POST", "/v1/admin/signing-keys/\(current)/revoke", headers: operatorAuth, body: [])
        #expect(revoked.status == 200)
        #expect(revoked.json["state"] as? String == "revoked")
        #expect(revoked.json["promotedKid"] as? String == kid(before, "ES256", "next"))
        #expect(try !jwks(server).contains { $0["kid"] as? String == current })
        #expect(hints.read(token) == nil)
        let after = try list(server)
        #expect(kid(after, "ES256", "current") == kid(before, "ES256", "next"))
        #expect(kid(after, "ES256", "next") != nil)
        #expect(kid(after, "RS256", "current") == kid(before, "RS256", "current"))
        let next = try signer.sign(claims: idTokenClaims(issuer: server.issuer, issuedAt: clock.now()), algorithm: .es256, now: clock.now())
        #expect(jwsHeader(next)["kid"] as? String == kid(before, "ES256", "next"))
        // The revoked key's private key is gone from the database.
        #expect(
            try schema.pool.query("SELECT private_key_sealed FROM signing_keys WHERE kid = $1", [current]).rows[0]["private_key_sealed"]
                == nil)

        let again = try server.client.send("POST", "/v1/admin/signing-keys/\(current)/revoke", headers: operatorAuth, body: [])
        #expect(again.status == 404)
        #expect(again.json["error"] as? String == "not_found")
        // Revoking a next key replaces it; the current key keeps signing.
        let nextKid = try #require(kid(after, "RS256", "next"))
        #expect(try server.client.send("POST", "/v1/admin/signing-keys/\(nextKid)/revoke", headers: operatorAuth, body: []).status == 200)
        let last = try list(server)
        #expect(kid(last, "RS256", "current") == kid(before, "RS256", "current"))
        #expect(kid(last, "RS256", "next") != nil && kid(last, "RS256", "next") != nextKid)
    }

    @Test func twoRotationsRacingOnTheRealDatabaseMakeExactlyOneRotation() throws {
        let schema = try IsolatedSchema()
        let clock = ManualClock()
        let server = try TestServer(clock: clock, store: schema.store)
        let before = try list(server)
        clock.advance(by: 301)
        let keys = schema.store.signingKeys
        let plan = SigningKeyPolicy.rotation(try keys.signingKeys(now: clock.now()), now: clock.now())
        guard case .rotate(let steps) = plan else {
            Issue.record("the keys cannot rotate: \(plan)")
            return
        }
        let maker = try #require(server.context.roundTrip.signingKeys)
        // A third transaction holds the current keys' row locks until both rotations wait behind it.
        let holder = try PostgresConnection(url: schema.url)
        try holder.query("BEGIN")
        try holder.query("SELECT kid FROM signing_keys WHERE state = 'current' FOR UPDATE")
        let results = Results()
        let group = DispatchGroup()
        for _ in 0..<2 {
            let fresh = try steps.map { try maker.makeKey($0.algorithm) }
            DispatchQueue.global().async(group: group) {
                results.add(
                    Result {
                        try keys.rotate(
                            steps, newNext: fresh, now: clock.now(),
                            audit: AuditEntry(actor: .operatorToken, action: "signing_key.rotate", clientAddress: nil, at: clock.now()))
                    })
            }
        }
        #expect(try TestDatabase.waitForWaiters(blockedBy: holder, count: 2))
        try holder.query("COMMIT")
        group.wait()
        let outcomes = results.all.map { (try? $0.get()) }
        #expect(outcomes.filter { $0 == true }.count == 1)
        #expect(outcomes.filter { $0 == false }.count == 1)
        let after = try list(server)
        #expect(after.count == 6)
        for alg in ["RS256", "ES256"] {
            #expect(after.filter { $0["alg"] as? String == alg && $0["state"] as? String == "current" }.count == 1)
            #expect(after.filter { $0["alg"] as? String == alg && $0["state"] as? String == "next" }.count == 1)
            #expect(kid(after, alg, "current") == kid(before, alg, "next"))
        }
        // And through the use case: the loser answers 409 for the new next keys.
        let second = try server.client.send("POST", "/v1/admin/signing-keys/rotate", headers: operatorAuth, body: [])
        #expect(second.status == 409)
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Result<Bool, any Error>] = []
        func add(_ value: Result<Bool, any Error>) { lock.withLock { values.append(value) } }
        var all: [Result<Bool, any Error>] { lock.withLock { values } }
    }

    @Test func theSignaturesVerifyWithAnIndependentImplementation() throws {
        let (server, _) = try server(live: true)
        let signer = server.context.roundTrip.idTokenSigner
        let tokens = try SigningAlgorithm.allCases.map {
            try signer.sign(claims: idTokenClaims(issuer: server.issuer, issuedAt: Date()), algorithm: $0, now: Date())
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments =
            [TestDatabase.repositoryRoot + "/Tests/Interop/verify_signatures.py", server.issuer + "/.well-known/jwks.json"] + tokens
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("ok RS256 token"))
        #expect(output.contains("ok ES256 token"))
    }
}

/// `id_token_hint`s the server did not sign, or signed for another issuer, are ignored (nil), never an
/// error; an expired one it signed is still a hint (docs/protocol.md, "id_token_hint").
@Suite struct IDTokenHintReaderTests {
    let server: TestServer
    let schema: IsolatedSchema

    init() throws {
        schema = try IsolatedSchema()
        server = try TestServer(store: schema.store)
    }

    var hints: any IDTokenHintReader { server.context.roundTrip.idTokenHints }
    var signer: any IDTokenSigner { server.context.roundTrip.idTokenSigner }

    func sign(_ claims: [UInt8], _ algorithm: SigningAlgorithm = .rs256) throws -> String {
        try signer.sign(claims: claims, algorithm: algorithm, now: Date())
    }

    func forged(header: String, payload: [UInt8], signature: [UInt8]) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload) + "." + Base64URL.encode(signature)
    }

    func currentKid(_ algorithm: SigningAlgorithm) throws -> String {
        try #require(jwsHeader(try sign(idTokenClaims(issuer: server.issuer, issuedAt: Date()), algorithm))["kid"] as? String)
    }

    @Test(arguments: SigningAlgorithm.allCases) func readsATokenItSignedWithEitherAlgorithm(algorithm: SigningAlgorithm) throws {
        let hint = try #require(hints.read(try sign(idTokenClaims(issuer: server.issuer, issuedAt: Date()), algorithm)))
        #expect(hint.subject == "usr_1")
        #expect(hint.audience == ["pk_test_1"])
        #expect(hint.sessionID == "ses_1")
    }

    @Test func readsAnExpiredTokenItSigned() throws {
        let token = try sign(idTokenClaims(issuer: server.issuer, issuedAt: Date().addingTimeInterval(-7200)))
        let hint = try #require(hints.read(token))
        #expect(hint.expiresAt < Date())
    }

    @Test func ignoresATokenForAnotherIssuer() throws {
        #expect(hints.read(try sign(idTokenClaims(issuer: "https://evil.example", issuedAt: Date()))) == nil)
        #expect(hints.read(try sign(idTokenClaims(issuer: server.issuer + "/", issuedAt: Date()))) == nil)
    }

    @Test(arguments: SigningAlgorithm.allCases) func ignoresATamperedPayload(algorithm: SigningAlgorithm) throws {
        let token = try sign(idTokenClaims(issuer: server.issuer, issuedAt: Date()), algorithm)
        let parts = token.split(separator: ".").map(String.init)
        let other = Base64URL.encode(idTokenClaims(issuer: server.issuer, subject: "usr_2", issuedAt: Date()))
        #expect(hints.read(parts[0] + "." + other + "." + parts[2]) == nil)
    }

    @Test(arguments: SigningAlgorithm.allCases) func ignoresATokenSignedByAnotherKeyUnderAPublishedKid(algorithm: SigningAlgorithm) throws {
        let kid = try currentKid(algorithm)
        let key = try Crypto.SigningKey.generate(algorithm == .rs256 ? .rsa2048 : .p256)
        let header = JWS.protectedHeader(algorithm: algorithm, keyID: kid)
        let input = JWS.signingInput(header: header, payload: idTokenClaims(issuer: server.issuer, issuedAt: Date()))
        #expect(hints.read(JWS.compact(signingInput: input, signature: try key.sign(input))) == nil)
    }

    @Test func ignoresAlgNone() throws {
        let kid = try currentKid(.rs256)
        let payload = idTokenClaims(issuer: server.issuer, issuedAt: Date())
        let unsigned = Base64URL.encode(Array(#"{"alg":"none","kid":"\#(kid)"}"#.utf8)) + "." + Base64URL.encode(payload) + "."
        #expect(hints.read(unsigned) == nil)
        #expect(hints.read(forged(header: #"{"alg":"none","kid":"\#(kid)"}"#, payload: payload, signature: [0])) == nil)
        #expect(hints.read(forged(header: #"{"alg":"None","kid":"\#(kid)"}"#, payload: payload, signature: [0])) == nil)
    }

    @Test func ignoresHS256WithThePublicKeyAsTheSecret() throws {
        let kid = try currentKid(.rs256)
        let jwk = try #require(try schema.store.signingKeys.signingKeys(now: Date()).first { $0.kid == kid }?.publicJWK)
        let payload = idTokenClaims(issuer: server.issuer, issuedAt: Date())
        let header = #"{"alg":"HS256","kid":"\#(kid)","typ":"JWT"}"#
        let input = Array((Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)).utf8)
        let nBytes = try #require(
            Base64URL.decodeCanonical(
                (try? JSONValue.parse(Array(jwk.utf8)))?["n"]?.stringValue ?? ""))
        for secret in [Array(jwk.utf8), nBytes] {
            let mac = Crypto.hmacSHA256(key: secret, message: input)
            #expect(hints.read(String(decoding: input, as: UTF8.self) + "." + Base64URL.encode(mac)) == nil)
        }
    }

    @Test func ignoresTheOtherAlgorithmUnderAKid() throws {
        // An ES256 signature under the RS256 key's kid, and the RS256 token relabelled ES256.
        let rsKid = try currentKid(.rs256)
        let es = try sign(idTokenClaims(issuer: server.issuer, issuedAt: Date()), .es256)
        let esParts = es.split(separator: ".").map(String.init)
        let relabelled = Base64URL.encode(JWS.protectedHeader(algorithm: .es256, keyID: rsKid)) + "." + esParts[1] + "." + esParts[2]
        #expect(hints.read(relabelled) == nil)
    }

    @Test func ignoresAnUnknownKidAndMalformedTokensWithoutAnError() throws {
        let payload = idTokenClaims(issuer: server.issuer, issuedAt: Date())
        let key = try Crypto.SigningKey.generate(.p256)
        let input = JWS.signingInput(header: JWS.protectedHeader(algorithm: .es256, keyID: "not-a-kid"), payload: payload)
        #expect(hints.read(JWS.compact(signingInput: input, signature: try key.sign(input))) == nil)
        let valid = try sign(payload)
        for garbage in [
            "", ".", "..", "a.b.c", "a.b", valid + ".x", valid.replacingOccurrences(of: ".", with: ".="),
            String(repeating: "A", count: 40_000), "eyJ9.e30.AA", forged(header: "[]", payload: payload, signature: [1]),
            forged(header: #"{"alg":"RS256","kid":7}"#, payload: payload, signature: [1]),
            forged(header: #"{"alg":"RS256","kid":"x","crit":["exp"]}"#, payload: payload, signature: [1]),
        ] {
            #expect(hints.read(garbage) == nil)
        }
        // A kid repeated across the payload's claims is not confused for one: a non-object payload.
        let notObject = JWS.signingInput(header: JWS.protectedHeader(algorithm: .es256, keyID: "x"), payload: Array("[1]".utf8))
        #expect(hints.read(JWS.compact(signingInput: notObject, signature: [1])) == nil)
    }
}
