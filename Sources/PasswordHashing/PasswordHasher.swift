internal import CArgon2
import Crypto

/// Why a password could not be hashed or checked. Never carries the password or the hash.
public enum PasswordHashingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The password's UTF-8 form is longer than `PasswordHasher.maxPasswordBytes`.
    case passwordTooLong(maxBytes: Int)
    /// libargon2 returned an error code other than `ARGON2_VERIFY_MISMATCH`, for example
    /// `ARGON2_DECODING_FAIL` for a malformed encoded hash or `ARGON2_MEMORY_TOO_LITTLE` for bad parameters.
    /// - `code`: the `argon2_error_codes` value; `message`: `argon2_error_message(code)`.
    case argon2(code: Int32, message: String)

    /// A log-safe summary: the byte limit or the argon2 code and message, nothing from the input.
    public var description: String {
        switch self {
        case .passwordTooLong(let maxBytes): "password longer than \(maxBytes) bytes"
        case .argon2(let code, let message): "argon2 error \(code): \(message)"
        }
    }
}

/// Argon2id password hashing (RFC 9106) in the PHC string format, over libargon2.
///
/// The one Swift wrapper of `CArgon2`. The defaults (19 MiB, 2 passes, 1 lane) are OWASP's Password Storage
/// Cheat Sheet minimum for Argon2id; one hash or verify takes about 46 ms and blocks its thread, so run it
/// on a bounded worker pool, not an HTTP polling thread.
public struct PasswordHasher: Sendable {
    /// The longest password accepted, in UTF-8 bytes; longer input is refused before any hashing so a
    /// request cannot make the server hash megabytes.
    public static let maxPasswordBytes = 1024
    /// Salt length in bytes (RFC 9106 §3.1 recommends 16).
    public static let saltBytes = 16
    /// Tag (hash output) length in bytes (RFC 9106 §4 recommends 32).
    public static let hashBytes = 32

    /// Memory cost in kibibytes (argon2 `m`).
    public let memoryKiB: UInt32
    /// Number of passes over memory (argon2 `t`).
    public let iterations: UInt32
    /// Lanes (argon2 `p`); libargon2 uses this many threads.
    public let parallelism: UInt32

    /// - Parameters:
    ///   - memoryKiB: memory cost in KiB, at least `8 * parallelism` (default 19 456 = 19 MiB).
    ///   - iterations: passes, at least 1 (default 2).
    ///   - parallelism: lanes and threads, at least 1 (default 1).
    ///   Out-of-range values are reported by `hash(_:)` as `PasswordHashingError.argon2`.
    public init(memoryKiB: UInt32 = 19_456, iterations: UInt32 = 2, parallelism: UInt32 = 1) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
    }

    /// Hashes a password with a fresh 16-byte salt from `Crypto.randomBytes(_:)`.
    /// - Parameter password: the password; its UTF-8 bytes are hashed as they are (no normalisation).
    /// - Returns: the PHC string, e.g. `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (standard base64
    ///   without padding, as libargon2 writes it).
    /// - Throws: `PasswordHashingError.passwordTooLong`, `PasswordHashingError.argon2` for invalid
    ///   parameters or allocation failure, `Crypto.Failure` when the CSPRNG fails.
    public func hash(_ password: String) throws -> String {
        HashesInFlight.enter()
        defer { HashesInFlight.leave() }
        var passwordBytes = try Self.bytes(of: password)
        defer { Self.wipe(&passwordBytes) }
        let salt = try Crypto.randomBytes(Self.saltBytes)
        let length = argon2_encodedlen(
            iterations, memoryKiB, parallelism, UInt32(Self.saltBytes), UInt32(Self.hashBytes), Argon2_id)
        var encoded = [CChar](repeating: 0, count: length + 1)
        let code = passwordBytes.withUnsafeBytes { pwd in
            salt.withUnsafeBytes { saltBuffer in
                encoded.withUnsafeMutableBufferPointer { out in
                    argon2id_hash_encoded(
                        iterations, memoryKiB, parallelism, pwd.baseAddress, pwd.count,
                        saltBuffer.baseAddress, saltBuffer.count, Self.hashBytes, out.baseAddress, out.count)
                }
            }
        }
        try Self.check(code)
        return encoded.withUnsafeBufferPointer { buffer in
            let end = buffer.firstIndex(of: 0) ?? buffer.count
            return String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[..<end]), as: UTF8.self)
        }
    }

    /// Checks a password against a stored PHC string. The parameters and salt come from `encoded`.
    /// - Parameters:
    ///   - password: the candidate password.
    ///   - encoded: a string produced by `hash(_:)` (any `$argon2id$` PHC string).
    /// - Returns: `true` when the password matches, `false` for `ARGON2_VERIFY_MISMATCH`.
    /// - Throws: `PasswordHashingError.passwordTooLong`, or `PasswordHashingError.argon2` for a malformed
    ///   or non-Argon2id `encoded` (`ARGON2_DECODING_FAIL`) or any other libargon2 failure.
    public func verify(_ password: String, against encoded: String) throws -> Bool {
        HashesInFlight.enter()
        defer { HashesInFlight.leave() }
        var passwordBytes = try Self.bytes(of: password)
        defer { Self.wipe(&passwordBytes) }
        let code = passwordBytes.withUnsafeBytes { pwd in
            argon2id_verify(encoded, pwd.baseAddress, pwd.count)
        }
        if code == ARGON2_VERIFY_MISMATCH.rawValue { return false }
        try Self.check(code)
        return true
    }

    /// A well-formed PHC string with this hasher's parameters that no password matches (zero salt, zero
    /// tag). Verifying against it costs what verifying a real hash costs.
    public var dummyHash: String {
        let zeroSalt = String(repeating: "A", count: (Self.saltBytes * 4 + 2) / 3)
        let zeroTag = String(repeating: "A", count: (Self.hashBytes * 4 + 2) / 3)
        return "$argon2id$v=19$m=\(memoryKiB),t=\(iterations),p=\(parallelism)$\(zeroSalt)$\(zeroTag)"
    }

    /// Spends the time of one `verify(_:against:)` and always answers `false`: call it when sign-in names an
    /// unknown account, so the response time does not reveal which accounts exist (OWASP Authentication
    /// Cheat Sheet, "Authentication Responses").
    /// - Parameter password: the submitted password (hashed, then discarded).
    /// - Returns: `false`.
    /// - Throws: the same errors as `verify(_:against:)`, so an over-long password fails the same way for
    ///   known and unknown accounts.
    public func verifyDummy(_ password: String) throws -> Bool {
        _ = try verify(password, against: dummyHash)
        return false
    }

    private static func bytes(of password: String) throws(PasswordHashingError) -> [UInt8] {
        guard password.utf8.count <= maxPasswordBytes else { throw .passwordTooLong(maxBytes: maxPasswordBytes) }
        return Array(password.utf8)
    }

    // Best effort: clears our copy of the password bytes; the caller's `String` is outside our control.
    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }

    /// The error funnel: any code but `ARGON2_OK` becomes `PasswordHashingError.argon2`.
    private static func check(_ code: Int32) throws(PasswordHashingError) {
        guard code != ARGON2_OK.rawValue else { return }
        let message = argon2_error_message(code).map { String(cString: $0) } ?? "unknown error"
        throw .argon2(code: code, message: message)
    }
}
