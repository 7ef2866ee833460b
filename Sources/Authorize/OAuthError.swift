/// Every error code the server puts on the wire, with its exact spelling as the raw value.
///
/// Source: PRODUCT.md "Errors the seed names", "Exchange", "Admin API"; seed 003's error table;
/// RFC 6749 §4.1.2.1 and §5.2; RFC 6750 §3.1 (`invalid_token`).
public enum OAuthErrorCode: String, Sendable, CaseIterable {
    case invalidRequest = "invalid_request"
    case invalidClient = "invalid_client"
    case invalidGrant = "invalid_grant"
    case unsupportedGrantType = "unsupported_grant_type"
    case unsupportedResponseType = "unsupported_response_type"
    case accessDenied = "access_denied"
    case invalidState = "invalid_state"
    case redirectURIRequired = "redirect_uri_required"
    case redirectURIMismatch = "redirect_uri_mismatch"
    case customSchemeNotAllowed = "custom_scheme_not_allowed"
    case nativeRedirectNotVerified = "native_redirect_not_verified"
    case loopbackRedirectNotAllowed = "loopback_redirect_not_allowed"
    case pkceRequired = "pkce_required"
    case pkceMethodUnsupported = "pkce_method_unsupported"
    case invalidCodeChallenge = "invalid_code_challenge"
    case pkceVerificationFailed = "pkce_verification_failed"
    case reauthenticationRequired = "reauthentication_required"
    case nativeAppLimit = "native_app_limit"
    case nativeAppTeamMismatch = "native_app_team_mismatch"
    case serverError = "server_error"
    case temporarilyUnavailable = "temporarily_unavailable"
    case invalidToken = "invalid_token"
    case forbidden = "forbidden"
    case notFound = "not_found"
    case conflict = "conflict"

    /// The HTTP status when this code is answered directly (not redirected), from seed 003's error table
    /// and PRODUCT.md.
    ///
    /// `invalid_client` is 401 here, as on the exchange, token and refresh endpoints (PRODUCT.md
    /// "Exchange" row 1; RFC 6749 §5.2). The start shows it with 400 (PRODUCT.md "Start: order of checks"
    /// 2), which it expresses with `OAuthError`'s explicit `status`; this table stays context-free.
    public var httpStatus: Int {
        switch self {
        case .invalidRequest, .invalidGrant, .unsupportedGrantType, .unsupportedResponseType, .invalidState,
            .redirectURIRequired, .redirectURIMismatch, .pkceRequired, .pkceMethodUnsupported,
            .invalidCodeChallenge, .pkceVerificationFailed, .nativeAppLimit, .nativeAppTeamMismatch:
            return 400
        case .invalidClient, .reauthenticationRequired, .invalidToken:
            return 401
        case .accessDenied, .customSchemeNotAllowed, .nativeRedirectNotVerified, .loopbackRedirectNotAllowed,
            .forbidden:
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

    /// The RFC 6749 code that stands for this one on a standard `/oauth2/*` endpoint.
    ///
    /// - RFC 6749 codes (`invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`,
    ///   `unsupported_response_type`, `access_denied`, `server_error`, `temporarily_unavailable`) stand
    ///   for themselves everywhere.
    /// - `/oauth2/authorize`: every other code is `invalid_request` (RFC 7636 §4.4.1 for the PKCE errors,
    ///   RFC 6749 §4.1.2.1 for `state` and the redirect URI).
    /// - `/oauth2/token`: `redirect_uri_required`, `redirect_uri_mismatch`, `pkce_verification_failed`
    ///   and `reauthentication_required` are `invalid_grant` (RFC 6749 §5.2, RFC 7636 §4.6; PRODUCT.md
    ///   "Standard OAuth surface"); `invalid_token` is `invalid_client` (a bad bearer on the token
    ///   endpoint, RFC 6749 §5.2); every other code is `invalid_request`.
    /// - Parameter endpoint: the standard endpoint answering.
    public func rfcCode(at endpoint: StandardEndpoint) -> OAuthErrorCode {
        switch self {
        case .invalidRequest, .invalidClient, .invalidGrant, .unsupportedGrantType, .unsupportedResponseType,
            .accessDenied, .serverError, .temporarilyUnavailable:
            return self
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
            default:
                return .invalidRequest
            }
        }
    }
}

/// The standard RFC 6749 endpoints, whose `error` is restricted to RFC codes.
///
/// Source: PRODUCT.md "Standard OAuth surface".
public enum StandardEndpoint: Sendable, Equatable {
    /// `GET /oauth2/authorize` (RFC 6749 §4.1.2.1 error codes).
    case authorize
    /// `POST /oauth2/token` (RFC 6749 §5.2 error codes).
    case token
}

/// Where an error is answered, which decides how its code and description are spelled on the wire.
///
/// Source: PRODUCT.md "Start: order of checks" (last paragraph) and "Standard OAuth surface".
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
/// any echoed request value (STYLE.md "Redact by default").
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
        case .zevAuth: return code.rawValue
        case .standard(let endpoint): return code.rfcCode(at: endpoint).rawValue
        }
    }

    /// The `error_description` value on the given surface. On a standard endpoint it always begins with
    /// the product code and `": "` (PRODUCT.md: "`error_description` begins with this page's code"), even
    /// when the product code is itself an RFC code, so clients can parse it one way.
    public func wireDescription(on surface: ErrorSurface) -> String {
        switch surface {
        case .zevAuth: return description
        case .standard: return code.rawValue + ": " + description
        }
    }
}
