import Authorize
import Crypto
import PasswordHashing

/// `PasswordHashingPort` (Authorize) over libargon2 (`PasswordHashing.PasswordHasher`).
struct Argon2Passwords: PasswordHashingPort {
    let hasher: PasswordHasher

    func hash(_ password: String) throws -> String { try hasher.hash(password) }

    /// A malformed stored hash or an Argon2 failure is a wrong password, never a 500.
    func verify(_ password: String, against encoded: String) -> Bool { (try? hasher.verify(password, against: encoded)) ?? false }

    func verifyDummy(_ password: String) { _ = try? hasher.verifyDummy(password) }
}

/// `OneTimePasswords` (Authorize) over `Crypto.TOTP` and OpenSSL's CSPRNG.
struct CryptoOneTimePasswords: OneTimePasswords {
    func randomBytes(_ count: Int) throws -> [UInt8] { try Crypto.randomBytes(count) }
    func matchingStep(secret: [UInt8], code: String, atUnixSeconds unixSeconds: Double) -> Int64? {
        TOTP.matchingStep(secret: secret, code: code, atUnixSeconds: unixSeconds)
    }
}

/// `SecretSealing` (Authorize) over OpenSSL's AES-256-GCM under `ZEVAUTH_ENCRYPTION_KEY`.
struct AESGCMSealer: SecretSealing {
    let key: [UInt8]

    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try Crypto.aesGCMSeal(key: key, plaintext: plaintext, associatedData: associatedData)
    }

    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try Crypto.aesGCMOpen(key: key, sealed: sealed, associatedData: associatedData)
    }
}

extension ServerContext {
    /// Argon2id with this context's parameters, for the account use cases.
    var accountPasswords: any PasswordHashingPort { Argon2Passwords(hasher: passwordHasher) }
    /// RFC 6238 and the CSPRNG, for the account use cases.
    var oneTimePasswords: any OneTimePasswords { CryptoOneTimePasswords() }
    /// AES-256-GCM under the configured encryption key, or nil when the server has none.
    var totpSealer: (any SecretSealing)? { configuration.encryptionKey.map { AESGCMSealer(key: $0) } }
}
