import Encoding
import Foundation

/// The JWS algorithms a DPoP proof may use (RFC 9449 §4.2: asymmetric only, never `none` nor a MAC;
/// docs/dpop.md, "The proof").
public enum DPoPAlgorithm: String, Sendable, Equatable, CaseIterable {
    /// ECDSA P-256 with SHA-256 (RFC 7518 §3.4), with an `EC` `P-256` key.
    case es256 = "ES256"
    /// Ed25519 (RFC 8037 §3.1), with an `OKP` `Ed25519` key.
    case edDSA = "EdDSA"
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256, 32-byte salt (RFC 7518 §3.5), with an `RSA` key.
    case ps256 = "PS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3), with an `RSA` key.
    case rs256 = "RS256"

    /// The `algs` of `WWW-Authenticate: DPoP` and discovery's `dpop_signing_alg_values_supported`, in order.
    public static let advertised = allCases.map(\.rawValue).joined(separator: " ")
}

/// The public key of a proof's `jwk` header (RFC 9449 §4.2), each member's raw bytes as sent.
public enum DPoPPublicKey: Sendable, Equatable {
    /// `{"kty":"EC","crv":"P-256","x","y"}`, 32 bytes each.
    case ec(x: [UInt8], y: [UInt8])
    /// `{"kty":"OKP","crv":"Ed25519","x"}`, 32 bytes (RFC 8037 §2).
    case okp(x: [UInt8])
    /// `{"kty":"RSA","n","e"}`, the modulus at least 256 bytes (2048 bits).
    case rsa(n: [UInt8], e: [UInt8])

    /// The JWK members that only a private (or symmetric) key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037
    /// §2): a proof carrying one is refused (RFC 9449 §4.3 check 7).
    public static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// The key of a `jwk` header value, or nil: not an object, a private member present, an unknown `kty`
    /// or curve, a member that is not canonical base64url of the right length.
    public init?(jwk: JSONValue) {
        guard let members = jwk.objectValue else { return nil }
        guard !members.contains(where: { Self.privateMembers.contains($0.0) }) else { return nil }
        func bytes(_ name: String) -> [UInt8]? { jwk[name]?.stringValue.flatMap(Base64URL.decodeCanonical) }
        switch jwk["kty"]?.stringValue {
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256", let x = bytes("x"), let y = bytes("y"), x.count == 32, y.count == 32
            else { return nil }
            self = .ec(x: x, y: y)
        case "OKP":
            guard jwk["crv"]?.stringValue == "Ed25519", let x = bytes("x"), x.count == 32 else { return nil }
            self = .okp(x: x)
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e"), n.count >= 256, !e.isEmpty, e.count <= 8 else { return nil }
            self = .rsa(n: n, e: e)
        default:
            return nil
        }
    }

    /// Whether `algorithm` is used with keys of this type.
    public func fits(_ algorithm: DPoPAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.ec, .es256), (.okp, .edDSA), (.rsa, .ps256), (.rsa, .rs256): true
        default: false
        }
    }

    /// The RFC 7638 §3.2 thumbprint input: the required members only, in lexicographic order, no
    /// whitespace (base64url needs no JSON escaping).
    public var thumbprintInput: [UInt8] {
        let text =
            switch self {
            case .ec(let x, let y):
                #"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#
            case .okp(let x):
                #"{"crv":"Ed25519","kty":"OKP","x":"\#(Base64URL.encode(x))"}"#
            case .rsa(let n, let e):
                #"{"e":"\#(Base64URL.encode(e))","kty":"RSA","n":"\#(Base64URL.encode(n))"}"#
            }
        return Array(text.utf8)
    }

    /// The key's `jkt`: base64url of the SHA-256 of `thumbprintInput` (RFC 7638 §3.1, RFC 9449 §6.1).
    public func thumbprint(sha256: ([UInt8]) -> [UInt8]) -> String {
        Base64URL.encode(sha256(thumbprintInput))
    }
}

/// A `DPoP` header taken apart (RFC 9449 §4.2), nothing but its shape checked: no signature, time or
/// request rule yet.
public struct ParsedDPoPProof: Sendable, Equatable {
    public let algorithm: DPoPAlgorithm
    public let key: DPoPPublicKey
    /// `htm`, `htu`, `jti` as sent.
    public let method: String
    public let url: String
    public let identifier: String
    /// `iat`, whole seconds since 1970.
    public let issuedAt: Int
    /// `ath` and `nonce`, when present.
    public let accessTokenHash: String?
    public let nonce: String?
    /// The bytes the signature covers and the decoded signature.
    public let signingInput: [UInt8]
    public let signature: [UInt8]
}

/// Why a proof was refused. `useNonce` is `use_dpop_nonce` (RFC 9449 §8); every other case is
/// `invalid_dpop_proof` (RFC 9449 §5, §7.1), the case only naming the rule for tests and logs.
public enum DPoPRefusal: Error, Sendable, Equatable {
    /// The header is missing where a proof is required, or sent more than once (§4.3 check 1).
    case missing
    /// Not a compact JWS with a JSON header and claims, or a required claim missing or mistyped (§4.3 checks 2–3).
    case malformed
    /// `typ` is not exactly `dpop+jwt` (§4.3 check 4).
    case type
    /// `alg` is not one of `DPoPAlgorithm`, or does not fit the key (§4.3 check 5).
    case algorithm
    /// `jwk` is not a supported public key, or holds a private member (§4.3 check 7).
    case key
    /// The signature does not verify with `jwk` (§4.3 check 6).
    case signature
    /// `htm` is not the request's method (§4.3 check 8).
    case method
    /// `htu` is not this endpoint's issuer-based URL (§4.3 check 9).
    case url
    /// `iat` is more than 60 s in the past or 10 s in the future (§4.3 check 11).
    case issuedAt
    /// `jti` is empty or longer than 256 characters.
    case identifier
    /// `ath` is missing or not the presented access token's hash (§4.3 check 12).
    case accessTokenHash
    /// This key already used this `jti` within the window (§11.1).
    case replayed
    /// A valid proof of another key than the one the code, token or session is bound to (§5, §7.1).
    case otherKey
    /// A nonce is required and the proof has none, or a stale one (§8, §9): answered `use_dpop_nonce`.
    case useNonce

    /// The wire error: `invalid_dpop_proof`, or `use_dpop_nonce` for `useNonce` (the description names
    /// the rule, never a value of the proof).
    public var error: OAuthError {
        switch self {
        case .useNonce: return OAuthError(.useDPoPNonce, "Sign a new DPoP proof with the nonce in the DPoP-Nonce header.")
        case .missing: return OAuthError(.invalidDPoPProof, "Send exactly one DPoP proof in the DPoP header.")
        case .malformed: return OAuthError(.invalidDPoPProof, "The DPoP proof is not a JWS with the claims htm, htu, iat and jti.")
        case .type: return OAuthError(.invalidDPoPProof, "The DPoP proof's typ must be dpop+jwt.")
        case .algorithm:
            return OAuthError(.invalidDPoPProof, "The DPoP proof's alg must be one of \(DPoPAlgorithm.advertised), fitting its key.")
        case .key: return OAuthError(.invalidDPoPProof, "The DPoP proof's jwk must be a supported public key.")
        case .signature: return OAuthError(.invalidDPoPProof, "The DPoP proof's signature does not verify with its jwk.")
        case .method: return OAuthError(.invalidDPoPProof, "The DPoP proof's htm is not this request's method.")
        case .url: return OAuthError(.invalidDPoPProof, "The DPoP proof's htu is not this endpoint's URL.")
        case .issuedAt: return OAuthError(.invalidDPoPProof, "The DPoP proof's iat is too old or in the future.")
        case .identifier: return OAuthError(.invalidDPoPProof, "The DPoP proof's jti must be 1 to 256 characters.")
        case .accessTokenHash: return OAuthError(.invalidDPoPProof, "The DPoP proof's ath does not match the access token.")
        case .replayed: return OAuthError(.invalidDPoPProof, "This DPoP proof was already used.")
        case .otherKey: return OAuthError(.invalidDPoPProof, "The DPoP proof is signed by another key than the one bound.")
        }
    }
}

/// Checks a signature for the proof rules: whether `signature` is `algorithm`'s signature of
/// `signingInput` by the private half of `key` (the server passes OpenSSL's, `Crypto.verifyJWS`).
public typealias DPoPSignatureCheck =
    @Sendable (
        _ signature: [UInt8], _ signingInput: [UInt8], _ algorithm: DPoPAlgorithm, _ key: DPoPPublicKey
    ) -> Bool

/// What the request a proof accompanies demands of it.
public struct DPoPExpectation: Sendable, Equatable {
    /// The request's method, compared with `htm` exactly.
    public let method: String
    /// The endpoint's issuer-based URL (`ZEVAUTH_ISSUER` + path), never built from the `Host` header.
    public let url: String
    /// At a resource: the access token presented with `Authorization: DPoP`, whose hash `ath` must be.
    public let accessToken: String?

    public init(method: String, url: String, accessToken: String? = nil) {
        self.method = method
        self.url = url
        self.accessToken = accessToken
    }
}

/// Whether the server requires a nonce in this proof (docs/dpop.md, "Nonces").
public enum DPoPNonceRule: Sendable {
    /// No nonce required; a `nonce` claim is ignored.
    case notRequired
    /// A `nonce` claim is required and `accepts` must take it (the current or the previous period's).
    case required(accepts: @Sendable (String) -> Bool)
}

/// A proof that passed every stateless rule: its key's thumbprint and what replay detection needs.
public struct VerifiedDPoPProof: Sendable, Equatable {
    /// The key's `jkt` (RFC 7638), what codes and tokens are bound to.
    public let thumbprint: String
    /// `jti` as sent (the store keeps only its digest).
    public let identifier: String
    public let issuedAt: Date
    /// The `nonce` claim, when present (checked by the rule when required, else by the grant's statement).
    public var nonce: String? = nil
}

/// The proof rules of RFC 9449 §4.3, in its order (docs/dpop.md, "The proof"). Pure: the signature check
/// and SHA-256 are injected, and so is the time.
public struct DPoPProofRules: Sendable {
    /// How old a proof may be (`iat` at most this many seconds before now).
    public static let maximumAge: TimeInterval = 60
    /// How far in the future `iat` may be (clock skew), in seconds.
    public static let maximumSkew: TimeInterval = 10
    /// The longest `jti` taken, in characters.
    public static let maximumIdentifierLength = 256
    /// The longest `DPoP` header read (an RSA-4096 proof is well under 2 KiB).
    public static let maximumLength = 8_192

    let checkSignature: DPoPSignatureCheck
    let sha256: @Sendable ([UInt8]) -> [UInt8]

    public init(checkSignature: @escaping DPoPSignatureCheck, sha256: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.checkSignature = checkSignature
        self.sha256 = sha256
    }

    /// Takes a `DPoP` header value apart: three canonical base64url parts; a JSON object header with no
    /// `crit`, a string `typ`, an `alg` of `DPoPAlgorithm` and a `jwk`; claims with string `htm`, `htu`,
    /// `jti`, a whole-number `iat`, and string `ath` and `nonce` when present. The refusal names the
    /// first rule broken, in RFC 9449 §4.3's order.
    public static func parse(_ proof: String) throws(DPoPRefusal) -> ParsedDPoPProof {
        guard proof.utf8.count <= maximumLength else { throw .malformed }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decodeCanonical(String(parts[0])),
            let payload = Base64URL.decodeCanonical(String(parts[1])), let signature = Base64URL.decodeCanonical(String(parts[2])),
            let header = try? JSONValue.parse(headerBytes), header.isObject, header["crit"] == nil,
            let claims = try? JSONValue.parse(payload), claims.isObject
        else { throw .malformed }
        guard let method = claims["htm"]?.stringValue, let url = claims["htu"]?.stringValue,
            let identifier = claims["jti"]?.stringValue, let issuedAt = claims["iat"]?.intValue
        else { throw .malformed }
        let accessTokenHash = claims["ath"]
        let nonce = claims["nonce"]
        guard accessTokenHash == nil || accessTokenHash?.stringValue != nil, nonce == nil || nonce?.stringValue != nil else {
            throw .malformed
        }
        guard header["typ"]?.stringValue == "dpop+jwt" else { throw .type }
        guard let algorithm = header["alg"]?.stringValue.flatMap(DPoPAlgorithm.init(rawValue:)) else { throw .algorithm }
        guard let jwk = header["jwk"], let key = DPoPPublicKey(jwk: jwk) else { throw .key }
        guard key.fits(algorithm) else { throw .algorithm }
        guard !signature.isEmpty else { throw .signature }
        let signingInput = Array(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        return ParsedDPoPProof(
            algorithm: algorithm, key: key, method: method, url: url, identifier: identifier, issuedAt: issuedAt,
            accessTokenHash: accessTokenHash?.stringValue, nonce: nonce?.stringValue, signingInput: signingInput,
            signature: signature)
    }

    /// Checks one proof against its request (RFC 9449 §4.3 checks 2–12; check 1, one header, is the
    /// caller's; replay is the store's, with `VerifiedDPoPProof.identifier`).
    /// - Parameters:
    ///   - proof: the `DPoP` header's value.
    ///   - expectation: the request's method, endpoint URL and (at a resource) access token.
    ///   - nonce: whether a server nonce is required.
    ///   - now: the request's time.
    /// - Throws: `DPoPRefusal`, the first rule broken.
    public func verify(_ proof: String, expecting expectation: DPoPExpectation, nonce: DPoPNonceRule, now: Date) throws(DPoPRefusal)
        -> VerifiedDPoPProof
    {
        let parsed = try Self.parse(proof)
        guard checkSignature(parsed.signature, parsed.signingInput, parsed.algorithm, parsed.key) else { throw .signature }
        guard parsed.method == expectation.method else { throw .method }
        guard let sent = DPoPURL.normalised(parsed.url), let expected = DPoPURL.normalised(expectation.url), sent == expected else {
            throw .url
        }
        let age = now.timeIntervalSince1970 - Double(parsed.issuedAt)
        guard age <= Self.maximumAge, age >= -Self.maximumSkew else { throw .issuedAt }
        guard !parsed.identifier.isEmpty, parsed.identifier.count <= Self.maximumIdentifierLength else { throw .identifier }
        if let accessToken = expectation.accessToken {
            guard let sent = parsed.accessTokenHash, sent == Base64URL.encode(sha256(Array(accessToken.utf8))) else {
                throw .accessTokenHash
            }
        }
        if case .required(let accepts) = nonce {
            guard let value = parsed.nonce, accepts(value) else { throw .useNonce }
        }
        return VerifiedDPoPProof(
            thumbprint: parsed.key.thumbprint(sha256: sha256), identifier: parsed.identifier,
            issuedAt: Date(timeIntervalSince1970: Double(parsed.issuedAt)), nonce: parsed.nonce)
    }
}

/// `htu` comparison (RFC 9449 §4.3 check 9): the URL without query and fragment, after RFC 3986 §6.2.2.1
/// and §6.2.3 normalisation of the scheme's and host's case, the default port and an empty path.
public enum DPoPURL {
    /// The normalised form of an absolute `http` or `https` URL, or nil for anything else (no scheme,
    /// userinfo, a host that is not a name or an IP literal, a malformed port).
    public static func normalised(_ url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let withoutFragment = rest.prefix { $0 != "#" }
        let withoutQuery = withoutFragment.prefix { $0 != "?" }
        let authority = withoutQuery.prefix { $0 != "/" }
        let path = withoutQuery.dropFirst(authority.count)
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            let digits = authority[authority.index(after: colon)...]
            host = authority[..<colon]
            if !digits.isEmpty {
                guard digits.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(digits), (0...65535).contains(value) else {
                    return nil
                }
                port = value
            }
        }
        guard isHost(host) else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let portText = port.map { $0 == defaultPort ? "" : ":\($0)" } ?? ""
        return scheme + "://" + host.lowercased() + portText + (path.isEmpty ? "/" : String(path))
    }

    /// An RFC 3986 §3.2.2 host as this server names itself: unreserved characters and percent signs, or a
    /// bracketed IPv6 literal (hex digits, colons and dots).
    private static func isHost(_ host: Substring) -> Bool {
        guard !host.isEmpty else { return false }
        if host.hasPrefix("[") {
            return host.count > 2 && host.hasSuffix("]")
                && host.dropFirst().dropLast().allSatisfy { ($0.isASCII && $0.isHexDigit) || $0 == ":" || $0 == "." }
        }
        return host.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || "-._~%".unicodeScalars.contains(scalar))
        }
    }
}
