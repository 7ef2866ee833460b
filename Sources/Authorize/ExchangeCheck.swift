import PKCE

/// The exchange's checks that run after the code is consumed (docs/protocol.md#exchange-row-4,
/// docs/protocol.md#exchange-row-5, docs/protocol.md#exchange-row-6).
///
/// Pure: the store consumes the code atomically and hands over what the start recorded; this decides.
public enum ExchangeCheck {
    /// Checks the redirect URI and the verifier against what the code was issued for, in the contract's
    /// order.
    /// - Parameters:
    ///   - requestedRedirectURI: `redirectUri` / `redirect_uri` as sent; `nil` or empty counts as missing.
    ///   - issuedRedirectURI: the redirect URI the start accepted (as requested there, port included).
    ///   - verifier: `codeVerifier` / `code_verifier` as sent; `nil` when missing or JSON `null`.
    ///   - challenge: the challenge stored at the start.
    ///   - sha256: SHA-256 (`Crypto.sha256`).
    ///   - constantTimeEquals: constant-time comparison (`Crypto.constantTimeEquals`).
    /// - Returns: `nil` when the exchange may proceed; otherwise 400 `redirect_uri_required`
    ///   (RFC 6749 §4.1.3), 400 `redirect_uri_mismatch` (byte-for-byte, RFC 6749 §4.1.3: "identical"),
    ///   or 400 `pkce_verification_failed` (RFC 7636 §4.6), the first that applies.
    public static func afterConsumption(
        requestedRedirectURI: String?, issuedRedirectURI: String, verifier: String?, challenge: CodeChallenge,
        sha256: PKCE.SHA256, constantTimeEquals: @Sendable ([UInt8], [UInt8]) -> Bool
    ) -> OAuthError? {
        guard let requestedRedirectURI, !requestedRedirectURI.isEmpty else {
            return OAuthError(.redirectURIRequired, "redirectUri is required and must equal the one sent to the start.")
        }
        guard requestedRedirectURI.utf8.elementsEqual(issuedRedirectURI.utf8) else {
            return OAuthError(.redirectURIMismatch, "redirectUri differs from the one the code was issued for.")
        }
        guard let verifier = verifier.flatMap(CodeVerifier.init),
            PKCE.verify(verifier, matches: challenge, sha256: sha256, constantTimeEquals: constantTimeEquals)
        else {
            return OAuthError(.pkceVerificationFailed, "The code verifier does not match the code challenge.")
        }
        return nil
    }

    /// The S256 challenge of a presented verifier, when its grammar is valid (RFC 7636 §4.1, §4.2), for the
    /// SQL layer to compare with the stored challenge inside the consuming statement.
    /// - Parameters:
    ///   - verifier: the verifier as sent, or `nil`.
    ///   - sha256: SHA-256 (`Crypto.sha256`).
    /// - Returns: the 43-character challenge, or `nil` when the verifier is missing or malformed.
    public static func verifierChallengeIfValid(_ verifier: String?, sha256: PKCE.SHA256) -> String? {
        guard let verifier = verifier.flatMap(CodeVerifier.init) else { return nil }
        return PKCE.s256Challenge(for: verifier, sha256: sha256).value
    }
}
