internal import COpenSSL
import Encoding

extension Crypto {
    /// Whether `signature` is a valid signature of `message` by `key`, in the form WebAuthn gives it
    /// (WebAuthn Level 3 §6.5, "Signature Formats", docs/passkeys.md, "COSE keys"):
    /// - ES256: ECDSA P-256 with SHA-256, the signature a DER `Ecdsa-Sig-Value` (RFC 3279 §2.2.3), not the
    ///   raw `r ‖ s` of a JWS; the key is `EVP_PKEY_fromdata` of the point `04 ‖ x ‖ y`, which OpenSSL
    ///   refuses when the point is not on the curve.
    /// - EdDSA: Ed25519 (RFC 8032 §5.1.7) over the message itself, the signature 64 bytes; the key is
    ///   `EVP_PKEY_new_raw_public_key` of an `x` that `COSEKey.isAcceptableEd25519` accepts (OpenSSL itself
    ///   takes small-order keys).
    /// - RS256: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2.2); the key is `EVP_PKEY_fromdata` of `n`
    ///   and `e`, at least 2048 bits.
    ///
    /// Matches `WebAuthn.SignatureVerifier`, so production passes this function to the WebAuthn checks.
    /// Never throws: a key OpenSSL refuses, or any malformed signature, is `false`.
    @Sendable public static func verifyCOSESignature(_ signature: [UInt8], of message: [UInt8], key: COSEKey) -> Bool {
        defer { ERR_clear_error() }
        guard !signature.isEmpty else { return false }
        switch key {
        case .es256(let x, let y):
            guard let built = VerifyingKey(.p256(x: x, y: y)) else { return false }
            return withExtendedLifetime(built) { digestVerify(signature, of: message, key: built.key, digest: EVP_sha256()) }
        case .rs256(let n, let e):
            guard let built = VerifyingKey(.rsa(n: n, e: e)) else { return false }
            return withExtendedLifetime(built) { digestVerify(signature, of: message, key: built.key, digest: EVP_sha256()) }
        case .ed25519(let x):
            // A small-order or non-canonical key would let a forged signature verify (COSEKey.isAcceptableEd25519).
            guard COSEKey.isAcceptableEd25519(x), signature.count == 64,
                let made = x.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) })
            else { return false }
            defer { EVP_PKEY_free(made) }
            // Ed25519 hashes inside the algorithm: no message digest is named (RFC 8032 §5.1.7).
            return digestVerify(signature, of: message, key: made, digest: nil)
        }
    }

    /// Whether a COSE key's components make a key OpenSSL accepts (for ES256: a point on P-256; for Ed25519
    /// also a canonical point not of small order, `COSEKey.isAcceptableEd25519`). Used where
    /// a key is accepted for storage, before any signature needs it.
    public static func isUsableCOSEKey(_ key: COSEKey) -> Bool {
        defer { ERR_clear_error() }
        switch key {
        case .es256(let x, let y): return VerifyingKey(.p256(x: x, y: y)) != nil
        case .rs256(let n, let e): return VerifyingKey(.rsa(n: n, e: e)) != nil
        case .ed25519(let x):
            guard COSEKey.isAcceptableEd25519(x),
                let made = x.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32) })
            else { return false }
            EVP_PKEY_free(made)
            return true
        }
    }

    /// One-shot `EVP_DigestVerify` of `signature` (in the algorithm's own encoding) over `message`.
    private static func digestVerify(_ signature: [UInt8], of message: [UInt8], key: OpaquePointer, digest: OpaquePointer?) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
