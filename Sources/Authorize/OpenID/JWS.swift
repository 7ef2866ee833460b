import Encoding
import Foundation

/// JWS compact serialization (RFC 7515 §7.1): `BASE64URL(header) "." BASE64URL(payload) "."
/// BASE64URL(signature)`, with the header written by `JSONWriter` and every part in unpadded base64url.
/// Pure: the signature itself comes from the caller (OpenSSL, through the server's `Crypto` wrapper).
public enum JWS {
    /// The longest compact serialization read as a hint (a whole ID token is well under 4 KiB).
    public static let maximumCompactLength = 16_384

    /// The protected header of an ID token, `{"alg","kid","typ":"JWT"}` in that order (docs/protocol.md,
    /// "Signing keys and JWKS"; `typ` per RFC 7519 §5.1).
    public static func protectedHeader(algorithm: SigningAlgorithm, keyID: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.object { header in
            header.field("alg", algorithm.rawValue)
            header.field("kid", keyID)
            header.field("typ", "JWT")
        }
        return writer.bytes
    }

    /// The JWS signing input (RFC 7515 §5.1 step 5): the ASCII bytes of `BASE64URL(header) "."
    /// BASE64URL(payload)`.
    public static func signingInput(header: [UInt8], payload: [UInt8]) -> [UInt8] {
        Array((Base64URL.encode(header) + "." + Base64URL.encode(payload)).utf8)
    }

    /// The compact serialization of a signing input and its signature.
    public static func compact(signingInput: [UInt8], signature: [UInt8]) -> String {
        String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(signature)
    }

    /// A compact serialization taken apart (nothing verified yet).
    public struct Parsed: Sendable, Equatable {
        /// The header's `alg` as written.
        public let algorithm: String
        /// The header's `kid`, when it is a string.
        public let keyID: String?
        /// The decoded payload bytes.
        public let payload: [UInt8]
        /// The bytes the signature covers (the first two parts and the dot).
        public let signingInput: [UInt8]
        /// The decoded signature.
        public let signature: [UInt8]
    }

    /// Takes `compact` apart: exactly three parts of canonical base64url, a header that is one JSON object
    /// with a string `alg` and no `crit` (RFC 7515 §4.1.11: this server understands no extension), a
    /// non-empty signature. Nil for anything else (never throws: a malformed token is only not a token).
    public static func parse(_ compact: String) -> Parsed? {
        guard compact.utf8.count <= maximumCompactLength else { return nil }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decodeCanonical(String(parts[0])),
            let payload = Base64URL.decodeCanonical(String(parts[1])), let signature = Base64URL.decodeCanonical(String(parts[2])),
            !signature.isEmpty
        else { return nil }
        guard let header = try? JSONValue.parse(headerBytes), header.isObject, let algorithm = header["alg"]?.stringValue,
            header["crit"] == nil
        else { return nil }
        let keyID = header["kid"]?.stringValue
        let input = Array(compact.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        return Parsed(algorithm: algorithm, keyID: keyID, payload: payload, signingInput: input, signature: signature)
    }
}

extension IDTokenHint {
    /// The hint carried by a verified ID token's payload, when it is one JSON object whose `iss` is exactly
    /// `issuer` and which has a string `sub`, an `aud` (a string or an array of strings), whole-number `iat`
    /// and `exp` (seconds since 1970) and, if present, a string `sid`. `exp` is read, not checked: a hint
    /// may be an expired ID token (OpenID Connect Core 1.0 §3.1.2.1).
    public static func fromVerifiedPayload(_ payload: [UInt8], issuer: String) -> IDTokenHint? {
        guard let claims = try? JSONValue.parse(payload), claims.isObject, claims["iss"]?.stringValue == issuer,
            let subject = claims["sub"]?.stringValue, let issuedAt = claims["iat"]?.intValue,
            let expiresAt = claims["exp"]?.intValue
        else { return nil }
        let audience: [String]
        switch claims["aud"] {
        case .string(let one): audience = [one]
        case .array(let many):
            let strings = many.compactMap(\.stringValue)
            guard strings.count == many.count, !strings.isEmpty else { return nil }
            audience = strings
        default: return nil
        }
        var sessionID: String?
        if let sid = claims["sid"] {
            guard let text = sid.stringValue else { return nil }
            sessionID = text
        }
        return IDTokenHint(
            subject: subject, audience: audience, sessionID: sessionID, issuedAt: Date(timeIntervalSince1970: Double(issuedAt)),
            expiresAt: Date(timeIntervalSince1970: Double(expiresAt)))
    }
}
