import Foundation

/// The JWS algorithms an environment's ID tokens are signed with (`idTokenSigningAlg`; docs/protocol.md,
/// OpenID Connect): RS256 (RSASSA-PKCS1-v1_5 with SHA-256, a 2048-bit or larger key) or ES256 (ECDSA on
/// P-256 with SHA-256), RFC 7518 §3.1.
public enum SigningAlgorithm: String, Sendable, Equatable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 using SHA-256 (the default).
    case rs256 = "RS256"
    /// ECDSA using P-256 and SHA-256.
    case es256 = "ES256"
}

/// Signs ID tokens with the current signing key of an algorithm (one key shared by every instance).
public protocol IDTokenSigner: Sendable {
    /// A JWS compact serialization (RFC 7515 §7.1) of `claims`, the encoded bytes of one JSON object, with
    /// the protected header `{"alg", "kid", "typ": "JWT"}` of the current key of `algorithm`.
    /// - Throws: `StoreUnavailable` when the keys cannot be read.
    func sign(claims: [UInt8], algorithm: SigningAlgorithm, now: Date) throws -> String
}
