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
    ///
    /// A DPoP-bound token is taken only as `Authorization: DPoP` with a proof of its key carrying `ath`
    /// (RFC 9449 §7; docs/dpop.md, "Resources"); its refusals are 401 with a `DPoP` challenge.
    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        var presented: PresentedAccessToken?
        switch PresentedAccessToken.dpop(request, context: context) {
        case .refused(let refusal): return refusal
        case .presented(let dpop): presented = dpop
        case .none: break
        }
        let header = presented?.token ?? Wire.bearer(request)
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
        let session = try CurrentSession(store: context.roundTrip.currentSession, secrets: context.secrets)(
            accessToken: token, now: context.clock.now())
        let use = presented ?? PresentedAccessToken(token: token, proof: nil)
        if let session, let refusal = try use.bindingRefusal(session, context: context) { return refusal }
        if session == nil, use.proof != nil {
            return PresentedAccessToken.refusal(OAuthError(.invalidToken, "The access token is invalid or expired."), context: context)
        }
        switch UserInfo.outcome(for: session) {
        case .invalidToken:
            return Wire.error(ErrorAnswer(.invalidToken, "The access token is invalid or expired.", challenge: .bearerInvalidToken))
        case .insufficientScope:
            return Wire.error(ErrorAnswer(.insufficientScope, "This access token's sign-in was not granted the openid scope."))
        case .claims(let claims):
            let answer = Wire.json(status: 200, claims)
            return use.proof == nil ? answer : DPoPProofs.withNonce(answer, context: context)
        }
    }
}
