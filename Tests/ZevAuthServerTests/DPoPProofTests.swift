import Authorize
import Crypto
import Encoding
import Foundation
import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// The proof rules of RFC 9449 §4.3 (docs/dpop.md, "The proof"), each alone, with real ES256 signatures
/// and OpenSSL's verification; no I/O.
@Suite struct DPoPProofTests {
    static let url = "https://auth.example.com/oauth2/token"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    let prover: DPoPProver
    init() throws { prover = try DPoPProver() }

    func verify(
        _ proof: String, method: String = "POST", url: String = Self.url, accessToken: String? = nil,
        nonce: DPoPNonceRule = .notRequired, now: Date = Self.now
    ) throws(DPoPRefusal) -> VerifiedDPoPProof {
        try DPoPProofs.rules.verify(
            proof, expecting: DPoPExpectation(method: method, url: url, accessToken: accessToken), nonce: nonce, now: now)
    }

    func refusal(
        _ proof: String, method: String = "POST", url: String = Self.url, accessToken: String? = nil,
        nonce: DPoPNonceRule = .notRequired, now: Date = Self.now
    ) -> DPoPRefusal? {
        do {
            _ = try verify(proof, method: method, url: url, accessToken: accessToken, nonce: nonce, now: now)
            return nil
        } catch { return error }
    }

    @Test func aValidProofGivesItsKeysThumbprint() throws {
        let verified = try verify(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, identifier: "j1"))
        #expect(verified.thumbprint == prover.thumbprint)
        #expect(verified.identifier == "j1")
    }

    @Test func thumbprintsMatchRFC7638AndRFC9449() throws {
        // RFC 7638 §3.1's RSA key, and the EC key of RFC 9449 §4.1's example proof (its §6.1 `jkt`).
        let rsa = try #require(
            DPoPPublicKey(
                jwk: try JSONValue.parse(
                    #"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#
                )))
        #expect(rsa.thumbprint(sha256: { Crypto.sha256($0) }) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        let ec = try #require(
            DPoPPublicKey(
                jwk: try JSONValue.parse(
                    #"{"kty":"EC","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA","crv":"P-256"}"#
                )))
        #expect(ec.thumbprint(sha256: { Crypto.sha256($0) }) == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    }

    @Test func theTypeMustBeDPoPJWT() throws {
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("typ", "JWT")])) == .type)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("typ", .null)])) == .type)
    }

    @Test(arguments: ["none", "HS256", "ES384", "EdDSA", "es256"])
    func anotherAlgorithmIsRefused(_ algorithm: String) throws {
        let proof = try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("alg", .string(algorithm))])
        #expect(refusal(proof) == .algorithm)
    }

    @Test func algNoneWithoutASignatureIsRefused() throws {
        let header = Base64URL.encode(JSONWriter.encode(["typ": "dpop+jwt", "alg": "none", "jwk": prover.jwk] as JSONValue))
        let claims = Base64URL.encode(
            JSONWriter.encode(["jti": "j", "htm": "POST", "htu": .string(Self.url), "iat": 1_800_000_000] as JSONValue))
        #expect(refusal(header + "." + claims + ".") == .algorithm)
    }

    @Test(arguments: ["d", "p", "q", "dp", "dq", "qi", "k"])
    func aPrivateMemberInTheKeyIsRefused(_ member: String) throws {
        guard case .object(var members) = prover.jwk else { return }
        members.append((member, "AQAB"))
        let proof = try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("jwk", .object(members))])
        #expect(refusal(proof) == .key)
    }

    @Test func aProofSignedByAnotherKeyIsRefused() throws {
        let other = try DPoPProver()
        let proof = try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("jwk", other.jwk)])
        #expect(refusal(proof) == .signature)
        // The signature's first byte changed: still canonical base64url, no longer the key's signature.
        let proof2 = try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now)
        let dot = try #require(proof2.lastIndex(of: "."))
        let signature = proof2[proof2.index(after: dot)...]
        let tampered = proof2[...dot] + (signature.hasPrefix("A") ? "B" : "A") + signature.dropFirst()
        #expect(refusal(String(tampered)) == .signature)
    }

    /// A proof whose RSA `jwk` has e = 1, "signed" with the PKCS #1 encoding of its own signing input: no
    /// private key was needed, and the proof is refused (RFC 8017 §3.1, docs/dpop.md, "The proof").
    @Test func anRSAKeyWithExponentOneIsRefused() throws {
        let n = [UInt8](repeating: 0xc5, count: 256)
        for e: [UInt8] in [[1], [2]] {
            let jwk: JSONValue = .object([("kty", "RSA"), ("n", .string(Base64URL.encode(n))), ("e", .string(Base64URL.encode(e)))])
            let signed = try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, header: [("alg", "RS256"), ("jwk", jwk)])
            let dot = try #require(signed.lastIndex(of: "."))
            let input = Array(signed[..<dot].utf8)
            let digestInfo: [UInt8] = [
                0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
            ]
            let t = digestInfo + Crypto.sha256(input)
            let forged = [0x00, 0x01] + [UInt8](repeating: 0xff, count: 256 - t.count - 3) + [0x00] + t
            #expect(refusal(signed[...dot] + Base64URL.encode(forged)) == .signature, "e \(e)")
        }
    }

    @Test func theMethodMustMatchExactly() throws {
        #expect(refusal(try prover.proof(method: "GET", url: Self.url, issuedAt: Self.now)) == .method)
        #expect(refusal(try prover.proof(method: "post", url: Self.url, issuedAt: Self.now)) == .method)
    }

    @Test(arguments: [
        "https://AUTH.example.com/oauth2/token", "HTTPS://auth.example.com:443/oauth2/token",
        "https://auth.example.com/oauth2/token?x=1", "https://auth.example.com/oauth2/token#f",
    ])
    func theURLComparesAfterNormalisation(_ sent: String) throws {
        #expect(refusal(try prover.proof(method: "POST", url: sent, issuedAt: Self.now)) == nil)
    }

    @Test(arguments: [
        "https://evil.example/oauth2/token", "https://auth.example.com:8443/oauth2/token", "http://auth.example.com/oauth2/token",
        "https://auth.example.com/oauth2/Token", "https://auth.example.com/oauth2/token/", "https://x@auth.example.com/oauth2/token",
        "/oauth2/token",
    ])
    func anotherURLIsRefused(_ sent: String) throws {
        #expect(refusal(try prover.proof(method: "POST", url: sent, issuedAt: Self.now)) == .url)
    }

    @Test func aHostThatIsNoNameIsNoURL() {
        // Found by the dpop_proof fuzz target: a colon and a control character in the host made a
        // normalised form that did not normalise to itself.
        #expect(DPoPURL.normalised("HTTPS://Server.Example.CO\u{0}:443\u{FFFD}:/t/ken?x#y") == nil)
        #expect(DPoPURL.normalised("https://[::1]:8443/x") == "https://[::1]:8443/x")
        #expect(DPoPURL.normalised("HTTP://Auth.Example.com:80") == "http://auth.example.com/")
    }

    @Test func issuedAtMayBe60SecondsOldAnd10Ahead() throws {
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now - 60)) == nil)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now - 61)) == .issuedAt)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now + 10)) == nil)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now + 11)) == .issuedAt)
    }

    @Test func theIdentifierIsRequiredAndBounded() throws {
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, claims: [("jti", .null)])) == .malformed)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, identifier: "")) == .identifier)
        let long = String(repeating: "j", count: 257)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, identifier: long)) == .identifier)
        let longest = String(repeating: "j", count: 256)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, identifier: longest)) == nil)
    }

    @Test func aResourceRequiresTheAccessTokensHash() throws {
        let url = "https://auth.example.com/oauth2/userinfo"
        let good = try prover.proof(method: "GET", url: url, issuedAt: Self.now, accessToken: "zat_a")
        #expect(refusal(good, method: "GET", url: url, accessToken: "zat_a") == nil)
        #expect(refusal(good, method: "GET", url: url, accessToken: "zat_b") == .accessTokenHash)
        let none = try prover.proof(method: "GET", url: url, issuedAt: Self.now)
        #expect(refusal(none, method: "GET", url: url, accessToken: "zat_a") == .accessTokenHash)
    }

    @Test func aRequiredNonceMustBeAccepted() throws {
        let rule = DPoPNonceRule.required(accepts: { $0 == "n1" })
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now), nonce: rule) == .useNonce)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, nonce: "n0"), nonce: rule) == .useNonce)
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, nonce: "n1"), nonce: rule) == nil)
        // Not required: a nonce claim is ignored.
        #expect(refusal(try prover.proof(method: "POST", url: Self.url, issuedAt: Self.now, nonce: "n0")) == nil)
    }

    @Test(arguments: ["", "a.b", "a.b.c", "e30.e30.AA", "..", String(repeating: "A", count: 9000)])
    func somethingThatIsNoProofIsMalformed(_ text: String) {
        #expect(refusal(text) == .malformed)
    }

    @Test func aNonceIsAcceptedInItsPeriodAndTheNextOnly() {
        let key = Array(repeating: UInt8(7), count: 32)
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // a multiple of 300 s
        let nonce = DPoPProofs.nonce(at: start, key: key)
        #expect(DPoPProofs.nonce(at: start + 299, key: key) == nonce)
        #expect(DPoPProofs.acceptsNonce(nonce, at: start + 299, key: key))
        #expect(DPoPProofs.acceptsNonce(nonce, at: start + 599, key: key))
        #expect(!DPoPProofs.acceptsNonce(nonce, at: start + 600, key: key))
        #expect(!DPoPProofs.acceptsNonce(nonce, at: start - 1, key: key))
        #expect(!DPoPProofs.acceptsNonce(nonce, at: start, key: Array(repeating: UInt8(8), count: 32)))
        #expect(DPoPProofs.nonce(at: start + 300, key: key) != nonce)
    }

    @Test func theNonceKeyComesFromASecretEveryInstanceShares() {
        var configuration = ServerConfiguration(
            databaseURL: "postgresql:///x", issuer: "https://auth.example.com", operatorToken: String(repeating: "o", count: 32))
        let fromOperator = DPoPProofs.nonceKey(configuration)
        configuration.encryptionKey = Array(repeating: 1, count: 32)
        let fromEncryption = DPoPProofs.nonceKey(configuration)
        #expect(fromOperator != fromEncryption)
        #expect(DPoPProofs.nonceKey(configuration) == fromEncryption)
    }

    @Test func everyRefusalIsInvalidDPoPProofExceptTheNonce() {
        let all: [DPoPRefusal] = [
            .missing, .malformed, .type, .algorithm, .key, .signature, .method, .url, .issuedAt, .identifier, .accessTokenHash,
            .replayed, .otherKey,
        ]
        for refusal in all { #expect(refusal.error.code == .invalidDPoPProof) }
        #expect(DPoPRefusal.useNonce.error.code == .useDPoPNonce)
        #expect(DPoPAlgorithm.advertised == "ES256 EdDSA PS256 RS256")
    }
}
