import Authorize
import Crypto
import Encoding
import Fetch
import Foundation
import HTTPServer

/// `POST /oauth2/token` for web clients (docs/protocol.md, "Web clients: client authentication"): the
/// client authenticates with its registered method (`ClientAuthentication`), then the code or refresh grant
/// runs bound to it. A request that names no web client is a public client's and is answered by
/// `StandardOAuthHandlers` exactly as before.
struct WebClientTokenHandler: Sendable {
    let context: ServerContext

    /// The credentials of a form-encoded token request, or nil when the body is not a readable form (the
    /// public path answers that).
    static func presented(_ request: HTTPRequest) -> (PresentedClientCredentials, form: [String: String])? {
        guard StandardOAuthHandlers.contentTypeProblem(request) == nil, let pairs = try? FormURLEncoding.decode(bytes: request.body),
            let form = StandardOAuthHandlers.form(request)
        else { return nil }
        func raw(_ name: String) -> String? { pairs.first { $0.name == name }?.value }
        return (
            PresentedClientCredentials(
                authorization: request.headers.values("Authorization"), clientID: form["client_id"], clientSecret: raw("client_secret"),
                assertionType: raw("client_assertion_type"), assertion: raw("client_assertion")),
            form
        )
    }

    /// The answer for a web client's token request, or nil when the request names no web client.
    /// Order: client authentication (400 `invalid_request` for a malformed one, else 401 `invalid_client`,
    /// `WWW-Authenticate: Basic` when Basic was tried), a `DPoP` proof when one is sent (400
    /// `invalid_dpop_proof`), `grant_type` present and supported, the grant's parameters, then the grant
    /// bound to the client and, with a proof, to its key. Failures count against the client address as the
    /// public path's do.
    func answer(_ request: HTTPRequest, limiter: RateLimiter, address: String, bucket: RateLimitBucket) throws -> HTTPResponse? {
        guard let (presented, form) = Self.presented(request), ClientAuthentication.namedWebClient(presented) != nil else { return nil }
        func limitedOr(_ answer: () throws -> HTTPResponse) throws -> HTTPResponse {
            if case .limited(let seconds) = try limiter.check(bucket, key: address) {
                return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
            }
            return try answer()
        }
        let issuer = context.configuration.issuer
        let authentication = ClientAuthentication(
            store: context.tenancy.webClients, verifier: WebClientKeySets(context: context), secrets: context.secrets)
        let client: AuthenticatedClient
        switch try authentication.authenticate(presented, audiences: [issuer + "/oauth2/token", issuer], now: context.clock.now()) {
        case .failure(let failure):
            return try limitedOr {
                var response = GrantResult.failed(failure.error).response(on: .standard(.token))
                if failure.error.code == .invalidClient && failure.basicTried {
                    response.headers.set("WWW-Authenticate", "Basic realm=\"ZevAuth\"")
                }
                return response
            }
        case .success(let value): client = value
        }
        let gate = limiter.gate(bucket, key: address)
        // A DPoP proof binds the web client's session as a native app's (RFC 9449 §5; docs/dpop.md, "Binding"):
        // checked after the client authenticated, its use recorded in the grant's one statement.
        let proof: DPoPProofUse?
        switch DPoPProofs.grantProof(request, context: context) {
        case .failure(let refusal):
            return try limitedOr {
                DPoPProofs.withNonce(GrantResult.failed(refusal.error).response(on: .standard(.token)), context: context)
            }
        case .success(let use): proof = use
        }
        let now = context.clock.now()
        let settle = SettleWindow(milliseconds: context.configuration.databaseSettleMilliseconds)
        let outcome: GrantOutcome
        switch form["grant_type"] {
        case nil:
            return try limitedOr { Self.tokenError(.invalidRequest, "grant_type is required.") }
        case "authorization_code":
            guard let code = form["code"] else { return try limitedOr { Self.tokenError(.invalidRequest, "code is required.") } }
            outcome = try Exchange(store: context.roundTrip.exchange, secrets: context.secrets, settle: settle)(
                publishableKey: client.publishableKey, code: code, redirectURI: form["redirect_uri"], codeVerifier: form["code_verifier"],
                gate: gate.stored, now: now, proof: proof, webClientID: client.client.clientID,
                observe: { context.metrics.exchange(ExchangeHandler.metric($0)) })
        case "refresh_token":
            guard let refreshToken = form["refresh_token"] else {
                return try limitedOr { Self.tokenError(.invalidRequest, "refresh_token is required.") }
            }
            outcome = try Refresh(store: context.roundTrip.refresh, secrets: context.secrets, settle: settle)(
                publishableKey: client.publishableKey, refreshToken: refreshToken, gate: gate.stored, now: now, proof: proof,
                webClientID: client.client.clientID, observe: { context.metrics.refresh(SessionGrants.metric($0)) })
        default:
            return try limitedOr {
                Self.tokenError(.unsupportedGrantType, "grant_type must be authorization_code or refresh_token.")
            }
        }
        if case .rateLimited = outcome { context.metrics.rateLimited(bucket) }
        // The ID token's `aud` and `azp` are the web client's id (OpenID Connect Core §2).
        let result = try GrantResult(outcome, now: now, retryAfterSeconds: gate.retryAfterSeconds)
            .withIDToken(context: context, clientID: client.client.clientID)
        return DPoPProofs.grantAnswer(result, on: .standard(.token), request, context: context)
    }

    /// `POST /oauth2/revoke` for a web client (RFC 7009 §2.1), or nil when the request names no web client:
    /// the client authenticates as at the token endpoint, then `token` (400 `invalid_request` without it)
    /// ends its session when this client obtained it; 200 with an empty body either way (§2.2).
    func revoke(_ request: HTTPRequest) throws -> HTTPResponse? {
        guard let (presented, form) = Self.presented(request), ClientAuthentication.namedWebClient(presented) != nil else { return nil }
        let issuer = context.configuration.issuer
        let authentication = ClientAuthentication(
            store: context.tenancy.webClients, verifier: WebClientKeySets(context: context), secrets: context.secrets)
        let client: AuthenticatedClient
        switch try authentication.authenticate(presented, audiences: [issuer + "/oauth2/token", issuer], now: context.clock.now()) {
        case .failure(let failure):
            var response = GrantResult.failed(failure.error).response(on: .standard(.token))
            if failure.error.code == .invalidClient && failure.basicTried {
                response.headers.set("WWW-Authenticate", "Basic realm=\"ZevAuth\"")
            }
            return response
        case .success(let value): client = value
        }
        guard let token = form["token"] else { return Self.tokenError(.invalidRequest, "token is required.") }
        try context.tenancy.webClients.revokeWebClientSession(
            clientID: client.client.clientID, tokenHash: context.secrets.digest(token), now: context.clock.now())
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Cache-Control", "no-store"), ("Pragma", "no-cache")]))
    }

    static func tokenError(_ code: OAuthErrorCode, _ description: String) -> HTTPResponse {
        GrantResult.failed(OAuthError(code, description)).response(on: .standard(.token))
    }
}

/// `ClientAssertionVerifier` over OpenSSL: the client's `jwks`, or the key set at its `jwksUri` fetched
/// through the outbound HTTPS fetcher (its address policy, timeouts and size limit) and kept for 5 minutes,
/// fetched again at most every 30 seconds when the assertion names a `kid` the cached set lacks (the client
/// rotated its keys).
struct WebClientKeySets: ClientAssertionVerifier {
    let context: ServerContext

    /// How long a fetched key set is used, in seconds.
    static let cacheSeconds: TimeInterval = 300
    /// The least time between two fetches of one key set, in seconds.
    static let refetchSeconds: TimeInterval = 30
    /// The largest key set fetched, in bytes.
    static let maximumBytes = 65_536

    /// The process's fetched key sets by URI (fetch time and the parsed set).
    private final class Cache: @unchecked Sendable {
        let lock = NSLock()
        var sets: [String: (fetchedAt: Date, keys: JSONValue)] = [:]
    }
    private static let cache = Cache()

    func verifies(_ assertion: JWS.Parsed, client: WebClientRecord) throws -> Bool {
        if let text = client.jwks {
            guard let keys = try? JSONValue.parse(Array(text.utf8)) else { return false }
            return Self.verifies(assertion, keySet: keys)
        }
        guard let uri = client.jwksURI else { return false }
        let now = context.clock.now()
        let cached = Self.cache.lock.withLock { Self.cache.sets[uri] }
        if let cached, now.timeIntervalSince(cached.fetchedAt) < Self.cacheSeconds {
            let known = assertion.keyID.map { Self.keyIDs(cached.keys).contains($0) } ?? true
            if known || now.timeIntervalSince(cached.fetchedAt) < Self.refetchSeconds {
                return Self.verifies(assertion, keySet: cached.keys)
            }
        }
        let keys = try fetch(uri)
        Self.cache.lock.withLock { Self.cache.sets[uri] = (now, keys) }
        return Self.verifies(assertion, keySet: keys)
    }

    /// GETs the key set (a 200 JSON object); anything else is no keys (the assertion then fails to verify).
    /// - Throws: `StoreUnavailable` when the host cannot be reached (503: the client may retry).
    private func fetch(_ uri: String) throws -> JSONValue {
        guard case .success(let parsed) = RedirectURI.parse(uri), let host = parsed.host else { return .object([]) }
        let port = parsed.port ?? (parsed.kind == .link ? context.configuration.outboundPort : 80)
        switch HTTPSFetcher(configuration: context.configuration.outbound).get(
            host: host, port: port, path: parsed.pathAndQuery, maxBytes: Self.maximumBytes)
        {
        case .failure:
            throw StoreUnavailable(reason: "jwks_uri_unreachable")
        case .success(let response):
            guard response.status == 200, let keys = try? JSONValue.parse(response.body), keys.isObject else { return .object([]) }
            return keys
        }
    }

    static func keyIDs(_ keySet: JSONValue) -> Set<String> {
        guard case .array(let keys)? = keySet["keys"] else { return [] }
        return Set(keys.compactMap { $0["kid"]?.stringValue })
    }

    /// Whether a key of `keySet` verifies the assertion (RFC 7515 §5.2, RFC 7517): the key's `kty` fits
    /// `alg` (RSA for RS256, EC P-256 for ES256), its `use` is `sig` and its `alg` the header's when
    /// given, and its `kid` the header's when the header names one.
    static func verifies(_ assertion: JWS.Parsed, keySet: JSONValue) -> Bool {
        guard case .array(let keys)? = keySet["keys"] else { return false }
        for key in keys {
            if let kid = assertion.keyID, key["kid"]?.stringValue != kid { continue }
            if let use = key["use"]?.stringValue, use != "sig" { continue }
            if let alg = key["alg"]?.stringValue, alg != assertion.algorithm { continue }
            let parameters: Crypto.PublicKeyParameters
            switch (assertion.algorithm, key["kty"]?.stringValue) {
            case ("RS256", "RSA"):
                guard let n = key["n"]?.stringValue.flatMap(Base64URL.decodeCanonical),
                    let e = key["e"]?.stringValue.flatMap(Base64URL.decodeCanonical)
                else { continue }
                parameters = .rsa(n: n, e: e)
            case ("ES256", "EC"):
                guard key["crv"]?.stringValue == "P-256", let x = key["x"]?.stringValue.flatMap(Base64URL.decodeCanonical),
                    let y = key["y"]?.stringValue.flatMap(Base64URL.decodeCanonical)
                else { continue }
                parameters = .p256(x: x, y: y)
            default: continue
            }
            guard let verifying = Crypto.VerifyingKey(parameters) else { continue }
            if verifying.verify(assertion.signature, of: assertion.signingInput) { return true }
        }
        return false
    }
}

/// `POST /oauth2/authorize` (OpenID Connect Core §3.1.2.1: the authorization endpoint supports GET and
/// POST, a POST carrying the parameters with form serialization): the form body is read exactly as a GET's
/// query and the start runs unchanged, every check in the same order (docs/protocol.md, "Web clients"). A
/// query string beside the body is ignored. A body that is not `application/x-www-form-urlencoded` is the
/// shown 400 `invalid_request` (no client is trusted yet, so nothing is redirected).
struct AuthorizePost: Sendable {
    let context: ServerContext

    func start(_ request: HTTPRequest) throws -> HTTPResponse {
        if let problem = StandardOAuthHandlers.contentTypeProblem(request) {
            let surface = ErrorSurface.standard(.authorize)
            if Wire.wantsJSON(request) { return Wire.error(problem) }
            return Pages.error(
                status: 400, code: problem.code, wireCode: problem.wireError(on: surface), description: problem.wireDescription(on: surface)
            )
        }
        var asQuery = request
        asQuery.rawQuery = String(decoding: request.body, as: UTF8.self)
        asQuery.body = []
        return try SignInFlow(context: context).start(asQuery, standardEndpoint: true)
    }
}
