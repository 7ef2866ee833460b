import Crypto
import Encoding
import Testing

/// COSE keys (RFC 9052 §7, RFC 9053, RFC 8230) read from CBOR values, and signatures in WebAuthn's forms
/// verified by OpenSSL (`Crypto.verifyCOSESignature`).
@Suite struct COSEKeyTests {
    static let message = Array("authenticatorData and the client data hash".utf8)

    /// RFC 8032 §7.1, TEST 1: the public key and the signature of the empty message.
    static let rfc8032Public = bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    static let rfc8032Signature = bytes(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")

    static func bytes(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    /// The DER `Ecdsa-Sig-Value` of a raw `r ‖ s` (what a WebAuthn authenticator sends for ES256).
    static func der(raw: [UInt8]) -> [UInt8] {
        func integer(_ part: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(part.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    @Test func es256VerifiesADERSignature() throws {
        let key = try Crypto.SigningKey.generate(.p256)
        guard case .p256(let x, let y) = try key.publicParameters() else { throw Failure() }
        let cose = try COSEKey(cbor: COSEKey.es256(x: x, y: y).cbor)
        let raw = try key.sign(Self.message)
        #expect(Crypto.verifyCOSESignature(Self.der(raw: raw), of: Self.message, key: cose))
        #expect(!Crypto.verifyCOSESignature(raw, of: Self.message, key: cose))
        #expect(!Crypto.verifyCOSESignature(Self.der(raw: raw), of: Self.message + [0], key: cose))
        #expect(Crypto.isUsableCOSEKey(cose))
    }

    @Test func rs256VerifiesAPKCS1Signature() throws {
        let key = try Crypto.SigningKey.generate(.rsa2048)
        guard case .rsa(let n, let e) = try key.publicParameters() else { throw Failure() }
        let cose = try COSEKey(cbor: COSEKey.rs256(n: n, e: e).cbor)
        var signature = try key.sign(Self.message)
        #expect(Crypto.verifyCOSESignature(signature, of: Self.message, key: cose))
        signature[100] ^= 1
        #expect(!Crypto.verifyCOSESignature(signature, of: Self.message, key: cose))
    }

    @Test func ed25519VerifiesTheRFC8032Vector() throws {
        let cose = try COSEKey(cbor: COSEKey.ed25519(x: Self.rfc8032Public).cbor)
        #expect(cose == .ed25519(x: Self.rfc8032Public))
        #expect(Crypto.verifyCOSESignature(Self.rfc8032Signature, of: [], key: cose))
        #expect(!Crypto.verifyCOSESignature(Self.rfc8032Signature, of: [0], key: cose))
        #expect(!Crypto.verifyCOSESignature(Array(Self.rfc8032Signature.dropLast()), of: [], key: cose))
    }

    @Test func aPointOffTheCurveIsRefused() throws {
        let key = try Crypto.SigningKey.generate(.p256)
        guard case .p256(let x, var y) = try key.publicParameters() else { throw Failure() }
        y[31] ^= 1
        let offCurve = try COSEKey(cbor: COSEKey.es256(x: x, y: y).cbor)
        #expect(!Crypto.isUsableCOSEKey(offCurve))
        let raw = try key.sign(Self.message)
        #expect(!Crypto.verifyCOSESignature(Self.der(raw: raw), of: Self.message, key: offCurve))
    }

    @Test func aShortRSAModulusIsRefusedByOpenSSLToo() {
        // 256 bytes whose top byte makes a 2041-bit modulus: COSEKey accepts the length, OpenSSL the size not.
        let n = [0x01] + [UInt8](repeating: 0xAB, count: 255)
        #expect(!Crypto.isUsableCOSEKey(.rs256(n: n, e: [1, 0, 1])))
    }

    /// The Ed25519 encodings of points of small order (order 1, 2, 4 or 8, checked by hand with Edwards25519
    /// arithmetic), each also with the sign bit set, and non-canonical `y` ≥ p (RFC 8032 §5.1.3).
    static let weakEd25519: [[UInt8]] = {
        let high = String(repeating: "ff", count: 30) + "7f"
        let smallOrder = [
            String(repeating: "00", count: 32), "01" + String(repeating: "00", count: 31),
            "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "ec" + high, "ed" + high, "ee" + high,
        ].map(bytes)
        let signed = smallOrder.map { key -> [UInt8] in
            var key = key
            key[31] |= 0x80
            return key
        }
        let nonCanonical = ["ef" + high, "ff" + high, String(repeating: "ff", count: 32)].map(bytes)
        return smallOrder + signed + nonCanonical
    }()

    /// With R the identity (`01 00…00`) and S = 0, an Ed25519 verifier that does not check the key's order
    /// accepts the signature whenever the key times the message's hash is the identity.
    static let forgedEd25519Signature = [1] + [UInt8](repeating: 0, count: 63)

    @Test(arguments: weakEd25519)
    func refusesSmallOrderAndNonCanonicalEd25519Keys(x: [UInt8]) {
        #expect(throws: COSEKeyError.weakKey) { try COSEKey(cbor: COSEKey.ed25519(x: x).cbor) }
        #expect(!COSEKey.isAcceptableEd25519(x))
        #expect(!Crypto.isUsableCOSEKey(.ed25519(x: x)))
        let forged = (0..<64).filter { index in
            Crypto.verifyCOSESignature(Self.forgedEd25519Signature, of: Self.message + [UInt8(index)], key: .ed25519(x: x))
        }
        #expect(forged.isEmpty)
    }

    /// An RS256 passkey key with e = 1 would take the PKCS #1 encoding of any message as its signature; e
    /// below 3 or even is refused (RFC 8017 §3.1).
    @Test func rs256KeysWithAnExponentBelowThreeOrEvenAreRefused() throws {
        let n = JWSVerificationTests.rsaN
        let forged = JWSVerificationTests.forgedRS256(Self.message)
        for e: [UInt8] in [[1], [2], [1, 0, 0]] {
            let cose = try COSEKey(cbor: COSEKey.rs256(n: n, e: e).cbor)
            #expect(!Crypto.isUsableCOSEKey(cose), "e \(e)")
            #expect(!Crypto.verifyCOSESignature(forged, of: Self.message, key: cose))
        }
        #expect(Crypto.isUsableCOSEKey(.rs256(n: n, e: [3])))
        #expect(Crypto.isUsableCOSEKey(.rs256(n: n, e: [1, 0, 1])))
    }

    static let p256 = [UInt8](repeating: 1, count: 32)

    @Test(arguments: [
        (CBORValue.array([]), COSEKeyError.notAMap),
        (.map([.init(.int(3), .int(-7))]), .missingParameter(label: 1)),
        (.map([.init(.int(1), .int(2))]), .missingParameter(label: 3)),
        (.map([.init(.int(1), .int(2)), .init(.int(3), .int(-35))]), .unsupportedAlgorithm),
        (.map([.init(.int(1), .int(2)), .init(.int(3), .text("ES256"))]), .unsupportedAlgorithm),
        (
            .map([.init(.int(1), .int(1)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(p256))]),
            .keyTypeMismatch
        ),
        (
            .map([
                .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(2)), .init(.int(-2), .bytes(p256)),
                .init(.int(-3), .bytes(p256)),
            ]),
            .unsupportedCurve
        ),
        (
            .map([
                .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(p256)),
                .init(.int(-3), .bool(true)),
            ]),
            .wrongType(label: -3)
        ),
        (
            .map([
                .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(p256 + [0])),
                .init(.int(-3), .bytes(p256)),
            ]),
            .wrongLength(label: -2)
        ),
        (
            .map([.init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(p256))]),
            .missingParameter(label: -3)
        ),
        (
            .map([
                .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(p256)),
                .init(.int(-3), .bytes(p256)), .init(.int(2), .bytes([1])),
            ]),
            .unexpectedParameter
        ),
        (
            .map([.init(.int(1), .int(1)), .init(.int(3), .int(-8)), .init(.int(-1), .int(5)), .init(.int(-2), .bytes(p256))]),
            .unsupportedCurve
        ),
        (
            .map([.init(.int(1), .int(1)), .init(.int(3), .int(-8)), .init(.int(-1), .int(6)), .init(.int(-2), .bytes([1, 2]))]),
            .wrongLength(label: -2)
        ),
        (
            .map([
                .init(.int(1), .int(3)), .init(.int(3), .int(-257)), .init(.int(-1), .bytes([0] + p256 + p256)),
                .init(.int(-2), .bytes([1, 0, 1])),
            ]),
            .wrongLength(label: -1)
        ),
        (.map([.init(.text("kty"), .int(2))]), .unexpectedParameter),
    ])
    func refusesMalformedKeys(cbor: CBORValue, expected: COSEKeyError) {
        #expect(throws: expected) { try COSEKey(cbor: cbor) }
    }

    struct Failure: Error {}
}
