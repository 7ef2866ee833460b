import Encoding

/// Passkey (WebAuthn Level 3) verification rules, pure: no C library, no I/O, no clock
/// (docs/passkeys.md).
///
/// Layers: this module reads JSON with `Encoding`'s strict parser and CBOR through a decoder it is given;
/// SHA-256, constant-time comparison and signature verification are given too (`Primitives`). Production
/// passes libcbor's decoder (`CBOR.decodeItem`) and OpenSSL's functions (`Crypto.sha256`,
/// `Crypto.constantTimeEquals`, `Crypto.verifyCOSESignature`, `Crypto.isUsableCOSEKey`), so the C
/// libraries stay in their one wrapper each and the rules here are decided in one place.
public enum WebAuthn {
    /// The only CBOR limits this module adds on top of the decoder's: a credential ID is at most 1023
    /// bytes (WebAuthn Level 3 §7.1).
    public static let maxCredentialIDBytes = 1023

    /// The functions the checks need from C libraries, injected by the caller.
    public struct Primitives: Sendable {
        /// SHA-256 (32-byte result).
        public let sha256: @Sendable ([UInt8]) -> [UInt8]
        /// Equality whose time depends only on the lengths.
        public let constantTimeEquals: @Sendable ([UInt8], [UInt8]) -> Bool
        /// Decodes the CBOR item at the start of some bytes (strict; see `CBORItemDecoder`).
        public let decodeCBORItem: CBORItemDecoder
        /// Whether a signature of a message verifies under a COSE key.
        public let verifySignature: SignatureVerifier
        /// Whether a COSE key's components make a usable key (an ES256 point on P-256).
        public let isUsableKey: @Sendable (COSEKey) -> Bool

        /// The set of functions.
        public init(
            sha256: @escaping @Sendable ([UInt8]) -> [UInt8], constantTimeEquals: @escaping @Sendable ([UInt8], [UInt8]) -> Bool,
            decodeCBORItem: @escaping CBORItemDecoder, verifySignature: @escaping SignatureVerifier,
            isUsableKey: @escaping @Sendable (COSEKey) -> Bool
        ) {
            self.sha256 = sha256
            self.constantTimeEquals = constantTimeEquals
            self.decodeCBORItem = decodeCBORItem
            self.verifySignature = verifySignature
            self.isUsableKey = isUsableKey
        }
    }

    /// Verifies `signature` over `message` with a stored public key, in the signature encoding of the
    /// key's algorithm as WebAuthn gives it (ES256: DER). Production passes `Crypto.verifyCOSESignature`.
    public typealias SignatureVerifier = @Sendable (_ signature: [UInt8], _ message: [UInt8], _ key: COSEKey) -> Bool
}

/// Why a passkey ceremony was refused, one case per rule (WebAuthn Level 3 §7.1 and §7.2, in their
/// order). No case carries client data, keys or signatures; `personFacingSentence` is what a page shows.
public enum WebAuthnError: Error, Equatable, Sendable {
    /// `clientDataJSON` is not strict JSON, or not an object with a string `type`, `challenge`, `origin`
    /// and an optional boolean `crossOrigin` (§5.8.1).
    case malformedClientData
    /// `type` is not `webauthn.create` (registration) or `webauthn.get` (authentication) (§7.1,
    /// §7.2).
    case wrongCeremonyType
    /// `challenge` is not the one this server issued (§7.1, §7.2).
    case challengeMismatch
    /// `origin` is not the expected origin (§7.1, §7.2).
    case originMismatch
    /// The ceremony ran in a cross-origin iframe: `crossOrigin` is true or `topOrigin` is present
    /// (§7.1, §7.2; the hosted pages are never framed).
    case crossOrigin
    /// The attestation object is not a CBOR map with a text `fmt`, a map `attStmt` and a byte string
    /// `authData` (§6.5), or its CBOR is refused (`CBORDecodingError`).
    case malformedAttestationObject
    /// The authenticator data is shorter than 37 bytes, its attested credential data or extensions are
    /// cut short or not valid CBOR, or bytes follow them (§6.1).
    case malformedAuthenticatorData
    /// A registration's authenticator data has no attested credential data (AT flag clear, §6.1).
    case missingAttestedCredential
    /// The credential ID is longer than 1023 bytes (§7.1).
    case credentialIDTooLong
    /// The credential public key is not a COSE key of an accepted shape, or OpenSSL refuses it (an ES256
    /// point not on P-256).
    case unsupportedPublicKey(COSEKeyError?)
    /// `rpIdHash` is not SHA-256 of the relying party ID (§7.1, §7.2).
    case relyingPartyMismatch
    /// The user-present flag is clear (§7.1, §7.2).
    case userNotPresent
    /// The user-verified flag is clear, and user verification is required (§7.1, §7.2).
    case userNotVerified
    /// Backup state is set while backup eligibility is clear (§6.1.3: an invalid combination).
    case invalidBackupFlags
    /// The credential's algorithm is not one the options offered (§7.1).
    case algorithmNotOffered
    /// The assertion names a credential other than the stored one (§7.2).
    case unknownCredential
    /// The assertion's user handle is absent or is not the stored credential's owner (§7.2).
    case userHandleMismatch
    /// Backup eligibility differs from what was stored at registration (§6.1.3: it never changes).
    case backupEligibilityChanged
    /// The signature does not verify over `authenticatorData ‖ SHA-256(clientDataJSON)` (§7.2).
    case badSignature
    /// Both signature counters are non-zero and the new one is not greater than the stored one: the
    /// authenticator may have been cloned (§7.2, §6.1.1).
    case signCountRegressed

    /// The sentence a hosted page shows for this refusal: never a WebAuthn exception name, never data.
    public var personFacingSentence: String {
        switch self {
        case .malformedClientData, .malformedAttestationObject, .malformedAuthenticatorData, .wrongCeremonyType:
            "Your device sent an answer we couldn't read. Try again."
        case .challengeMismatch: "This passkey request expired or was already used. Try again."
        case .originMismatch, .crossOrigin, .relyingPartyMismatch: "This passkey belongs to another site."
        case .missingAttestedCredential, .unsupportedPublicKey, .algorithmNotOffered:
            "This passkey provider isn't supported here. Try another device or password manager."
        case .credentialIDTooLong: "This passkey provider isn't supported here. Try another device or password manager."
        case .userNotPresent: "Your device didn't confirm you were there. Try again."
        case .userNotVerified: "Your device didn't verify it was you. Unlock it with your fingerprint, face or PIN and try again."
        case .invalidBackupFlags, .backupEligibilityChanged, .signCountRegressed:
            "This passkey can't be used right now. Sign in another way."
        case .unknownCredential, .userHandleMismatch: "This passkey isn't registered here."
        case .badSignature: "This passkey couldn't be checked. Try again or sign in another way."
        }
    }
}
