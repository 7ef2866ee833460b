import Encoding
import Foundation
import WebAuthn

/// A credential that passed registration, ready to be inserted.
public struct NewPasskey: Sendable, Equatable {
    public let credentialID: [UInt8]
    /// The `COSE_Key`, CBOR-encoded.
    public let publicKey: [UInt8]
    public let signCount: UInt32
    public let aaguid: [UInt8]
    public let backupEligible: Bool
    public let backedUp: Bool
    public let transports: [String]
    public let attestationFormat: String
    public let name: PasskeyName
}

/// What creating a passkey needs from storage.
public protocol PasskeyRegistrationStore: PasskeyChallengeStore {
    /// The account's user handle: the stored one, else `candidate`, stored now (one statement; a
    /// concurrent first creation keeps whichever was stored first). - Throws: `StoreUnavailable`.
    func passkeyUserHandle(userID: String, candidate: [UInt8]) throws -> [UInt8]
    /// The account's passkeys, oldest first. - Throws: `StoreUnavailable`.
    func passkeys(userID: String) throws -> [PasskeyRecord]
    /// Inserts a passkey. - Returns: nil when its credential ID is registered already (to any account).
    /// - Throws: `PasskeyFailure.limit` when the account holds 20 (the database's trigger decides);
    ///   `StoreUnavailable`.
    func addPasskey(_ passkey: NewPasskey, userID: String, now: Date) throws -> PasskeyRecord?
}

/// "Create a passkey", step one (WebAuthn Level 3 §5.4): the facts of `PublicKeyCredentialCreationOptions`
/// for a signed-in account, with a fresh challenge stored for this browser (docs/passkeys.md, "Creating").
public struct BeginPasskeyRegistration: Sendable {
    /// The facts the options are written from.
    public struct Options: Sendable, Equatable {
        /// The challenge (32 bytes).
        public let challenge: [UInt8]
        /// The account's user handle (32 random bytes).
        public let userHandle: [UInt8]
        /// The account's passkeys, for `excludeCredentials`.
        public let existing: [PasskeyRecord]
    }

    let store: any PasskeyRegistrationStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: challenges, handles and passkeys.
    ///   - secrets: the CSPRNG and SHA-256.
    public init(store: any PasskeyRegistrationStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Parameters:
    ///   - userID: the signed-in account.
    ///   - binding: this browser's binding secret, to which the challenge is bound.
    /// - Returns: the options' facts, or `.limit` when the account holds 20 passkeys already.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func callAsFunction(userID: String, binding: String, now: Date) throws -> Result<Options, PasskeyFailure> {
        let existing = try store.passkeys(userID: userID)
        guard existing.count < PasskeyRules.maxPerAccount else { return .failure(.limit) }
        let handle = try store.passkeyUserHandle(userID: userID, candidate: try freshChallenge(secrets))
        let challenge = try freshChallenge(secrets)
        try store.issuePasskeyChallenge(
            hash: Base16.lowercase(secrets.sha256(challenge)), purpose: .register, userID: userID, bindingHash: secrets.digest(binding),
            now: now, lifetimeSeconds: PasskeyRules.challengeLifetimeSeconds)
        return .success(Options(challenge: challenge, userHandle: handle, existing: existing))
    }
}

/// "Create a passkey", step two: the browser's `AuthenticatorAttestationResponse` checked (WebAuthn
/// Level 3 §7.1, `WebAuthn.verifyRegistration`) after its challenge is consumed for this browser and this
/// account, then stored.
public struct FinishPasskeyRegistration: Sendable {
    /// The response as received (binary fields already base64url-decoded).
    public struct Response: Sendable {
        public let clientDataJSON: [UInt8]
        public let attestationObject: [UInt8]
        /// `response.transports`, kept for `excludeCredentials`; only known values are kept.
        public let transports: [String]
        /// The name the person typed, or nil.
        public let name: PasskeyName?

        public init(clientDataJSON: [UInt8], attestationObject: [UInt8], transports: [String], name: PasskeyName?) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.transports = transports
            self.name = name
        }
    }

    /// The transports WebAuthn Level 3 §5.8.4 defines; others are dropped.
    public static let knownTransports: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]

    let store: any PasskeyRegistrationStore
    let secrets: any Secrets
    let crypto: PasskeyCrypto
    let relyingParty: RelyingParty

    /// - Parameters:
    ///   - store: challenges and passkeys.
    ///   - secrets: SHA-256 and digests.
    ///   - crypto: the WebAuthn primitives and the CBOR encoder.
    ///   - relyingParty: the RP ID and origin.
    public init(store: any PasskeyRegistrationStore, secrets: any Secrets, crypto: PasskeyCrypto, relyingParty: RelyingParty) {
        self.store = store
        self.secrets = secrets
        self.crypto = crypto
        self.relyingParty = relyingParty
    }

    /// `fmt` as kept on the record: at most 64 scalars, and "unknown" for text PostgreSQL cannot hold.
    static func storableFormat(_ format: String) -> String {
        let short = String(String.UnicodeScalarView(format.unicodeScalars.prefix(64)))
        return StorableText.isStorable(short) && !short.isEmpty ? short : "unknown"
    }

    /// - Returns: the stored passkey, or why it was refused (the challenge is used up either way).
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(_ response: Response, userID: String, binding: String, now: Date) throws -> Result<
        PasskeyRecord, PasskeyFailure
    > {
        let challenge: [UInt8]
        switch try consumeChallenge(
            clientDataJSON: response.clientDataJSON, purpose: .register, bindingHash: secrets.digest(binding), store: store,
            secrets: secrets, now: now)
        {
        case .failure(let failure): return .failure(failure)
        case .success(let consumed):
            // A challenge issued to another account (another session in this browser) is not this one's.
            guard consumed.userID == userID else { return .failure(.challengeExpired) }
            challenge = consumed.challenge
        }
        let expected = CeremonyExpectation(
            challenge: challenge, origin: relyingParty.origin, rpIDHash: secrets.sha256(Array(relyingParty.id.utf8)))
        let credential: RegisteredCredential
        do {
            credential = try WebAuthn.verifyRegistration(
                clientDataJSON: response.clientDataJSON, attestationObject: response.attestationObject, expected: expected,
                offeredAlgorithms: Set(PasskeyRules.offeredAlgorithms), primitives: crypto.primitives)
        } catch {
            return .failure(PasskeyFailure(error))
        }
        guard let key = crypto.encodeCBOR(credential.publicKey.cbor) else { return .failure(.invalid) }
        var transports: [String] = []
        for transport in response.transports where Self.knownTransports.contains(transport) && !transports.contains(transport) {
            transports.append(transport)
        }
        let passkey = NewPasskey(
            credentialID: credential.id, publicKey: key, signCount: credential.signCount, aaguid: credential.aaguid,
            backupEligible: credential.backupEligible, backedUp: credential.backedUp, transports: transports,
            attestationFormat: Self.storableFormat(credential.attestationFormat),
            name: response.name ?? PasskeyName.defaultName(aaguid: credential.aaguid))
        do {
            guard let stored = try store.addPasskey(passkey, userID: userID, now: now) else { return .failure(.exists) }
            return .success(stored)
        } catch let failure as PasskeyFailure {
            return .failure(failure)
        }
    }
}
