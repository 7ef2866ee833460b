import Encoding
import Foundation
import WebAuthn

/// A stored credential as a sign-in needs it, with its owner.
public struct PasskeyForSignIn: Sendable {
    /// The row id.
    public let id: String
    /// The owning account (open).
    public let user: UserRecord
    /// The owner's user handle.
    public let userHandle: [UInt8]
    /// The credential ID.
    public let credentialID: [UInt8]
    /// The `COSE_Key` as stored (CBOR).
    public let publicKey: [UInt8]
    public let signCount: UInt32
    public let backupEligible: Bool

    public init(
        id: String, user: UserRecord, userHandle: [UInt8], credentialID: [UInt8], publicKey: [UInt8], signCount: UInt32,
        backupEligible: Bool
    ) {
        self.id = id
        self.user = user
        self.userHandle = userHandle
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
    }
}

/// What signing in with a passkey needs from storage.
public protocol PasskeySignInStore: PasskeyChallengeStore {
    /// The credential with this ID whose account is open, or nil. - Throws: `StoreUnavailable`.
    func passkeyForSignIn(credentialID: [UInt8]) throws -> PasskeyForSignIn?
    /// Stores a verified assertion's counter and BS, and when it was used. - Throws: `StoreUnavailable`.
    func recordPasskeyUse(id: String, signCount: UInt32, backedUp: Bool, now: Date) throws
    /// Starts a ZevID browser session under the digest of its cookie secret, authenticated by `methods`
    /// (`amr`). - Returns: its id. - Throws: `StoreUnavailable`.
    func createBrowserSession(tokenHash: String, userID: String, now: Date, methods: AuthenticationMethods) throws -> String
}

/// "Sign in with a passkey", step one: a challenge for a discoverable credential (empty
/// `allowCredentials`), stored for this browser.
public struct BeginPasskeySignIn: Sendable {
    let store: any PasskeyChallengeStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: the challenges.
    ///   - secrets: the CSPRNG and SHA-256.
    public init(store: any PasskeyChallengeStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Returns: the challenge (32 bytes).
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func callAsFunction(binding: String, now: Date) throws -> [UInt8] {
        let challenge = try freshChallenge(secrets)
        try store.issuePasskeyChallenge(
            hash: Base16.lowercase(secrets.sha256(challenge)), purpose: .authenticate, userID: nil,
            bindingHash: secrets.digest(binding), now: now, lifetimeSeconds: PasskeyRules.challengeLifetimeSeconds)
        return challenge
    }
}

/// "Sign in with a passkey", step two (WebAuthn Level 3 §7.2): the challenge consumed for this browser,
/// the credential looked up by `rawId`, the assertion verified (`WebAuthn.verifyAuthentication`), the new
/// counter stored, and a browser session started. A passkey is two factors (possession and the device's
/// user verification), so no TOTP step follows; `amr` is `hwk` for a device-bound credential (BE clear),
/// `swk` for a synced one, with `user` and `mfa` (RFC 8176 §2).
public struct FinishPasskeySignIn: Sendable {
    /// The outcome.
    public enum Outcome: Sendable, Equatable {
        /// Signed in: the browser-session cookie's secret and the session's id.
        case signedIn(user: UserRecord, token: String, browserSessionID: String, methods: AuthenticationMethods)
        /// The signature counter went backwards: refused; the caller records it and tells the person.
        case counterRegressed(user: UserRecord, passkeyID: String)
        /// Refused for another reason.
        case refused(PasskeyFailure)
    }

    let store: any PasskeySignInStore
    let secrets: any Secrets
    let crypto: PasskeyCrypto
    let relyingParty: RelyingParty

    /// - Parameters:
    ///   - store: challenges, credentials and browser sessions.
    ///   - secrets: SHA-256, digests and the session cookie's secret.
    ///   - crypto: the WebAuthn primitives.
    ///   - relyingParty: the RP ID and origin.
    public init(store: any PasskeySignInStore, secrets: any Secrets, crypto: PasskeyCrypto, relyingParty: RelyingParty) {
        self.store = store
        self.secrets = secrets
        self.crypto = crypto
        self.relyingParty = relyingParty
    }

    /// - Parameters:
    ///   - response: the assertion as received.
    ///   - binding: this browser's binding secret, to which the challenge was bound.
    ///   - requireVerifiedEmail: the pending sign-in's environment admits verified addresses only; an
    ///     unverified account is refused (`emailUnverified`) before any session starts.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func callAsFunction(_ response: AssertionResponse, binding: String, requireVerifiedEmail: Bool, now: Date) throws -> Outcome {
        let challenge: [UInt8]
        switch try consumeChallenge(
            clientDataJSON: response.clientDataJSON, purpose: .authenticate, bindingHash: secrets.digest(binding), store: store,
            secrets: secrets, now: now)
        {
        case .failure(let failure): return .refused(failure)
        case .success(let consumed): challenge = consumed.challenge
        }
        guard let found = try store.passkeyForSignIn(credentialID: response.credentialID) else { return .refused(.unknown) }
        guard let key = crypto.key(found.publicKey) else { return .refused(.invalid) }
        let stored = StoredCredential(
            id: found.credentialID, userHandle: found.userHandle, publicKey: key, signCount: found.signCount,
            backupEligible: found.backupEligible)
        let expected = CeremonyExpectation(
            challenge: challenge, origin: relyingParty.origin, rpIDHash: secrets.sha256(Array(relyingParty.id.utf8)))
        let verified: VerifiedAssertion
        do {
            verified = try WebAuthn.verifyAuthentication(response, stored: stored, expected: expected, primitives: crypto.primitives)
        } catch .signCountRegressed {
            return .counterRegressed(user: found.user, passkeyID: found.id)
        } catch {
            return .refused(PasskeyFailure(error))
        }
        if requireVerifiedEmail && !found.user.emailVerified { return .refused(.emailUnverified) }
        try store.recordPasskeyUse(id: found.id, signCount: verified.signCount, backedUp: verified.backedUp, now: now)
        let methods: AuthenticationMethods = verified.backupEligible ? .syncedPasskey : .deviceBoundPasskey
        let token = try secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        let id = try store.createBrowserSession(tokenHash: secrets.digest(token), userID: found.user.id, now: now, methods: methods)
        return .signedIn(user: found.user, token: token, browserSessionID: id, methods: methods)
    }
}
