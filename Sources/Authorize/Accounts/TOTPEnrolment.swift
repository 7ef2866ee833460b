import Foundation

/// What TOTP enrolment needs from storage.
public protocol TOTPEnrolmentStore: Sendable {
    /// The person's TOTP factor, confirmed or not. - Throws: `StoreUnavailable`.
    func totpFactor(userID: String) throws -> TOTPFactorRecord?
    /// Starts (or restarts) an enrolment with a new sealed secret; a confirmed factor is never replaced.
    /// - Returns: false when the person has a confirmed factor. - Throws: `StoreUnavailable`.
    func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool
    /// Confirms the enrolment with `step` counted as used and replaces the recovery codes, in one transaction.
    /// - Parameter recoveryCodeHashes: `Secrets.digest` of each new code's canonical form.
    /// - Returns: false when there is no unconfirmed factor. - Throws: `StoreUnavailable`.
    func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool
}

/// Turning on two-step verification (docs/protocol.md#totp): a new secret of 20 bytes (RFC 4226 §4's
/// recommended length), sealed at rest under the server's encryption key, becomes active only after a
/// correct code, whose step then counts as used; ten new recovery codes are shown once.
public struct TOTPEnrolment: Sendable {
    /// The answer to starting an enrolment.
    public enum Started: Sendable, Equatable {
        /// Show `secret` (as an `otpauth://` link and as Base32) and ask for a code.
        case started(secret: [UInt8])
        /// A confirmed factor exists already.
        case alreadyEnabled
        /// The server has no encryption key to seal a secret (503).
        case unavailable
    }

    /// An enrolment waiting for its first code.
    public enum Pending: Sendable, Equatable {
        case pending(secret: [UInt8])
        /// None started, already confirmed, or its box does not open under this key.
        case none
        /// The server has no encryption key (503).
        case unavailable
    }

    /// The answer to a code.
    public enum Confirmed: Sendable, Equatable {
        /// On: show these codes once.
        case confirmed(recoveryCodes: [RecoveryCode])
        /// Not the code for now (or not six digits).
        case wrongCode
        /// Confirmed meanwhile, or never started.
        case notPending
    }

    /// The length of a new secret in bytes.
    public static let secretBytes = 20

    let store: any TOTPEnrolmentStore
    let codes: any OneTimePasswords
    let sealer: (any SecretSealing)?
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: TOTP factors and recovery codes.
    ///   - codes: RFC 6238 and the CSPRNG.
    ///   - sealer: AES-256-GCM under the encryption key, or nil when the server has none.
    ///   - secrets: digests recovery codes for storage.
    public init(store: any TOTPEnrolmentStore, codes: any OneTimePasswords, sealer: (any SecretSealing)?, secrets: any Secrets) {
        self.store = store
        self.codes = codes
        self.sealer = sealer
        self.secrets = secrets
    }

    /// Starts (or restarts) an enrolment. - Throws: `StoreUnavailable`, or when the CSPRNG or sealing fail.
    public func start(userID: String, now: Date) throws -> Started {
        guard let sealer else { return .unavailable }
        let secret = try codes.randomBytes(Self.secretBytes)
        let sealed = try TOTPSecrets.seal(secret, userID: userID, with: sealer)
        guard try store.beginTOTPEnrolment(userID: userID, secretSealed: sealed, now: now) else { return .alreadyEnabled }
        return .started(secret: secret)
    }

    /// The enrolment waiting for its first code. - Throws: `StoreUnavailable`.
    public func pending(userID: String) throws -> Pending {
        guard let sealer else { return .unavailable }
        guard let factor = try store.totpFactor(userID: userID), !factor.confirmed,
            let secret = TOTPSecrets.open(factor.secretSealed, userID: userID, with: sealer)
        else { return .none }
        return .pending(secret: secret)
    }

    /// Checks the first code against the pending `secret` and, when right, turns the factor on.
    /// - Parameter code: the parsed code, or nil when what was typed is not six digits.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func confirm(userID: String, secret: [UInt8], code: TOTPCode?, now: Date) throws -> Confirmed {
        guard let code, let step = codes.matchingStep(secret: secret, code: code.digits, atUnixSeconds: now.timeIntervalSince1970)
        else { return .wrongCode }
        let recovery = try RecoveryCode.generate(with: codes)
        let hashes = recovery.map { secrets.digest($0.canonical) }
        guard try store.confirmTOTP(userID: userID, step: step, recoveryCodeHashes: hashes, now: now) else { return .notPending }
        return .confirmed(recoveryCodes: recovery)
    }
}
