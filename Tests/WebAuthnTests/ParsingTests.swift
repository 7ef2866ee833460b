import CBOR
import Encoding
import Testing
import WebAuthn

/// `clientDataJSON` (WebAuthn Level 3 §5.8.1), authenticator data (§6.1) and attestation objects (§6.5).
@Suite struct ParsingTests {
    static func client(_ text: String) throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(json: Array(text.utf8))
    }

    @Test func parsesClientData() throws {
        let client = try CollectedClientData(json: es256Vector.authenticationClientDataJSON)
        #expect(client.type == .get)
        #expect(client.challenge == es256Vector.authenticationChallenge)
        #expect(client.origin == "https://id.example.com")
        #expect(!client.crossOrigin && !client.hasTopOrigin)
        let extra = try Self.client(
            #"{"type":"webauthn.create","challenge":"AAEC","origin":"https://a","other_keys_can_be_added_here":"x"}"#)
        #expect(extra.type == .create && extra.challenge == [0, 1, 2])
        #expect(try Self.client(#"{"type":"payment.get","challenge":"AAEC","origin":"https://a"}"#).type == nil)
    }

    @Test(arguments: [
        "",
        "[]",
        #"{"type":"webauthn.get","origin":"https://a"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC=","origin":"https://a"}"#,
        #"{"type":"webauthn.get","challenge":"AA+C","origin":"https://a"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC","origin":7}"#,
        #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a","crossOrigin":"false"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a","topOrigin":true}"#,
        #"{"type":"webauthn.get","type":"webauthn.get","challenge":"AAEC","origin":"https://a"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a",}"#,
        "\u{FEFF}{\"type\":\"webauthn.get\",\"challenge\":\"AAEC\",\"origin\":\"https://a\"}",
    ])
    func refusesMalformedClientData(text: String) {
        #expect(throws: WebAuthnError.malformedClientData) { try Self.client(text) }
    }

    @Test func parsesAuthenticatorDataWithAttestedCredentialAndExtensions() throws {
        let attestation = try AttestationObject(rs256Vector.attestationObject, decodeCBORItem: CBOR.decodeItem)
        #expect(attestation.format == "none")
        let data = attestation.authenticatorData
        #expect(data.flags == [.userPresent, .userVerified, .backupEligible, .attestedCredentialData, .extensionData])
        #expect(data.attestedCredential?.credentialID == rs256Vector.credentialID)
        #expect(data.attestedCredential?.aaguid == rs256Vector.aaguid)
        #expect(data.extensions == .map([.init(.text("credProtect"), .unsigned(2))]))
        #expect(data.bytes.count > 37)
    }

    @Test func parsesAssertionAuthenticatorData() throws {
        let data = try AuthenticatorData(es256Vector.authenticatorData, decodeCBORItem: CBOR.decodeItem)
        #expect(data.signCount == 5)
        #expect(data.flags == [.userPresent, .userVerified])
        #expect(data.attestedCredential == nil && data.extensions == nil)
    }

    @Test func refusesMalformedAuthenticatorData() throws {
        let base = es256Vector.authenticatorData
        func refused(_ bytes: [UInt8]) -> Bool {
            (try? AuthenticatorData(bytes, decodeCBORItem: CBOR.decodeItem)) == nil
        }
        #expect(refused(Array(base.prefix(36))))
        #expect(refused(base + [0xA0]))
        var withExtensionsFlag = base
        withExtensionsFlag[32] |= 0x80
        #expect(refused(withExtensionsFlag))
        #expect(!refused(withExtensionsFlag + [0xA0]))
        #expect(refused(withExtensionsFlag + [0x80]))
        var withAttestedFlag = base
        withAttestedFlag[32] |= 0x40
        #expect(refused(withAttestedFlag))
        // AAGUID, a credential ID length of 4 with only 3 bytes and no key.
        #expect(refused(withAttestedFlag + [UInt8](repeating: 0, count: 16) + [0, 4, 1, 2, 3]))
        // A key that is an indefinite-length map.
        #expect(refused(withAttestedFlag + [UInt8](repeating: 0, count: 16) + [0, 1, 9, 0xBF, 0x01, 0x02, 0xFF]))
        #expect(!refused(withAttestedFlag + [UInt8](repeating: 0, count: 16) + [0, 1, 9, 0xA1, 0x01, 0x02]))
    }

    @Test func refusesACredentialIDLongerThan1023Bytes() throws {
        var data = Array(es256Vector.authenticatorData.prefix(37))
        data[32] |= 0x40
        // The vector's own key: the last 77 bytes of its attestation object.
        let encodedKey = Array(es256Vector.attestationObject.suffix(77))
        #expect(try COSEKey(cbor: CBOR.decode(encodedKey)).algorithm == .es256)
        let long = data + [UInt8](repeating: 0, count: 16) + [0x04, 0x00] + [UInt8](repeating: 7, count: 1024) + encodedKey
        let attestation =
            [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xA0]
            + [0x68] + Array("authData".utf8) + [0x59, UInt8(long.count >> 8), UInt8(long.count & 0xFF)] + long
        #expect(throws: WebAuthnError.credentialIDTooLong) { try es256Vector.register(attestationObject: attestation) }
    }

    @Test func refusesMalformedAttestationObjects() {
        func refused(_ bytes: [UInt8]) -> Bool {
            (try? AttestationObject(bytes, decodeCBORItem: CBOR.decodeItem)) == nil
        }
        #expect(!refused(es256Vector.attestationObject))
        #expect(refused([0xA0]))
        #expect(refused([0x80]))
        // fmt not a text string; attStmt not a map.
        #expect(
            refused(
                [0xA3, 0x63] + Array("fmt".utf8) + [0x01, 0x67] + Array("attStmt".utf8) + [0xA0, 0x68] + Array("authData".utf8) + [0x40]))
        #expect(
            refused(
                [0xA3, 0x63] + Array("fmt".utf8) + [0x60, 0x67] + Array("attStmt".utf8) + [0x80, 0x68] + Array("authData".utf8) + [0x40]))
    }
}
