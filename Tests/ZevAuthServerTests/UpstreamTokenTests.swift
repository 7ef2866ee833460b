import Authorize
import Crypto
import Encoding
import Foundation
import Testing

/// Discovery, JWK sets and upstream ID token verification (docs/federation.md, "Verifying an upstream ID
/// token"): the pure rules of `Authorize`, with real RS256 and ES256 signatures from `Crypto`.
@Suite struct UpstreamTokenTests {
    static let issuer = "https://appleid.apple.com"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let rsa = try! Crypto.SigningKey.generate(.rsa2048)
    static let ec = try! Crypto.SigningKey.generate(.p256)

    static func jwk(_ key: Crypto.SigningKey, kid: String, extra: [(String, JSONValue)] = []) -> JSONValue {
        switch try! key.publicParameters() {
        case .rsa(let n, let e):
            .object(
                [("kty", "RSA"), ("kid", .string(kid)), ("n", .string(Base64URL.encode(n))), ("e", .string(Base64URL.encode(e)))] + extra)
        case .p256(let x, let y):
            .object(
                [
                    ("kty", "EC"), ("crv", "P-256"), ("kid", .string(kid)), ("x", .string(Base64URL.encode(x))),
                    ("y", .string(Base64URL.encode(y))),
                ]
                    + extra)
        }
    }

    static func json(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        value.encode(to: &writer)
        return writer.bytes
    }

    static let keySet = try! UpstreamKeySet.parse(json(.object([("keys", .array([jwk(rsa, kid: "r1"), jwk(ec, kid: "e1")]))])))

    static func claims(_ changes: [(String, JSONValue?)] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("iss", .string(issuer)), ("aud", "com.acme.app"), ("exp", .int(Int(now.timeIntervalSince1970) + 600)),
            ("iat", .int(Int(now.timeIntervalSince1970) - 10)), ("sub", "001234.abcd"), ("nonce", .string(digest("raw-nonce"))),
            ("email", "x1@privaterelay.appleid.com"), ("email_verified", "true"), ("is_private_email", "true"),
        ]
        for (name, value) in changes {
            members.removeAll { $0.0 == name }
            if let value { members.append((name, value)) }
        }
        return .object(members)
    }

    static func token(
        _ claims: JSONValue = claims(), alg: String = "RS256", kid: String? = "r1", key: Crypto.SigningKey = rsa
    ) -> String {
        var header: [(String, JSONValue)] = [("alg", .string(alg))]
        if let kid { header.append(("kid", .string(kid))) }
        let input = JWS.signingInput(header: json(.object(header)), payload: json(claims))
        return JWS.compact(signingInput: input, signature: try! key.sign(input))
    }

    static func digest(_ text: String) -> String {
        Crypto.hexSHA256(text)
    }

    static let expectation = UpstreamTokenExpectation(
        providerID: "p1", issuer: issuer, audiences: ["com.acme.app", "com.acme.other"], nonce: .sha256Hex(of: "raw-nonce"))

    static func verify(_ compact: String, expecting: UpstreamTokenExpectation = expectation, at time: Date = now) throws(UpstreamFailure)
        -> UpstreamIdentity
    {
        try UpstreamIDToken.verify(
            compact, keys: keySet, expecting: expecting, now: time,
            verify: { key, input, signature in
                let parameters: Crypto.PublicKeyParameters
                switch key.material {
                case .rsa(let n, let e): parameters = .rsa(n: n, e: e)
                case .p256(let x, let y): parameters = .p256(x: x, y: y)
                }
                return Crypto.VerifyingKey(parameters)?.verify(signature, of: input) ?? false
            }, digest: digest)
    }

    static func failure(_ compact: String, expecting: UpstreamTokenExpectation = expectation, at time: Date = now) -> UpstreamFailure? {
        do {
            _ = try verify(compact, expecting: expecting, at: time)
            return nil
        } catch { return error }
    }

    // MARK: JWK sets

    @Test func keySetKeepsRSAAndP256SigningKeysAndInfersTheirAlgorithms() throws {
        #expect(Self.keySet.keys.map(\.keyID) == ["r1", "e1"])
        #expect(Self.keySet.keys.map(\.algorithm) == [.rs256, .es256])
    }

    @Test func keySetSkipsEncryptionHMACOtherCurvesAndMismatchedAlgorithms() throws {
        let set = try UpstreamKeySet.parse(
            Self.json(
                .object([
                    (
                        "keys",
                        .array([
                            Self.jwk(Self.rsa, kid: "enc", extra: [("use", "enc")]),
                            Self.jwk(Self.rsa, kid: "ps", extra: [("alg", "PS256")]),
                            Self.jwk(Self.rsa, kid: "es-on-rsa", extra: [("alg", "ES256")]),
                            .object([("kty", "oct"), ("kid", "h"), ("k", "c2VjcmV0")]),
                            .object([("kty", "EC"), ("crv", "P-384"), ("kid", "p384"), ("x", "AA"), ("y", "AA")]),
                            Self.jwk(Self.ec, kid: "good", extra: [("use", "sig"), ("alg", "ES256")]),
                        ])
                    )
                ])))
        #expect(set.keys.map(\.keyID) == ["good"])
    }

    @Test func keySetWithoutUsableKeysIsRefused() {
        #expect(throws: UpstreamFailure.jwks) { try UpstreamKeySet.parse(Array(#"{"keys":[{"kty":"oct","k":"AA"}]}"#.utf8)) }
        #expect(throws: UpstreamFailure.jwks) { try UpstreamKeySet.parse(Array("[]".utf8)) }
    }

    // MARK: Discovery

    @Test func discoveryNeedsTheExactIssuerAndHTTPSEndpoints() throws {
        let document = #"""
            {"issuer":"https://accounts.google.com","authorization_endpoint":"https://accounts.google.com/o/oauth2/v2/auth",
             "token_endpoint":"https://oauth2.googleapis.com/token","jwks_uri":"https://www.googleapis.com/oauth2/v3/certs",
             "token_endpoint_auth_methods_supported":["client_secret_post","client_secret_basic"]}
            """#
        let discovery = try UpstreamDiscovery.parse(Array(document.utf8), issuer: "https://accounts.google.com")
        #expect(discovery.jwksURI == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(discovery.clientAuthentication == .basic)
        #expect(throws: UpstreamFailure.discovery) {
            try UpstreamDiscovery.parse(Array(document.utf8), issuer: "https://accounts.google.com/")
        }
        let plain = document.replacingOccurrences(of: "https://www.googleapis.com", with: "http://www.googleapis.com")
        #expect(throws: UpstreamFailure.discovery) { try UpstreamDiscovery.parse(Array(plain.utf8), issuer: "https://accounts.google.com") }
        let postOnly = document.replacingOccurrences(of: #","client_secret_basic""#, with: "")
        #expect(try UpstreamDiscovery.parse(Array(postOnly.utf8), issuer: "https://accounts.google.com").clientAuthentication == .post)
    }

    @Test(
        arguments: [
            (nil, 3_600.0), ("max-age=60", 300.0), ("public, max-age=7200", 7_200.0), ("max-age=999999", 86_400.0), ("no-store", 300.0),
        ] as [(String?, Double)])
    func cacheLifetimeIsBounded(header: String?, seconds: Double) {
        #expect(UpstreamCaching.lifetime(cacheControl: header) == seconds)
    }

    // MARK: ID tokens

    @Test func verifiesAnAppleTokenWithStringBooleans() throws {
        let identity = try Self.verify(Self.token())
        #expect(identity.subject == "001234.abcd")
        #expect(identity.email == "x1@privaterelay.appleid.com")
        #expect(identity.emailVerified)
        #expect(identity.tokenID == Self.digest(Self.token()))
        #expect(identity.expiresAt == Self.now.timeIntervalSince1970 + 600)
    }

    @Test func verifiesAnES256TokenWithABooleanEmailVerifiedAndARawNonce() throws {
        let token = Self.token(
            Self.claims([("nonce", "raw-nonce"), ("email_verified", .bool(false))]), alg: "ES256", kid: "e1", key: Self.ec)
        let expecting = UpstreamTokenExpectation(
            providerID: "p1", issuer: Self.issuer, audiences: ["com.acme.app"], nonce: .exactly("raw-nonce"))
        #expect(try Self.verify(token, expecting: expecting).emailVerified == false)
    }

    @Test func refusesEachBrokenRule() {
        #expect(Self.failure(Self.token(Self.claims([("aud", "com.evil.app")]))) == .audience)
        #expect(Self.failure(Self.token(Self.claims([("iss", "https://appleid.apple.com/")]))) == .issuer)
        #expect(Self.failure(Self.token(Self.claims([("iss", nil)]))) == .issuer)
        #expect(Self.failure(Self.token(), at: Self.now.addingTimeInterval(600 + 301)) == .expired)
        #expect(Self.failure(Self.token(), at: Self.now.addingTimeInterval(600 + 299)) == nil)
        #expect(Self.failure(Self.token(), at: Self.now.addingTimeInterval(-311)) == .issuedInFuture)
        #expect(Self.failure(Self.token(Self.claims([("nonce", "raw-nonce")]))) == .nonce)
        #expect(Self.failure(Self.token(Self.claims([("nonce", nil)]))) == .nonce)
        #expect(Self.failure(Self.token(Self.claims([("sub", "")]))) == .malformed)
        #expect(Self.failure(Self.token(Self.claims([("email_verified", "yes")]))) == .malformed)
        #expect(Self.failure(Self.token(Self.claims([("exp", "soon")]))) == .malformed)
    }

    @Test func severalAudiencesNeedAnAuthorizedPartyThisServerAccepts() {
        let both: JSONValue = .array(["com.acme.app", "com.other.app"])
        #expect(Self.failure(Self.token(Self.claims([("aud", both)]))) == .audience)
        #expect(Self.failure(Self.token(Self.claims([("aud", both), ("azp", "com.other.app")]))) == .audience)
        #expect(Self.failure(Self.token(Self.claims([("aud", both), ("azp", "com.acme.app")]))) == nil)
    }

    @Test func refusesABadSignatureAndAnotherKeysSignature() {
        let token = Self.token()
        var signature = Array(token.split(separator: ".")[2])
        signature[5] = signature[5] == "A" ? "B" : "A"
        let tampered = token.split(separator: ".")[0..<2].joined(separator: ".") + "." + String(signature)
        #expect(Self.failure(tampered) == .signature)
        let other = try! Crypto.SigningKey.generate(.rsa2048)
        #expect(Self.failure(Self.token(key: other)) == .signature)
        #expect(Self.failure(Self.token(kid: "unknown")) == .signature)
    }

    @Test func refusesNoneHMACAndAnAlgorithmOtherThanTheKeys() throws {
        let payload = Base64URL.encode(Self.json(Self.claims()))
        let none = Base64URL.encode(Array(#"{"alg":"none","kid":"r1"}"#.utf8)) + "." + payload + "."
        #expect(Self.failure(none) == .algorithm)
        // HMAC keyed with the RSA key's public parameters (the algorithm-confusion attack, RFC 8725 §2.1).
        let header = Base64URL.encode(Array(#"{"alg":"HS256","kid":"r1"}"#.utf8))
        let input = Array((header + "." + payload).utf8)
        guard case .rsa(let n, _) = try Self.rsa.publicParameters() else { return }
        let mac = Crypto.hmacSHA256(key: n, message: input)
        #expect(Self.failure(header + "." + payload + "." + Base64URL.encode(mac)) == .algorithm)
        // An ES256 header naming the RSA key.
        #expect(Self.failure(Self.token(alg: "ES256", kid: "r1", key: Self.ec)) == .signature)
    }

    @Test func refusesWhatIsNotACompactJWS() {
        #expect(Self.failure("a.b") == .malformed)
        #expect(Self.failure("not a token") == .malformed)
    }
}
