import Crypto
import Encoding
import Testing
import WebAuthn

/// Registration (WebAuthn Level 3 §7.1) and authentication (§7.2) over the fixed vectors of Vectors.swift
/// (a software authenticator; see make_vectors.py), with libcbor and OpenSSL as in production.
@Suite struct CeremonyTests {
    static let vectors = [("es256", es256Vector), ("eddsa", eddsaVector), ("rs256", rs256Vector)]
    static let all = vectors.map(\.1)

    @Test func registersEachAlgorithm() throws {
        let es256 = try es256Vector.register()
        #expect(es256.id == es256Vector.credentialID)
        #expect(es256.publicKey.algorithm == .es256)
        #expect(es256.signCount == 1)
        #expect(es256.aaguid == es256Vector.aaguid)
        #expect(!es256.backupEligible && !es256.backedUp)
        #expect(es256.attestationFormat == "none")
        let eddsa = try eddsaVector.register()
        #expect(eddsa.publicKey.algorithm == .eddsa)
        #expect(eddsa.backupEligible && eddsa.backedUp)
        #expect(eddsa.signCount == 0)
        let rs256 = try rs256Vector.register()
        #expect(rs256.publicKey.algorithm == .rs256)
        #expect(rs256.backupEligible && !rs256.backedUp)
    }

    @Test(arguments: all) func authenticatesEachAlgorithm(vector: Vector) throws {
        let verified = try vector.authenticate()
        #expect(verified.signCount == vector.authenticationSignCount)
        let stored = try vector.stored()
        #expect(verified.backupEligible == stored.backupEligible)
    }

    @Test(arguments: all) func refusesAnotherOrigin(vector: Vector) {
        let registration = CeremonyExpectation(
            challenge: vector.registrationChallenge, origin: "https://evil.example.com", rpIDHash: rpIDHash)
        #expect(throws: WebAuthnError.originMismatch) { try vector.register(expected: registration) }
        let authentication = CeremonyExpectation(
            challenge: vector.authenticationChallenge, origin: "https://id.example.com:8443", rpIDHash: rpIDHash)
        #expect(throws: WebAuthnError.originMismatch) { try vector.authenticate(expected: authentication) }
    }

    @Test(arguments: all) func refusesAnotherRelyingParty(vector: Vector) {
        let other = Crypto.sha256(Array("example.com".utf8))
        #expect(throws: WebAuthnError.relyingPartyMismatch) {
            try vector.register(
                expected: CeremonyExpectation(challenge: vector.registrationChallenge, origin: vectorOrigin, rpIDHash: other))
        }
        #expect(throws: WebAuthnError.relyingPartyMismatch) {
            try vector.authenticate(
                expected: CeremonyExpectation(challenge: vector.authenticationChallenge, origin: vectorOrigin, rpIDHash: other))
        }
    }

    @Test(arguments: all) func refusesAnotherChallenge(vector: Vector) {
        var challenge = vector.registrationChallenge
        challenge[0] ^= 1
        #expect(throws: WebAuthnError.challengeMismatch) {
            try vector.register(expected: CeremonyExpectation(challenge: challenge, origin: vectorOrigin, rpIDHash: rpIDHash))
        }
        #expect(throws: WebAuthnError.challengeMismatch) {
            try vector.authenticate(expected: CeremonyExpectation(challenge: challenge, origin: vectorOrigin, rpIDHash: rpIDHash))
        }
    }

    @Test(arguments: all) func refusesTheWrongCeremonyType(vector: Vector) {
        #expect(throws: WebAuthnError.wrongCeremonyType) {
            try vector.register(clientDataJSON: vector.authenticationClientDataJSON, expected: vector.authenticationExpectation)
        }
        #expect(throws: WebAuthnError.wrongCeremonyType) {
            try vector.authenticate(clientDataJSON: vector.registrationClientDataJSON, expected: vector.registrationExpectation)
        }
    }

    @Test(arguments: all) func refusesUserVerificationClear(vector: Vector) {
        #expect(throws: WebAuthnError.userNotVerified) { try vector.register(attestationObject: vector.attestationObject { $0 & ~0x04 }) }
        #expect(throws: WebAuthnError.userNotVerified) {
            try vector.authenticate(authenticatorData: vector.authenticatorData { $0 & ~0x04 })
        }
    }

    @Test(arguments: all) func refusesUserPresenceClear(vector: Vector) {
        #expect(throws: WebAuthnError.userNotPresent) { try vector.register(attestationObject: vector.attestationObject { $0 & ~0x01 }) }
        #expect(throws: WebAuthnError.userNotPresent) {
            try vector.authenticate(authenticatorData: vector.authenticatorData { $0 & ~0x01 })
        }
    }

    @Test func refusesBackedUpWithoutBackupEligibility() {
        #expect(throws: WebAuthnError.invalidBackupFlags) {
            try eddsaVector.register(attestationObject: eddsaVector.attestationObject { $0 & ~0x08 })
        }
        #expect(throws: WebAuthnError.invalidBackupFlags) {
            try es256Vector.register(attestationObject: es256Vector.attestationObject { $0 | 0x10 })
        }
    }

    @Test(arguments: all) func refusesATamperedSignature(vector: Vector) {
        var signature = vector.signature
        signature[signature.count / 2] ^= 0x01
        #expect(throws: WebAuthnError.badSignature) { try vector.authenticate(signature: signature) }
        var clientData = vector.authenticationClientDataJSON
        clientData.insert(UInt8(ascii: " "), at: 1)
        #expect(throws: WebAuthnError.badSignature) { try vector.authenticate(clientDataJSON: clientData) }
        #expect(throws: WebAuthnError.badSignature) { try vector.authenticate(authenticatorData: vector.authenticatorData { $0 | 0x20 }) }
    }

    @Test func aSignatureByAnotherCredentialDoesNotVerify() throws {
        let stored = try es256Vector.stored()
        let impostor = StoredCredential(
            id: stored.id, userHandle: stored.userHandle, publicKey: try rs256Vector.register().publicKey, signCount: 0,
            backupEligible: false)
        #expect(throws: WebAuthnError.badSignature) { try es256Vector.authenticate(stored: impostor) }
    }

    @Test(arguments: all) func refusesTrailingBytesInTheAttestationObject(vector: Vector) {
        #expect(throws: WebAuthnError.malformedAttestationObject) {
            try vector.register(attestationObject: vector.attestationObject + [0x00])
        }
        #expect(throws: WebAuthnError.malformedAttestationObject) {
            try vector.register(attestationObject: Array(vector.attestationObject.dropLast()))
        }
        #expect(throws: WebAuthnError.malformedAuthenticatorData) {
            try vector.authenticate(authenticatorData: vector.authenticatorData + [0x00])
        }
    }

    @Test(arguments: all) func refusesAnAlgorithmNotOffered(vector: Vector) throws {
        let algorithm = try vector.register().publicKey.algorithm
        #expect(throws: WebAuthnError.algorithmNotOffered) {
            try vector.register(offered: Set(COSEAlgorithm.allCases).subtracting([algorithm]))
        }
    }

    @Test func refusesACounterThatGoesBackwards() throws {
        let stored = try es256Vector.stored()
        func with(count: UInt32) -> StoredCredential {
            StoredCredential(
                id: stored.id, userHandle: stored.userHandle, publicKey: stored.publicKey, signCount: count, backupEligible: false)
        }
        #expect(try es256Vector.authenticate(stored: with(count: 4)).signCount == 5)
        #expect(try es256Vector.authenticate(stored: with(count: 0)).signCount == 5)
        #expect(throws: WebAuthnError.signCountRegressed) { try es256Vector.authenticate(stored: with(count: 5)) }
        #expect(throws: WebAuthnError.signCountRegressed) { try es256Vector.authenticate(stored: with(count: 9)) }
        // A counter of 0 (a synced passkey) never refuses, whatever was stored.
        let eddsa = try eddsaVector.stored()
        let counted = StoredCredential(
            id: eddsa.id, userHandle: eddsa.userHandle, publicKey: eddsa.publicKey, signCount: 7, backupEligible: true)
        #expect(try eddsaVector.authenticate(stored: counted).signCount == 0)
    }

    @Test(arguments: all) func refusesABackupEligibilityChange(vector: Vector) throws {
        let stored = try vector.stored()
        let flipped = StoredCredential(
            id: stored.id, userHandle: stored.userHandle, publicKey: stored.publicKey, signCount: stored.signCount,
            backupEligible: !stored.backupEligible)
        #expect(throws: WebAuthnError.backupEligibilityChanged) { try vector.authenticate(stored: flipped) }
    }

    @Test func refusesAnotherCredentialOrUser() {
        #expect(throws: WebAuthnError.unknownCredential) { try es256Vector.authenticate(credentialID: eddsaVector.credentialID) }
        #expect(throws: WebAuthnError.userHandleMismatch) { try es256Vector.authenticate(userHandle: .some(nil)) }
        #expect(throws: WebAuthnError.userHandleMismatch) { try es256Vector.authenticate(userHandle: eddsaVector.userHandle) }
    }

    @Test func refusesCrossOriginClientData() {
        let framed = Array(
            #"{"type":"webauthn.get","challenge":"\#(Base64URL.encode(es256Vector.authenticationChallenge))","origin":"https://id.example.com","crossOrigin":true}"#
                .utf8)
        #expect(throws: WebAuthnError.crossOrigin) { try es256Vector.authenticate(clientDataJSON: framed) }
        let topOrigin = Array(
            #"{"type":"webauthn.get","challenge":"\#(Base64URL.encode(es256Vector.authenticationChallenge))","origin":"https://id.example.com","topOrigin":"https://evil.example"}"#
                .utf8)
        #expect(throws: WebAuthnError.crossOrigin) { try es256Vector.authenticate(clientDataJSON: topOrigin) }
    }

    @Test func errorsHavePersonFacingSentences() {
        #expect(WebAuthnError.unknownCredential.personFacingSentence == "This passkey isn't registered here.")
        #expect(WebAuthnError.relyingPartyMismatch.personFacingSentence == "This passkey belongs to another site.")
        #expect(WebAuthnError.userNotVerified.personFacingSentence.hasPrefix("Your device didn't verify it was you."))
    }
}
