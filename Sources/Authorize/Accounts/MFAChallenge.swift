import Foundation

/// What checking a second factor needs from storage.
public protocol SecondFactorStore: Sendable {
    /// The person's TOTP factor, confirmed or not. - Throws: `StoreUnavailable`.
    func totpFactor(userID: String) throws -> TOTPFactorRecord?
    /// Records `step` as used only if it is later than the last used one, atomically (RFC 6238 §5.2).
    /// - Returns: false when it (or a later one) was used, or there is no confirmed factor.
    /// - Throws: `StoreUnavailable`.
    func useTOTPStep(userID: String, step: Int64) throws -> Bool
    /// Consumes one unused recovery code of the person with this digest, atomically.
    /// - Returns: false when there is none. - Throws: `StoreUnavailable`.
    func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool
}

/// The second factor of a sign-in (docs/protocol.md#totp), after the edge counted the attempt against the
/// account's MFA limit: a TOTP code (one step of drift; a used step never again) or an unused recovery code.
public struct VerifySecondFactor: Sendable {
    /// The answer.
    public enum Outcome: Sendable, Equatable {
        case accepted
        /// A wrong, reused or unparseable code (one answer for all).
        case rejected
        /// A TOTP code was given but the server cannot read the secret (no or another encryption key).
        case unavailable
    }

    let store: any SecondFactorStore
    let codes: any OneTimePasswords
    let sealer: (any SecretSealing)?
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: TOTP factors and recovery codes.
    ///   - codes: RFC 6238.
    ///   - sealer: AES-256-GCM under the encryption key, or nil when the server has none.
    ///   - secrets: digests recovery codes.
    public init(store: any SecondFactorStore, codes: any OneTimePasswords, sealer: (any SecretSealing)?, secrets: any Secrets) {
        self.store = store
        self.codes = codes
        self.sealer = sealer
        self.secrets = secrets
    }

    /// - Parameter code: what was typed, parsed at the edge; nil when it is neither kind of code.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(userID: String, code: SecondFactorCode?, now: Date) throws -> Outcome {
        switch code {
        case .none:
            return .rejected
        case .totp(let totp):
            guard let sealer else { return .unavailable }
            guard let factor = try store.totpFactor(userID: userID), factor.confirmed else { return .rejected }
            guard let secret = TOTPSecrets.open(factor.secretSealed, userID: userID, with: sealer) else { return .unavailable }
            guard let step = codes.matchingStep(secret: secret, code: totp.digits, atUnixSeconds: now.timeIntervalSince1970)
            else { return .rejected }
            return try store.useTOTPStep(userID: userID, step: step) ? .accepted : .rejected
        case .recovery(let recovery):
            return try store.useRecoveryCode(userID: userID, codeHash: secrets.digest(recovery.canonical), now: now)
                ? .accepted : .rejected
        }
    }
}

/// What the second-factor step's challenge needs from storage.
public protocol MFAChallengeStore: Sendable {
    /// A challenge by id, whatever its state, or nil (an id that is not a UUID included).
    /// - Throws: `StoreUnavailable`.
    func mfaChallenge(id: String) throws -> MFAChallengeRecord?
    /// Completes a live challenge of an open account and starts the browser session it earned, attaching
    /// its pending app sign-in, in one transaction. - Returns: the browser session's id, or nil when the
    /// challenge was completed, expired, or its account closed. - Throws: `StoreUnavailable`.
    func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String?
    /// The same, recording how the browser session was authenticated (`amr`, docs/protocol.md, "OpenID
    /// Connect"). A store that records no methods answers as `completeMFAChallenge(id:browserSessionTokenHash:now:)`.
    func completeMFAChallenge(id: String, browserSessionTokenHash: String, methods: AuthenticationMethods, now: Date) throws
        -> String?
}

extension MFAChallengeStore {
    /// Records no methods: completes the challenge as `completeMFAChallenge(id:browserSessionTokenHash:now:)`.
    public func completeMFAChallenge(id: String, browserSessionTokenHash: String, methods: AuthenticationMethods, now: Date) throws
        -> String?
    {
        try completeMFAChallenge(id: id, browserSessionTokenHash: browserSessionTokenHash, now: now)
    }
}

/// The challenge of the second-factor step (docs/protocol.md#totp): it lives 10 minutes, completes once,
/// and only in the browser it was issued to (its binding cookie).
public struct MFAChallenge: Sendable {
    /// Why a challenge cannot be used, each its own sentence on the page.
    public enum Problem: Error, Sendable, Equatable {
        /// No challenge has this id.
        case unknown
        /// Expired, or completed already.
        case over
        /// Issued to another browser (or this one sent no binding cookie).
        case otherBrowser
    }

    /// A completed challenge.
    public struct Completed: Sendable, Equatable {
        /// The new browser-session cookie's secret.
        public let token: String
        /// The pending app sign-in to continue to consent with, or nil for the account area.
        public let authorizationRequestID: String?
    }

    let store: any MFAChallengeStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: challenges and browser sessions.
    ///   - secrets: digests the binding, compares in constant time, mints the cookie secret.
    public init(store: any MFAChallengeStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// The live challenge `id` when it belongs to the browser holding `binding`.
    /// - Throws: `StoreUnavailable`.
    public func load(id: String?, binding: String?, now: Date) throws -> Result<MFAChallengeRecord, Problem> {
        guard let id, let challenge = try store.mfaChallenge(id: id) else { return .failure(.unknown) }
        guard !challenge.completed, challenge.expiresAt > now else { return .failure(.over) }
        guard let binding,
            secrets.constantTimeEquals(Array(secrets.digest(binding).utf8), Array(challenge.browserBindingHash.utf8))
        else { return .failure(.otherBrowser) }
        return .success(challenge)
    }

    /// Completes `challenge` after its second factor was accepted.
    /// - Parameter methods: how the person authenticated (`amr`): the password and the kind of code accepted.
    /// - Returns: the new browser session's cookie secret, or nil when the challenge ended meanwhile.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func complete(_ challenge: MFAChallengeRecord, methods: AuthenticationMethods = .passwordAndTOTP, now: Date) throws
        -> Completed?
    {
        let token = try secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        guard
            try store.completeMFAChallenge(
                id: challenge.id, browserSessionTokenHash: secrets.digest(token), methods: methods, now: now) != nil
        else { return nil }
        return Completed(token: token, authorizationRequestID: challenge.authorizationRequestID)
    }
}
