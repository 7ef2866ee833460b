import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// `prompt=none` at the start (OpenID Connect Core 1.0 §3.1.2.1; docs/protocol.md, "prompt, max_age and
/// hints"): the answer is always a direct 303 to the trusted redirect URI, with a code or an error.
extension SignInFlow {
    /// Decides a recorded `prompt=none` start (`NoInteraction.decide`) from what the start attached, the
    /// hint and the remembered consent, and answers it with a 303: the code when no page is needed, else
    /// `login_required`/`consent_required`/`interaction_required`, the pending sign-in then ended.
    func answerWithoutInteraction(
        _ recorded: RecordedSignIn, _ validated: ValidatedStartRequest, _ request: HTTPRequest, cookies: [String],
        surface: ErrorSurface
    ) throws -> HTTPResponse {
        let store = context.roundTrip.pendingSignIns
        let now = context.clock.now()
        // The browser session the start attached (live, recent enough for max_age and the environment's
        // session maximum age), only when this browser still holds it.
        var session: BrowserSessionRecord?
        if recorded.authenticated, let token = context.cookie(.session, in: request),
            let attached = try store.authorizationRequest(id: recorded.requestID)?.browserSessionID,
            let found = try store.browserSession(tokenHash: Crypto.hexSHA256(token)), found.id == attached
        {
            session = found
        }
        let hint = validated.options.idTokenHint.flatMap { context.roundTrip.idTokenHints.read($0) }
        let remembered =
            try session.map { session -> Bool in
                if let clientID = validated.webClientID {
                    return WebClientConsent.covers(
                        remembered: try context.tenancy.webClients.webClientConsents(userID: session.userID, clientID: clientID),
                        requested: validated.scope)
                }
                return validated.redirect.kind == .link
                    ? try store.hasConsent(userID: session.userID, environmentID: validated.environmentID) : false
            }
            ?? false
        let consent = Consent(store: context.roundTrip.consent, secrets: context.secrets)
        var error: OAuthError
        switch NoInteraction.decide(
            browserAccount: session?.userID, hint: hint, redirectKind: validated.redirect.kind, consentRemembered: remembered,
            webClient: validated.webClientID != nil)
        {
        case .issueCode:
            if let session,
                let code = try consent.allow(
                    requestID: recorded.requestID, redirect: validated.redirect, browserSessionID: session.id, now: now)
            {
                let parameters = successRedirectParameters(code: code, state: validated.state, issuer: context.configuration.issuer)
                if validated.options.formPost {
                    var page = FormPostResponse.page(to: validated.redirect, parameters: parameters)
                    for cookie in cookies { page.headers.add("Set-Cookie", cookie) }
                    return page
                }
                let location = redirectLocation(base: validated.redirect, parameters: parameters)
                return Wire.seeOther(location, cookies: cookies)
            }
            error = NoInteraction.interactionRequired
        case .refuse(let refused):
            error = refused
        }
        _ = try consent.deny(requestID: recorded.requestID, now: now)
        var response = redirectError(
            error, to: validated.redirect, state: validated.state, appName: "the app", heldForGesture: false, surface: surface,
            formPost: validated.options.formPost)
        for cookie in cookies { response.headers.add("Set-Cookie", cookie) }
        return response
    }
}
