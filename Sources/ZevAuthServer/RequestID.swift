import Crypto
import HTTPServer

/// The request id every response echoes in `X-Request-Id` and every log line of the request carries
/// (docs/operations.md, "Request ids").
public enum RequestID {
    /// The header that carries it, both ways.
    public static let header = "X-Request-Id"

    /// The id of `request`: the proxy's `X-Request-Id` when the peer is a trusted proxy
    /// (`ZEVAUTH_TRUSTED_PROXIES`) and it sent exactly one that `isAcceptable`, else a fresh one.
    public static func of(_ request: HTTPRequest, configuration: ServerConfiguration) -> String {
        resolve(peer: request.remoteAddress, sent: request.headers.values(header), trusted: configuration.trustedProxies)
    }

    /// The pure rule behind `of(_:configuration:)`: `sent` are the `X-Request-Id` values in order.
    public static func resolve(peer: String, sent: [String], trusted: [String]) -> String {
        if sent.count == 1, isAcceptable(sent[0]), trusted.contains(where: { $0.lowercased() == peer.lowercased() }) {
            return sent[0]
        }
        return generate()
    }

    /// Whether `value` is 1–128 visible ASCII characters other than `,` (`!` … `~`: no space, no control, nothing else).
    public static func isAcceptable(_ value: String) -> Bool {
        let bytes = value.utf8
        // No comma either: `a,b` is how a proxy joins two fields, and exactly one is the rule.
        return (1...128).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x2C }
    }

    /// 128 random bits from OpenSSL's generator (`RAND_bytes`, seeded from the kernel and drawn in user space,
    /// so no system call per request), as 32 lowercase hex digits: one id says nothing about any other.
    /// Should OpenSSL fail, the system's generator (`getrandom`) gives the bits.
    public static func generate() -> String {
        if let bytes = try? Crypto.randomBytes(16) { return Crypto.hex(bytes) }
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 32)
        for half in 0..<2 {
            var bits = generator.next() as UInt64
            for index in 0..<16 {
                out[half * 16 + index] = digits[Int(bits & 0xF)]
                bits >>= 4
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
