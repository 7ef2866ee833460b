import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PostgresStore

/// What a token grant (exchange or refresh) produced: a new pair for a session, or an error carrying its
/// product code. Rendered on ZevAuth's surface (docs/protocol.md#exchange-success) or on the standard
/// token endpoint (RFC 6749 §5.1/§5.2).
enum GrantResult {
    case issued(IssuedSession, accessToken: String, refreshToken: String, now: Date)
    case failed(OAuthError)
    /// The client's failure limit is reached: 429 with `Retry-After` on either surface.
    case limited(retryAfterSeconds: Int)

    /// No or unknown publishable key (docs/protocol.md#exchange-row-1; RFC 6749 §5.2).
    static let invalidClient = OAuthError(.invalidClient, "Send the environment's publishable key as Authorization: Bearer pk_…")

    /// The answer on `surface`: 200 with the session, or the error with `Cache-Control: no-store`.
    /// On `/oauth2/token` the error is the RFC code with the product code first in `error_description`,
    /// and its status is the RFC code's (a `reauthentication_required` is a 400 `invalid_grant` there).
    func response(on surface: ErrorSurface) -> HTTPResponse {
        switch (self, surface) {
        case (.limited(let seconds), _):
            return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
        case (.issued(let session, let accessToken, let refreshToken, let now), .zevAuth):
            return Wire.anyJSON(
                status: 200, ExchangeHandler.sessionBody(session, accessToken: accessToken, refreshToken: refreshToken, now: now))
        case (.issued(let session, let accessToken, let refreshToken, let now), .standard):
            return Wire.anyJSON(
                status: 200,
                [
                    "access_token": accessToken, "token_type": "Bearer", "refresh_token": refreshToken,
                    "expires_in": max(0, Int(session.accessExpiresAt.timeIntervalSince(now).rounded())),
                ] as [String: Any])
        case (.failed(let error), .zevAuth):
            var response = Wire.error(error)
            if error.code == .invalidClient { response.headers.set("WWW-Authenticate", "Bearer") }
            return response
        case (.failed(let error), .standard(let endpoint)):
            let rfc = error.code.rfcCode(at: endpoint)
            var response = Wire.anyJSON(
                status: rfc.httpStatus, ["error": rfc.rawValue, "error_description": error.wireDescription(on: surface)])
            if rfc == .invalidClient { response.headers.set("WWW-Authenticate", "Bearer") }
            return response
        }
    }
}

/// `POST /v1/auth/session/refresh` and `POST /v1/auth/session/revoke` (docs/protocol.md#refresh,
/// docs/protocol.md#revoke), and the
/// refresh core that `POST /oauth2/token` shares.
struct SessionGrants: Sendable {
    let context: ServerContext

    /// Refresh with rotation (`PostgresStore.refresh`, one statement): a new pair, reuse revoking the
    /// session outside the grace, 401 `reauthentication_required` past a window.
    func refresh(refreshToken: String, publishableKey: String) throws -> GrantResult {
        let accessToken = try Crypto.mintToken(prefix: "zat_")
        let newRefreshToken = try Crypto.mintToken(prefix: "zrt_")
        let now = context.clock.now()
        let outcome = try context.store.refresh(
            PostgresStore.RefreshAttempt(
                publishableKey: publishableKey, refreshTokenHash: Crypto.hexSHA256(refreshToken),
                newAccessTokenHash: Crypto.hexSHA256(accessToken), newRefreshTokenHash: Crypto.hexSHA256(newRefreshToken),
                now: now))
        switch outcome {
        case .unknownClient:
            context.metrics.refresh(.invalidClient)
            return .failed(GrantResult.invalidClient)
        case .unknownToken:
            context.metrics.refresh(.invalidGrant)
            return .failed(OAuthError(.invalidGrant, "The refresh token is invalid."))
        case .ended(let revokedForReuse):
            context.metrics.refresh(revokedForReuse ? .reuseRevoked : .ended)
            return .failed(
                OAuthError(
                    .invalidGrant,
                    revokedForReuse
                        ? "The refresh token was already used; the session has ended. Sign in again, and refresh single-flight."
                        : "The session has ended. Sign in again."))
        case .reauthenticationRequired:
            context.metrics.refresh(.reauthenticationRequired)
            return .failed(OAuthError(.reauthenticationRequired, "The session has expired. Sign in again."))
        case .refreshed(let session):
            context.metrics.refresh(.ok)
            return .issued(session, accessToken: accessToken, refreshToken: newRefreshToken, now: now)
        }
    }

    /// `POST /v1/auth/session/refresh` `{"refreshToken"}` with `Authorization: Bearer pk_…`.
    /// Order as the exchange: 401 `invalid_client`, 400 `invalid_request`, then the grant.
    func handleRefresh(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let publishableKey = Wire.bearer(request), publishableKey.hasPrefix("pk_") else {
            context.metrics.refresh(.invalidClient)
            return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
        }
        guard let body = JSONObjectBody(request.body), case .value(let token) = body.string("refreshToken") else {
            guard try context.store.environment(publishableKey: publishableKey) != nil else {
                context.metrics.refresh(.invalidClient)
                return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
            }
            context.metrics.refresh(.invalidRequest)
            return Wire.error(OAuthError(.invalidRequest, "The body must be a JSON object with \"refreshToken\" as a string."))
        }
        return try refresh(refreshToken: token, publishableKey: publishableKey).response(on: .zevAuth)
    }

    /// `POST /v1/auth/session/revoke` `{"token"}` (access or refresh token) with `Authorization: Bearer
    /// pk_…`: 200 `{}` whether or not the token was live (RFC 7009 §2.2); ends the session it belongs to.
    func handleRevoke(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let publishableKey = Wire.bearer(request), publishableKey.hasPrefix("pk_"),
            let environment = try context.store.environment(publishableKey: publishableKey)
        else {
            return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
        }
        guard let body = JSONObjectBody(request.body), case .value(let token) = body.string("token") else {
            return Wire.error(OAuthError(.invalidRequest, "The body must be a JSON object with \"token\" as a string."))
        }
        try revoke(token: token, environment: environment)
        return Wire.anyJSON(status: 200, [String: Any]())
    }

    /// Ends the session that issued `token` when it is this environment's; anything else is ignored.
    func revoke(token: String, environment: EnvironmentRecord) throws {
        guard token.hasPrefix("zat_") || token.hasPrefix("zrt_") else { return }
        try context.store.revokeSession(
            environmentID: environment.id, tokenHash: Crypto.hexSHA256(token), reason: "signed_out", now: context.clock.now())
    }
}
