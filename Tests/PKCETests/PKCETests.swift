import Crypto
import PKCE
import Testing

private let sha256: PKCE.SHA256 = { Crypto.sha256($0) }
private let constantTimeEquals: @Sendable ([UInt8], [UInt8]) -> Bool = { Crypto.constantTimeEquals($0, $1) }

/// RFC 7636 Appendix B.
private let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
private let rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

@Suite struct PKCETests {
    @Test func rfc7636AppendixBVector() throws {
        let verifier = try #require(CodeVerifier(rfcVerifier))
        let challenge = PKCE.s256Challenge(for: verifier, sha256: sha256)
        #expect(challenge.value == rfcChallenge)
        #expect(challenge == CodeChallenge(rfcChallenge))
    }

    @Test func rfcVerifierMatchesRfcChallenge() throws {
        let verifier = try #require(CodeVerifier(rfcVerifier))
        let challenge = try #require(CodeChallenge(rfcChallenge))
        #expect(PKCE.verify(verifier, matches: challenge, sha256: sha256, constantTimeEquals: constantTimeEquals))
    }

    @Test func wrongVerifierFails() throws {
        let challenge = try #require(CodeChallenge(rfcChallenge))
        // Same length and alphabet, last character changed.
        let wrong = try #require(CodeVerifier(String(rfcVerifier.dropLast()) + "Y"))
        #expect(!PKCE.verify(wrong, matches: challenge, sha256: sha256, constantTimeEquals: constantTimeEquals))
        let other = try #require(CodeVerifier(String(repeating: "a", count: 43)))
        #expect(!PKCE.verify(other, matches: challenge, sha256: sha256, constantTimeEquals: constantTimeEquals))
    }

    @Test(arguments: [(42, false), (43, true), (128, true), (129, false), (0, false)])
    func verifierLength(length: Int, accepted: Bool) {
        #expect((CodeVerifier(String(repeating: "A", count: length)) != nil) == accepted)
    }

    @Test func verifierAcceptsEveryUnreservedCharacter() {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(CodeVerifier(alphabet) != nil)
    }

    @Test(arguments: ["+", "/", "=", " ", "%", "é", "\n", "*"])
    func verifierRejectsForbiddenCharacter(character: String) {
        let value = String(repeating: "a", count: 42) + character
        #expect(CodeVerifier(value) == nil)
        let middle = String(repeating: "a", count: 30) + character + String(repeating: "a", count: 30)
        #expect(CodeVerifier(middle) == nil)
    }

    @Test(arguments: [
        rfcChallenge + "=",  // padding
        String(rfcChallenge.dropLast()),  // 42 characters
        rfcChallenge + "A",  // 44 characters
        String(rfcChallenge.dropLast()) + "N",  // non-zero trailing bits: 'N' = 13, low two bits 01
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM",  // standard base64 '+'
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw/cM",  // standard base64 '/'
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw cM",  // space
        "",
    ])
    func challengeRejectsNonCanonical(value: String) {
        #expect(CodeChallenge(value) == nil)
    }

    @Test func challengeAcceptsCanonicalEncodingOf32Bytes() throws {
        let challenge = try #require(CodeChallenge(rfcChallenge))
        #expect(challenge.digest.count == 32)
        // The last character may only carry zero trailing bits: 'M' (12) does, 'N' (13) does not.
        #expect(CodeChallenge(String(rfcChallenge.dropLast()) + "A") != nil)
    }
}
