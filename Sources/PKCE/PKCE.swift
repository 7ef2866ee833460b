import Encoding

/// A PKCE code verifier as the client presents it at the exchange.
///
/// Shape (RFC 7636 §4.1): 43 to 128 characters of `A-Z a-z 0-9 - . _ ~` (RFC 3986 unreserved), so no
/// percent-encoding, padding or whitespace can hide in it.
public struct CodeVerifier: Sendable {
    /// The verifier exactly as sent.
    public let value: String

    /// The accepted lengths, in characters (RFC 7636 §4.1).
    public static let lengthRange: ClosedRange<Int> = 43...128

    /// Validates a verifier's grammar.
    /// - Parameter value: the `code_verifier` / `codeVerifier` exactly as received.
    /// - Returns: `nil` when it is shorter than 43, longer than 128, or holds any character outside
    ///   `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1).
    public init?(_ value: String) {
        let bytes = value.utf8
        guard Self.lengthRange.contains(bytes.count), bytes.allSatisfy(FormURLEncoding.isUnreserved) else {
            return nil
        }
        self.value = value
    }
}

/// An S256 code challenge as the client sends it at the start.
///
/// Shape (RFC 7636 §4.2, Appendix A): exactly 43 characters of canonical unpadded base64url that decode to
/// the 32 bytes of a SHA-256 digest (no `=`, no `+` or `/`, zero trailing bits).
public struct CodeChallenge: Sendable, Equatable {
    /// The challenge exactly as sent (and as stored).
    public let value: String
    /// The 32 digest bytes it encodes.
    public let digest: [UInt8]

    /// Validates a challenge's encoding.
    /// - Parameter value: the `code_challenge` exactly as received.
    /// - Returns: `nil` unless `value` is 43 characters that `Base64URL.decodeCanonical` turns into
    ///   32 bytes (docs/protocol.md#start-check-6: otherwise `invalid_code_challenge`).
    public init?(_ value: String) {
        guard value.utf8.count == 43, let bytes = Base64URL.decodeCanonical(value), bytes.count == 32 else {
            return nil
        }
        self.value = value
        self.digest = bytes
    }

    /// The challenge stored for a code issued without PKCE: `-`, which no S256 challenge (always 43
    /// characters) equals, so only an exchange that sends no verifier can match it. Only a web client whose
    /// `requirePkce` is false may get such a code, for an OpenID request with a `nonce` (RFC 9700 §2.1.1;
    /// docs/protocol.md, "Web clients").
    public static let waived = CodeChallenge(unchecked: "-")

    private init(unchecked value: String) {
        self.value = value
        self.digest = []
    }
}

/// Proof Key for Code Exchange (RFC 7636), S256 only.
///
/// There is no `plain` method here, and none behind a flag: RFC 9700 §2.1.1 recommends S256, and a `plain`
/// challenge is the verifier itself, readable by whoever sees the start URL.
/// SHA-256 is injected so this module imports no C library.
public enum PKCE {
    /// SHA-256 over bytes, returning the 32-byte digest (production passes `Crypto.sha256`).
    public typealias SHA256 = @Sendable ([UInt8]) -> [UInt8]

    /// The S256 challenge of a verifier: `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2).
    /// - Parameters:
    ///   - verifier: a grammatically valid verifier.
    ///   - sha256: SHA-256; must return 32 bytes (a different length is a programming error and traps).
    /// - Returns: the 43-character challenge.
    public static func s256Challenge(for verifier: CodeVerifier, sha256: SHA256) -> CodeChallenge {
        let digest = sha256(Array(verifier.value.utf8))
        precondition(digest.count == 32, "the injected SHA-256 must return 32 bytes")
        guard let challenge = CodeChallenge(Base64URL.encode(digest)) else {
            preconditionFailure("base64url of 32 bytes is always a canonical 43-character challenge")
        }
        return challenge
    }

    /// Whether a verifier matches a stored S256 challenge (RFC 7636 §4.6), comparing the 32 digest bytes
    /// in constant time.
    /// - Parameters:
    ///   - verifier: the verifier presented at the exchange.
    ///   - challenge: the challenge stored at the start.
    ///   - sha256: SHA-256 (32-byte result).
    ///   - constantTimeEquals: a comparison whose time depends only on the lengths
    ///     (production passes `Crypto.constantTimeEquals`).
    /// - Returns: `true` when `SHA256(ASCII(verifier))` equals the challenge's digest.
    public static func verify(
        _ verifier: CodeVerifier, matches challenge: CodeChallenge, sha256: SHA256,
        constantTimeEquals: @Sendable ([UInt8], [UInt8]) -> Bool
    ) -> Bool {
        let digest = sha256(Array(verifier.value.utf8))
        guard digest.count == 32 else { return false }
        return constantTimeEquals(digest, challenge.digest)
    }
}
