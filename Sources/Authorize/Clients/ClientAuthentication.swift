import Encoding
import Foundation

/// The client credentials a token request carries, read at the edge and not yet checked (docs/protocol.md,
/// "Web clients: client authentication").
public struct PresentedClientCredentials: Sendable, Equatable {
    /// Every `Authorization` header value of the request.
    public var authorization: [String]
    /// The form's `client_id`, when non-empty.
    public var clientID: String?
    /// The form's `client_secret`, when present (an empty value is still presented).
    public var clientSecret: String?
    /// The form's `client_assertion_type`, when present.
    public var assertionType: String?
    /// The form's `client_assertion`, when present.
    public var assertion: String?

    /// - Parameters: the request's parts, as above.
    public init(
        authorization: [String], clientID: String?, clientSecret: String?, assertionType: String?, assertion: String?
    ) {
        self.authorization = authorization
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.assertionType = assertionType
        self.assertion = assertion
    }
}

/// A web client the store found for authentication, with what the check needs.
public struct AuthenticatingClient: Sendable, Equatable {
    public let client: WebClientRecord
    /// The publishable key of the client's environment (the environment's grants run under it).
    public let publishableKey: String
    /// The SHA-256 hex digests of the client's live secrets (not revoked, not expired).
    public let liveSecretHashes: [String]

    public init(client: WebClientRecord, publishableKey: String, liveSecretHashes: [String]) {
        self.client = client
        self.publishableKey = publishableKey
        self.liveSecretHashes = liveSecretHashes
    }
}

/// What client authentication needs from storage.
public protocol ClientAuthenticationStore: Sendable {
    /// The web client `clientID` with its environment's publishable key and its live secrets' digests at
    /// `now`, or nil.
    /// - Throws: `StoreUnavailable`.
    func authenticatingClient(clientID: String, now: Date) throws -> AuthenticatingClient?
    /// Records an accepted assertion's `jti` until `expiresAt`, once (RFC 7523 §3): true when it was new,
    /// false when the client already used it.
    /// - Throws: `StoreUnavailable`.
    func useAssertionID(clientID: String, jti: String, expiresAt: Date) throws -> Bool
}

/// Checks a `private_key_jwt` assertion's signature with one of the client's keys (`jwks`, or the key set
/// at `jwksUri`, fetched and cached by the edge). The crypto lives outside this pure module.
public protocol ClientAssertionVerifier: Sendable {
    /// Whether `assertion`'s signature verifies under a key of `client` whose `kid` is the header's (every
    /// key of the algorithm's type when the header names none), with `alg` RS256 or ES256 only.
    /// - Throws: `StoreUnavailable` when the key set cannot be fetched (the answer is then 503, not 401).
    func verifies(_ assertion: JWS.Parsed, client: WebClientRecord) throws -> Bool
}

/// A web client that authenticated, with how.
public struct AuthenticatedClient: Sendable, Equatable {
    public let client: WebClientRecord
    public let publishableKey: String
    public let method: TokenEndpointAuthMethod
}

/// Why a token request's client was refused: the error and whether `Authorization: Basic` was tried (RFC
/// 6749 §5.2: the 401 then carries `WWW-Authenticate: Basic`).
public struct ClientAuthenticationFailure: Error, Sendable, Equatable {
    public let error: OAuthError
    public let basicTried: Bool

    public init(_ error: OAuthError, basicTried: Bool) {
        self.error = error
        self.basicTried = basicTried
    }
}

/// Client authentication at the token endpoint for web clients: the one place that decides it
/// (docs/protocol.md, "Web clients: client authentication"; RFC 6749 §2.3, RFC 7521 §4.2, RFC 7523 §3,
/// OpenID Connect Core §9). Public clients (publishable keys) never come here.
public struct ClientAuthentication: Sendable {
    /// `client_assertion_type` of a JWT assertion (RFC 7523 §2.2).
    public static let jwtBearerType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The furthest an assertion's `exp` may be ahead of the server's clock, in seconds: one hour, the
    /// lifetime client libraries sign by default (authlib's `private_key_jwt`), plus `clockSkew`; it bounds
    /// how long a `jti` is kept for replay (docs/decisions.md, "A client assertion may live an hour").
    public static let maximumAssertionLifetime: TimeInterval = 3600 + clockSkew
    /// Clock skew allowed for `nbf` and `iat`, in seconds.
    public static let clockSkew: TimeInterval = 60

    let store: any ClientAuthenticationStore
    let verifier: any ClientAssertionVerifier
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: the clients and the used assertion ids.
    ///   - verifier: the assertion signature check.
    ///   - secrets: SHA-256 and the constant-time comparison.
    public init(store: any ClientAuthenticationStore, verifier: any ClientAssertionVerifier, secrets: any Secrets) {
        self.store = store
        self.verifier = verifier
        self.secrets = secrets
    }

    // MARK: What the request presents (pure)

    /// The method a request presents, with the client it names.
    public enum Presented: Sendable, Equatable {
        case basic(clientID: String, secret: String)
        case post(clientID: String, secret: String)
        case jwt(clientID: String, assertion: JWS.Parsed)
    }

    /// The lower-cased scheme of an `Authorization` value (its first word).
    static func scheme(_ header: String) -> String {
        let trimmed = header.drop { $0 == " " || $0 == "\t" }
        return String(trimmed.prefix { $0 != " " && $0 != "\t" }).lowercased()
    }

    /// RFC 6749 §2.3.1: the Basic credentials are the client id and secret, each
    /// `application/x-www-form-urlencoded`, joined by `:` and base64-encoded (RFC 7617). Nil for anything
    /// else: not one token68, not base64, no `:`, a part that does not form-decode, or an empty id.
    public static func basicCredentials(_ header: String) -> (clientID: String, secret: String)? {
        let parts = header.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Data(base64Encoded: String(parts[1])) else {
            return nil
        }
        let bytes = Array(decoded)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            let id = try? FormURLEncoding.decodeComponent(bytes[..<colon]),
            let secret = try? FormURLEncoding.decodeComponent(bytes[(colon + 1)...]), !id.isEmpty
        else { return nil }
        return (id, secret)
    }

    /// The web client a request names, if any: the Basic user id, the form's `client_id`, or a
    /// `client_assertion`'s `sub` (RFC 7523 §3: the client is the subject; `client_id` may be left out),
    /// whichever comes first, when it begins `zc_`. Nil: the request is a public client's, unchanged.
    public static func namedWebClient(_ presented: PresentedClientCredentials) -> String? {
        var names: [String?] = presented.authorization.filter { scheme($0) == "basic" }.map { basicCredentials($0)?.clientID }
        names.append(presented.clientID)
        if let assertion = presented.assertion, let parsed = JWS.parse(assertion),
            let claims = try? JSONValue.parse(parsed.payload)
        {
            names.append(claims["sub"]?.stringValue)
        }
        return names.compactMap { $0 }.first { $0.hasPrefix(WebClients.clientIDPrefix) }
    }

    /// The one method a request presents (RFC 6749 §2.3: "MUST NOT use more than one"), in order:
    /// - more than one of `Authorization: Basic`, `client_secret`, `client_assertion(_type)` → 400
    ///   `invalid_request`;
    /// - none → 401 `invalid_client`;
    /// - Basic that does not decode, or a form `client_id` other than the Basic id → 400 `invalid_request`;
    /// - `client_assertion_type` other than `jwtBearerType`, or an assertion that is not a compact JWS → 401
    ///   `invalid_client`; a form `client_id` other than the assertion's `sub` → 401 `invalid_client`;
    /// - `client_secret` without `client_id` → 401 `invalid_client`.
    public static func presentedMethod(_ presented: PresentedClientCredentials) -> Result<Presented, ClientAuthenticationFailure> {
        let basicHeaders = presented.authorization.filter { scheme($0) == "basic" }
        let basicTried = !basicHeaders.isEmpty
        func fail(_ code: OAuthErrorCode, _ description: String) -> Result<Presented, ClientAuthenticationFailure> {
            .failure(ClientAuthenticationFailure(OAuthError(code, description), basicTried: basicTried))
        }
        let jwt = presented.assertion != nil || presented.assertionType != nil
        let methods = (basicTried ? 1 : 0) + (presented.clientSecret != nil ? 1 : 0) + (jwt ? 1 : 0)
        if methods > 1 || basicHeaders.count > 1 {
            return fail(.invalidRequest, "Authenticate the client with one method only (RFC 6749 §2.3).")
        }
        if methods == 0 {
            return fail(.invalidClient, "This client must authenticate with its registered method.")
        }
        if let header = basicHeaders.first {
            guard let credentials = basicCredentials(header) else {
                return fail(.invalidRequest, "Authorization: Basic must carry the client id and secret (RFC 6749 §2.3.1).")
            }
            if let bodyID = presented.clientID, bodyID != credentials.clientID {
                return fail(.invalidRequest, "client_id differs from the client authenticated with Authorization: Basic.")
            }
            return .success(.basic(clientID: credentials.clientID, secret: credentials.secret))
        }
        if let secret = presented.clientSecret {
            guard let clientID = presented.clientID else { return fail(.invalidClient, "client_secret needs client_id.") }
            return .success(.post(clientID: clientID, secret: secret))
        }
        guard presented.assertionType == jwtBearerType, let raw = presented.assertion, let parsed = JWS.parse(raw) else {
            return fail(.invalidClient, "client_assertion must be a JWT with client_assertion_type \(jwtBearerType) (RFC 7523 §2.2).")
        }
        guard let claims = try? JSONValue.parse(parsed.payload), claims.isObject, let subject = claims["sub"]?.stringValue else {
            return fail(.invalidClient, "The client assertion must name the client as sub (RFC 7523 §3).")
        }
        if let bodyID = presented.clientID, bodyID != subject {
            return fail(.invalidClient, "client_id differs from the client assertion's sub.")
        }
        return .success(.jwt(clientID: subject, assertion: parsed))
    }

    /// RFC 7523 §3 and OpenID Connect Core §9, for an assertion whose signature verified: `iss` and `sub`
    /// both the client id; `aud` (a string or an array) holding the token endpoint URL or the issuer; `exp`
    /// a whole number of seconds after `now` and at most `maximumAssertionLifetime` ahead; `nbf` and `iat`,
    /// when present, not after `now` beyond `clockSkew`; `jti` a string of 1 to 256 characters.
    /// - Returns: the `jti` and `exp`, or why the claims fail (a description, never a claim's value).
    public static func checkClaims(
        _ payload: [UInt8], clientID: String, audiences: Set<String>, now: Date
    ) -> Result<(jti: String, expiresAt: Date), OAuthError> {
        func fail(_ description: String) -> Result<(jti: String, expiresAt: Date), OAuthError> {
            .failure(OAuthError(.invalidClient, description))
        }
        guard let claims = try? JSONValue.parse(payload), claims.isObject else { return fail("The client assertion is not a JWT.") }
        guard claims["iss"]?.stringValue == clientID, claims["sub"]?.stringValue == clientID else {
            return fail("The client assertion's iss and sub must both be the client id (RFC 7523 §3).")
        }
        let audience: [String]
        switch claims["aud"] {
        case .string(let one)?: audience = [one]
        case .array(let many)?: audience = many.compactMap(\.stringValue)
        default: audience = []
        }
        guard audience.contains(where: audiences.contains) else {
            return fail("The client assertion's aud must be the token endpoint or the issuer (RFC 7523 §3).")
        }
        guard let exp = claims["exp"]?.intValue else { return fail("The client assertion needs exp (RFC 7523 §3).") }
        let expiresAt = Date(timeIntervalSince1970: Double(exp))
        guard expiresAt > now else { return fail("The client assertion has expired.") }
        guard expiresAt.timeIntervalSince(now) <= maximumAssertionLifetime else {
            return fail("The client assertion's exp is more than an hour ahead.")
        }
        for name in ["nbf", "iat"] {
            guard let value = claims[name] else { continue }
            guard let seconds = value.intValue, Double(seconds) <= now.timeIntervalSince1970 + clockSkew else {
                return fail("The client assertion's \(name) is in the future.")
            }
        }
        guard let jti = claims["jti"]?.stringValue, (1...256).contains(jti.count) else {
            return fail("The client assertion needs a jti of 1 to 256 characters (single use).")
        }
        return .success((jti, expiresAt))
    }

    // MARK: The decision with the store

    /// Authenticates the web client a token request names: the one presented method (`presentedMethod`),
    /// the client known, the method its registered one, then the secret (its SHA-256 compared in constant
    /// time with each live secret's digest) or the assertion (signature, claims, `jti` single use).
    /// Every refusal but a malformed request is 401 `invalid_client`.
    /// - Parameters:
    ///   - audiences: the token endpoint URL and the issuer (an assertion's acceptable `aud`).
    /// - Throws: `StoreUnavailable`.
    public func authenticate(_ presented: PresentedClientCredentials, audiences: Set<String>, now: Date) throws -> Result<
        AuthenticatedClient, ClientAuthenticationFailure
    > {
        let method: Presented
        switch Self.presentedMethod(presented) {
        case .failure(let failure): return .failure(failure)
        case .success(let value): method = value
        }
        let basicTried = if case .basic = method { true } else { false }
        func fail(_ description: String) -> Result<AuthenticatedClient, ClientAuthenticationFailure> {
            .failure(ClientAuthenticationFailure(OAuthError(.invalidClient, description), basicTried: basicTried))
        }
        let clientID: String
        let used: TokenEndpointAuthMethod
        switch method {
        case .basic(let id, _): (clientID, used) = (id, .clientSecretBasic)
        case .post(let id, _): (clientID, used) = (id, .clientSecretPost)
        case .jwt(let id, _): (clientID, used) = (id, .privateKeyJWT)
        }
        guard clientID.hasPrefix(WebClients.clientIDPrefix), clientID.utf8.count <= 100,
            let found = try store.authenticatingClient(clientID: clientID, now: now)
        else { return fail("Unknown client.") }
        guard found.client.authMethod == used else {
            return fail("This client authenticates with \(found.client.authMethod.rawValue) only.")
        }
        switch method {
        case .basic(_, let secret), .post(_, let secret):
            let presentedDigest = secrets.sha256(Array(secret.utf8))
            // Every live secret is compared, whichever matches, so the time taken does not say which did.
            var matched = false
            for hash in found.liveSecretHashes {
                if secrets.constantTimeEquals(Self.bytes(hex: hash), presentedDigest) { matched = true }
            }
            guard matched else { return fail("The client secret is wrong.") }
        case .jwt(_, let assertion):
            guard assertion.algorithm == "RS256" || assertion.algorithm == "ES256" else {
                return fail("The client assertion must be signed with RS256 or ES256.")
            }
            guard try verifier.verifies(assertion, client: found.client) else {
                return fail("The client assertion's signature does not verify with the client's keys.")
            }
            let checked: (jti: String, expiresAt: Date)
            switch Self.checkClaims(assertion.payload, clientID: clientID, audiences: audiences, now: now) {
            case .failure(let error): return .failure(ClientAuthenticationFailure(error, basicTried: false))
            case .success(let value): checked = value
            }
            guard try store.useAssertionID(clientID: clientID, jti: checked.jti, expiresAt: checked.expiresAt) else {
                return fail("The client assertion was used before (its jti is single use).")
            }
        }
        return .success(AuthenticatedClient(client: found.client, publishableKey: found.publishableKey, method: used))
    }

    /// The bytes of a lower-case hex digest (a malformed digest decodes to no bytes and matches nothing).
    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return [] }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
