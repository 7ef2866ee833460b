import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The standard OAuth surface over the same core (docs/protocol.md#standard-surface): RFC 8414
/// metadata, `POST /oauth2/token` (RFC 6749 §4.1.3, §6), `POST /oauth2/revoke` (RFC 7009) and
/// `POST /oauth2/introspect` (RFC 7662).
struct StandardOAuthHandlers: Sendable {
    let context: ServerContext

    // MARK: Metadata

    /// `GET /.well-known/oauth-authorization-server` (RFC 8414 §2, §3): the document encoded once from the
    /// configuration (`ConstantDocuments.metadataDocument`), answered as bytes. Public and the same for
    /// everyone, so clients may cache it briefly (`Cache-Control: public, max-age=300`, no `Pragma`).
    static func metadata(_ documents: ConstantDocuments) -> HTTPResponse {
        var response = Wire.jsonBytes(status: 200, documents.metadata)
        response.headers.set("Cache-Control", "public, max-age=300")
        response.headers.remove("Pragma")
        return response
    }

    // MARK: Form bodies

    /// A form body's parameters (RFC 6749 Appendix B), each at most once (RFC 6749 §3.2: "Request and
    /// response parameters MUST NOT be included more than once"); an empty value counts as missing.
    /// - Returns: nil when the body does not decode or repeats a parameter.
    static func form(_ request: HTTPRequest) -> [String: String]? {
        guard let pairs = try? FormURLEncoding.decode(bytes: request.body) else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in pairs {
            guard fields[name] == nil else { return nil }
            fields[name] = value
        }
        return fields.filter { !$0.value.isEmpty }
    }

    /// The media type every form endpoint reads (RFC 6749 §4.1.3, §6; RFC 7009 §2.1; RFC 7662 §2.1).
    static let formMediaType = "application/x-www-form-urlencoded"

    /// Media types a client plausibly sends by mistake, named in the error; any other is "another media
    /// type" (a description never echoes the request).
    private static let namedMediaTypes: Set<String> = [
        "application/json", "text/plain", "multipart/form-data", "application/xml", "text/xml", "application/octet-stream",
    ]

    /// The `Content-Type` check: the media type (case-insensitive, parameters such as `; charset=UTF-8`
    /// allowed) must be `application/x-www-form-urlencoded`. Otherwise 400 `invalid_request` naming what
    /// was sent and what is needed, before the client is looked at: a JSON body's `client_id` was sent, just
    /// not in a form (docs/protocol.md, "Standard OAuth surface").
    /// - Returns: the error, or nil when the body is a form.
    static func contentTypeProblem(_ request: HTTPRequest) -> OAuthError? {
        let required = "The body must be sent as Content-Type: \(formMediaType)"
        guard let header = request.headers["Content-Type"] else {
            return OAuthError(.invalidRequest, required + "; this request has no Content-Type.")
        }
        let mediaType = (header.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespaces).lowercased()
        if mediaType == formMediaType { return nil }
        let sent = namedMediaTypes.contains(mediaType) ? mediaType : "another media type"
        return OAuthError(.invalidRequest, required + "; this request sent \(sent).")
    }

    /// RFC 6749 §2.3: clients here are public (`token_endpoint_auth_methods_supported: ["none"]`), and a
    /// client "MUST NOT use more than one authentication method in each request". So client credentials
    /// are never ignored: `Authorization: Basic` beside `client_id`, a `client_secret` (even empty), or a
    /// `client_assertion` / `client_assertion_type` (RFC 7521 §4.2, RFC 7523 §2.2) is 400 `invalid_request`;
    /// `Authorization: Basic` alone is 401 `invalid_client` challenging the scheme the client used (RFC 6749
    /// §5.2: `WWW-Authenticate` matching it). The scheme is the header's first word, ended by a space or a
    /// tab and compared case-insensitively (RFC 9110 §11.1, §11.6.2).
    /// - Parameter names: every parameter name of the decoded body, empty values included.
    /// - Returns: the answer, or nil when the request carries no client credentials.
    static func clientCredentialsProblem(_ request: HTTPRequest, names: Set<String>) -> HTTPResponse? {
        let basic = request.headers.values("Authorization").contains { header in
            authorizationScheme(header) == "basic"
        }
        if names.contains("client_assertion") || names.contains("client_assertion_type") {
            return tokenError(
                .invalidRequest,
                "Clients are public here: send client_id without a client_assertion or client_assertion_type (RFC 6749 §2.3).")
        }
        if basic && (names.contains("client_id") || names.contains("client_secret")) {
            return tokenError(
                .invalidRequest,
                "Send the publishable key as client_id only: this request also authenticates with Authorization: Basic (RFC 6749 §2.3).")
        }
        if names.contains("client_secret") {
            return tokenError(
                .invalidRequest, "Clients are public here: send client_id without a client_secret (RFC 6749 §2.3).")
        }
        if basic {
            var response = tokenError(
                .invalidClient, "Clients are public here: send the publishable key as client_id in the body, not with Authorization: Basic."
            )
            response.headers.set("WWW-Authenticate", "Basic realm=\"ZevAuth\"")
            return response
        }
        return nil
    }

    /// The lower-cased authentication scheme of an `Authorization` value: its first word, ended by a space
    /// or a tab (RFC 9110 §11.6.2: `credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`; a tab is
    /// read as a space so that no spelling of `Basic` goes unnoticed).
    static func authorizationScheme(_ header: String) -> String {
        let trimmed = header.drop { $0 == " " || $0 == "\t" }
        return String(trimmed.prefix { $0 != " " && $0 != "\t" }).lowercased()
    }

    /// The shared front of `/oauth2/token` and `/oauth2/revoke`, in order: the `Content-Type`, a body that
    /// decodes with each parameter once (a value holding U+0000 does not decode), then no client
    /// credentials beside `client_id`.
    /// - Returns: the form's non-empty values, or the answer to send.
    private static func publicClientForm(_ request: HTTPRequest) -> Result<[String: String], Stop> {
        if let problem = contentTypeProblem(request) {
            return .failure(Stop(GrantResult.failed(problem).response(on: .standard(.token))))
        }
        guard let pairs = try? FormURLEncoding.decode(bytes: request.body),
            let fields = form(request)
        else {
            return .failure(Stop(tokenError(.invalidRequest, unreadableForm)))
        }
        if let stop = clientCredentialsProblem(request, names: Set(pairs.map(\.name))) { return .failure(Stop(stop)) }
        return .success(fields)
    }

    /// A response to send instead of going on.
    private struct Stop: Error {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    private static let unreadableForm =
        "The body must be application/x-www-form-urlencoded with each parameter once and no NUL character."

    private static func tokenError(_ code: OAuthErrorCode, _ description: String) -> HTTPResponse {
        GrantResult.failed(OAuthError(code, description)).response(on: .standard(.token))
    }

    /// The environment id and publishable key named by `client_id` (public client, RFC 6749 §2.3 "none"), or nil.
    private func environment(clientID: String?) throws -> (id: String, publishableKey: String)? {
        guard let clientID, clientID.hasPrefix("pk_"),
            let id = try context.roundTrip.revoke.environmentID(publishableKey: clientID)
        else { return nil }
        return (id, clientID)
    }

    // MARK: Token

    /// `POST /oauth2/token`, form-encoded. Checks in order: `Content-Type` a form, a decodable body with no
    /// repeated parameter, no client credentials beside `client_id` (400 `invalid_request`; Basic alone
    /// 401 `invalid_client`, `publicClientForm`), `client_id` a known publishable key (401 `invalid_client`), `grant_type`
    /// present (`invalid_request`) and supported (`unsupported_grant_type`), the grant's parameters
    /// present (`invalid_request`), then the exchange or refresh core, whose failures are all
    /// `invalid_grant` with the product code first in `error_description` (RFC 6749 §5.2).
    ///
    /// Failed code grants count as failed exchanges and failed refresh grants as failed refreshes, against
    /// the client address (docs/protocol.md#rate-limits). A well-formed grant runs as one statement, which
    /// checks the client and the limit itself; only a request that fails before the grant looks the client
    /// up (to keep 401 before 400) and reads the limit on its own.
    func token(_ request: HTTPRequest) throws -> HTTPResponse {
        let limiter = RateLimiter(context: context)
        let address = ClientAddress.of(request, configuration: context.configuration)
        let bucket: RateLimitBucket =
            Self.form(request)?["grant_type"] == "refresh_token" ? .refreshFailuresPerAddress : .exchangeFailuresPerAddress
        let response = try checkedToken(request, limiter: limiter, address: address, bucket: bucket)
        return try limiter.countingFailure(bucket, key: address, of: response)
    }

    private func checkedToken(_ request: HTTPRequest, limiter: RateLimiter, address: String, bucket: RateLimitBucket) throws
        -> HTTPResponse
    {
        func limitedOr(_ answer: () throws -> HTTPResponse) throws -> HTTPResponse {
            if case .limited(let seconds) = try limiter.check(bucket, key: address) {
                return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
            }
            return try answer()
        }
        // A web client (`zc_…`) authenticates and is answered apart (docs/protocol.md, "Web clients").
        if let answer = try WebClientTokenHandler(context: context).answer(request, limiter: limiter, address: address, bucket: bucket) {
            return answer
        }
        let unknownClient = GrantResult.failed(OAuthError(.invalidClient, "Send the environment's publishable key as client_id."))
            .response(on: .standard(.token))
        let form: [String: String]
        switch Self.publicClientForm(request) {
        case .failure(let stop): return try limitedOr { stop.response }
        case .success(let fields): form = fields
        }
        guard let clientID = form["client_id"], clientID.hasPrefix("pk_") else { return try limitedOr { unknownClient } }
        // A refusal before the grant: the client is looked up first, so an unknown one is still 401.
        func refused(_ answer: HTTPResponse) throws -> HTTPResponse {
            try limitedOr { try context.roundTrip.exchange.isKnownClient(publishableKey: clientID) ? answer : unknownClient }
        }
        let gate = limiter.gate(bucket, key: address)
        let proof: DPoPProofUse?
        switch DPoPProofs.grantProof(request, context: context) {
        case .failure(let refusal):
            return try refused(DPoPProofs.withNonce(GrantResult.failed(refusal.error).response(on: .standard(.token)), context: context))
        case .success(let use): proof = use
        }
        let result: GrantResult
        switch form["grant_type"] {
        case nil:
            return try refused(Self.tokenError(.invalidRequest, "grant_type is required."))
        case "authorization_code":
            guard let code = form["code"] else { return try refused(Self.tokenError(.invalidRequest, "code is required.")) }
            let fields = ExchangeHandler.Fields(code: code, redirectURI: form["redirect_uri"], codeVerifier: form["code_verifier"])
            result = try ExchangeHandler(context: context).grant(fields, publishableKey: clientID, gate: gate, proof: proof)
        case "refresh_token":
            guard let refreshToken = form["refresh_token"] else {
                return try refused(Self.tokenError(.invalidRequest, "refresh_token is required."))
            }
            result = try SessionGrants(context: context).refresh(
                refreshToken: refreshToken, publishableKey: clientID, gate: gate, proof: proof)
        case TokenExchangeRequest.grantType:
            // The native token exchange (RFC 8693) looks its client up itself, so an unknown one is still 401;
            // the proof binds its session as it binds a code exchange's.
            return try limitedOr {
                try TokenExchangeHandler(context: context).respond(
                    form, publishableKey: clientID, clientAddress: address, proof: proof, request: request)
            }
        default:
            return try refused(
                Self.tokenError(
                    .unsupportedGrantType, "grant_type must be authorization_code, refresh_token or \(TokenExchangeRequest.grantType)."))
        }
        if result.outcome == .invalidClient { return unknownClient }
        return DPoPProofs.grantAnswer(result, on: .standard(.token), request, context: context)
    }

    // MARK: Pushed authorization requests

    /// `POST /oauth2/par` (RFC 9126 §2; docs/protocol.md#pushed-requests), form-encoded. In order: the
    /// `Content-Type` (400 `invalid_request`), client authentication (`ClientAuthentication`: a web client
    /// with its registered method as at the token endpoint, 400 `invalid_request` for a malformed one and
    /// else 401 `invalid_client`; a publishable key with no credentials, credentials 401 `invalid_client`),
    /// then the start's ordered checks on the body's parameters (`PushAuthorizationRequest`). 201 `{"request_uri","expires_in"}`, or the check's error as
    /// JSON (§2.3): never a redirect or a page. Every refusal is 400 except `invalid_client`, 401 with
    /// `WWW-Authenticate` as at the token endpoint; `error` is spelled as on `/oauth2/authorize`, with the
    /// product code first in `error_description`.
    ///
    /// A `DPoP` proof here (RFC 9449 §10.1) binds the code to its key as `dpop_jkt` does: a valid proof adds
    /// its thumbprint as `dpop_jkt`, and a `dpop_jkt` of another key, or a proof that breaks a rule, is 400
    /// `invalid_dpop_proof` (docs/dpop.md, "Binding").
    func pushAuthorizationRequest(_ request: HTTPRequest) throws -> HTTPResponse {
        if let problem = Self.contentTypeProblem(request) { return Self.pushedError(problem) }
        var query = StartValidator.parse(bytes: request.body)
        if let (presented, _) = WebClientTokenHandler.presented(request), ClientAuthentication.namedWebClient(presented) != nil {
            // A web client authenticates as at the token endpoint (RFC 9126 §2); its assertion may name this
            // endpoint, the token endpoint or the issuer as `aud`.
            let issuer = context.configuration.issuer
            let authentication = ClientAuthentication(
                store: context.tenancy.webClients, verifier: WebClientKeySets(context: context), secrets: context.secrets)
            switch try authentication.authenticate(
                presented, audiences: [issuer + "/oauth2/par", issuer + "/oauth2/token", issuer], now: context.clock.now())
            {
            case .failure(let failure):
                return Self.pushedError(failure.error, basic: failure.basicTried)
            case .success(let client):
                // The credentials are not request parameters: they are never stored with the pushed request.
                // A client that authenticated with Basic or an assertion may leave `client_id` out (RFC 6749
                // §2.3.1, RFC 7523 §3); the stored request names it, as the start needs.
                var pairs = query.pairs.filter { !ClientAuthentication.credentialParameters.contains($0.name) }
                if !pairs.contains(where: { $0.name == "client_id" }) {
                    pairs.append(StartQuery.Pair("client_id", client.client.clientID))
                }
                query = StartQuery(pairs: pairs, undecodable: query.undecodable)
            }
        } else {
            let scheme = request.headers["Authorization"].map(Self.authorizationScheme)
            if let problem = ClientAuthentication.checkPublicClient(
                parameterNames: Set(query.pairs.map(\.name)), authorizationScheme: scheme)
            {
                return Self.pushedError(problem, basic: scheme == "basic")
            }
        }
        switch DPoPProofs.grantProof(request, context: context) {
        case .failure(let refusal):
            return DPoPProofs.withNonce(Self.pushedDPoPError(refusal.error), context: context)
        case .success(let use?):
            let sent = query.pairs.filter { $0.name == "dpop_jkt" }.map(\.value)
            guard sent.allSatisfy({ $0 == use.thumbprint }) else {
                return DPoPProofs.withNonce(Self.pushedDPoPError(DPoPRefusal.otherKey.error), context: context)
            }
            if sent.isEmpty {
                query = StartQuery(pairs: query.pairs + [StartQuery.Pair("dpop_jkt", use.thumbprint)], undecodable: query.undecodable)
            }
        case .success(nil):
            break
        }
        let startStore = ConsoleStartStore(base: context.roundTrip.start, issuer: context.configuration.issuer)
        switch try PushAuthorizationRequest(clients: startStore, store: context.roundTrip.pushedRequests, secrets: context.secrets)(
            body: query, now: context.clock.now())
        {
        case .refused(let error):
            return Self.pushedError(error)
        case .pushed(let requestURI, let expiresIn):
            return Wire.json(status: 201, ["request_uri": .string(requestURI), "expires_in": .int(expiresIn)] as JSONValue)
        }
    }

    /// A PAR refusal for its DPoP proof: 400 `invalid_dpop_proof` (RFC 9449 §10.1).
    private static func pushedDPoPError(_ error: OAuthError) -> HTTPResponse {
        Wire.json(status: 400, ["error": .string(error.code.rawValue), "error_description": .string(error.description)] as JSONValue)
    }

    /// A PAR refusal (RFC 9126 §2.3): 401 for `invalid_client` (challenging `Basic` when the client used it,
    /// RFC 6749 §5.2, else `Bearer` as the token endpoint does), 400 otherwise.
    private static func pushedError(_ error: OAuthError, basic: Bool = false) -> HTTPResponse {
        let surface = ErrorSurface.standard(.authorize)
        let unauthorized = error.code == .invalidClient
        var response = Wire.json(
            status: unauthorized ? 401 : 400,
            ["error": .string(error.wireError(on: surface)), "error_description": .string(error.wireDescription(on: surface))]
                as JSONValue)
        if unauthorized { response.headers.set("WWW-Authenticate", basic ? "Basic realm=\"ZevAuth\"" : "Bearer") }
        return response
    }

    // MARK: Revocation

    /// `POST /oauth2/revoke` (RFC 7009 §2.1), form `token`, optional `token_type_hint` (ignored: both
    /// kinds are looked up), `client_id`. 200 with an empty body for every well-formed request from a
    /// known client, whether or not the token was live or this client's (§2.2).
    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        // A web client (`zc_…`) authenticates and revokes only its own tokens (docs/protocol.md, "Web clients").
        if let answer = try WebClientTokenHandler(context: context).revoke(request) { return answer }
        let form: [String: String]
        switch Self.publicClientForm(request) {
        case .failure(let stop): return stop.response
        case .success(let fields): form = fields
        }
        guard let environment = try environment(clientID: form["client_id"]) else {
            return GrantResult.failed(OAuthError(.invalidClient, "Send the environment's publishable key as client_id."))
                .response(on: .standard(.token))
        }
        guard let token = form["token"] else { return Self.tokenError(.invalidRequest, "token is required.") }
        try SessionGrants(context: context).revoke(token: token, environmentID: environment.id)
        return HTTPResponse(status: 200, headers: HTTPHeaders([("Cache-Control", "no-store"), ("Pragma", "no-cache")]))
    }

    // MARK: Introspection

    /// `POST /oauth2/introspect` (RFC 7662), form `token`, authenticated by `Authorization: Bearer sk_…`.
    /// 401 `invalid_client` without a live secret key; 400 `invalid_request` without `token`. A live
    /// access token of the key's environment answers `active: true` with `client_id`, `sub` (the account
    /// id), `sid` (the session id), `exp`, `iat` (Unix seconds), `token_type`, `iss`; anything else, a
    /// refresh token or another environment's token included, is `{"active": false}` (§2.2).
    func introspect(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let key = Wire.bearer(request), key.hasPrefix("sk_test_") || key.hasPrefix("sk_live_"),
            let environmentID = try context.roundTrip.introspect.environmentID(secretKeyHash: context.secrets.digest(key))
        else {
            return GrantResult.failed(OAuthError(.invalidClient, "Send a secret key of the environment as Authorization: Bearer sk_…"))
                .response(on: .standard(.token))
        }
        if let problem = Self.contentTypeProblem(request) { return GrantResult.failed(problem).response(on: .standard(.token)) }
        guard let form = Self.form(request) else { return Self.tokenError(.invalidRequest, Self.unreadableForm) }
        guard let token = form["token"] else { return Self.tokenError(.invalidRequest, "token is required.") }
        guard
            let live = try Introspect(store: context.roundTrip.introspect, secrets: context.secrets)(
                token: token, environmentID: environmentID, now: context.clock.now())
        else {
            return Wire.json(status: 200, ["active": false] as JSONValue)
        }
        return Wire.json(status: 200, IntrospectionBody(token: live, issuer: context.configuration.issuer))
    }
}

/// `POST /oauth2/introspect`'s body for a live token (RFC 7662 §2.2).
struct IntrospectionBody: JSONEncodable {
    let token: IntrospectedToken
    let issuer: String

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("active", true)
            object.field("client_id", token.clientID)
            object.field("sub", token.userID)
            object.field("sid", token.sessionID)
            // A DPoP-bound token says so and names its key (RFC 9449 §6.2).
            object.field("token_type", token.dpopThumbprint == nil ? "Bearer" : "DPoP")
            if let thumbprint = token.dpopThumbprint {
                object.field("cnf") { writer in writer.object { $0.field("jkt", thumbprint) } }
            }
            object.field("iss", issuer)
            object.field("exp", Int(token.expiresAt.timeIntervalSince1970))
            object.field("iat", Int(token.issuedAt.timeIntervalSince1970))
        }
    }
}
