import Crypto
import Testing

/// RS256 and ES256 keys over OpenSSL EVP: generation, PKCS#8 round trip, signatures in the JWS forms of
/// RFC 7518 §3.3 and §3.4, verification, and the public JWK parameters.
@Suite struct SigningKeyTests {
    static let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0".utf8)

    @Test(arguments: Crypto.SigningKeyType.allCases) func signsAndVerifiesItsOwnSignature(type: Crypto.SigningKeyType) throws {
        let key = try Crypto.SigningKey.generate(type)
        let signature = try key.sign(Self.message)
        #expect(signature.count == (type == .rsa2048 ? 256 : 64))
        #expect(key.verify(signature, of: Self.message))
        var tampered = Self.message
        tampered[3] ^= 1
        #expect(!key.verify(signature, of: tampered))
        var flipped = signature
        flipped[10] ^= 0x80
        #expect(!key.verify(flipped, of: Self.message))
        #expect(!key.verify([], of: Self.message))
        #expect(!key.verify(Array(signature.dropLast()), of: Self.message))
    }

    @Test(arguments: Crypto.SigningKeyType.allCases) func anotherKeysSignatureDoesNotVerify(type: Crypto.SigningKeyType) throws {
        let key = try Crypto.SigningKey.generate(type)
        let other = try Crypto.SigningKey.generate(type)
        #expect(!key.verify(try other.sign(Self.message), of: Self.message))
    }

    @Test(arguments: Crypto.SigningKeyType.allCases) func pkcs8RoundTripKeepsTheKey(type: Crypto.SigningKeyType) throws {
        let key = try Crypto.SigningKey.generate(type)
        let loaded = try Crypto.SigningKey.load(pkcs8: try key.pkcs8(), type: type)
        #expect(try loaded.publicParameters() == key.publicParameters())
        #expect(key.verify(try loaded.sign(Self.message), of: Self.message))
        #expect(loaded.verify(try key.sign(Self.message), of: Self.message))
    }

    @Test func rsaParametersAreA2048BitModulusAndExponent65537() throws {
        guard case .rsa(let n, let e) = try Crypto.SigningKey.generate(.rsa2048).publicParameters() else {
            Issue.record("an RSA key gave EC parameters")
            return
        }
        #expect(n.count == 256)
        #expect(n[0] & 0x80 != 0)
        #expect(e == [0x01, 0x00, 0x01])
    }

    @Test func ecParametersAreTwo32ByteCoordinates() throws {
        guard case .p256(let x, let y) = try Crypto.SigningKey.generate(.p256).publicParameters() else {
            Issue.record("an EC key gave RSA parameters")
            return
        }
        #expect(x.count == 32 && y.count == 32)
        #expect(x != y)
    }

    @Test func loadRefusesGarbageAndAKeyOfTheOtherType() throws {
        #expect(throws: Crypto.SigningError.notAKey) { try Crypto.SigningKey.load(pkcs8: [0x30, 0x03, 0x02, 0x01, 0x00], type: .rsa2048) }
        #expect(throws: Crypto.SigningError.notAKey) { try Crypto.SigningKey.load(pkcs8: [], type: .p256) }
        let ec = try Crypto.SigningKey.generate(.p256).pkcs8()
        #expect(throws: Crypto.SigningError.notAKey) { try Crypto.SigningKey.load(pkcs8: ec, type: .rsa2048) }
        let rsa = try Crypto.SigningKey.generate(.rsa2048).pkcs8()
        #expect(throws: Crypto.SigningError.notAKey) { try Crypto.SigningKey.load(pkcs8: rsa, type: .p256) }
    }

    @Test func pkcs8IsAPrivateKeyInfoSequence() throws {
        // RFC 5208 §5: PrivateKeyInfo ::= SEQUENCE { version INTEGER (0), … }.
        let der = try Crypto.SigningKey.generate(.p256).pkcs8()
        #expect(der[0] == 0x30)
        #expect(der.count > 60)
    }

    @Test(arguments: Crypto.SigningKeyType.allCases) func aKeyFromItsPublicParametersVerifiesOnlyItsOwnSignatures(
        type: Crypto.SigningKeyType
    ) throws {
        let key = try Crypto.SigningKey.generate(type)
        let other = try Crypto.SigningKey.generate(type)
        let verifier = try #require(Crypto.VerifyingKey(try key.publicParameters()))
        #expect(verifier.type == type)
        #expect(verifier.verify(try key.sign(Self.message), of: Self.message))
        #expect(!verifier.verify(try other.sign(Self.message), of: Self.message))
        var tampered = Self.message
        tampered[3] ^= 1
        #expect(!verifier.verify(try key.sign(Self.message), of: tampered))
    }

    @Test func verifyingKeysRefuseParametersThatAreNotAKey() {
        #expect(Crypto.VerifyingKey(.rsa(n: [], e: [1, 0, 1])) == nil)
        #expect(Crypto.VerifyingKey(.rsa(n: [UInt8](repeating: 0xC3, count: 128), e: [1, 0, 1])) == nil, "a 1024-bit modulus")
        #expect(
            Crypto.VerifyingKey(.p256(x: [UInt8](repeating: 1, count: 32), y: [UInt8](repeating: 2, count: 32))) == nil, "off the curve")
        #expect(Crypto.VerifyingKey(.p256(x: [1], y: [2])) == nil)
    }
}
