import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PKCE

/// The browser half of the round trip (docs/protocol.md#round-trip): the start, the
/// hosted sign-in page, consent, and the redirect back to the app with `code`, `state` and `iss`.
struct SignInFlow: Sendable {
    let context: ServerContext

    /// A pending sign-in lives 10 minutes (docs/protocol.md#pending-sign-in).
    static let pendingLifetimeSeconds: Double = 600
    static let genericCredentialsMessage = "The email or password is incorrect."
    /// What a sign-in form says when the email is not an address this server accepts.
    static let invalidEmailMessage = "Enter a valid email address."

    private var store: any PendingSignInStore { context.roundTrip.pendingSignIns }
    private var consent: Consent { Consent(store: context.roundTrip.consent, secrets: context.secrets) }

    // MARK: Start

    /// `GET /v1/auth/zevid/start` and `GET /oauth2/authorize`: the checks of docs/protocol.md#start-order
    /// (`StartValidator`), then a pending sign-in bound to this browser and a 303 to the next page.
    func start(_ request: HTTPRequest, standardEndpoint: Bool) throws -> HTTPResponse {
        // The browser's binding id only when the server minted it and keeps it on record for the whole
        // pending sign-in; any other value (a planted one included) gets a fresh id. A browser already
        // signed in to ZevID skips the password unless prompt=login or its authentication is older than
        // the environment's session maximum age (docs/protocol.md#browser-recognised). Both are decided
        // inside the one statement that records the pending sign-in.
        let presented = context.cookie(.binding, in: request).flatMap { BrowserBinding.hasShape($0) ? $0 : nil }
        let startStore = ConsoleStartStore(base: context.roundTrip.start, issuer: context.configuration.issuer)
        let outcome = try Start(store: startStore, secrets: context.secrets, pushedRequests: context.roundTrip.pushedRequests)(
            rawQuery: request.rawQuery ?? "", standardEndpoint: standardEndpoint, presentedBinding: presented,
            browserSessionToken: context.cookie(.session, in: request), bindingLifetimeSeconds: BrowserBinding.lifetimeSeconds,
            lifetimeSeconds: Self.pendingLifetimeSeconds, now: context.clock.now())
        let surface: ErrorSurface = standardEndpoint ? .standard(.authorize) : .zevAuth
        switch outcome {
        case .refused(.show(let error), _, _, _):
            return show(error, request, surface: surface)
        case .refused(.redirect(let error, let to, let state), let appName, let asksNoInteraction, let formPost):
            // prompt=none: never a page once the redirect URI is trusted, "Return to the app" included.
            // The console is no app: its callback is this server's own page, never held for a gesture.
            // Nor is a web client (docs/protocol.md, "Web clients"): its redirect URI is a server's page.
            // The start decided the response mode from the checked parameters (the pushed ones on a resumed
            // start): a form_post request gets its errors by form_post too (docs/protocol.md#form-post).
            let clientID = AccountForms.query(request, "client_id")
            let console = clientID == ConsoleClient.clientID
            let webClient = clientID?.hasPrefix(WebClients.clientIDPrefix) == true
            return redirectError(
                error, to: to, state: state, appName: appName ?? "the app",
                heldForGesture: !asksNoInteraction && !console && !webClient, surface: surface, formPost: formPost)
        case .refused(.proceed, _, _, _):
            throw ServerFailure.inconsistent("start refused a request that passed its checks")
        case .recorded(let recorded, let binding, let validated):
            let setCookies =
                recorded.mintedBinding ? [BrowserCookie.binding.set(binding, maxAge: nil, secure: context.configuration.secureCookies)] : []
            if validated.options.prompts.contains(.noInteraction) {
                return try answerWithoutInteraction(recorded, validated, request, cookies: setCookies, surface: surface)
            }
            let next = recorded.authenticated ? "/v1/auth/zevid/consent" : "/v1/auth/zevid/signin"
            return Wire.seeOther("\(next)?request=\(recorded.requestID)", cookies: setCookies)
        }
    }

    // MARK: Sign-in page

    /// `GET /v1/auth/zevid/signin?request=…`: the form, or straight to consent when this sign-in is
    /// already authenticated.
    func signInPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let pending: Pending
        switch try loadPending(queryValue(request, "request"), request) {
        case .stop(let response): return response
        case .ok(let value): pending = value
        }
        // Straight to consent only when this browser still holds the session that authenticated this
        // sign-in; a session ended or replaced since (sign-out elsewhere, another account) asks again, and
        // consent sends an unauthenticated browser here, so the two pages never bounce between each other.
        if try authenticatedSession(pending, request) != nil {
            return Wire.seeOther("/v1/auth/zevid/consent?request=\(pending.record.id)")
        }
        // A link waiting for this sign-in (docs/federation.md, "Hosted sign-in") fills in its address and says why.
        let link = try UpstreamHandlers(context: context).signInNotice(request)
        return Pages.signIn(
            requestID: pending.record.id, csrf: pending.csrf, appName: pending.environment.projectName,
            email: link?.email ?? pending.record.loginHint, error: nil, passkeys: pending.passkeys,
            upstream: try upstreamButtons(pending, request), notice: link?.notice)
    }

    /// The "Continue with NAME" buttons of this sign-in's page: its project's providers (docs/federation.md).
    private func upstreamButtons(_ pending: Pending, _ request: HTTPRequest) throws -> UpstreamButtons? {
        guard let binding = context.cookie(.binding, in: request) else { return nil }
        return try UpstreamHandlers(context: context).buttons(
            projectID: pending.environment.projectID, binding: binding, requestID: pending.record.id)
    }

    /// `POST /v1/auth/zevid/signin` (form: `request`, `csrf`, `email`, `password`): checks the password
    /// (Argon2id), starts a ZevID browser session, and continues to consent. A wrong email or password
    /// gets one generic message, with the same cost for an unknown email.
    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        let pending: Pending
        switch try loadPostedPending(form, request) {
        case .stop(let response): return response
        case .ok(let value): pending = value
        }
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let user: UserRecord
        switch try AccountSecurity(context: context).checkPassword(email: email, password: form["password"] ?? "", request: request) {
        case .limited(let seconds):
            context.metrics.signIn(.password, .rateLimited)
            var response = Pages.signIn(
                requestID: pending.record.id, csrf: pending.csrf, appName: pending.environment.projectName,
                email: email, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429, passkeys: pending.passkeys,
                upstream: try upstreamButtons(pending, request))
            response.headers.set("Retry-After", String(seconds))
            return response
        case .wrong:
            context.metrics.signIn(.password, .invalidCredentials)
            return Pages.signIn(
                requestID: pending.record.id, csrf: pending.csrf, appName: pending.environment.projectName,
                email: email, error: Self.genericCredentialsMessage, invalid: ["email", "password"], status: 401,
                passkeys: pending.passkeys, upstream: try upstreamButtons(pending, request))
        case .invalidEmail:
            context.metrics.signIn(.password, .invalidRequest)
            return Pages.signIn(
                requestID: pending.record.id, csrf: pending.csrf, appName: pending.environment.projectName,
                email: email, error: Self.invalidEmailMessage, invalid: ["email"], status: 400, passkeys: pending.passkeys,
                upstream: try upstreamButtons(pending, request))
        case .ok(let found):
            user = found
        }
        // An environment that requires a verified address asks an unverified account for a code first.
        if pending.environment.requireVerifiedEmail && !user.emailVerified {
            return try EmailCodeFlow(context: context).startVerification(user: user, requestID: pending.record.id, request: request)
        }
        let known = KnownBrowsers(context: context).signedIn(userID: user.id, request)
        // The person authenticated: a fresh binding id replaces the one this browser held (session
        // fixation), and the pending sign-in moves to it, so whoever else knew the old id — a planter —
        // can no longer load this sign-in or forge its CSRF tokens (docs/threat-model.md).
        let fresh = try BrowserBinding(context: context).mint()
        let freshHash = Crypto.hexSHA256(fresh.value)
        // An enrolled account gives its second factor before any browser session exists; the challenge is
        // bound to this browser and this pending sign-in.
        let signIn = BrowserSignIn(store: context.accounts.browserSignIn, secrets: context.secrets)
        let browserSessionID: String
        let token: String
        switch try signIn(user: user, binding: fresh.value, authorizationRequestID: pending.record.id, now: context.clock.now()) {
        case .secondFactor(let challenge):
            try store.rebindAuthorizationRequest(requestID: pending.record.id, browserBindingHash: freshHash, browserSessionID: nil)
            context.metrics.signIn(.password, .mfaRequired)
            return Wire.seeOther("\(MFAFlow.path)?challenge=\(challenge)", cookies: [fresh.setCookie, known])
        case .signedIn(let secret, let id):
            token = secret
            browserSessionID = id
        }
        try PersonalActivity(context: context).record("signin.password", userID: user.id, request)
        try store.rebindAuthorizationRequest(
            requestID: pending.record.id, browserBindingHash: freshHash, browserSessionID: browserSessionID)
        // Persistent for the longest session window, so the person is recognised on the next sign-in.
        let cookie = context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds)
        context.metrics.signIn(.password, .ok)
        let next = try PasskeyHandlers(context: context).nextAfterPassword(userID: user.id, requestID: pending.record.id, form: form)
        return Wire.seeOther(next, cookies: [cookie, fresh.setCookie, known])
    }

    // MARK: Consent

    /// `GET /v1/auth/zevid/consent?request=…`: names the app and asks. Consent is remembered only for
    /// verified universal/app links (RFC 8252 §8.6); then the code is issued without a click and handed
    /// back through the "Return to the app" page, since there was no gesture in this page.
    func consentPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let pending: Pending
        switch try loadPending(queryValue(request, "request"), request) {
        case .stop(let response): return response
        case .ok(let value): pending = value
        }
        guard let session = try authenticatedSession(pending, request) else {
            return Wire.seeOther("/v1/auth/zevid/signin?request=\(pending.record.id)")
        }
        // A link that waited for this sign-in is confirmed (or cancelled) before the app gets a code.
        if let detour = try UpstreamHandlers(context: context).confirmationDetour(request) { return Wire.seeOther(detour) }
        // The console is the deployment's own first-party client: no consent, no "Return to the app" page
        // (docs/console.md, "Signing in").
        if pending.environment.publishableKey == ConsoleClient.clientID {
            return try issueCode(pending, session: session, held: false)
        }
        // A web client's remembered consent for a scope set holding this one skips the page; its redirect
        // URI is a server's page, so the code goes by a direct 303 (docs/protocol.md, "Web clients: consent").
        if let clientID = pending.record.webClientID, !pending.record.promptConsent,
            WebClientConsent.covers(
                remembered: try context.tenancy.webClients.webClientConsents(userID: session.userID, clientID: clientID),
                requested: pending.record.scope)
        {
            return try issueCode(pending, session: session, held: false)
        }
        // prompt=consent always asks (OpenID Connect Core §3.1.2.1).
        if pending.record.redirect.kind == .link, pending.record.webClientID == nil, !pending.record.promptConsent,
            try store.hasConsent(userID: session.userID, environmentID: pending.environment.id)
        {
            return try issueCode(pending, session: session, held: true)
        }
        guard let user = try store.user(id: session.userID) else {
            return Wire.seeOther("/v1/auth/zevid/signin?request=\(pending.record.id)")
        }
        // A web client is named by its registered name (docs/protocol.md, "Web clients: consent").
        let appName =
            try pending.record.webClientID.flatMap { try context.tenancy.webClients.webClient(clientID: $0)?.client.name }
            ?? DeviceNaming.appName(
                project: pending.environment.projectName, request: request,
                verifiedPlatforms: try store.verifiedPlatforms(environmentID: pending.environment.id))
        return Pages.consent(requestID: pending.record.id, csrf: pending.csrf, appName: appName, email: user.email)
    }

    /// `POST /v1/auth/zevid/consent` (form: `request`, `csrf`, `decision` = `allow` | `deny`).
    /// Allow issues the code and redirects (303: the click is the gesture); deny redirects with
    /// `access_denied` (RFC 6749 §4.1.2.1).
    func consent(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        let pending: Pending
        switch try loadPostedPending(form, request) {
        case .stop(let response): return response
        case .ok(let value): pending = value
        }
        guard let session = try authenticatedSession(pending, request) else {
            return Wire.seeOther("/v1/auth/zevid/signin?request=\(pending.record.id)")
        }
        switch form["decision"] {
        case "allow":
            return try issueCode(pending, session: session, held: false)
        case "deny":
            // One outcome per sign-in: a concurrent Continue (or a second Cancel) that completed it first wins.
            guard try consent.deny(requestID: pending.record.id, now: context.clock.now()) else {
                return Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")
            }
            let base = pending.record.redirect
            guard let state = OAuthState(decoded: pending.record.state) else {
                throw ServerFailure.inconsistent("stored state no longer valid")
            }
            return redirectError(
                OAuthError(.accessDenied, "The person declined to sign in."),
                to: base, state: state, appName: pending.environment.projectName, heldForGesture: false,
                surface: pending.record.standardEndpoint ? .standard(.authorize) : .zevAuth, formPost: pending.record.formPost)
        default:
            return Pages.error(status: 400, PersonFacingErrors.noDecision, code: "invalid_request")
        }
    }

    private func issueCode(_ pending: Pending, session: BrowserSessionRecord, held: Bool) throws -> HTTPResponse {
        let base = pending.record.redirect
        guard
            let code = try consent.allow(
                requestID: pending.record.id, redirect: base, browserSessionID: session.id, now: context.clock.now())
        else {
            return Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")
        }
        guard let state = OAuthState(decoded: pending.record.state) else {
            throw ServerFailure.inconsistent("stored state no longer valid")
        }
        let parameters = successRedirectParameters(code: code, state: state, issuer: context.configuration.issuer)
        if pending.record.formPost { return FormPostResponse.page(to: base, parameters: parameters) }
        let location = redirectLocation(base: base, parameters: parameters)
        if held && base.kind != .loopback {
            return Pages.returnToApp(location: location, appName: pending.environment.projectName, isError: false)
        }
        return Wire.seeOther(location)
    }

    // MARK: Helpers

    /// A pending sign-in that is live and belongs to this browser, or the page to answer instead.
    enum Loaded {
        case ok(Pending)
        case stop(HTTPResponse)
    }

    struct Pending {
        let record: AuthorizationRequestRecord
        let environment: EnvironmentRecord
        let csrf: String
        /// The passkey script's context on this sign-in's page.
        let passkeys: PasskeyPageContext
    }

    /// Loads the pending sign-in a form names and checks the form's CSRF token.
    private func loadPostedPending(_ form: [String: String], _ request: HTTPRequest) throws -> Loaded {
        let loaded = try loadPending(form["request"], request)
        guard case .ok(let pending) = loaded else { return loaded }
        guard let csrf = form["csrf"], Crypto.constantTimeEquals(Array(csrf.utf8), Array(pending.csrf.utf8)) else {
            return .stop(Pages.error(status: 403, PersonFacingErrors.formExpired, code: "invalid_request"))
        }
        return loaded
    }

    /// Loads a pending sign-in and checks it is live and belongs to this browser.
    private func loadPending(_ id: String?, _ request: HTTPRequest) throws -> Loaded {
        let loaded = try LoadPendingSignIn(store: store, secrets: context.secrets).load(
            id: id, binding: context.cookie(.binding, in: request), now: context.clock.now())
        let record: AuthorizationRequestRecord
        let environment: EnvironmentRecord
        switch loaded {
        case .unknown:
            return .stop(Pages.error(status: 400, PersonFacingErrors.linkNotValid, code: "invalid_request"))
        case .over:
            return .stop(Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request"))
        case .otherBrowser:
            return .stop(Pages.error(status: 400, PersonFacingErrors.otherBrowser, code: "invalid_request"))
        case .live(let found, let foundEnvironment):
            record = found
            environment = foundEnvironment
        }
        // The binding is present: `load` compared its digest with the one on record.
        let binding = context.cookie(.binding, in: request) ?? ""
        // CSRF token: HMAC of the pending sign-in's id under the browser's binding secret, which only
        // this browser holds (it is an HttpOnly cookie), so a cross-site form cannot know it.
        let csrf = AccountForms.csrf(secret: binding, label: "csrf:\(record.id)")
        let passkeys = PasskeyPageContext(csrf: PasskeyHandlers.csrf(binding: binding), requestID: record.id)
        return .ok(Pending(record: record, environment: environment, csrf: csrf, passkeys: passkeys))
    }

    /// The browser session that authenticated this pending sign-in, if this browser still holds it.
    private func authenticatedSession(_ pending: Pending, _ request: HTTPRequest) throws -> BrowserSessionRecord? {
        guard let attached = pending.record.browserSessionID,
            let token = context.cookie(.session, in: request),
            let session = try store.browserSession(tokenHash: Crypto.hexSHA256(token)), session.id == attached
        else { return nil }
        return session
    }

    /// An error before the redirect URI is trusted, shown to the person (a page, or JSON for
    /// `Accept: application/json`). On `/oauth2/authorize` it is spelled as redirected ones are: the RFC
    /// code as `error`, the product code first in `error_description` (docs/protocol.md, "Start").
    private func show(_ error: OAuthError, _ request: HTTPRequest, surface: ErrorSurface) -> HTTPResponse {
        let code = error.wireError(on: surface)
        let description = error.wireDescription(on: surface)
        if Wire.wantsJSON(request) { return Wire.error(error, wireCode: code, description: description) }
        return Pages.error(status: error.status, code: error.code, wireCode: code, description: description)
    }

    /// An error after the redirect URI is trusted: 303 to a loopback; for an app (custom scheme or link)
    /// the "Return to the app" page when there was no gesture in the current page.
    /// With `formPost`, the error goes back as an auto-submitting form (`FormPostResponse`) instead.
    func redirectError(
        _ error: OAuthError, to base: RedirectURI, state: OAuthState?, appName: String, heldForGesture: Bool, surface: ErrorSurface,
        formPost: Bool = false
    ) -> HTTPResponse {
        let parameters = errorRedirectParameters(error, state: state, issuer: context.configuration.issuer, surface: surface)
        if formPost { return FormPostResponse.page(to: base, parameters: parameters) }
        let location = redirectLocation(base: base, parameters: parameters)
        if heldForGesture && base.kind != .loopback {
            return Pages.returnToApp(location: location, appName: appName, isError: true, errorCode: error.code)
        }
        return Wire.seeOther(location)
    }

    private func queryValue(_ request: HTTPRequest, _ name: String) -> String? {
        (try? FormURLEncoding.decode(request.rawQuery ?? ""))?.first { $0.name == name }?.value
    }
}

/// A broken invariant inside the server (never a bad input): answered 500 and logged by kind.
enum ServerFailure: Error, CustomStringConvertible {
    case inconsistent(String)

    /// A sentence for the log or the console, never the case name.
    var description: String {
        switch self {
        case .inconsistent(let what): "The stored data is inconsistent: \(what)."
        }
    }
}

/// The start's client lookup with the console added (docs/console.md, "Signing in"): the client `console`
/// is the deployment-owned environment of sql/019, and its one redirect URI is `ISSUER/console/callback`,
/// taken from the configuration rather than a callback row, and counted as a verified link (the issuer's
/// own origin needs no association file).
struct ConsoleStartStore: StartStore {
    let base: any StartStore
    let issuer: String

    func startClient(publishableKey: String) throws -> StartClient? {
        guard let found = try base.startClient(publishableKey: publishableKey) else { return nil }
        guard publishableKey == ConsoleClient.clientID else { return found }
        guard case .success(let callback) = RedirectURI.parse(ConsoleClient.callbackURI(issuer: issuer)) else { return nil }
        let client = ClientEnvironment(
            environmentID: found.client.environmentID, kind: found.client.kind, appName: found.client.appName,
            registeredRedirects: [RegisteredRedirect(uri: callback, linkVerified: true)])
        return StartClient(client: client, sessionMaxAgeDays: found.sessionMaxAgeDays)
    }

    func recordPendingSignIn(_ pending: PendingSignIn) throws -> RecordedSignIn { try base.recordPendingSignIn(pending) }
}
