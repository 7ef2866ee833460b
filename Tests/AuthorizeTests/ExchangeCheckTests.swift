import Authorize
import PKCE
import Testing

/// With `fakeSHA256` the digest of a 43-character verifier is its first 32 bytes, so the matching
/// challenge is their base64url.
private let verifier = String(repeating: "v", count: 43)
private let challenge = PKCE.s256Challenge(for: CodeVerifier(verifier)!, sha256: fakeSHA256)
private let issued = "http://127.0.0.1:54321/cb"

private func check(redirect: String?, verifier: String?) -> OAuthErrorCode? {
    ExchangeCheck.afterConsumption(
        requestedRedirectURI: redirect, issuedRedirectURI: issued, verifier: verifier, challenge: challenge,
        sha256: fakeSHA256, constantTimeEquals: plainEquals)?.code
}

@Suite struct ExchangeCheckTests {
    @Test func matchingRedirectAndVerifierPass() {
        #expect(check(redirect: issued, verifier: verifier) == nil)
    }

    @Test(arguments: [
        (nil as String?, nil as String?, OAuthErrorCode.redirectURIRequired),
        ("", "x", .redirectURIRequired),
        ("http://127.0.0.1:54322/cb", verifier, .redirectURIMismatch),  // loopback: the port is part of it here
        ("http://127.0.0.1/cb", verifier, .redirectURIMismatch),
        ("http://127.0.0.1:54321/cb/", verifier, .redirectURIMismatch),
        ("http://127.0.0.1:54321/cb", nil, .pkceVerificationFailed),  // redirect first, then verifier
        ("http://127.0.0.1:54321/cb", "", .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "v", count: 42), .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "v", count: 43) + "+", .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "w", count: 43), .pkceVerificationFailed),
        ("http://127.0.0.1:54322/cb", nil, .redirectURIMismatch),  // mismatch beats a missing verifier
    ])
    func checksRunInOrder(redirect: String?, verifier: String?, expected: OAuthErrorCode) {
        #expect(check(redirect: redirect, verifier: verifier) == expected)
    }

    @Test func errorsCarryTheirStatus() {
        let error = ExchangeCheck.afterConsumption(
            requestedRedirectURI: issued, issuedRedirectURI: issued, verifier: nil, challenge: challenge,
            sha256: fakeSHA256, constantTimeEquals: plainEquals)
        #expect(error?.status == 400)
    }

    @Test func verifierChallengeOnlyForValidGrammar() {
        #expect(ExchangeCheck.verifierChallengeIfValid(verifier, sha256: fakeSHA256) == challenge.value)
        #expect(ExchangeCheck.verifierChallengeIfValid(nil, sha256: fakeSHA256) == nil)
        #expect(ExchangeCheck.verifierChallengeIfValid(String(repeating: "v", count: 42), sha256: fakeSHA256) == nil)
        #expect(ExchangeCheck.verifierChallengeIfValid(String(repeating: "v", count: 129), sha256: fakeSHA256) == nil)
        #expect(ExchangeCheck.verifierChallengeIfValid(verifier + "%", sha256: fakeSHA256) == nil)
    }
}
