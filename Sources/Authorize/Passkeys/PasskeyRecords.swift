import Encoding
import Foundation
import WebAuthn

/// The passkey rules the hosted pages and the store share (docs/passkeys.md, "Limits").
public enum PasskeyRules {
    /// Passkeys one account may hold; PostgreSQL enforces it too (sql/022, constraint `passkey_limit`).
    public static let maxPerAccount = 20
    /// A challenge's size in bytes (WebAuthn Level 3 §13.4.3 asks for at least 16).
    public static let challengeBytes = 32
    /// How long a challenge may be answered, in seconds; also the `timeout` the options give the browser.
    public static let challengeLifetimeSeconds: Double = 300
    /// How long "Not now" on the offer after a sign-in holds, in seconds (30 days).
    public static let offerSkipSeconds: Double = 30 * 86_400
    /// How recent a sign-in must be to remove a passkey, in seconds (10 minutes).
    public static let recentSignInSeconds: Double = 600
    /// The size of an account's user handle, in bytes (WebAuthn Level 3 §5.4.3: at most 64, random).
    public static let userHandleBytes = 32
    /// The algorithms the creation options offer, in their order of preference (`pubKeyCredParams`).
    public static let offeredAlgorithms: [COSEAlgorithm] = [.es256, .eddsa, .rs256]
    /// `rp.name` of the creation options.
    public static let relyingPartyName = "ZevID"
}

/// What a ceremony is for: the `purpose` column of a challenge.
public enum PasskeyPurpose: String, Sendable, Equatable {
    case register
    case authenticate
}

/// A passkey as the account page lists it: never its key.
public struct PasskeyRecord: Sendable, Equatable {
    /// The row id (a UUID), which the rename and remove forms name.
    public let id: String
    /// The credential ID the authenticator chose (1 to 1023 bytes).
    public let credentialID: [UInt8]
    /// The person's name for it (`PasskeyName`).
    public let name: String
    /// The authenticator model's AAGUID (16 bytes; all zero when hidden).
    public let aaguid: [UInt8]
    /// BE: the passkey may be synced to the person's other devices.
    public let backupEligible: Bool
    /// BS: it is backed up now.
    public let backedUp: Bool
    /// The transports the browser reported at creation (`usb`, `internal`, `hybrid`, …).
    public let transports: [String]
    public let createdAt: Date
    public let lastUsedAt: Date?

    /// A record (the store reads them; tests build them).
    public init(
        id: String, credentialID: [UInt8], name: String, aaguid: [UInt8], backupEligible: Bool, backedUp: Bool, transports: [String],
        createdAt: Date, lastUsedAt: Date?
    ) {
        self.id = id
        self.credentialID = credentialID
        self.name = name
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.transports = transports
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    /// The provider's name from the AAGUID (`PasskeyProviders`), else "Passkey".
    public var provider: String { PasskeyProviders.name(aaguid: aaguid) }

    /// "Synced" for a backup-eligible passkey, "This device only" for a device-bound one (BE, §6.1.3).
    public var syncLabel: String { backupEligible ? "Synced" : "This device only" }
}

/// Names of passkey providers by AAGUID (WebAuthn Level 3 §6.5.1), from the providers' own published
/// values as the community list collects them: `aaguid.json` of the GitHub repository
/// `passkeydeveloper/passkey-authenticator-aaguids` (docs/passkeys.md, "Provider names"). Only the
/// well-known providers are kept. Shown only; never a decision (attestation is not verified,
/// docs/passkeys.md, "Attestation").
public enum PasskeyProviders {
    /// Lower-case hyphenated AAGUID → provider name. Every AAGUID is the list's; the names are the list's
    /// too, except `fbfc3007-…`, which the list now calls "Apple Passwords" (the app's name since iOS 18) and
    /// which is shown as "iCloud Keychain", where those passkeys are kept and sync.
    public static let names: [String: String] = [
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
        "dd4ec289-e01d-41c9-bb89-70fa845d4bf2": "iCloud Keychain (Managed)",
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
        "6028b017-b1d4-4c02-b4b3-afcdafc96bb2": "Windows Hello",
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
        "531126d6-e717-415c-9320-3d9aa6981239": "Dashlane",
        "53414d53-554e-4700-0000-000000000000": "Samsung Pass",
        "fdb141b2-5d84-443e-8a35-4698c205a502": "KeePassXC",
        "50726f74-6f6e-5061-7373-50726f746f6e": "Proton Pass",
    ]

    /// The provider's name for a 16-byte AAGUID, or "Passkey" when unknown, all zero or malformed.
    public static func name(aaguid: [UInt8]) -> String {
        guard aaguid.count == 16 else { return "Passkey" }
        let hex = aaguid.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }
            .joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return names[parts.joined(separator: "-")] ?? "Passkey"
    }
}

/// A passkey's name as the person gives it: 1 to 64 Unicode scalars (as PostgreSQL's `char_length` counts)
/// after trimming white space, no control or text-direction characters (the `DisplayName` rule, shorter).
public struct PasskeyName: Sendable, Equatable {
    /// The name.
    public let value: String
    /// The accepted lengths, in characters.
    public static let lengthRange = 1...64

    /// - Returns: nil when empty after trimming, longer than 64 characters, or holding a control or
    ///   text-direction character.
    public init?(_ raw: String) {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.lengthRange.contains(trimmed.unicodeScalars.count), DisplayName(trimmed) != nil else { return nil }
        value = trimmed
    }

    /// The name a new passkey gets when the person gives none: its provider's.
    public static func defaultName(aaguid: [UInt8]) -> PasskeyName {
        PasskeyName(PasskeyProviders.name(aaguid: aaguid)) ?? PasskeyName(uncheckedValue: "Passkey")
    }

    private init(uncheckedValue: String) { value = uncheckedValue }
}

/// Why a passkey ceremony was refused, as the pages and the JSON answers name it (docs/passkeys.md,
/// "Errors"): a stable `error` code and the sentence the page shows. Never a WebAuthn exception name.
public enum PasskeyFailure: String, Error, Sendable, Equatable {
    case unknown = "passkey_unknown"
    case challengeExpired = "passkey_challenge_expired"
    case notVerified = "passkey_not_verified"
    case wrongSite = "passkey_wrong_site"
    case counterRegressed = "passkey_counter_regressed"
    case invalid = "passkey_invalid"
    case exists = "passkey_exists"
    case limit = "passkey_limit"
    /// The app's environment signs in verified addresses only, and this account's is not verified yet.
    case emailUnverified = "email_unverified"

    /// The person-facing sentence.
    public var message: String {
        switch self {
        case .unknown: "This passkey isn't registered here."
        case .challengeExpired: "The passkey request timed out. Try again."
        case .notVerified: "Your device didn't confirm it was you. Try again."
        case .wrongSite: "This passkey belongs to another site."
        case .counterRegressed: "This passkey looks copied. Sign in another way and check your passkeys."
        case .invalid: "That passkey couldn't be checked. Try again."
        case .exists: "This passkey is already registered."
        case .limit: "You already have \(PasskeyRules.maxPerAccount) passkeys. Remove one to add another."
        case .emailUnverified: "Confirm your email address first: sign in with your password and enter the code we send you."
        }
    }

    /// The failure a verification error shows as (WebAuthn Level 3 §7.1 and §7.2 rules, grouped by what
    /// the person can do about them).
    public init(_ error: WebAuthnError) {
        switch error {
        case .unknownCredential, .userHandleMismatch: self = .unknown
        case .challengeMismatch: self = .challengeExpired
        case .originMismatch, .crossOrigin, .relyingPartyMismatch: self = .wrongSite
        case .userNotPresent, .userNotVerified: self = .notVerified
        case .signCountRegressed: self = .counterRegressed
        case .malformedClientData, .wrongCeremonyType, .malformedAttestationObject, .malformedAuthenticatorData,
            .missingAttestedCredential, .credentialIDTooLong, .unsupportedPublicKey, .invalidBackupFlags, .algorithmNotOffered,
            .backupEligibilityChanged, .badSignature:
            self = .invalid
        }
    }
}
