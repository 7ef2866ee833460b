internal import CArgon2
import Crypto
import Glibc

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
    ///
    /// The working memory (`memoryKiB`) is mapped for this call alone and unmapped before it returns
    /// (`Argon2Memory`), so it goes back to the operating system instead of staying in the heap.
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
        let phc = PHCString(
            version: UInt32(ARGON2_VERSION_13.rawValue), memoryKiB: memoryKiB, iterations: iterations,
            parallelism: parallelism, salt: salt, tag: [UInt8](repeating: 0, count: Self.hashBytes))
        var tag = [UInt8](repeating: 0, count: Self.hashBytes)
        let code = Self.run(phc, password: &passwordBytes, into: &tag, verifying: nil)
        try Self.check(code)
        return PHCString(
            version: phc.version, memoryKiB: memoryKiB, iterations: iterations, parallelism: parallelism, salt: salt,
            tag: tag
        ).encoded
    }

    /// Checks a password against a stored PHC string. The parameters and salt come from `encoded`; the
    /// working memory is mapped for this call alone, as in `hash(_:)`.
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
        guard let phc = PHCString(parsing: encoded) else { try Self.check(ARGON2_DECODING_FAIL.rawValue); return false }
        var tag = [UInt8](repeating: 0, count: phc.tag.count)
        let code = Self.run(phc, password: &passwordBytes, into: &tag, verifying: phc.tag)
        if code == ARGON2_VERIFY_MISMATCH.rawValue { return false }
        try Self.check(code)
        return true
    }

    /// Runs Argon2id over `phc`'s parameters and salt with libargon2's context API, so the working memory
    /// comes from `Argon2Memory` (mmap) rather than malloc. With `expected`, compares the result with it in
    /// constant time (`argon2id_verify_ctx`); otherwise writes the tag into `tag`.
    private static func run(
        _ phc: PHCString, password: inout [UInt8], into tag: inout [UInt8], verifying expected: [UInt8]?
    ) -> Int32 {
        var salt = phc.salt
        return password.withUnsafeMutableBufferPointer { pwd in
            salt.withUnsafeMutableBufferPointer { saltBuffer in
                tag.withUnsafeMutableBufferPointer { out in
                    var context = argon2_context(
                        out: out.baseAddress, outlen: UInt32(out.count),
                        pwd: pwd.baseAddress, pwdlen: UInt32(pwd.count),
                        salt: saltBuffer.baseAddress, saltlen: UInt32(saltBuffer.count),
                        secret: nil, secretlen: 0, ad: nil, adlen: 0,
                        t_cost: phc.iterations, m_cost: phc.memoryKiB, lanes: phc.parallelism,
                        threads: phc.parallelism, version: phc.version,
                        allocate_cbk: Argon2Memory.allocate, free_cbk: Argon2Memory.free,
                        flags: 0)
                    guard let expected else { return argon2id_ctx(&context) }
                    return expected.withUnsafeBufferPointer { reference in
                        reference.withMemoryRebound(to: CChar.self) { argon2id_verify_ctx(&context, $0.baseAddress) }
                    }
                }
            }
        }
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

/// libargon2's working memory, mapped with `mmap` for one hash and unmapped with `munmap` when libargon2
/// frees it (after wiping it), so every byte goes back to the operating system at once.
///
/// With malloc, glibc raises its mmap threshold to the size of the first block freed, so later 19 MiB
/// blocks come from the heap arenas (one per thread that hashed) and stay there: RSS grew by about 19 MiB
/// per worker thread that ever hashed (docs/decisions.md, "Argon2 memory is mapped, not malloc'd").
enum Argon2Memory {
    /// `allocate_fptr`: a private anonymous mapping of `size` bytes, or `ARGON2_MEMORY_ALLOCATION_ERROR`.
    static let allocate: allocate_fptr = { memory, size in
        guard let memory else { return ARGON2_MEMORY_ALLOCATION_ERROR.rawValue }
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            memory.pointee = nil
            return ARGON2_MEMORY_ALLOCATION_ERROR.rawValue
        }
        memory.pointee = mapped.assumingMemoryBound(to: UInt8.self)
        return ARGON2_OK.rawValue
    }

    /// `deallocate_fptr`: unmaps what `allocate` mapped (libargon2 passes the same size back).
    static let free: deallocate_fptr = { memory, size in
        guard let memory else { return }
        munmap(memory, size)
    }
}

/// A PHC string of Argon2id as libargon2 writes and reads it: `$argon2id$v=19$m=M,t=T,p=P$SALT$TAG`, with
/// SALT and TAG in standard base64 without padding (the reference implementation's `encoding.c`).
struct PHCString {
    var version: UInt32
    var memoryKiB: UInt32
    var iterations: UInt32
    var parallelism: UInt32
    var salt: [UInt8]
    var tag: [UInt8]

    init(version: UInt32, memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32, salt: [UInt8], tag: [UInt8]) {
        self.version = version
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
        self.salt = salt
        self.tag = tag
    }

    /// The string form.
    var encoded: String {
        "$argon2id$v=\(version)$m=\(memoryKiB),t=\(iterations),p=\(parallelism)$"
            + Self.base64(salt) + "$" + Self.base64(tag)
    }

    /// Parses `text`; nil for anything libargon2's decoder refuses (another variant, a bad number, bad
    /// base64). A missing `v=` means version 0x10, as in libargon2. Lengths and costs are checked by
    /// libargon2 itself when the hash runs.
    init?(parsing text: String) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.first == "", fields.count >= 2, fields[1] == "argon2id" else { return nil }
        var rest = fields.dropFirst(2)
        var version = UInt32(ARGON2_VERSION_10.rawValue)
        if let first = rest.first, first.hasPrefix("v=") {
            guard let number = Self.decimal(first.dropFirst(2)) else { return nil }
            version = number
            rest = rest.dropFirst()
        }
        guard rest.count == 3 else { return nil }
        let costs = rest[rest.startIndex].split(separator: ",", omittingEmptySubsequences: false)
        guard costs.count == 3, costs[0].hasPrefix("m="), costs[1].hasPrefix("t="), costs[2].hasPrefix("p="),
            let memory = Self.decimal(costs[0].dropFirst(2)), let iterations = Self.decimal(costs[1].dropFirst(2)),
            let parallelism = Self.decimal(costs[2].dropFirst(2)),
            let salt = Self.unbase64(rest[rest.startIndex + 1]), let tag = Self.unbase64(rest[rest.startIndex + 2])
        else { return nil }
        self.init(
            version: version, memoryKiB: memory, iterations: iterations, parallelism: parallelism, salt: salt, tag: tag)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// A decimal without sign or leading zeros that fits in 32 bits.
    private static func decimal(_ text: Substring) -> UInt32? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text == "0" || !text.hasPrefix("0")
        else { return nil }
        return UInt32(text)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0...chunk.count {
                out.append(alphabet[Int((value >> (18 - 6 * UInt32(position))) & 63)])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 without padding; nil for another character, a length of 1 mod 4, or trailing bits
    /// that are not zero (as libargon2's decoder).
    static func unbase64(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for byte in text.utf8 {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> bits))
            }
        }
        guard bits <= 4, accumulator & ((1 << bits) - 1) == 0 else { return nil }
        return out
    }
}
