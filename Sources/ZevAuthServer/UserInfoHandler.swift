import Authorize
import Encoding
import Foundation
import HTTPServer

/// `GET` and `POST /oauth2/userinfo` (OpenID Connect Core §5.3; RFC 6750 §2.1, §2.2, §3.1): the access
/// token as `Authorization: Bearer zat_…`, or, on POST, as `access_token` in a form body. Every answer
/// carries `Cache-Control: no-store`.
struct UserInfoHandler: Sendable {
    let context: ServerContext

    /// No token: 401 with `WWW-Authenticate: Bearer` and no error code (RFC 6750 §3.1); a token in both the
    /// header and the body, or an unreadable form: 400 `invalid_request` (RFC 6750 §2); not a live access
    /// token: 401 `Bearer error="invalid_token"`; no `openid`: 403 `Bearer error="insufficient_scope"`;
    /// else 200 with `sub` and the claims of the granted scopes.
    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let header = Wire.bearer(request)
        var bodyToken: String?
        if request.method == "POST", StandardOAuthHandlers.contentTypeProblem(request) == nil {
            guard let form = StandardOAuthHandlers.form(request) else {
                return Wire.error(
                    ErrorAnswer(.invalidRequest, "The body must be application/x-www-form-urlencoded with each parameter once."))
            }
            bodyToken = form["access_token"]
        }
        if header != nil, bodyToken != nil {
            return Wire.error(
                ErrorAnswer(.invalidRequest, "Send the access token once: in the Authorization header or the body, not both (RFC 6750 §2).")
            )
        }
        guard let token = header ?? bodyToken else {
            let headerPresent = !request.headers.values("Authorization").isEmpty
            if headerPresent {
                return Wire.error(ErrorAnswer(.invalidToken, "The access token is invalid or expired.", challenge: .bearerInvalidToken))
            }
            var response = HTTPResponse(status: 401, headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        switch try UserInfo(store: context.roundTrip.currentSession, secrets: context.secrets)(
            accessToken: token, now: context.clock.now())
        {
        case .invalidToken:
            return Wire.error(ErrorAnswer(.invalidToken, "The access token is invalid or expired.", challenge: .bearerInvalidToken))
        case .insufficientScope:
            return Wire.error(ErrorAnswer(.insufficientScope, "This access token's sign-in was not granted the openid scope."))
        case .claims(let claims):
            return Wire.json(status: 200, claims)
        }
    }
}
