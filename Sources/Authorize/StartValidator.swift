import Encoding
import PKCE

/// Development or production: decides which redirect kinds a start accepts
/// (docs/protocol.md#redirect-kinds).
public enum EnvironmentKind: String, Sendable, Equatable {
    /// `pk_test_…`: every registered kind is allowed.
    case development
    /// `pk_live_…`: custom schemes only when the operator enabled them, links only when verified, no loopback.
    case production
}

/// One registered callback of an environment, with the facts the store computed for it.
public struct RegisteredRedirect: Sendable, Equatable {
    /// The registered URI (parsed when it was registered).
    public let uri: RedirectURI
    /// For a custom scheme: the operator enabled this scheme for one of the environment's apps
    /// (docs/protocol.md#admin-calls, `productionCustomScheme`). Ignored for other kinds and in development.
    public let productionCustomSchemeAllowed: Bool
    /// For a link, in the environment's own sense: in development, the link's domain is a verified
    /// project domain; in production, the domain's latest association check verified one of the
    /// environment's apps for it (for iOS, with this callback's path covered). Ignored for other kinds.
    public let linkVerified: Bool

    /// Creates a registered callback.
    public init(uri: RedirectURI, productionCustomSchemeAllowed: Bool = false, linkVerified: Bool = false) {
        self.uri = uri
        self.productionCustomSchemeAllowed = productionCustomSchemeAllowed
        self.linkVerified = linkVerified
    }
}

/// The environment a publishable key (`client_id`) names, as the start needs it.
public struct ClientEnvironment: Sendable, Equatable {
    /// The environment's identifier in the store.
    public let environmentID: String
    /// Development or production.
    public let kind: EnvironmentKind
    /// The app name the consent page shows.
    public let appName: String
    /// Every callback registered for the environment; for a web client, its redirect URIs.
    public let registeredRedirects: [RegisteredRedirect]
    /// The environment's `requirePushedAuthorizationRequests` (default false): a start must resume a pushed
    /// request (RFC 9126 §4, §6; docs/protocol.md#pushed-requests).
    public var requiresPushedRequests = false
    /// Set when `client_id` names a web client (docs/protocol.md, "Web clients"): its redirect URIs are
    /// matched exactly (no loopback port leeway), and its PKCE rule applies.
    public var webClient: WebClientStartFacts?

    /// Creates a client environment.
    public init(environmentID: String, kind: EnvironmentKind, appName: String, registeredRedirects: [RegisteredRedirect]) {
        self.environmentID = environmentID
        self.kind = kind
        self.appName = appName
        self.registeredRedirects = registeredRedirects
    }
}

/// What the start needs of a web client.
public struct WebClientStartFacts: Sendable, Equatable {
    /// `zc_…`.
    public let clientID: String
    /// Whether every request needs PKCE (false: an OpenID request with a `nonce` may go without).
    public let requirePKCE: Bool
    /// The client's own `requirePushedAuthorizationRequests` (RFC 9126 §6 client metadata
    /// `require_pushed_authorization_requests`): a start must resume a pushed request even when the
    /// environment does not require it.
    public let requirePushedRequests: Bool

    public init(clientID: String, requirePKCE: Bool, requirePushedRequests: Bool = false) {
        self.clientID = clientID
        self.requirePKCE = requirePKCE
        self.requirePushedRequests = requirePushedRequests
    }
}

/// Whether the start forces the password (OpenID Connect Core §3.1.2.1's `prompt=login`, or `max_age=0`;
/// docs/protocol.md#start-parameters). The other options are in `RequestOptions`.
public enum Prompt: String, Sendable, Equatable {
    /// Ask for the password even when a ZevID browser session exists.
    case login
}

/// A start request that passed every check: the only input code issuance accepts.
public struct ValidatedStartRequest: Sendable, Equatable {
    /// The environment the publishable key names.
    public let environmentID: String
    /// The redirect URI exactly as requested (for a loopback, with the requested port): the code is bound
    /// to it and the exchange compares it byte for byte.
    public let redirect: RedirectURI
    /// The client's state, returned unchanged.
    public let state: OAuthState
    /// The S256 challenge.
    public let challenge: CodeChallenge
    /// `.login` to force a password prompt; `nil` otherwise.
    public let prompt: Prompt?
    /// A login hint of at most 320 scalars with no control character, to pre-fill the email field.
    public let loginHint: String?
    /// The OpenID Connect request options (`prompt`, `max_age`, the hints; docs/protocol.md, "prompt,
    /// max_age and hints").
    public var options = RequestOptions()
    /// The scope granted for the requested `scope` (docs/protocol.md, "OpenID Connect").
    public var scope: GrantedScope = .none
    /// The `nonce` sent, when one was (OpenID Connect Core §3.1.2.1).
    public var nonce: Nonce?
    /// `dpop_jkt`, when sent: the code's exchange must carry a DPoP proof of this key (RFC 9449 §10;
    /// docs/dpop.md, "Binding").
    public var dpopThumbprint: String?
    /// The web client the sign-in is for (`zc_…`); nil for the environment's native apps.
    public var webClientID: String?
}

/// What the HTTP shell does with a start request.
public enum StartDecision: Sendable, Equatable {
    /// Every check passed: continue to sign-in.
    case proceed(ValidatedStartRequest)
    /// The redirect URI is not trusted (yet): show the error to the person with `error.status`, never
    /// redirect (RFC 6749 §4.1.2.1, RFC 9700 §4.11.2).
    case show(OAuthError)
    /// The redirect URI is trusted: send the error back to it (303, or the "Return to the app" page) with
    /// `state` and `iss` (RFC 6749 §4.1.2.1). `state` is `nil` only for a refused request object
    /// (docs/protocol.md#start-check-4) whose outer `state` is missing or invalid: every later redirected
    /// error comes after the state check.
    case redirect(OAuthError, to: RedirectURI, state: OAuthState?)
}

/// Where a start request's parameters came in: which decides the few checks that differ
/// (docs/protocol.md#start-order, docs/protocol.md#pushed-requests).
public enum StartEndpoint: Sendable, Equatable {
    /// `GET /v1/auth/zevid/start`: the product codes, no `response_type`.
    case zevAuthStart
    /// `GET /oauth2/authorize` with the parameters in its query.
    case authorize
    /// `POST /oauth2/par` (RFC 9126 §2.1): the same checks, answered as JSON by the shell; `request_uri` is
    /// `invalid_request` and an unknown client 401.
    case pushed
    /// `GET /oauth2/authorize` resuming a pushed request: the parameters stored when it was pushed.
    case pushedReference

    /// Whether `/oauth2/authorize`'s rules apply (the `response_type` check, RFC codes on the wire).
    public var isStandard: Bool { self != .zevAuthStart }
}

/// A start request's parameters as decoded, in order, duplicates kept, with the names whose value could not
/// be decoded (`StartValidator.parse(rawQuery:)`).
public struct StartQuery: Sendable, Equatable {
    /// Every name and decoded value, in order; an undecodable value stands as U+FFFD.
    public let pairs: [Pair]
    /// The names whose value could not be decoded.
    public let undecodable: Set<String>

    /// One parameter.
    public struct Pair: Sendable, Equatable {
        public let name: String
        public let value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A query from decoded pairs and the names that did not decode.
    public init(pairs: [Pair], undecodable: Set<String> = []) {
        self.pairs = pairs
        self.undecodable = undecodable
    }

    /// A query from the parameters stored for a pushed request (`storableParameters`), every value decoded.
    public init(stored parameters: [String: String]) {
        self.init(pairs: parameters.sorted { $0.key < $1.key }.map { Pair($0.key, $0.value) })
    }

    /// The parameters to store for a pushed request that passed every check: each name once (check 1
    /// passed), without the values that did not decode. Dropping those changes nothing the checks decide:
    /// an undecodable `login_hint` or `scope` already counts as absent, and any other undecodable value of
    /// a known parameter fails its check, so such a request is never stored (docs/protocol.md#pushed-requests).
    public var storableParameters: [String: String] {
        var parameters: [String: String] = [:]
        for pair in pairs where !undecodable.contains(pair.name) { parameters[pair.name] = pair.value }
        return parameters
    }

    /// The first value of `name`, when it decoded.
    public func value(_ name: String) -> String? {
        guard !undecodable.contains(name) else { return nil }
        return pairs.first { $0.name == name }?.value
    }
}

/// The checks of `GET /v1/auth/zevid/start`, `GET /oauth2/authorize` and `POST /oauth2/par`, in the order of
/// docs/protocol.md#start-order.
public enum StartValidator {
    /// The longest `login_hint` kept, in Unicode scalars (`RequestOptions.loginHintMaximumLength`).
    public static let loginHintMaximumLength = RequestOptions.loginHintMaximumLength

    /// Decides a start request.
    ///
    /// Shown (never redirected), in order:
    /// 1. any parameter given twice → 400 `invalid_request` (RFC 6749 §3.1);
    /// 2. `client_id` missing or unknown → 400 `invalid_client` (RFC 6749 §4.1.2.1);
    /// 3. `redirect_uri` missing → 400 `redirect_uri_required`; malformed or unregistered → 400
    ///    `redirect_uri_mismatch` (RFC 6749 §3.1.2.3, RFC 8252 §7.3); production custom scheme not enabled
    ///    → 403 `custom_scheme_not_allowed` (RFC 8252 §8.6); link not verified → 403
    ///    `native_redirect_not_verified` (RFC 8252 §7.2); production loopback → 403
    ///    `loopback_redirect_not_allowed`.
    ///
    /// Redirected, with the outer `state` when it is valid and without one otherwise:
    /// 4. a client that requires pushed requests, on a start that does not resume one → `invalid_request`
    ///    (RFC 9126 §4); then `request` → `request_not_supported`, `request_uri` → `request_uri_not_supported`
    ///    (OpenID Connect Core §6.1, §6.2; `request` is named when both are given).
    ///
    /// Shown (never redirected):
    /// 5. `state` missing or invalid → 400 `invalid_state`.
    ///
    /// Redirected with the state, in order:
    /// 6. standard endpoint only, first: `response_type` missing → `invalid_request`, not `code` →
    ///    `unsupported_response_type` (RFC 6749 §4.1.2.1; docs/protocol.md#authorize-errors); then
    ///    `code_challenge` missing → `pkce_required` (RFC 9700 §2.1.1); `code_challenge_method` not exactly
    ///    `S256` → `pkce_method_unsupported` (RFC 7636 §4.4.1); challenge not canonical → `invalid_code_challenge`
    ///    (RFC 7636 §4.2). A web client that opted out of PKCE (`WebClientStartFacts.requirePKCE` false) and
    ///    sent no `code_challenge` at all is decided after 8 instead: `pkce_required` unless the request is
    ///    an OpenID one with a `nonce` (docs/protocol.md, "Web clients");
    /// 7. `nonce` over 512 scalars or holding a control character → `invalid_request` with
    ///    `error_description` beginning `invalid_nonce` (OpenID Connect Core §3.1.2.1). `scope` is never refused: unknown values are ignored.
    /// 8. the OpenID Connect request options (`RequestOptions.parse`): a bad `prompt`, `max_age` or
    ///    `response_mode` → `invalid_request` (OpenID Connect Core §3.1.2.1); `form_post` from a client that is
    ///    not a web client → `invalid_request`.
    /// 9. `dpop_jkt` not a SHA-256 JWK thumbprint → `invalid_request` (RFC 9449 §10).
    ///
    /// An empty value counts as missing.
    /// - Parameters:
    ///   - query: the form-decoded query, in order, duplicates kept (`FormURLEncoding.decode`).
    ///   - standardEndpoint: `true` on `/oauth2/authorize` (adds the `response_type` check; the shell spells
    ///     errors with `ErrorSurface.standard(.authorize)`).
    ///   - lookupClient: the environment of a publishable key, or `nil` when unknown.
    public static func decide(
        query: [(name: String, value: String)], standardEndpoint: Bool, lookupClient: (String) -> ClientEnvironment?
    ) -> StartDecision {
        decide(query: query, undecodable: [], endpoint: standardEndpoint ? .authorize : .zevAuthStart, lookupClient: lookupClient)
    }

    /// Decides a start request from its raw query string, so that a value that cannot be decoded fails the
    /// check that owns it, in order, instead of failing the whole request.
    ///
    /// The query is split on `&` (empty segments skipped) and each name and value decoded as
    /// `application/x-www-form-urlencoded` (`FormURLEncoding.decodeComponent`). A value with a malformed
    /// `%` escape, invalid UTF-8 or a U+0000 (`StorableText`, docs/protocol.md "Text values") becomes an
    /// invalid value of its parameter, so it never reaches `lookupClient`: `state` → `invalid_state`
    /// (docs/protocol.md#state: not valid UTF-8 is `invalid_state`), `client_id` →
    /// `invalid_client`, `redirect_uri` → `redirect_uri_mismatch`, `code_challenge` →
    /// `invalid_code_challenge`, and so on; an undecodable `login_hint` is ignored.
    /// - Parameters:
    ///   - rawQuery: the query without the leading `?`, exactly as received.
    ///   - standardEndpoint: `true` on `/oauth2/authorize`.
    ///   - lookupClient: the environment of a publishable key, or `nil` when unknown.
    public static func decide(
        rawQuery: String, standardEndpoint: Bool, lookupClient: (String) -> ClientEnvironment?
    ) -> StartDecision {
        decide(parse(rawQuery: rawQuery), endpoint: standardEndpoint ? .authorize : .zevAuthStart, lookupClient: lookupClient)
    }

    /// Splits a raw query (or a form body, RFC 6749 Appendix B) into a `StartQuery`: split on `&` (empty
    /// segments skipped), each name and value decoded as `application/x-www-form-urlencoded`
    /// (`FormURLEncoding.decodeComponent`); a value that does not decode is kept as an invalid value of its
    /// parameter (see `decide(rawQuery:standardEndpoint:lookupClient:)`).
    /// - Parameter rawQuery: the query without the leading `?` (or the form body), exactly as received.
    public static func parse(rawQuery: String) -> StartQuery { parse(bytes: Array(rawQuery.utf8)) }

    /// `parse(rawQuery:)` over bytes: a form body (RFC 6749 Appendix B) as received, so that a value whose
    /// bytes are not UTF-8 fails its check exactly as in a query.
    public static func parse(bytes: [UInt8]) -> StartQuery {
        var pairs: [StartQuery.Pair] = []
        var undecodable: Set<String> = []
        for segment in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let bytes = Array(segment)
            let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
            let name = (try? FormURLEncoding.decodeComponent(bytes[..<equals])) ?? undecodableValue
            let rawValue = equals < bytes.endIndex ? bytes[(equals + 1)...] : []
            if let value = try? FormURLEncoding.decodeComponent(rawValue) {
                pairs.append(StartQuery.Pair(name, value))
            } else {
                pairs.append(StartQuery.Pair(name, undecodableValue))
                undecodable.insert(name)
            }
        }
        return StartQuery(pairs: pairs, undecodable: undecodable)
    }

    /// Decides a start request that came in at `endpoint`, with the checks and order of
    /// `decide(query:standardEndpoint:lookupClient:)`, which differ only where `endpoint` says:
    /// - `.pushed` (`POST /oauth2/par`, RFC 9126 §2.1): check 2's `invalid_client` has status 401 (RFC 9126
    ///   §2.3, RFC 6749 §5.2), and check 4 refuses `request_uri` with `invalid_request` ("The request_uri
    ///   authorization request parameter is one exception, and it MUST NOT be provided"). The shell answers
    ///   every refusal as JSON, never as a redirect.
    /// - `.zevAuthStart` and `.authorize`: when the client requires pushed requests (RFC 9126 §4: "the
    ///   authorization server will refuse, using the invalid_request error code"), check 4 first redirects
    ///   `invalid_request`, with the outer `state` when it is valid (docs/protocol.md#pushed-requests).
    /// - `.pushedReference`: the parameters stored when the request was pushed, checked again as RFC 9126 §4
    ///   asks ("MUST validate authorization requests arising from a pushed request as it would any other").
    /// - Parameters:
    ///   - query: the parameters (`parse(rawQuery:)`, or `StartQuery(stored:)`).
    ///   - endpoint: where they came in.
    ///   - lookupClient: the environment of a publishable key, or `nil` when unknown.
    public static func decide(
        _ query: StartQuery, endpoint: StartEndpoint, lookupClient: (String) -> ClientEnvironment?
    ) -> StartDecision {
        decide(
            query: query.pairs.map { (name: $0.name, value: $0.value) }, undecodable: query.undecodable, endpoint: endpoint,
            lookupClient: lookupClient)
    }

    /// Whether a request to `/oauth2/authorize` resumes one of the server's pushed requests.
    public enum PushedReference: Sendable, Equatable {
        /// No `request_uri` of ours: the query is checked as it stands (a foreign `request_uri` is check 4's).
        case none
        /// `client_id` and the random part of one of the server's request URIs (`PushedRequestURI.reference`).
        case reference(clientID: String, reference: String)
    }

    /// RFC 9126 §4: a `request_uri` with the server's prefix (`PushedRequestURI.prefix`) names a pushed
    /// request, and then only it and `client_id` are read: the other query parameters are ignored, as RFC
    /// 9101 §5 and §6.3 (which §4 builds on) ask of parameters outside the referenced request. Check 1 still
    /// comes first: a query that repeats a parameter, or whose `client_id` or `request_uri` did not decode, is
    /// `.none` and fails the ordinary checks; so is one without `client_id` (check 2, RFC 9126 §4's example
    /// sends it and RFC 9101 §5 requires it).
    public static func pushedReference(_ query: StartQuery) -> PushedReference {
        guard case .success(let parameters) = uniqueParameters(query.pairs.map { (name: $0.name, value: $0.value) }),
            !query.undecodable.contains("request_uri"), !query.undecodable.contains("client_id"),
            let requestURI = present(parameters["request_uri"]), let reference = PushedRequestURI.reference(requestURI),
            let clientID = present(parameters["client_id"])
        else { return .none }
        return .reference(clientID: clientID, reference: reference)
    }

    /// Stands in for a name or value that could not be decoded: non-empty (so it is not "missing") and
    /// non-ASCII (so no client ID, redirect URI, challenge or method can equal it).
    private static let undecodableValue = "\u{FFFD}"

    private static func decide(
        query: [(name: String, value: String)], undecodable: Set<String>, endpoint: StartEndpoint,
        lookupClient: (String) -> ClientEnvironment?
    ) -> StartDecision {
        let parameters: [String: String]
        switch uniqueParameters(query) {
        case .failure(let error): return .show(error)
        case .success(let unique): parameters = unique
        }
        let client: ClientEnvironment
        switch checkClient(parameters, lookupClient: lookupClient) {
        case .failure(let error):
            // RFC 9126 §2.3: the pushed request endpoint answers as the token endpoint does (RFC 6749 §5.2).
            return .show(endpoint == .pushed ? OAuthError(error.code, error.description, status: 401) : error)
        case .success(let found): client = found
        }
        let redirect: RedirectURI
        switch checkRedirect(parameters, client: client) {
        case .failure(let error): return .show(error)
        case .success(let trusted): redirect = trusted
        }
        // 4. Request objects, before the state they may carry: the outer state comes back only when valid.
        let outerState = undecodable.contains("state") ? nil : checkState(parameters)
        if let error = checkPushedRequired(client, endpoint: endpoint) {
            return .redirect(error, to: redirect, state: outerState)
        }
        if let error = checkRequestObject(parameters, endpoint: endpoint) {
            return .redirect(error, to: redirect, state: outerState)
        }
        guard let state = outerState else {
            return .show(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."))
        }
        if endpoint.isStandard, let error = checkResponseType(parameters) {
            return .redirect(error, to: redirect, state: state)
        }
        var challenge: CodeChallenge?
        switch checkPKCE(parameters) {
        case .failure(let error):
            // RFC 9700 §2.1.1: a confidential client may go without PKCE when it uses the OpenID nonce; a
            // web client that opted out (`requirePkce` false) and sent no challenge at all is decided after
            // the nonce and scope below. Every other client keeps the rule.
            guard error.code == .pkceRequired, client.webClient?.requirePKCE == false else {
                return .redirect(error, to: redirect, state: state)
            }
        case .success(let valid): challenge = valid
        }
        // 7. OpenID Connect (docs/protocol.md, "OpenID Connect"): after the redirect URI is trusted, so a bad
        // nonce is redirected with `state` and `iss`.
        let nonce: Nonce?
        switch checkNonce(parameters, undecodable: undecodable) {
        case .failure(let error): return .redirect(error, to: redirect, state: state)
        case .success(let checked): nonce = checked
        }
        // 8. OpenID Connect's request options (docs/protocol.md, "prompt, max_age and hints").
        let options: RequestOptions
        switch RequestOptions.parse(parameters, undecodable: undecodable) {
        case .failure(let error): return .redirect(error, to: redirect, state: state)
        case .success(let parsed): options = parsed
        }
        // OAuth 2.0 Form Post Response Mode is for web clients (docs/protocol.md, "Web clients"): a native
        // app's redirect URI opens an app, which cannot receive a POST.
        if options.formPost && client.webClient == nil {
            return .redirect(
                OAuthError(.invalidRequest, "response_mode=form_post is for web clients; native apps use query."), to: redirect,
                state: state)
        }
        let scope = GrantedScope(requested: undecodable.contains("scope") ? nil : parameters["scope"])
        if challenge == nil && !(scope.openID && nonce != nil) {
            return .redirect(
                OAuthError(.pkceRequired, "code_challenge is required unless this is an OpenID request with a nonce."),
                to: redirect, state: state)
        }
        var validated = ValidatedStartRequest(
            environmentID: client.environmentID, redirect: redirect, state: state, challenge: challenge ?? .waived,
            prompt: options.forcesSignIn ? .login : nil, loginHint: options.loginHint, options: options)
        validated.nonce = nonce
        // 9. DPoP (RFC 9449 §10): a `dpop_jkt` binds the code to a key, when it is a SHA-256 thumbprint.
        switch checkDPoPThumbprint(parameters, undecodable: undecodable) {
        case .failure(let error): return .redirect(error, to: redirect, state: state)
        case .success(let thumbprint): validated.dpopThumbprint = thumbprint
        }
        validated.scope = scope
        validated.webClientID = client.webClient?.clientID
        return .proceed(validated)
    }

    /// RFC 9449 §10: `dpop_jkt` is optional (empty counts as missing); when sent it must be the base64url
    /// of a 32-byte SHA-256 JWK thumbprint (RFC 7638), else `invalid_request`.
    static func checkDPoPThumbprint(_ parameters: [String: String], undecodable: Set<String>) -> Result<String?, OAuthError> {
        guard let raw = present(parameters["dpop_jkt"]) else { return .success(nil) }
        guard !undecodable.contains("dpop_jkt"), Base64URL.decodeCanonical(raw)?.count == 32 else {
            return .failure(OAuthError(.invalidRequest, "dpop_jkt must be the base64url SHA-256 thumbprint of the DPoP key."))
        }
        return .success(raw)
    }

    /// OpenID Connect Core §3.1.2.1: `nonce` is optional (empty counts as missing); when sent it must be
    /// 1–512 characters under the `state` rules (docs/protocol.md#state), else `invalid_request` with
    /// `error_description` beginning `invalid_nonce`, on both starts.
    static func checkNonce(_ parameters: [String: String], undecodable: Set<String>) -> Result<Nonce?, OAuthError> {
        guard let raw = present(parameters["nonce"]) else { return .success(nil) }
        guard !undecodable.contains("nonce"), let nonce = Nonce(decoded: raw) else {
            return .failure(OAuthError(.invalidNonce, "nonce must be 1 to 512 characters with no control character."))
        }
        return .success(nonce)
    }

    // MARK: - The checks, one per function

    /// RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once." Applies to
    /// every name, known or not.
    static func uniqueParameters(_ query: [(name: String, value: String)]) -> Result<[String: String], OAuthError> {
        var parameters: [String: String] = [:]
        for (name, value) in query {
            if parameters.updateValue(value, forKey: name) != nil {
                return .failure(OAuthError(.invalidRequest, "A parameter was given more than once."))
            }
        }
        return .success(parameters)
    }

    /// docs/protocol.md#start-check-2: the publishable key must name an environment. Shown with 400,
    /// not the token endpoint's 401: no client authentication was attempted (RFC 6749 §4.1.2.1).
    static func checkClient(
        _ parameters: [String: String], lookupClient: (String) -> ClientEnvironment?
    ) -> Result<ClientEnvironment, OAuthError> {
        guard let clientID = present(parameters["client_id"]), let client = lookupClient(clientID) else {
            return .failure(OAuthError(.invalidClient, "client_id is missing or unknown.", status: 400))
        }
        return .success(client)
    }

    /// docs/protocol.md#redirect-kinds and docs/protocol.md#start-check-3. Returns the requested URI once
    /// it matches a registered one that this environment may use.
    static func checkRedirect(_ parameters: [String: String], client: ClientEnvironment) -> Result<RedirectURI, OAuthError> {
        guard let raw = present(parameters["redirect_uri"]) else {
            return .failure(OAuthError(.redirectURIRequired, "redirect_uri is required."))
        }
        // RFC 6749 §3.1.2.3 / RFC 9700 §4.1.3: exact matching against the registered URIs (loopback: any port,
        // RFC 8252 §7.3).
        guard case .success(let requested) = RedirectURI.parse(raw) else {
            return .failure(OAuthError(.redirectURIMismatch, "redirect_uri is not a registered callback."))
        }
        // A web client's redirect URIs match byte for byte, a loopback one with its port (RFC 9700 §4.1.3):
        // the port leeway is for native apps (RFC 8252 §7.3).
        let matches = client.registeredRedirects.filter {
            client.webClient == nil ? requested.matchesRegistered($0.uri) : requested.raw.utf8.elementsEqual($0.uri.raw.utf8)
        }
        guard !matches.isEmpty else {
            return .failure(OAuthError(.redirectURIMismatch, "redirect_uri is not a registered callback."))
        }
        switch requested.kind {
        case .customScheme:
            // RFC 8252 §8.6: any app can claim a custom scheme; production needs the operator's exception.
            if client.kind == .production && !matches.contains(where: \.productionCustomSchemeAllowed) {
                return .failure(
                    OAuthError(.customSchemeNotAllowed, "Custom URL schemes are not enabled for this production app."))
            }
        case .link:
            // RFC 8252 §7.2: a claimed https link is only as good as the domain's association.
            if !matches.contains(where: \.linkVerified) {
                return .failure(
                    OAuthError(.nativeRedirectNotVerified, "The link's domain does not list a registered app yet."))
            }
        case .loopback:
            if client.kind == .production {
                return .failure(
                    OAuthError(.loopbackRedirectNotAllowed, "Loopback redirects are not allowed in production."))
            }
        }
        return .success(requested)
    }

    /// docs/protocol.md#start-check-4, OpenID Connect Core §6.1 and §6.2: request objects, by value or by
    /// reference, are not supported (discovery says `request_parameter_supported: false` and
    /// `request_uri_parameter_supported: false`). Decided before `state` and PKCE because both may travel
    /// only inside the object, and after the redirect URI is trusted so the client hears the OpenID code
    /// (§3.1.2.6). An empty value counts as missing; an undecodable one is still present. With both given
    /// (§6 forbids it), `request` is named. At `POST /oauth2/par`, `request_uri` is `invalid_request`
    /// (RFC 9126 §2.1: it "MUST NOT be provided"). The server's own request URIs never reach this check
    /// (docs/protocol.md#pushed-requests): `Start` resumes them before deciding.
    static func checkRequestObject(_ parameters: [String: String], endpoint: StartEndpoint = .authorize) -> OAuthError? {
        if present(parameters["request"]) != nil {
            return OAuthError(.requestNotSupported, "Request objects (the request parameter) are not supported.")
        }
        if endpoint == .pushed, present(parameters["request_uri"]) != nil {
            return OAuthError(.invalidRequest, "A pushed authorization request must not carry request_uri (RFC 9126 §2.1).")
        }
        if present(parameters["request_uri"]) != nil {
            return OAuthError(.requestURINotSupported, "Request objects by reference (request_uri) are not supported.")
        }
        return nil
    }

    /// RFC 9126 §4, §6 and docs/protocol.md#pushed-requests: a client whose environment requires pushed
    /// requests, or a web client that requires them itself, may start only by resuming one; on both starts,
    /// after its redirect URI is trusted, `invalid_request`.
    static func checkPushedRequired(_ client: ClientEnvironment, endpoint: StartEndpoint) -> OAuthError? {
        let required = client.requiresPushedRequests || client.webClient?.requirePushedRequests == true
        guard required, endpoint == .zevAuthStart || endpoint == .authorize else { return nil }
        return OAuthError(.invalidRequest, "This client must use pushed authorization requests (POST /oauth2/par).")
    }

    /// docs/protocol.md#start-check-5 and docs/protocol.md#state: 1–512 scalars, no Cc. Missing and empty
    /// are both invalid.
    static func checkState(_ parameters: [String: String]) -> OAuthState? {
        present(parameters["state"]).flatMap(OAuthState.init(decoded:))
    }

    /// RFC 6749 §4.1.1 / §4.1.2.1, standard endpoint only: `response_type=code` exactly.
    static func checkResponseType(_ parameters: [String: String]) -> OAuthError? {
        guard let responseType = present(parameters["response_type"]) else {
            return OAuthError(.invalidRequest, "response_type is required.")
        }
        guard responseType.utf8.elementsEqual("code".utf8) else {
            return OAuthError(.unsupportedResponseType, "Only response_type=code is supported.")
        }
        return nil
    }

    /// RFC 9700 §2.1.1 (PKCE for every client), RFC 7636 §4.3 (S256 only, case-sensitive), §4.2 (encoding).
    static func checkPKCE(_ parameters: [String: String]) -> Result<CodeChallenge, OAuthError> {
        guard let rawChallenge = present(parameters["code_challenge"]) else {
            return .failure(OAuthError(.pkceRequired, "code_challenge is required."))
        }
        // Byte comparison: Swift's `==` is Unicode canonical equivalence, and exactly `S256` is required.
        guard let method = parameters["code_challenge_method"], method.utf8.elementsEqual("S256".utf8) else {
            return .failure(OAuthError(.pkceMethodUnsupported, "code_challenge_method must be S256."))
        }
        guard let challenge = CodeChallenge(rawChallenge) else {
            return .failure(
                OAuthError(.invalidCodeChallenge, "code_challenge must be the base64url SHA-256 of the verifier."))
        }
        return .success(challenge)
    }

    /// docs/protocol.md#empty-parameter: "An empty parameter counts as missing."
    private static func present(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
