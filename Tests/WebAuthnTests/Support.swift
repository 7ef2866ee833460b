import CBOR
import Crypto
import Encoding
import Testing
import WebAuthn

/// Bytes from hex digits (fixtures only).
func hex(_ text: String) -> [UInt8] {
    stride(from: 0, to: text.count, by: 2).map { offset in
        let start = text.index(text.startIndex, offsetBy: offset)
        return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
    }
}

/// The production primitives: libcbor through `CBOR`, OpenSSL through `Crypto`.
let primitives = WebAuthn.Primitives(
    sha256: { Crypto.sha256($0) }, constantTimeEquals: { Crypto.constantTimeEquals($0, $1) }, decodeCBORItem: CBOR.decodeItem,
    verifySignature: Crypto.verifyCOSESignature, isUsableKey: { Crypto.isUsableCOSEKey($0) })

let rpIDHash = Crypto.sha256(Array(vectorRPID.utf8))

extension Vector {
    var registrationExpectation: CeremonyExpectation {
        CeremonyExpectation(challenge: registrationChallenge, origin: vectorOrigin, rpIDHash: rpIDHash)
    }

    var authenticationExpectation: CeremonyExpectation {
        CeremonyExpectation(challenge: authenticationChallenge, origin: vectorOrigin, rpIDHash: rpIDHash)
    }

    func register(
        clientDataJSON: [UInt8]? = nil, attestationObject: [UInt8]? = nil, expected: CeremonyExpectation? = nil,
        offered: Set<COSEAlgorithm> = Set(COSEAlgorithm.allCases)
    ) throws(WebAuthnError) -> RegisteredCredential {
        try WebAuthn.verifyRegistration(
            clientDataJSON: clientDataJSON ?? registrationClientDataJSON, attestationObject: attestationObject ?? self.attestationObject,
            expected: expected ?? registrationExpectation, offeredAlgorithms: offered, primitives: primitives)
    }

    func stored() throws -> StoredCredential {
        let credential = try register()
        return StoredCredential(
            id: credential.id, userHandle: userHandle, publicKey: credential.publicKey, signCount: credential.signCount,
            backupEligible: credential.backupEligible)
    }

    func authenticate(
        credentialID: [UInt8]? = nil, clientDataJSON: [UInt8]? = nil, authenticatorData: [UInt8]? = nil, signature: [UInt8]? = nil,
        userHandle: [UInt8]?? = .none, stored: StoredCredential? = nil, expected: CeremonyExpectation? = nil
    ) throws -> VerifiedAssertion {
        let response = AssertionResponse(
            credentialID: credentialID ?? self.credentialID, clientDataJSON: clientDataJSON ?? authenticationClientDataJSON,
            authenticatorData: authenticatorData ?? self.authenticatorData, signature: signature ?? self.signature,
            userHandle: userHandle ?? self.userHandle)
        return try WebAuthn.verifyAuthentication(
            response, stored: try stored ?? self.stored(), expected: expected ?? authenticationExpectation, primitives: primitives)
    }

    /// The attestation object with the flags byte of its authenticator data replaced. The authData byte
    /// string starts right after the `authData` key; its flags are at offset 32 of it.
    func attestationObject(flags: (UInt8) -> UInt8) -> [UInt8] {
        var bytes = attestationObject
        let start = authDataOffset
        bytes[start + 32] = flags(bytes[start + 32])
        return bytes
    }

    /// Where the authenticator data starts in the attestation object (after `authData` and its head).
    var authDataOffset: Int {
        let key = Array("authData".utf8)
        let index = (0...(attestationObject.count - key.count)).first { Array(attestationObject[$0..<$0 + key.count]) == key }!
        let headByte = attestationObject[index + key.count]
        let headLength = headByte & 0x1F == 25 ? 3 : headByte & 0x1F == 24 ? 2 : 1
        return index + key.count + headLength
    }

    func authenticatorData(flags: (UInt8) -> UInt8) -> [UInt8] {
        var bytes = authenticatorData
        bytes[32] = flags(bytes[32])
        return bytes
    }
}

extension Vector: CustomTestStringConvertible {
    var testDescription: String {
        switch credentialID {
        case es256Vector.credentialID: "ES256 vector"
        case eddsaVector.credentialID: "EdDSA vector"
        default: "RS256 vector"
        }
    }
}
