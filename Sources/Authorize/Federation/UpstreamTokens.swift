import Encoding
import Foundation

/// A provider's discovery document, the members this server uses (OpenID Connect Discovery 1.0 §3).
public struct UpstreamDiscovery: Sendable, Equatable {
    /// `issuer`: equal to the configured issuer, character for character (§4.3).
    public let issuer: String
    /// `authorization_endpoint`, an https URL.
    public let authorizationEndpoint: String
    /// `token_endpoint`, an https URL.
    public let tokenEndpoint: String
    /// `jwks_uri`, an https URL.
    public let jwksURI: String
    /// `token_endpoint_auth_methods_supported`; absent means `["client_secret_basic"]` (§3).
    public let tokenEndpointAuthMethods: [String]

    public init(issuer: String, authorizationEndpoint: String, tokenEndpoint: String, jwksURI: String, tokenEndpointAuthMethods: [String]) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
    }

    /// The document in `bytes`, fetched from `issuer + "/.well-known/openid-configuration"`: one JSON
    /// object whose `issuer` equals `issuer` exactly (§4.3: "MUST be identical"), with https (or, when
    /// `allowHTTP`, http) `authorization_endpoint`, `token_endpoint` and `jwks_uri`.
    /// - Throws: `UpstreamFailure.discovery`.
    public static func parse(_ bytes: [UInt8], issuer: String, allowHTTP: Bool = false) throws(UpstreamFailure) -> UpstreamDiscovery {
        guard let document = try? JSONValue.parse(bytes), document.isObject, document["issuer"]?.stringValue == issuer,
            let authorization = document["authorization_endpoint"]?.stringValue, isWebURL(authorization, allowHTTP: allowHTTP),
            let token = document["token_endpoint"]?.stringValue, isWebURL(token, allowHTTP: allowHTTP),
            let jwks = document["jwks_uri"]?.stringValue, isWebURL(jwks, allowHTTP: allowHTTP)
        else { throw .discovery }
        var methods = ["client_secret_basic"]
        if let listed = document["token_endpoint_auth_methods_supported"] {
            guard let values = listed.arrayValue?.compactMap(\.stringValue), values.count == listed.arrayValue?.count else {
                throw .discovery
            }
            methods = values
        }
        return UpstreamDiscovery(
            issuer: issuer, authorizationEndpoint: authorization, tokenEndpoint: token, jwksURI: jwks, tokenEndpointAuthMethods: methods)
    }

    /// How this server authenticates at the token endpoint of a `google` or `oidc` provider:
    /// `client_secret_basic` when listed (the default of RFC 6749 §2.3.1 and of Discovery §3), else
    /// `client_secret_post` when listed, else `client_secret_basic` anyway.
    public var clientAuthentication: UpstreamClientAuthentication {
        if tokenEndpointAuthMethods.contains("client_secret_basic") { return .basic }
        return tokenEndpointAuthMethods.contains("client_secret_post") ? .post : .basic
    }

    private static func isWebURL(_ text: String, allowHTTP: Bool) -> Bool {
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty, components.fragment == nil
        else { return false }
        return components.scheme == "https" || (allowHTTP && components.scheme == "http")
    }
}

/// How the client authenticates at an upstream token endpoint (RFC 6749 §2.3.1).
public enum UpstreamClientAuthentication: Sendable, Equatable {
    /// `Authorization: Basic` of the form-encoded client ID and secret.
    case basic
    /// `client_id` and `client_secret` in the form body (Apple's only way, with the minted secret).
    case post
}

/// One verification key of a provider's JWK set (RFC 7517 §4, RFC 7518 §6).
public struct UpstreamKey: Sendable, Equatable {
    /// The key's material: RSA `n` and `e`, or the P-256 point's `x` and `y`, raw big-endian bytes.
    public enum Material: Sendable, Equatable {
        case rsa(n: [UInt8], e: [UInt8])
        case p256(x: [UInt8], y: [UInt8])
    }

    /// `kid`, when the key has one.
    public let keyID: String?
    /// The one algorithm the key verifies: its `alg`, else RS256 for `kty` RSA and ES256 for EC P-256.
    public let algorithm: SigningAlgorithm
    public let material: Material

    public init(keyID: String?, algorithm: SigningAlgorithm, material: Material) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.material = material
    }
}

/// A provider's JWK set (RFC 7517 §5), reduced to the keys that can verify an ID token here.
public struct UpstreamKeySet: Sendable, Equatable {
    public let keys: [UpstreamKey]

    public init(keys: [UpstreamKey]) { self.keys = keys }

    /// The keys of the JWK set in `bytes` that this server can use (docs/federation.md, "Verifying an
    /// upstream ID token"): `kty` `RSA` with `n` and `e`, or `EC` with `crv` `P-256`, `x` and `y` (32 bytes
    /// each), all canonical base64url; `use`, when present, `sig`; `alg`, when present, `RS256` for RSA or
    /// `ES256` for EC. Any other key (an `oct` key, an encryption key, another curve or algorithm) is
    /// skipped, never an error: a set may hold keys for other purposes.
    /// - Throws: `UpstreamFailure.jwks` when `bytes` is not an object with a `keys` array, or no key is usable.
    public static func parse(_ bytes: [UInt8]) throws(UpstreamFailure) -> UpstreamKeySet {
        guard let document = try? JSONValue.parse(bytes), let entries = document["keys"]?.arrayValue else { throw .jwks }
        let keys = entries.compactMap(key)
        guard !keys.isEmpty else { throw .jwks }
        return UpstreamKeySet(keys: keys)
    }

    /// One JWK as a usable key, or nil.
    static func key(_ jwk: JSONValue) -> UpstreamKey? {
        guard jwk.isObject, let kty = jwk["kty"]?.stringValue else { return nil }
        if let use = jwk["use"], use.stringValue != "sig" { return nil }
        var keyID: String?
        if let kid = jwk["kid"] {
            guard let text = kid.stringValue else { return nil }
            keyID = text
        }
        let stated = jwk["alg"].map { $0.stringValue.flatMap(SigningAlgorithm.init(rawValue:)) }
        if case .some(nil) = stated { return nil }
        switch kty {
        case "RSA":
            guard stated == nil || stated == .rs256, let n = jwk["n"]?.stringValue.flatMap(Base64URL.decodeCanonical),
                let e = jwk["e"]?.stringValue.flatMap(Base64URL.decodeCanonical), !n.isEmpty, !e.isEmpty
            else { return nil }
            return UpstreamKey(keyID: keyID, algorithm: .rs256, material: .rsa(n: n, e: e))
        case "EC":
            guard stated == nil || stated == .es256, jwk["crv"]?.stringValue == "P-256",
                let x = jwk["x"]?.stringValue.flatMap(Base64URL.decodeCanonical),
                let y = jwk["y"]?.stringValue.flatMap(Base64URL.decodeCanonical), x.count == 32, y.count == 32
            else { return nil }
            return UpstreamKey(keyID: keyID, algorithm: .es256, material: .p256(x: x, y: y))
        default:
            return nil
        }
    }

    /// The keys that may have signed a token whose header names `keyID` and `algorithm`: the key with that
    /// `kid` (only if its algorithm is `algorithm`); a header without `kid` may use any key of the algorithm.
    /// Empty when `keyID` names no key here (the caller may refetch the set once).
    public func candidates(keyID: String?, algorithm: SigningAlgorithm) -> [UpstreamKey] {
        guard let keyID else { return keys.filter { $0.algorithm == algorithm } }
        return keys.filter { $0.keyID == keyID && $0.algorithm == algorithm }
    }

    /// Whether a key has `keyID` (whatever its algorithm).
    public func has(keyID: String?) -> Bool {
        guard let keyID else { return true }
        return keys.contains { $0.keyID == keyID }
    }
}

/// How long a fetched discovery document or key set is kept (docs/federation.md, "Discovery and keys").
public enum UpstreamCaching {
    /// The shortest time anything is kept: 5 minutes.
    public static let minimumSeconds: Double = 300
    /// The longest: 24 hours.
    public static let maximumSeconds: Double = 86_400
    /// The time when the answer has no usable `max-age`: 1 hour.
    public static let defaultSeconds: Double = 3_600
    /// The least time between two fetches of a key set caused by an unknown `kid`: 60 seconds.
    public static let unknownKeyRefetchSeconds: Double = 60

    /// The seconds to keep an answer with this `Cache-Control` value (RFC 9111 §5.2.2.1 `max-age`),
    /// bounded to 5 minutes…24 hours; `no-store`/`no-cache` keep it the minimum.
    public static func lifetime(cacheControl: String?) -> Double {
        guard let cacheControl else { return defaultSeconds }
        var maxAge: Double?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.first == "no-store" || parts.first == "no-cache" { return minimumSeconds }
            if parts.first == "max-age", parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: ["\""])), seconds >= 0 {
                maxAge = Double(seconds)
            }
        }
        guard let maxAge else { return defaultSeconds }
        return min(maximumSeconds, max(minimumSeconds, maxAge))
    }
}

/// What an upstream ID token is checked against (docs/federation.md, "Verifying an upstream ID token").
public struct UpstreamTokenExpectation: Sendable, Equatable {
    /// How the token's `nonce` is compared with the nonce this server or the app knows.
    public enum Nonce: Sendable, Equatable {
        /// `nonce` equals this value exactly (the hosted flow's nonce; Google's and `oidc` native tokens).
        case exactly(String)
        /// `nonce` is the hex SHA-256 of this raw value (Apple's native sheet: the app gives Apple
        /// the digest of its raw nonce and sends the raw one here), compared case-insensitively.
        case sha256Hex(of: String)
    }

    /// The provider's id (copied into the identity).
    public let providerID: String
    /// `iss` must equal it exactly.
    public let issuer: String
    /// `aud` must contain one of these.
    public let audiences: [String]
    public let nonce: Nonce

    public init(providerID: String, issuer: String, audiences: [String], nonce: Nonce) {
        self.providerID = providerID
        self.issuer = issuer
        self.audiences = audiences
        self.nonce = nonce
    }
}

/// Verifying an upstream ID token, pure: the signature check and SHA-256 are the caller's (docs/federation.md,
/// "Verifying an upstream ID token"; OpenID Connect Core 1.0 §3.1.3.7).
public enum UpstreamIDToken {
    /// The clock skew allowed on `exp` and `iat`: 5 minutes.
    public static let skewSeconds: Double = 300

    /// A token's protected header, read before any key is chosen.
    public struct Header: Sendable, Equatable {
        public let algorithm: SigningAlgorithm
        public let keyID: String?
    }

    /// The header of `compact` when its `alg` is RS256 or ES256.
    /// - Throws: `.malformed` when it is not a JWS compact serialization with a JSON object header;
    ///   `.algorithm` for any other `alg` (`none`, every `HS*`: a key set's public key is never an HMAC
    ///   secret, RFC 8725 §2.1 and §3.1).
    public static func header(_ compact: String) throws(UpstreamFailure) -> Header {
        guard compact.utf8.count <= JWS.maximumCompactLength else { throw .malformed }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decodeCanonical(String(parts[0])),
            let header = try? JSONValue.parse(headerBytes), header.isObject, let alg = header["alg"]?.stringValue
        else { throw .malformed }
        guard let algorithm = SigningAlgorithm(rawValue: alg) else { throw .algorithm }
        var keyID: String?
        if let kid = header["kid"] {
            guard let text = kid.stringValue else { throw .malformed }
            keyID = text
        }
        return Header(algorithm: algorithm, keyID: keyID)
    }

    /// Verifies `compact` and reads the identity, checks in this order: the header (`header(_:)`); a key
    /// of `keys` with the header's `kid` and `alg` whose signature verifies (`.signature`); the claims
    /// object (`.malformed`); `iss` (`.issuer`); `aud` and, with several audiences, `azp` (`.audience`);
    /// `exp` > now − 300 s (`.expired`); `iat` ≤ now + 300 s (`.issuedInFuture`); `nonce` (`.nonce`); `sub`
    /// a non-empty string, `email` a string when present, `email_verified` a boolean or the string
    /// `"true"`/`"false"` when present (`.malformed`).
    /// - Parameters:
    ///   - verify: whether the signature is the key's over the signing input (`Crypto.VerifyingKey`).
    ///   - digest: the lower-case hex SHA-256 of a string's UTF-8 bytes (`Secrets.digest`).
    ///   - now: the request's time.
    /// - Throws: the first `UpstreamFailure` found.
    public static func verify(
        _ compact: String, keys: UpstreamKeySet, expecting expectation: UpstreamTokenExpectation, now: Date,
        verify: (UpstreamKey, _ signingInput: [UInt8], _ signature: [UInt8]) -> Bool, digest: (String) -> String
    ) throws(UpstreamFailure) -> UpstreamIdentity {
        let header = try Self.header(compact)
        guard let parsed = JWS.parse(compact), parsed.algorithm == header.algorithm.rawValue else { throw .malformed }
        let candidates = keys.candidates(keyID: header.keyID, algorithm: header.algorithm)
        guard candidates.contains(where: { verify($0, parsed.signingInput, parsed.signature) }) else { throw .signature }
        guard let claims = try? JSONValue.parse(parsed.payload), claims.isObject else { throw .malformed }

        guard claims["iss"]?.stringValue == expectation.issuer else { throw .issuer }
        let audience: [String]
        switch claims["aud"] {
        case .string(let one): audience = [one]
        case .array(let many):
            audience = many.compactMap(\.stringValue)
            guard audience.count == many.count else { throw .audience }
        default: throw .audience
        }
        guard audience.contains(where: expectation.audiences.contains) else { throw .audience }
        // Core §3.1.3.7 item 4: with several audiences the authorized party must be present; it must be
        // one this server accepts.
        if audience.count > 1 {
            guard let party = claims["azp"]?.stringValue, expectation.audiences.contains(party) else { throw .audience }
        }
        guard let expires = number(claims["exp"]) else { throw .malformed }
        guard expires > now.timeIntervalSince1970 - skewSeconds else { throw .expired }
        guard let issued = number(claims["iat"]) else { throw .malformed }
        guard issued <= now.timeIntervalSince1970 + skewSeconds else { throw .issuedInFuture }
        guard let nonce = claims["nonce"]?.stringValue else { throw .nonce }
        switch expectation.nonce {
        case .exactly(let expected):
            guard nonce == expected else { throw .nonce }
        case .sha256Hex(let raw):
            guard nonce.lowercased() == digest(raw) else { throw .nonce }
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw .malformed }
        var email: String?
        if let value = claims["email"], !value.isNull {
            guard let text = value.stringValue else { throw .malformed }
            email = text
        }
        var name: String?
        if let value = claims["name"]?.stringValue, !value.isEmpty { name = value }
        return UpstreamIdentity(
            providerID: expectation.providerID, issuer: expectation.issuer, subject: subject, email: email,
            emailVerified: try flag(claims["email_verified"]), name: name, tokenID: digest(compact), expiresAt: expires)
    }

    /// A NumericDate (RFC 7519 §2): a JSON number of seconds since 1970.
    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let whole): Double(whole)
        case .double(let fraction) where fraction.isFinite: fraction
        default: nil
        }
    }

    /// A boolean claim: `true`/`false`, or Apple's strings `"true"`/`"false"`; absent or null is false.
    /// - Throws: `.malformed` for any other value.
    private static func flag(_ value: JSONValue?) throws(UpstreamFailure) -> Bool {
        switch value {
        case nil, .null?: return false
        case .bool(let flag)?: return flag
        case .string("true")?: return true
        case .string("false")?: return false
        default: throw .malformed
        }
    }
}
