/// Every error code the server puts on the wire, with its exact spelling as the raw value.
///
/// Source: docs/protocol.md#error-codes;
/// RFC 6749 §4.1.2.1 and §5.2; RFC 6750 §3.1 (`invalid_token`).
public enum OAuthErrorCode: String, Sendable, CaseIterable {
    /// A malformed request: a repeated parameter, a missing or mistyped field (RFC 6749 §4.1.2.1, §5.2).
    case invalidRequest = "invalid_request"
    /// No or unknown publishable key (RFC 6749 §5.2).
    case invalidClient = "invalid_client"
    /// A code or refresh token that is unknown, expired, used, revoked or not this client's (RFC 6749 §5.2).
    case invalidGrant = "invalid_grant"
    /// A `grant_type` other than `authorization_code` or `refresh_token` (RFC 6749 §5.2).
    case unsupportedGrantType = "unsupported_grant_type"
    /// A `response_type` other than `code` on `/oauth2/authorize` (RFC 6749 §4.1.2.1).
    case unsupportedResponseType = "unsupported_response_type"
    /// The person declined consent (RFC 6749 §4.1.2.1).
    case accessDenied = "access_denied"
    /// `state` missing, empty, over 512 scalars, not UTF-8 or holding a control character (docs/protocol.md#state).
    case invalidState = "invalid_state"
    /// `redirect_uri` / `redirectUri` missing (docs/protocol.md#start-check-3, docs/protocol.md#exchange-row-4).
    case redirectURIRequired = "redirect_uri_required"
    /// A redirect URI that is malformed, unregistered, or not the start's (docs/protocol.md#start-check-3,
    /// docs/protocol.md#exchange-row-5).
    case redirectURIMismatch = "redirect_uri_mismatch"
    /// A custom scheme in production without the operator's exception (RFC 8252 §8.6; docs/protocol.md#start-check-3).
    case customSchemeNotAllowed = "custom_scheme_not_allowed"
    /// An https link whose domain does not (yet) list the environment's app (RFC 8252 §7.2;
    /// docs/protocol.md#link-verification).
    case nativeRedirectNotVerified = "native_redirect_not_verified"
    /// A loopback redirect in production (docs/protocol.md#redirect-kinds).
    case loopbackRedirectNotAllowed = "loopback_redirect_not_allowed"
    /// No `code_challenge` (RFC 9700 §2.1.1; docs/protocol.md#start-check-6).
    case pkceRequired = "pkce_required"
    /// `code_challenge_method` missing or not exactly `S256` (RFC 7636 §4.3; docs/protocol.md#start-check-6).
    case pkceMethodUnsupported = "pkce_method_unsupported"
    /// A challenge that is not canonical base64url of 32 bytes (RFC 7636 §4.2; docs/protocol.md#start-check-6).
    case invalidCodeChallenge = "invalid_code_challenge"
    /// A verifier that is missing, malformed or does not match the challenge (RFC 7636 §4.6;
    /// docs/protocol.md#exchange-row-6).
    case pkceVerificationFailed = "pkce_verification_failed"
    /// A session past its absolute or idle window (docs/protocol.md#refresh-row-5, docs/protocol.md#session-windows).
    case reauthenticationRequired = "reauthentication_required"
    /// Too many apps for a platform, or certificates for an Android app (docs/protocol.md#app-limits).
    case nativeAppLimit = "native_app_limit"
    /// An iOS app from another Apple team than the environment's (docs/protocol.md#app-limits).
    case nativeAppTeamMismatch = "native_app_team_mismatch"
    /// An unexpected failure; details stay in the log (RFC 6749 §4.1.2.1).
    case serverError = "server_error"
    /// The server or its database is overloaded or down (RFC 6749 §4.1.2.1).
    case temporarilyUnavailable = "temporarily_unavailable"
    /// No or unknown bearer token on the admin or session API (RFC 6750 §3.1).
    case invalidToken = "invalid_token"
    /// A key acting outside its environment (docs/protocol.md#admin-errors).
    case forbidden = "forbidden"
    /// No such resource (docs/protocol.md#admin-errors).
    case notFound = "not_found"
    /// A duplicate resource (docs/protocol.md#admin-errors).
    case conflict = "conflict"
    /// `prompt=none` and the person must sign in (OpenID Connect Core §3.1.2.6).
    case loginRequired = "login_required"
    /// `prompt=none` and the person must consent (OpenID Connect Core §3.1.2.6).
    case consentRequired = "consent_required"
    /// `prompt=none` and the person must act on a page (OpenID Connect Core §3.1.2.6).
    case interactionRequired = "interaction_required"
    /// A start with a `request` object (OpenID Connect Core §3.1.2.6, §6).
    case requestNotSupported = "request_not_supported"
    /// A start with a `request_uri` (OpenID Connect Core §3.1.2.6, §6).
    case requestURINotSupported = "request_uri_not_supported"
    /// A `request_uri` of this server's pushed requests that is unknown, used, expired or another client's
    /// (OpenID Connect Core §6.2, RFC 9101 §10.2, RFC 9126 §4: "An expired request_uri MUST be rejected as
    /// invalid"; docs/protocol.md#pushed-requests). Shown, never redirected.
    case invalidRequestURI = "invalid_request_uri"
    /// A `nonce` over 512 characters or holding a control character (OpenID Connect Core §3.1.2.1): on every
    /// surface the wire says `invalid_request` with `error_description` beginning `invalid_nonce`
    /// (docs/protocol.md#start-order).
    case invalidNonce = "invalid_nonce"
    /// A live access token whose session was not granted `openid`, at userinfo (RFC 6750 §3.1).
    case insufficientScope = "insufficient_scope"
    /// A DPoP proof that is missing where required, malformed, or breaks a rule of RFC 9449 §4.3
    /// (docs/dpop.md, "Errors"). 400 at the token endpoint and the exchange; a resource answers 401.
    case invalidDPoPProof = "invalid_dpop_proof"
    /// The server requires a DPoP nonce and the proof has none or a stale one (RFC 9449 §8): the answer
    /// carries `DPoP-Nonce`, and the client signs a new proof with it.
    case useDPoPNonce = "use_dpop_nonce"

    /// The HTTP status when this code is answered directly (not redirected), from
    /// docs/protocol.md#error-codes.
    ///
    /// `invalid_client` is 401 here, as on the exchange, token and refresh endpoints
    /// (docs/protocol.md#exchange-row-1; RFC 6749 §5.2). The start shows it with 400 (docs/protocol.md#start-check-2),
    /// which it expresses with `OAuthError`'s explicit `status`; this table stays context-free.
    public var httpStatus: Int {
        switch self {
        case .invalidRequest, .invalidGrant, .unsupportedGrantType, .unsupportedResponseType, .invalidState,
            .redirectURIRequired, .redirectURIMismatch, .pkceRequired, .pkceMethodUnsupported,
            .invalidCodeChallenge, .pkceVerificationFailed, .nativeAppLimit, .nativeAppTeamMismatch, .invalidNonce,
            .loginRequired, .consentRequired, .interactionRequired, .requestNotSupported, .requestURINotSupported,
            .invalidRequestURI, .invalidDPoPProof, .useDPoPNonce:
            return 400
        case .invalidClient, .reauthenticationRequired, .invalidToken:
            return 401
        case .accessDenied, .customSchemeNotAllowed, .nativeRedirectNotVerified, .loopbackRedirectNotAllowed,
            .forbidden, .insufficientScope:
            return 403
        case .notFound:
            return 404
        case .conflict:
            return 409
        case .serverError:
            return 500
        case .temporarilyUnavailable:
            return 503
        }
    }

    /// The `error` value on the product surface (`/v1`): the code itself, except `invalid_nonce`, which the
    /// wire calls `invalid_request` with a description beginning `invalid_nonce` (docs/protocol.md#start-order).
    public var productWireCode: OAuthErrorCode { self == .invalidNonce ? .invalidRequest : self }

    /// The RFC 6749 code that stands for this one on a standard `/oauth2/*` endpoint.
    ///
    /// - RFC 6749 codes (`invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
    ///   `unsupported_response_type`, `access_denied`, `server_error`, `temporarily_unavailable`) stand
    ///   for themselves everywhere; OpenID Connect Core §3.1.2.6's authorization codes (`login_required`,
    ///   `consent_required`, `interaction_required`, `request_not_supported`, `request_uri_not_supported`,
    ///   and §6.2's `invalid_request_uri`) stand for themselves on `/oauth2/authorize` and `/oauth2/par`.
    /// - `/oauth2/authorize`: every other code is `invalid_request` (RFC 7636 §4.4.1 for the PKCE errors,
    ///   RFC 6749 §4.1.2.1 for `state` and the redirect URI).
    /// - `/oauth2/token`: `redirect_uri_required`, `redirect_uri_mismatch`, `pkce_verification_failed`
    ///   and `reauthentication_required` are `invalid_grant` (RFC 6749 §5.2, RFC 7636 §4.6;
    ///   docs/protocol.md#token-errors); `invalid_token` is `invalid_client` (a bad bearer on the token
    ///   endpoint, RFC 6749 §5.2); `invalid_dpop_proof` and `use_dpop_nonce` stand for themselves (RFC
    ///   9449 §5, §8); every other code is `invalid_request`.
    /// - Parameter endpoint: the standard endpoint answering.
    public func rfcCode(at endpoint: StandardEndpoint) -> OAuthErrorCode {
        switch self {
        case .invalidRequest, .invalidClient, .invalidGrant, .unsupportedGrantType, .unsupportedResponseType,
            .accessDenied, .serverError, .temporarilyUnavailable:
            return self
        case .loginRequired, .consentRequired, .interactionRequired, .requestNotSupported, .requestURINotSupported,
            .invalidRequestURI:
            return endpoint == .authorize ? self : .invalidRequest
        default:
            break
        }
        switch endpoint {
        case .authorize:
            return .invalidRequest
        case .token:
            switch self {
            case .redirectURIRequired, .redirectURIMismatch, .pkceVerificationFailed, .reauthenticationRequired:
                return .invalidGrant
            case .invalidToken:
                return .invalidClient
            case .invalidDPoPProof, .useDPoPNonce:
                // RFC 9449 §5 and §8 define both for the token endpoint itself.
                return self
            default:
                return .invalidRequest
            }
        }
    }
}

/// The standard RFC 6749 endpoints, whose `error` is restricted to RFC codes.
///
/// Source: docs/protocol.md#standard-surface.
public enum StandardEndpoint: Sendable, Equatable {
    /// `GET /oauth2/authorize` (RFC 6749 §4.1.2.1 error codes).
    case authorize
    /// `POST /oauth2/token` (RFC 6749 §5.2 error codes).
    case token
}

/// Where an error is answered, which decides how its code and description are spelled on the wire.
///
/// Source: docs/protocol.md#authorize-errors, docs/protocol.md#token-errors.
public enum ErrorSurface: Sendable, Equatable {
    /// ZevAuth's own endpoints (`/v1/...`): `error` is the product code.
    case zevAuth
    /// A standard `/oauth2/...` endpoint: `error` is the RFC code, `error_description` starts with the
    /// product code.
    case standard(StandardEndpoint)
}

/// An error answered to a client: a product code, a safe description and the HTTP status to use when it
/// is answered directly.
///
/// `description` is sent as `error_description`: it never carries a code, verifier, token, password or
/// any echoed request value (docs/protocol.md#json-error-body).
/// `status` is usually `code.httpStatus`; the one context-dependent status in the contract, the start's
/// 400 `invalid_client`, is set explicitly by the code that raises it. A redirected error's `status` is
/// not used (the redirect is a 303).
public struct OAuthError: Error, Sendable, Equatable {
    /// The product error code.
    public let code: OAuthErrorCode
    /// Safe human-readable text, sent as `error_description`.
    public let description: String
    /// The HTTP status when the error is answered directly.
    public let status: Int

    /// Creates an error.
    /// - Parameters:
    ///   - code: the product code.
    ///   - description: safe text (no secrets, no echoed input).
    ///   - status: an explicit status; `nil` (the default) takes `code.httpStatus`.
    public init(_ code: OAuthErrorCode, _ description: String, status: Int? = nil) {
        self.code = code
        self.description = description
        self.status = status ?? code.httpStatus
    }

    /// The `error` value on the given surface: the product code on `/v1`, the RFC code on `/oauth2`.
    public func wireError(on surface: ErrorSurface) -> String {
        switch surface {
        case .zevAuth: return code.productWireCode.rawValue
        case .standard(let endpoint): return code.rfcCode(at: endpoint).rawValue
        }
    }

    /// The `error_description` value on the given surface. On a standard endpoint it always begins with
    /// the product code and `": "` (docs/protocol.md#authorize-errors), even
    /// when the product code is itself an RFC code, so clients can parse it one way.
    public func wireDescription(on surface: ErrorSurface) -> String {
        switch surface {
        case .zevAuth: return code == .invalidNonce ? code.rawValue + ": " + description : description
        case .standard: return code.rawValue + ": " + description
        }
    }
}
