/// Time-based one-time passwords (RFC 6238) over HOTP (RFC 4226) with HMAC-SHA-1, a 30-second step and
/// 6 digits, as authenticator apps expect (RFC 6238 §4, RFC 4226 §5.3).
public enum TOTP {
    /// The time step X (RFC 6238 §4.1), in seconds.
    public static let stepSeconds: Int64 = 30
    /// Steps of clock drift accepted either side of the current one (RFC 6238 §5.2 recommends at most one).
    public static let allowedDrift: Int64 = 1

    /// The step number T = floor(unixSeconds / 30) (RFC 6238 §4.2, T0 = 0).
    public static func step(atUnixSeconds seconds: Double) -> Int64 {
        Int64((seconds / Double(stepSeconds)).rounded(.down))
    }

    /// HOTP(K, T) truncated to `digits` decimal digits (RFC 4226 §5.3, dynamic truncation), zero-padded.
    /// - Parameters:
    ///   - secret: the shared key K (20 bytes for new enrolments).
    ///   - step: the counter T.
    ///   - digits: 6 in the product; RFC 6238 Appendix B's vectors use 8.
    public static func code(secret: [UInt8], step: Int64, digits: Int = 6) -> String {
        var counter = [UInt8](repeating: 0, count: 8)
        var value = UInt64(bitPattern: step)
        for index in (0..<8).reversed() {
            counter[index] = UInt8(value & 0xFF)
            value >>= 8
        }
        let mac = Crypto.hmacSHA1(key: secret, message: counter)
        let offset = Int(mac[19] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let number = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - number.count)) + number
    }

    /// The step within ±`allowedDrift` of `now` whose 6-digit code equals `code` (compared in constant
    /// time; every candidate is computed). The caller refuses a step not after the last one used
    /// (RFC 6238 §5.2: the verifier "MUST NOT accept the second attempt of the same OTP").
    /// - Returns: the matching step, or nil.
    public static func matchingStep(secret: [UInt8], code: String, atUnixSeconds seconds: Double) -> Int64? {
        guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let current = step(atUnixSeconds: seconds)
        var found: Int64?
        for candidate in (current - allowedDrift)...(current + allowedDrift) {
            if Crypto.constantTimeEquals(Array(self.code(secret: secret, step: candidate).utf8), Array(code.utf8)), found == nil {
                found = candidate
            }
        }
        return found
    }
}
