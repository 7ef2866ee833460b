import Authorize
import Crypto
import Encoding
import Foundation
import Synchronization

/// A stand-in for the signing keys until they are wired: a JWS compact serialization with the header
/// `{"alg","kid","typ":"JWT"}` of the asked algorithm, the claims as given, and an HMAC-SHA-256 "signature"
/// under a throwaway key. Tests decode its tokens without verifying them (`DecodedJWT`); it records every
/// algorithm it was asked for.
public final class FakeIDTokenSigner: IDTokenSigner, @unchecked Sendable {
    public let kid = "test-kid"
    private let key: [UInt8] = Array(repeating: 7, count: 32)
    /// The algorithms asked for, in order.
    public let algorithms = Mutex<[SigningAlgorithm]>([])
    /// When set, every signing throws this (the keys out of reach).
    public let failure = Mutex<(any Error)?>(nil)

    public init() {}

    public func sign(claims: [UInt8], algorithm: SigningAlgorithm, now: Date) throws -> String {
        if let failure = failure.withLock({ $0 }) { throw failure }
        algorithms.withLock { $0.append(algorithm) }
        let header = JSONWriter.encode(["alg": .string(algorithm.rawValue), "kid": .string(kid), "typ": "JWT"] as JSONValue)
        let input = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: key, message: Array(input.utf8)))
    }
}

/// A JWS compact serialization split and its header and payload parsed (no signature check).
public struct DecodedJWT {
    public let header: [String: Any]
    public let claims: [String: Any]
    /// The payload's bytes exactly as signed.
    public let payload: [UInt8]

    public init?(_ compact: String?) {
        guard let parts = compact?.split(separator: ".", omittingEmptySubsequences: false), parts.count == 3,
            let header = Base64URL.decodeCanonical(String(parts[0])), let payload = Base64URL.decodeCanonical(String(parts[1])),
            let headerObject = try? JSONSerialization.jsonObject(with: Data(header)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        else { return nil }
        self.header = headerObject
        self.claims = claims
        self.payload = payload
    }
}

/// An `id_token_hint` reader that knows a fixed set of hints by their exact text (every other hint is
/// not this server's ID token), and records what it was asked.
public final class FakeIDTokenHints: IDTokenHintReader, @unchecked Sendable {
    private let lock = NSLock()
    private var hints: [String: IDTokenHint]
    private var asked: [String] = []

    /// - Parameter hints: the hints it verifies, by their compact text.
    public init(_ hints: [String: IDTokenHint] = [:]) { self.hints = hints }

    /// Adds a hint it verifies.
    public func add(_ compact: String, _ hint: IDTokenHint) { lock.withLock { hints[compact] = hint } }

    /// The hints read so far, in order.
    public var reads: [String] { lock.withLock { asked } }

    public func read(_ compact: String) -> IDTokenHint? {
        lock.withLock {
            asked.append(compact)
            return hints[compact]
        }
    }

    /// A hint for `subject` issued to `audience`, naming app session `sessionID`.
    public static func hint(subject: String, audience: String, sessionID: String? = nil) -> IDTokenHint {
        IDTokenHint(
            subject: subject, audience: [audience], sessionID: sessionID, issuedAt: Date().addingTimeInterval(-7200),
            expiresAt: Date().addingTimeInterval(-3600))
    }
}
