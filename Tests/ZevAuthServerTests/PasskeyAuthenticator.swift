import CBOR
import Crypto
import Encoding
import Foundation

/// A software passkey authenticator for the server tests (WebAuthn Level 3 §6): an ES256 key held by
/// OpenSSL (`Crypto.SigningKey`), authenticator data assembled byte by byte (§6.1), the attestation object
/// and COSE key encoded with libcbor (`CBOR.encode`), `fmt` "none". Test data, not a decoder.
final class SoftwareAuthenticator: @unchecked Sendable {
    let key: Crypto.SigningKey
    let credentialID: [UInt8]
    let aaguid: [UInt8]
    /// BE (and BS): a synced passkey.
    let synced: Bool
    let rpID: String
    let origin: String
    /// The next signature counter; 0 keeps none (as synced passkeys do).
    var signCount: UInt32
    /// The `user.id` the creation options gave.
    var userHandle: [UInt8] = []
    /// The `COSE_Key` the attestation carries instead of the ES256 key's (a key the server must refuse).
    var attestedKey: COSEKey?

    init(rpID: String, origin: String, synced: Bool, signCount: UInt32 = 1, aaguid: [UInt8] = Array(repeating: 0, count: 16)) throws {
        key = try Crypto.SigningKey.generate(.p256)
        credentialID = try Crypto.randomBytes(16)
        self.aaguid = aaguid
        self.synced = synced
        self.rpID = rpID
        self.origin = origin
        self.signCount = signCount
    }

    static func clientData(type: String, challenge: [UInt8], origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    /// Flags UP and UV, BE and BS when synced, and `extra` (AT for a registration).
    func authenticatorData(extra: UInt8 = 0, attested: [UInt8] = [], rpID: String? = nil) -> [UInt8] {
        var flags: UInt8 = 0x01 | 0x04 | extra
        if synced { flags |= 0x08 | 0x10 }
        let count = signCount
        return Crypto.sha256(Array((rpID ?? self.rpID).utf8)) + [flags]
            + [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)] + attested
    }

    /// `response` of `navigator.credentials.create()` for `challenge`.
    func attestation(challenge: [UInt8], origin: String? = nil) throws -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        guard case .p256(let x, let y) = try key.publicParameters() else { throw Unexpected() }
        let cose = try unwrap(CBOR.encode((attestedKey ?? COSEKey.es256(x: x, y: y)).cbor))
        let attested = aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + cose
        let data = authenticatorData(extra: 0x40, attested: attested)
        let object = try unwrap(
            CBOR.encode(
                .map([.init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])), .init(.text("authData"), .bytes(data))])))
        return (Self.clientData(type: "webauthn.create", challenge: challenge, origin: origin ?? self.origin), object)
    }

    /// `response` of `navigator.credentials.get()` for `challenge`; the counter moves on first.
    func assertion(challenge: [UInt8], origin: String? = nil, rpID: String? = nil, uv: Bool = true) throws -> (
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]
    ) {
        if signCount != 0 { signCount += 1 }
        let clientDataJSON = Self.clientData(type: "webauthn.get", challenge: challenge, origin: origin ?? self.origin)
        var data = authenticatorData(rpID: rpID)
        if !uv { data[32] &= ~0x04 }
        let raw = try key.sign(data + Crypto.sha256(clientDataJSON))
        return (clientDataJSON, data, Self.der(raw))
    }

    /// ECDSA's `r ‖ s` as the DER `Ecdsa-Sig-Value` WebAuthn carries (RFC 3279 §2.2.3).
    static func der(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    struct Unexpected: Error {}

    private func unwrap(_ bytes: [UInt8]?) throws -> [UInt8] {
        guard let bytes else { throw Unexpected() }
        return bytes
    }
}
