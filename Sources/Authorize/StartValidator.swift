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
    /// Every callback registered for the environment.
    public let registeredRedirects: [RegisteredRedirect]

    /// Creates a client environment.
    public init(environmentID: String, kind: EnvironmentKind, appName: String, registeredRedirects: [RegisteredRedirect]) {
        self.environmentID = environmentID
        self.kind = kind
        self.appName = appName
        self.registeredRedirects = registeredRedirects
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

/// The checks of `GET /v1/auth/zevid/start` and `GET /oauth2/authorize`, in the order of
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
    /// 4. `request` → `request_not_supported`, `request_uri` → `request_uri_not_supported` (OpenID Connect
    ///    Core §6.1, §6.2; `request` is named when both are given).
    ///
    /// Shown (never redirected):
    /// 5. `state` missing or invalid → 400 `invalid_state`.
    ///
    /// Redirected with the state, in order:
    /// 6. standard endpoint only, first: `response_type` missing → `invalid_request`, not `code` →
    ///    `unsupported_response_type` (RFC 6749 §4.1.2.1; docs/protocol.md#authorize-errors); then
    ///    `code_challenge` missing → `pkce_required` (RFC 9700 §2.1.1); `code_challenge_method` not exactly
    ///    `S256` → `pkce_method_unsupported` (RFC 7636 §4.4.1); challenge not canonical → `invalid_code_challenge`
    ///    (RFC 7636 §4.2);
    /// 7. `nonce` over 512 scalars or holding a control character → `invalid_request` with
    ///    `error_description` beginning `invalid_nonce` (OpenID Connect Core §3.1.2.1). `scope` is never refused: unknown values are ignored.
    /// 8. the OpenID Connect request options (`RequestOptions.parse`): a bad `prompt`, `max_age` or
    ///    `response_mode` → `invalid_request` (OpenID Connect Core §3.1.2.1).
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
        decide(query: query, undecodable: [], standardEndpoint: standardEndpoint, lookupClient: lookupClient)
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
        var query: [(name: String, value: String)] = []
        var undecodable: Set<String> = []
        for segment in rawQuery.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let bytes = Array(segment)
            let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
            let name = (try? FormURLEncoding.decodeComponent(bytes[..<equals])) ?? undecodableValue
            let rawValue = equals < bytes.endIndex ? bytes[(equals + 1)...] : []
            if let value = try? FormURLEncoding.decodeComponent(rawValue) {
                query.append((name, value))
            } else {
                query.append((name, undecodableValue))
                undecodable.insert(name)
            }
        }
        return decide(query: query, undecodable: undecodable, standardEndpoint: standardEndpoint, lookupClient: lookupClient)
    }

    /// Stands in for a name or value that could not be decoded: non-empty (so it is not "missing") and
    /// non-ASCII (so no client ID, redirect URI, challenge or method can equal it).
    private static let undecodableValue = "\u{FFFD}"

    private static func decide(
        query: [(name: String, value: String)], undecodable: Set<String>, standardEndpoint: Bool,
        lookupClient: (String) -> ClientEnvironment?
    ) -> StartDecision {
        let parameters: [String: String]
        switch uniqueParameters(query) {
        case .failure(let error): return .show(error)
        case .success(let unique): parameters = unique
        }
        let client: ClientEnvironment
        switch checkClient(parameters, lookupClient: lookupClient) {
        case .failure(let error): return .show(error)
        case .success(let found): client = found
        }
        let redirect: RedirectURI
        switch checkRedirect(parameters, client: client) {
        case .failure(let error): return .show(error)
        case .success(let trusted): redirect = trusted
        }
        // 4. Request objects, before the state they may carry: the outer state comes back only when valid.
        let outerState = undecodable.contains("state") ? nil : checkState(parameters)
        if let error = checkRequestObject(parameters) {
            return .redirect(error, to: redirect, state: outerState)
        }
        guard let state = outerState else {
            return .show(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."))
        }
        if standardEndpoint, let error = checkResponseType(parameters) {
            return .redirect(error, to: redirect, state: state)
        }
        let challenge: CodeChallenge
        switch checkPKCE(parameters) {
        case .failure(let error): return .redirect(error, to: redirect, state: state)
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
        var validated = ValidatedStartRequest(
            environmentID: client.environmentID, redirect: redirect, state: state, challenge: challenge,
            prompt: options.forcesSignIn ? .login : nil, loginHint: options.loginHint, options: options)
        validated.nonce = nonce
        validated.scope = GrantedScope(requested: undecodable.contains("scope") ? nil : parameters["scope"])
        return .proceed(validated)
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
        let matches = client.registeredRedirects.filter { requested.matchesRegistered($0.uri) }
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
    /// (§6 forbids it), `request` is named.
    static func checkRequestObject(_ parameters: [String: String]) -> OAuthError? {
        if present(parameters["request"]) != nil {
            return OAuthError(.requestNotSupported, "Request objects (the request parameter) are not supported.")
        }
        if present(parameters["request_uri"]) != nil {
            return OAuthError(.requestURINotSupported, "Request objects by reference (request_uri) are not supported.")
        }
        return nil
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
