import Authorize
import Crypto
import Foundation

/// `Secrets` over OpenSSL (the `Crypto` wrapper): the CSPRNG, SHA-256 and constant-time comparison.
public struct OpenSSLSecrets: Secrets {
    public init() {}
    public func mintToken(prefix: String) throws -> String { try Crypto.mintToken(prefix: prefix) }
    public func digest(_ text: String) -> String { Crypto.hexSHA256(text) }
    public func sha256(_ bytes: [UInt8]) -> [UInt8] { Crypto.sha256(bytes) }
    public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { Crypto.constantTimeEquals(a, b) }
    /// A random (version 4) UUID in lowercase, RFC 9562 §5.4: 122 bits from OpenSSL's generator, drawn in
    /// user space; Foundation's `UUID()` (a system call) should OpenSSL fail.
    public func newID() -> String {
        guard var bytes = try? Crypto.randomBytes(16) else { return UUID().uuidString.lowercased() }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(Crypto.hex(bytes).utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (position, digit) in hex.enumerated() {
            if position == 8 || position == 12 || position == 16 || position == 20 { out.append(UInt8(ascii: "-")) }
            out.append(digit)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
