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
    public func newID() -> String { UUID().uuidString.lowercased() }
}
