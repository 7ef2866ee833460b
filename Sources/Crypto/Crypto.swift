internal import COpenSSL
import Encoding

/// Hashing, MACs, randomness and constant-time comparison from OpenSSL 3 libcrypto.
///
/// The one Swift wrapper of `COpenSSL`; nothing here is hand-rolled (docs/architecture.md: no hand-rolled
/// crypto primitive). Every minted credential comes from `mintToken(prefix:)`: 256 bits from the OS CSPRNG
/// (`RAND_bytes`), base64url-encoded behind a scanner-friendly prefix (docs/protocol.md#credentials).
public enum Crypto {
    /// Errors from libcrypto, with OpenSSL's error code; never carries key or message material.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// The operation that failed (`RAND_bytes`, `EVP_Digest`, `HMAC`).
        public let operation: String
        /// `ERR_get_error()` at the time of failure (0 when OpenSSL queued none).
        public let code: UInt
        public var description: String { "OpenSSL \(operation) failed (error \(code))" }
    }

    /// SHA-256 (FIPS 180-4) of `bytes`.
    /// - Returns: 32 bytes.
    public static func sha256<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        let input = Array(bytes)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = input.withUnsafeBytes { inputBuffer in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(inputBuffer.baseAddress, inputBuffer.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest with the built-in SHA-256 cannot fail short of memory exhaustion; crash loudly then
        // rather than return a digest of zeros that would compare equal to another failure.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return digest
    }

    /// SHA-256 of the UTF-8 bytes of `text`, as 64 lower-case hex digits: the at-rest form of every
    /// credential (codes, tokens, secret keys, browser session ids).
    public static func hexSHA256(_ text: String) -> String {
        hex(sha256(Array(text.utf8)))
    }

    /// HMAC-SHA-256 (RFC 2104) of `message` under `key`.
    /// - Returns: 32 bytes.
    public static func hmacSHA256<K: Collection, M: Collection>(key: K, message: M) -> [UInt8]
    where K.Element == UInt8, M.Element == UInt8 {
        hmac(EVP_sha256(), outputBytes: 32, name: "SHA-256", key: key, message: message)
    }

    /// One-shot `HMAC()` with `digest`, producing `outputBytes` bytes; the one call site of OpenSSL's HMAC.
    static func hmac<K: Collection, M: Collection>(
        _ digest: OpaquePointer?, outputBytes: Int, name: String, key: K, message: M
    ) -> [UInt8] where K.Element == UInt8, M.Element == UInt8 {
        let keyBytes = Array(key)
        let messageBytes = Array(message)
        var mac = [UInt8](repeating: 0, count: outputBytes)
        var length: UInt32 = 0
        let result = keyBytes.withUnsafeBytes { k in
            messageBytes.withUnsafeBytes { m in
                mac.withUnsafeMutableBufferPointer { out in
                    HMAC(
                        digest, k.baseAddress, Int32(k.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        m.count, out.baseAddress, &length)
                }
            }
        }
        // HMAC with a built-in digest cannot fail short of memory exhaustion; crash loudly rather than
        // return zeros that would compare equal to another failure.
        precondition(result != nil && Int(length) == outputBytes, "HMAC(\(name)) failed")
        return mac
    }

    /// `count` bytes from OpenSSL's CSPRNG, seeded by the OS.
    /// - Parameter count: number of bytes (at least 1).
    /// - Throws: `Failure` when `RAND_bytes` reports the generator is not seeded.
    public static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw Failure(operation: "RAND_bytes", code: UInt(ERR_get_error())) }
        return bytes
    }

    /// A new credential: `prefix` followed by base64url (no padding) of 32 CSPRNG bytes (256 bits).
    /// - Parameter prefix: for example `hoc_` (authorization code), `zat_`, `zrt_`, `sk_test_`.
    /// - Returns: `prefix` + 43 characters.
    /// - Throws: `Failure` from `randomBytes(_:)`.
    public static func mintToken(prefix: String) throws -> String {
        prefix + Base64URL.encode(try randomBytes(32))
    }

    /// Compares two byte strings in time that depends only on their lengths (`CRYPTO_memcmp`).
    /// - Returns: `true` when the lengths and every byte are equal.
    public static func constantTimeEquals<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        let left = Array(a)
        let right = Array(b)
        guard left.count == right.count else { return false }
        if left.isEmpty { return true }
        return left.withUnsafeBytes { l in right.withUnsafeBytes { r in CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) == 0 } }
    }

    /// Lower-case hexadecimal of `bytes`.
    public static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
