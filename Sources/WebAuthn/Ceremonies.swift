import Encoding

/// What the server expects of a ceremony's response: fixed by its configuration and by the challenge it
/// issued for this ceremony.
public struct CeremonyExpectation: Sendable {
    /// The challenge issued for this ceremony (32 random bytes here).
    public let challenge: [UInt8]
    /// The one accepted origin: the issuer's origin, e.g. `https://id.example.com` (no trailing slash).
    public let origin: String
    /// SHA-256 of the relying party ID, 32 bytes (computed once from `ZEVAUTH_PASSKEY_RP_ID`).
    public let rpIDHash: [UInt8]

    /// An expectation.
    public init(challenge: [UInt8], origin: String, rpIDHash: [UInt8]) {
        self.challenge = challenge
        self.origin = origin
        self.rpIDHash = rpIDHash
    }
}

/// A credential that passed registration, ready to be stored (WebAuthn Level 3 §7.1, "credential
/// record").
public struct RegisteredCredential: Sendable, Equatable {
    /// The credential ID, 1 to 1023 bytes.
    public let id: [UInt8]
    /// The credential public key.
    public let publicKey: COSEKey
    /// The signature counter at registration.
    public let signCount: UInt32
    /// The authenticator model's AAGUID, 16 bytes (all zero when hidden).
    public let aaguid: [UInt8]
    /// BE: whether the credential may be synced (a "synced" passkey); it never changes afterwards.
    public let backupEligible: Bool
    /// BS: whether it is backed up now.
    public let backedUp: Bool
    /// `fmt` of the attestation object, kept for the record; never used for a decision.
    public let attestationFormat: String
}

/// A stored credential, as the authentication checks need it.
public struct StoredCredential: Sendable, Equatable {
    /// The credential ID.
    public let id: [UInt8]
    /// The user handle of the account that owns it (the `user.id` given at registration).
    public let userHandle: [UInt8]
    /// The credential public key.
    public let publicKey: COSEKey
    /// The last signature counter seen.
    public let signCount: UInt32
    /// BE as registered.
    public let backupEligible: Bool

    /// A stored credential.
    public init(id: [UInt8], userHandle: [UInt8], publicKey: COSEKey, signCount: UInt32, backupEligible: Bool) {
        self.id = id
        self.userHandle = userHandle
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
    }
}

/// The parts of an `AuthenticatorAssertionResponse` (and its credential's `rawId`), as received.
public struct AssertionResponse: Sendable {
    /// `rawId`: the credential ID.
    public let credentialID: [UInt8]
    /// `clientDataJSON`, the exact bytes.
    public let clientDataJSON: [UInt8]
    /// `authenticatorData`, the exact bytes.
    public let authenticatorData: [UInt8]
    /// `signature`.
    public let signature: [UInt8]
    /// `userHandle`; nil when the authenticator sent none.
    public let userHandle: [UInt8]?

    /// A response.
    public init(credentialID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// An assertion that passed authentication: what to store back and what the sign-in records.
public struct VerifiedAssertion: Sendable, Equatable {
    /// The new signature counter to store.
    public let signCount: UInt32
    /// BE (unchanged from the stored value).
    public let backupEligible: Bool
    /// BS now (it may change between sign-ins).
    public let backedUp: Bool
}

extension WebAuthn {
    /// Verifies a registration response (WebAuthn Level 3 §7.1), in the specification's order, and returns
    /// the credential to store. User verification is always required. Not checked here, because they need
    /// storage: that the challenge was issued and not yet used, and that the credential ID is not
    /// registered already.
    /// - Parameters:
    ///   - clientDataJSON: `response.clientDataJSON`, the exact bytes.
    ///   - attestationObject: `response.attestationObject`, the exact bytes.
    ///   - expected: the issued challenge, the origin and the RP ID hash.
    ///   - offeredAlgorithms: the `pubKeyCredParams` algorithms the options offered.
    ///   - primitives: CBOR, SHA-256 and OpenSSL's key check.
    /// - Throws: `WebAuthnError`, the first rule broken.
    public static func verifyRegistration(
        clientDataJSON: [UInt8], attestationObject: [UInt8], expected: CeremonyExpectation, offeredAlgorithms: Set<COSEAlgorithm>,
        primitives: Primitives
    ) throws(WebAuthnError) -> RegisteredCredential {
        try checkClientData(clientDataJSON, type: .create, expected: expected, primitives: primitives)
        let attestation = try AttestationObject(attestationObject, decodeCBORItem: primitives.decodeCBORItem)
        let data = attestation.authenticatorData
        try checkFlags(data, expected: expected)
        guard let credential = data.attestedCredential else { throw .missingAttestedCredential }
        let key: COSEKey
        do { key = try COSEKey(cbor: credential.publicKey) } catch { throw .unsupportedPublicKey(error) }
        guard offeredAlgorithms.contains(key.algorithm) else { throw .algorithmNotOffered }
        guard primitives.isUsableKey(key) else { throw .unsupportedPublicKey(nil) }
        guard !credential.credentialID.isEmpty, credential.credentialID.count <= maxCredentialIDBytes else { throw .credentialIDTooLong }
        return RegisteredCredential(
            id: credential.credentialID, publicKey: key, signCount: data.signCount, aaguid: credential.aaguid,
            backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp),
            attestationFormat: attestation.format)
    }

    /// Verifies an authentication response (WebAuthn Level 3 §7.2) against the stored credential its
    /// `rawId` names, in the specification's order, and returns what to store back. User verification is
    /// always required. Not checked here, because it needs storage: that the challenge was issued and not
    /// yet used.
    ///
    /// The signature counter rule (docs/passkeys.md, "Signature counter"): when both the stored and the new
    /// counter are non-zero and the new one is not greater, the sign-in is refused. A counter of 0 means
    /// the authenticator keeps none (synced passkeys), so it never refuses by itself.
    /// - Parameters:
    ///   - response: the assertion as received.
    ///   - stored: the stored credential whose ID the caller looked up from `response.credentialID`.
    ///   - expected: the issued challenge, the origin and the RP ID hash.
    ///   - primitives: CBOR, SHA-256 and signature verification.
    /// - Throws: `WebAuthnError`, the first rule broken.
    public static func verifyAuthentication(
        _ response: AssertionResponse, stored: StoredCredential, expected: CeremonyExpectation, primitives: Primitives
    ) throws(WebAuthnError) -> VerifiedAssertion {
        guard response.credentialID == stored.id else { throw .unknownCredential }
        guard let handle = response.userHandle, handle == stored.userHandle else { throw .userHandleMismatch }
        try checkClientData(response.clientDataJSON, type: .get, expected: expected, primitives: primitives)
        let data = try AuthenticatorData(response.authenticatorData, decodeCBORItem: primitives.decodeCBORItem)
        try checkFlags(data, expected: expected)
        guard data.flags.contains(.backupEligible) == stored.backupEligible else { throw .backupEligibilityChanged }
        let signed = response.authenticatorData + primitives.sha256(response.clientDataJSON)
        guard primitives.verifySignature(response.signature, signed, stored.publicKey) else { throw .badSignature }
        if data.signCount != 0, stored.signCount != 0, data.signCount <= stored.signCount { throw .signCountRegressed }
        return VerifiedAssertion(
            signCount: data.signCount, backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp))
    }

    /// The client data checks both ceremonies share (§7.1 and §7.2): type, challenge (in constant time),
    /// origin (exact string equality), and no cross-origin framing.
    static func checkClientData(
        _ json: [UInt8], type: CeremonyType, expected: CeremonyExpectation, primitives: Primitives
    ) throws(WebAuthnError) {
        let client = try CollectedClientData(json: json)
        guard client.type == type else { throw .wrongCeremonyType }
        guard primitives.constantTimeEquals(client.challenge, expected.challenge) else { throw .challengeMismatch }
        guard client.origin == expected.origin else { throw .originMismatch }
        guard !client.crossOrigin, !client.hasTopOrigin else { throw .crossOrigin }
    }

    /// The authenticator data checks both ceremonies share (§7.1 and §7.2): the RP ID hash, UP, UV, and
    /// the backup flags' one invalid combination (BS without BE, §6.1.3).
    static func checkFlags(_ data: AuthenticatorData, expected: CeremonyExpectation) throws(WebAuthnError) {
        guard data.rpIDHash == expected.rpIDHash else { throw .relyingPartyMismatch }
        guard data.flags.contains(.userPresent) else { throw .userNotPresent }
        guard data.flags.contains(.userVerified) else { throw .userNotVerified }
        guard data.flags.contains(.backupEligible) || !data.flags.contains(.backedUp) else { throw .invalidBackupFlags }
    }
}
