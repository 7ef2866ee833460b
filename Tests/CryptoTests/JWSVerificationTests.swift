import Crypto
import Encoding
import Testing

/// `Crypto.verifyJWS`, the signature check of DPoP proofs (docs/dpop.md, "The proof"), on published and
/// recorded vectors.
@Suite struct JWSVerificationTests {
    static func bytes(_ text: String) -> [UInt8] { Base64URL.decodeCanonical(text)! }

    // RFC 8037 Appendix A.1 and A.4: the Ed25519 key and its JWS over "Example of Ed25519 signing".
    static let ed25519X = bytes("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
    static let ed25519Input = Array("eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc".utf8)
    static let ed25519Signature = bytes("hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg")

    // A 2048-bit RSA key and its PS256 and RS256 signatures of one input, recorded from Python's
    // `cryptography` (PSS with MGF1-SHA-256 and a 32-byte salt, RFC 7518 §3.5).
    static let rsaN = bytes(
        "6tKVENnDVTRZ2zNgsKEYQZJb4YG3lsKGdSbJtfjo-QcHbp3jbIyz8j8pZpfTl5UQ5CPe8N1cPVy5u3ftyu4DP7rLgrvRoGj7QY2I4A9yz9KeuiIQi9X8AuIGqk9JpUqTFsip1ppTT--jxFNN5Zxj1WxHc573d5OYv_Gv1JCVAMArQfGQuNtGd4QY0Wq7GtdFLEip7Erz2MeTgXa-grbZFTAJUZ0Y0MNuKz1JR53V7XJtFksif7QlwTk9mkqdtwF0EXgzRr2wriQzlUqBP6QcGuN5mtDvWKaE6miva12IEPB0t-0-c2Ys7Owikn0RXVasEaBontY1pC5pW8tvBoxAjw"
    )
    static let rsaE = bytes("AQAB")
    static let rsaInput = Array("eyJhbGciOiJQUzI1NiJ9.eyJodG0iOiJQT1NUIn0".utf8)
    static let ps256Signature = bytes(
        "B2d7aen0NIe2xZdq0dEwU7YK4FZtUbO5Zl3t6iCJHuGvoAWXv1g3kYYo1AXYExT9VqPt9bKVPSpBSxS1uj3XxgSCR96b-mWVY3O_V3RiyUNrrGXbk0Yo_F2wrFtjg_hLdbT2VnnaHWSPMWyKmc2cY3_f26U7w_fPGyKsecYsC7uHMI9nMsR8EZKkxaspjVv1LJa_-6xG__FdvGCuE-Ywenc04r0UUHbc-KHU9_4FtN8eJoUJXRuXSNMc_GhMedYcwDjA1JiR5k0yG3gPazivZ4dkk7CCr0kgOCOvbeNVKzRDw9gqib3Fq4T168OCbww4E09VZ462CsQ7zIj7w2BKQg"
    )
    static let rs256Signature = bytes(
        "2bfRDIGeCgTKJNIbGcfp5yuJOY4k5bTXJTbIrcA2kO-t_u5DkhxFNErvBGYmwHSO5wAztWeUHWcgjhuDM-rZYNcp2LXbQiY4wATl43h4pLTLSHNF497RV9xr9vj_A7lyIqmUqPe31xyYXJRz9RJN8omtArdRRFtC62hGpJaEO3E9NQe7uXrnymMK_eeoTe17mHdMoDwF_VS-3OrW3X8O1stjpr8B_KnxrhWICu0JT3yUEHz3Aa8YzOz3_jFyri4URzJlvbAwwakJpss6N672mrxLonIRQ81v_VYjY68KvATFXPML80Aw3uesAbrVZmDuLJwRHjcsKM2DdSrs2AZ1sg"
    )

    /// RSASSA-PKCS1-v1_5's encoded message for SHA-256 (RFC 8017 §9.2) of `message`, `length` bytes: with a
    /// public exponent of 1 it is its own valid signature, made without any private key.
    static func forgedRS256(_ message: [UInt8], length: Int = 256) -> [UInt8] {
        let digestInfo: [UInt8] = [
            0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
        ]
        let t = digestInfo + Crypto.sha256(message)
        return [0x00, 0x01] + [UInt8](repeating: 0xff, count: length - t.count - 3) + [0x00] + t
    }

    /// RSA public exponents below 3 or even are refused for every JWS algorithm (RFC 8017 §3.1); 3 and 65537
    /// are fine.
    @Test func rsaKeysWithAnExponentBelowThreeOrEvenAreRefused() {
        let forged = Self.forgedRS256(Self.rsaInput)
        for e: [UInt8] in [[1], [0, 1], [2], [1, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0], []] {
            let key = Crypto.JWKPublicKey.rsa(n: Self.rsaN, e: e)
            #expect(!Crypto.verifyJWS(forged, of: Self.rsaInput, algorithm: .rs256, key: key), "e \(e)")
            #expect(!Crypto.verifyJWS(Self.rs256Signature, of: Self.rsaInput, algorithm: .rs256, key: key))
            #expect(!Crypto.verifyJWS(Self.ps256Signature, of: Self.rsaInput, algorithm: .ps256, key: key))
            #expect(Crypto.VerifyingKey(.rsa(n: Self.rsaN, e: e)) == nil)
        }
        #expect(Crypto.VerifyingKey(.rsa(n: Self.rsaN, e: [3])) != nil)
        #expect(Crypto.VerifyingKey(.rsa(n: Self.rsaN, e: [0, 1, 0, 1])) != nil)
    }

    @Test func ed25519VerifiesTheRFC8037Vector() {
        #expect(Crypto.verifyJWS(Self.ed25519Signature, of: Self.ed25519Input, algorithm: .edDSA, key: .ed25519(x: Self.ed25519X)))
        var changed = Self.ed25519Input
        changed[changed.count - 1] ^= 1
        #expect(!Crypto.verifyJWS(Self.ed25519Signature, of: changed, algorithm: .edDSA, key: .ed25519(x: Self.ed25519X)))
    }

    @Test func ps256VerifiesAPSSSignatureAndNotAPKCS1One() {
        let key = Crypto.JWKPublicKey.rsa(n: Self.rsaN, e: Self.rsaE)
        #expect(Crypto.verifyJWS(Self.ps256Signature, of: Self.rsaInput, algorithm: .ps256, key: key))
        #expect(!Crypto.verifyJWS(Self.rs256Signature, of: Self.rsaInput, algorithm: .ps256, key: key))
        #expect(Crypto.verifyJWS(Self.rs256Signature, of: Self.rsaInput, algorithm: .rs256, key: key))
        #expect(!Crypto.verifyJWS(Self.ps256Signature, of: Self.rsaInput, algorithm: .rs256, key: key))
        var changed = Self.ps256Signature
        changed[0] ^= 1
        #expect(!Crypto.verifyJWS(changed, of: Self.rsaInput, algorithm: .ps256, key: key))
    }

    @Test func es256VerifiesWhatASigningKeySigned() throws {
        let signer = try Crypto.SigningKey.generate(.p256)
        guard case .p256(let x, let y) = try signer.publicParameters() else { return }
        let signature = try signer.sign(Self.rsaInput)
        #expect(Crypto.verifyJWS(signature, of: Self.rsaInput, algorithm: .es256, key: .p256(x: x, y: y)))
        #expect(!Crypto.verifyJWS(signature, of: Self.ed25519Input, algorithm: .es256, key: .p256(x: x, y: y)))
    }

    @Test func anAlgorithmWithAnotherKeyTypeIsRefused() {
        #expect(!Crypto.verifyJWS(Self.ed25519Signature, of: Self.ed25519Input, algorithm: .es256, key: .ed25519(x: Self.ed25519X)))
        #expect(
            !Crypto.verifyJWS(Self.ps256Signature, of: Self.rsaInput, algorithm: .edDSA, key: .rsa(n: Self.rsaN, e: Self.rsaE)))
        #expect(!Crypto.verifyJWS([], of: Self.rsaInput, algorithm: .ps256, key: .rsa(n: Self.rsaN, e: Self.rsaE)))
    }
}
