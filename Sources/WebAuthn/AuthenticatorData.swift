import Encoding

/// Authenticator data (WebAuthn Level 3 §6.1), parsed once from its bytes.
///
/// Layout: `rpIdHash` (32 bytes), `flags` (1), `signCount` (4, big-endian), then, when the AT flag is set,
/// attested credential data (§6.5.1: AAGUID 16 bytes, credential ID length 2 bytes big-endian, the
/// credential ID, the credential public key as one CBOR item), then, when the ED flag is set, the
/// extensions as one CBOR map. Nothing may follow: a byte after the last part is refused, as is a
/// part announced by a flag and missing.
public struct AuthenticatorData: Sendable, Equatable {
    /// The flags byte (§6.1).
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// UP, bit 0: the user was present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// UV, bit 2: the user was verified (biometric, PIN, …).
        public static let userVerified = Flags(rawValue: 0x04)
        /// BE, bit 3: the credential may be backed up (a synced passkey can be).
        public static let backupEligible = Flags(rawValue: 0x08)
        /// BS, bit 4: the credential is backed up now.
        public static let backedUp = Flags(rawValue: 0x10)
        /// AT, bit 6: attested credential data follows.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// ED, bit 7: extensions follow.
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// Attested credential data (§6.5.1).
    public struct AttestedCredential: Sendable, Equatable {
        /// The authenticator's model identifier, 16 bytes (all zero when the client hides it).
        public let aaguid: [UInt8]
        /// The credential ID, 0 to 65535 bytes as encoded (the registration refuses more than 1023).
        public let credentialID: [UInt8]
        /// The credential public key as decoded CBOR (read into a `COSEKey` by the registration).
        public let publicKey: CBORValue
    }

    /// The exact bytes (the signature covers them).
    public let bytes: [UInt8]
    /// SHA-256 of the RP ID the authenticator scoped the credential to, 32 bytes.
    public let rpIDHash: [UInt8]
    /// The flags.
    public let flags: Flags
    /// The signature counter (0 when the authenticator keeps none).
    public let signCount: UInt32
    /// The attested credential data, present exactly when AT is set.
    public let attestedCredential: AttestedCredential?
    /// The extension outputs, present exactly when ED is set (not interpreted here).
    public let extensions: CBORValue?

    /// Parses authenticator data.
    /// - Parameters:
    ///   - bytes: the authenticator data as the authenticator produced it.
    ///   - decodeCBORItem: the strict CBOR decoder (production: `CBOR.decodeItem`).
    /// - Throws: `WebAuthnError.malformedAuthenticatorData`.
    public init(_ bytes: [UInt8], decodeCBORItem: CBORItemDecoder) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw .malformedAuthenticatorData }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var cursor = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= cursor + 18 else { throw .malformedAuthenticatorData }
            let aaguid = Array(bytes[cursor..<cursor + 16])
            let idLength = Int(bytes[cursor + 16]) << 8 | Int(bytes[cursor + 17])
            cursor += 18
            guard bytes.count - cursor > idLength else { throw .malformedAuthenticatorData }
            let credentialID = Array(bytes[cursor..<cursor + idLength])
            cursor += idLength
            guard let key = try? decodeCBORItem(bytes[cursor...]) else { throw .malformedAuthenticatorData }
            cursor += key.length
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKey: key.value)
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            guard cursor < bytes.count, let decoded = try? decodeCBORItem(bytes[cursor...]), case .map = decoded.value else {
                throw .malformedAuthenticatorData
            }
            cursor += decoded.length
            extensions = decoded.value
        } else {
            extensions = nil
        }
        guard cursor == bytes.count else { throw .malformedAuthenticatorData }
    }
}

/// An attestation object (WebAuthn Level 3 §6.5): the CBOR map `{fmt, attStmt, authData}`.
///
/// The attestation statement is not verified, whatever `fmt` says: the relying party asks for `none`
/// (docs/passkeys.md, "Attestation"), trusts no authenticator model, and learns only the AAGUID, which it
/// shows as a name and never uses for a decision. `fmt` must still be a text string and `attStmt` a map,
/// and the map may hold no other key, so a malformed object is refused rather than half-read.
public struct AttestationObject: Sendable, Equatable {
    /// `fmt`, as sent (`none` when the browser honoured the request).
    public let format: String
    /// The parsed `authData`.
    public let authenticatorData: AuthenticatorData

    /// Parses an attestation object: exactly one CBOR item, nothing after it.
    /// - Throws: `WebAuthnError.malformedAttestationObject`, or `.malformedAuthenticatorData` for its
    ///   `authData`.
    public init(_ bytes: [UInt8], decodeCBORItem: CBORItemDecoder) throws(WebAuthnError) {
        guard let decoded = try? decodeCBORItem(bytes[...]), decoded.length == bytes.count, case .map(let entries) = decoded.value,
            entries.count == 3, case .text(let format)? = decoded.value[.text("fmt")], case .map? = decoded.value[.text("attStmt")],
            case .bytes(let authData)? = decoded.value[.text("authData")]
        else { throw .malformedAttestationObject }
        self.format = format
        authenticatorData = try AuthenticatorData(authData, decodeCBORItem: decodeCBORItem)
    }
}
