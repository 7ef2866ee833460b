import Foundation

/// Argon2id for account passwords (RFC 9106), a port so the use cases that hash or verify a password decide
/// without OpenSSL or libargon2. The server adapts `PasswordHashing.PasswordHasher` to it.
public protocol PasswordHashingPort: Sendable {
    /// A new PHC string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`) for `password`.
    /// - Throws: when the CSPRNG or Argon2 fails.
    func hash(_ password: String) throws -> String
    /// Whether `password` matches the PHC string `encoded`; false for a malformed `encoded` too.
    func verify(_ password: String, against encoded: String) -> Bool
    /// Performs one verification of the same cost against a fixed hash, for an unknown account, so the
    /// answer's timing does not tell whether the account exists.
    func verifyDummy(_ password: String)
}

/// Time-based one-time passwords (RFC 6238, 30-second steps, 6 digits, one step of drift) and the random
/// bytes a new secret needs. The server adapts `Crypto.TOTP` and the CSPRNG to it.
public protocol OneTimePasswords: Sendable {
    /// `count` bytes from the CSPRNG. - Throws: when the CSPRNG fails (never silently weaker).
    func randomBytes(_ count: Int) throws -> [UInt8]
    /// The step (RFC 6238 §4.2) at which `code` is right for `secret`, within one step of `unixSeconds`, or nil.
    func matchingStep(secret: [UInt8], code: String, atUnixSeconds unixSeconds: Double) -> Int64?
}

/// Authenticated encryption of TOTP secrets at rest (AES-256-GCM under `ZEVAUTH_ENCRYPTION_KEY`). A server
/// without the key has none of these (the ports hold nil) and answers that two-step verification is
/// unavailable. The server adapts `Crypto.aesGCMSeal`/`aesGCMOpen` to it.
public protocol SecretSealing: Sendable {
    /// `nonce ‖ ciphertext ‖ tag` of `plaintext`, bound to `associatedData`. - Throws: when sealing fails.
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8]
    /// The plaintext of `sealed`. - Throws: when the key, the box or its associated data do not match.
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8]
}

/// TOTP secrets at rest: sealed per account, so a box copied onto another account's row does not open.
public enum TOTPSecrets {
    /// Associated data binding a sealed secret to its account.
    public static func associatedData(userID: String) -> [UInt8] { Array("zevauth:totp:v1:\(userID)".utf8) }

    /// A secret's stored form: base64 of `nonce ‖ ciphertext ‖ tag`. - Throws: what `sealer` throws.
    public static func seal(_ secret: [UInt8], userID: String, with sealer: any SecretSealing) throws -> String {
        Data(try sealer.seal(secret, associatedData: associatedData(userID: userID))).base64EncodedString()
    }

    /// The secret inside a stored box, or nil when it does not open (wrong key, altered row, another
    /// account's box, not base64).
    public static func open(_ sealed: String, userID: String, with sealer: any SecretSealing) -> [UInt8]? {
        guard let bytes = Data(base64Encoded: sealed) else { return nil }
        return try? sealer.open(Array(bytes), associatedData: associatedData(userID: userID))
    }
}
