internal import COpenSSL

extension Crypto {
    /// The asymmetric JWS algorithms a client's proof may be signed with (RFC 7518 §3.3–§3.5, RFC 8037 §3.1;
    /// docs/dpop.md, "The proof").
    public enum JWSAlgorithm: String, Sendable, Equatable, CaseIterable {
        /// ECDSA P-256 with SHA-256, the signature the 64-byte `r ‖ s`.
        case es256 = "ES256"
        /// Ed25519 (RFC 8032), the signature 64 bytes.
        case edDSA = "EdDSA"
        /// RSASSA-PSS with SHA-256, MGF1 with SHA-256 and a 32-byte salt (RFC 7518 §3.5).
        case ps256 = "PS256"
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256 = "RS256"
    }

    /// A public key as a JWK carries it, each member the raw big-endian bytes (RFC 7518 §6.2.1, §6.3.1;
    /// RFC 8037 §2).
    public enum JWKPublicKey: Sendable, Equatable {
        /// `kty: "EC"`, `crv: "P-256"`: `x` and `y`, 32 bytes each.
        case p256(x: [UInt8], y: [UInt8])
        /// `kty: "OKP"`, `crv: "Ed25519"`: `x`, 32 bytes.
        case ed25519(x: [UInt8])
        /// `kty: "RSA"`: `n` and `e`; the modulus at least 2048 bits.
        case rsa(n: [UInt8], e: [UInt8])
    }

    /// Whether `signature` is the JWS signature (RFC 7515 §5.2) of `message` under `algorithm` by the private
    /// half of `key`. A key of another type than the algorithm's, a key OpenSSL refuses (a point off the
    /// curve, an RSA modulus under 2048 bits) or a malformed signature is `false`; never throws.
    /// PS256 sets OpenSSL's PSS padding, a 32-byte salt and MGF1 with SHA-256 on the verification context
    /// (`EVP_PKEY_CTX_set_rsa_padding`, `…_set_rsa_pss_saltlen`, `…_set_rsa_mgf1_md`).
    public static func verifyJWS(_ signature: [UInt8], of message: [UInt8], algorithm: JWSAlgorithm, key: JWKPublicKey) -> Bool {
        defer { ERR_clear_error() }
        switch (algorithm, key) {
        case (.es256, .p256(let x, let y)):
            guard let built = VerifyingKey(.p256(x: x, y: y)) else { return false }
            return built.verify(signature, of: message)
        case (.rs256, .rsa(let n, let e)):
            guard let built = VerifyingKey(.rsa(n: n, e: e)) else { return false }
            return built.verify(signature, of: message)
        case (.ps256, .rsa(let n, let e)):
            guard !signature.isEmpty, let built = VerifyingKey(.rsa(n: n, e: e)) else { return false }
            return withExtendedLifetime(built) { verifyPSS(signature, of: message, key: built.key) }
        case (.edDSA, .ed25519):
            return verifyCOSESignature(signature, of: message, key: .ed25519(x: keyBytes(key)))
        default:
            return false
        }
    }

    private static func keyBytes(_ key: JWKPublicKey) -> [UInt8] {
        if case .ed25519(let x) = key { return x }
        return []
    }

    /// RSASSA-PSS (RFC 8017 §8.1.2) with SHA-256, MGF1-SHA-256 and a 32-byte salt.
    private static func verifyPSS(_ signature: [UInt8], of message: [UInt8], key: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, EVP_sha256(), nil, key) == 1, let keyContext,
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
            EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, 32) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, EVP_sha256()) == 1
        else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
