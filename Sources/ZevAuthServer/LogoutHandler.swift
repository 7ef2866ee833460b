import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// `GET` and `POST /oauth2/logout` (OpenID Connect RP-Initiated Logout 1.0; docs/protocol.md,
/// "RP-initiated logout"): signs the browser out of its ZevID session, ending exactly the app sessions made
/// from it (`SignOut`) and the app session a verified hint's `sid` names, then returns to a registered
/// `post_logout_redirect_uri` with `state`. `LogoutPolicy` decides; this shell reads the browser, asks for
/// confirmation when the policy says so, and answers.
struct LogoutHandler: Sendable {
    let context: ServerContext

    static let path = "/oauth2/logout"
    /// The form field that marks a submitted confirmation.
    static let confirmField = "confirm"

    /// `GET /oauth2/logout?…`.
    func get(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let pairs = try? FormURLEncoding.decode(request.rawQuery ?? "") else { return Self.unreadable(request) }
        return try handle(pairs, request, confirmed: false)
    }

    /// `POST /oauth2/logout` (form): the relying party's form post, or the confirmation page's submission
    /// (with `confirm` and `csrf`).
    func post(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let pairs = try? FormURLEncoding.decode(bytes: request.body) else { return Self.unreadable(request) }
        let fields = pairs.filter { $0.name != "csrf" && $0.name != Self.confirmField }
        guard pairs.contains(where: { $0.name == Self.confirmField }) else { return try handle(fields, request, confirmed: false) }
        // A confirmation: the CSRF token is the HMAC under this browser's binding cookie, which only this
        // browser holds (HttpOnly), so a cross-site form cannot submit it.
        guard let binding = try BrowserBinding(context: context).onRecord(request),
            AccountForms.csrfMatches(pairs.first(where: { $0.name == "csrf" })?.value, Self.csrf(binding: binding))
        else { return AccountForms.expiredForm }
        return try handle(fields, request, confirmed: true)
    }

    private func handle(_ pairs: [(name: String, value: String)], _ request: HTTPRequest, confirmed: Bool) throws -> HTTPResponse {
        let now = context.clock.now()
        let token = context.cookie(.session, in: request)
        let browser = try token.flatMap { try context.roundTrip.pendingSignIns.browserSession(tokenHash: Crypto.hexSHA256($0)) }
        var lookupFailure: (any Error)?
        var webClient = false
        let decision = LogoutPolicy.decide(
            query: pairs, readHint: { context.roundTrip.idTokenHints.read($0) },
            lookupClient: { clientID in
                do {
                    if clientID.hasPrefix(WebClients.clientIDPrefix) {
                        webClient = true
                        return try Self.webLogoutClient(clientID, context: context)
                    }
                    return try context.roundTrip.start.startClient(publishableKey: clientID)?.client
                } catch {
                    lookupFailure = error
                    return nil
                }
            }, browserAccount: browser?.userID)
        if let lookupFailure { throw lookupFailure }
        let plan: LogoutPlan
        switch decision {
        case .show(let error):
            if Wire.wantsJSON(request) { return Wire.error(error, wireCode: error.code.rawValue, description: error.description) }
            return Pages.error(
                status: error.status, PersonFacingErrors.signOutProblem, code: error.code.rawValue, detail: error.description)
        case .proceed(let proceed):
            plan = proceed
        }
        if plan.confirm && !confirmed {
            let binding = try BrowserBinding(context: context).adoptOrMint(request)
            // The request's own parameters, carried in the form body (never in a URL the server builds).
            let carried = pairs.filter { ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"].contains($0.name) }
            return LogoutPages.confirm(
                fields: carried + [("csrf", Self.csrf(binding: binding.value)), (Self.confirmField, "1")],
                appName: plan.appName, cookies: binding.setCookies)
        }
        // Signs out: the browser's ZevID session and the app sessions made from it, then the hint's own
        // app session (its `sub` and `sid`, so only that account's session).
        if let browser, !browser.ended {
            try SignOut(store: context.accounts.signOut)(browserSessionID: browser.id, now: now)
            try PersonalActivity(context: context).record("signout", userID: browser.userID, request)
        } else if let browser {
            try SignOut(store: context.accounts.signOut)(browserSessionID: browser.id, now: now)
        }
        if let named = plan.hintSession {
            _ = try context.roundTrip.logout.endAppSession(id: named.sessionID, userID: named.userID, now: now)
        }
        let cleared = token == nil ? [] : [context.setCookie(.session, "", maxAge: 0)]
        guard let redirect = plan.redirect else { return LogoutPages.signedOut(cookies: cleared) }
        let parameters = LogoutPolicy.redirectParameters(plan)
        let location = parameters.isEmpty ? redirect.raw : redirectLocation(base: redirect, parameters: parameters)
        // The confirmation click is a gesture; without one an app would not open from a Custom Tab. A web
        // client's page is a website's: a direct 303.
        if !confirmed && redirect.kind != .loopback && !webClient {
            return LogoutPages.returnToApp(location: location, appName: plan.appName ?? "the app", cookies: cleared)
        }
        return Wire.seeOther(location, cookies: cleared)
    }

    /// A web client as RP-initiated logout sees it (docs/protocol.md, "Web clients"): its environment and
    /// name, and its `postLogoutRedirectUris` (never its sign-in redirect URIs), matched byte for byte.
    static func webLogoutClient(_ clientID: String, context: ServerContext) throws -> ClientEnvironment? {
        guard let start = try context.roundTrip.start.startClient(publishableKey: clientID)?.client,
            let listed = try context.tenancy.webClients.webClient(clientID: clientID)
        else { return nil }
        let redirects = listed.client.postLogoutRedirectURIs.compactMap { raw -> RegisteredRedirect? in
            guard case .success(let uri) = RedirectURI.parse(raw) else { return nil }
            return RegisteredRedirect(uri: uri, linkVerified: true)
        }
        var client = ClientEnvironment(
            environmentID: start.environmentID, kind: start.kind, appName: start.appName, registeredRedirects: redirects)
        client.webClient = start.webClient
        return client
    }

    /// The confirmation form's CSRF token: HMAC of a label under the browser binding secret.
    static func csrf(binding: String) -> String {
        AccountForms.csrf(secret: binding, label: "oauth2-logout")
    }

    private static func unreadable(_ request: HTTPRequest) -> HTTPResponse {
        let message = "The request could not be read: it holds a character no parameter accepts."
        if Wire.wantsJSON(request) { return Wire.error(OAuthError(.invalidRequest, message)) }
        return Pages.error(status: 400, PersonFacingErrors.signOutProblem, code: "invalid_request", detail: message)
    }
}

/// The logout pages, built with the shared page frame (`Pages.page`): every value escaped.
enum LogoutPages {
    /// "Sign out of ZevID?" with the request's parameters as hidden fields and the CSRF token.
    static func confirm(fields: [(String, String)], appName: String?, cookies: [String]) -> HTTPResponse {
        let hidden = fields.map { "<input type=\"hidden\" name=\"\(HTML.escape($0.0))\" value=\"\(HTML.escape($0.1))\">" }
            .joined(separator: "\n")
        let who =
            appName.map { "\(HTML.escape($0)) asks to sign you out of ZevID in this browser." }
            ?? "An app asks to sign you out of ZevID in this browser."
        return Pages.page(
            title: "Sign out of ZevID?",
            body: """
                <h1>Sign out of ZevID?</h1>
                <p>\(who) Apps you signed in to from this browser will be signed out too.</p>
                <form method="post" action="\(LogoutHandler.path)">
                \(hidden)
                <button type="submit">Sign out</button>
                </form>
                <p class="muted">If you did not ask to sign out, close this page.</p>
                """, cookies: cookies)
    }

    /// Signed out, with nowhere to return to.
    static func signedOut(cookies: [String]) -> HTTPResponse {
        Pages.page(
            title: "Signed out",
            body: """
                <h1>You're signed out</h1>
                <p>You're signed out of ZevID in this browser. You can close this page.</p>
                """, cookies: cookies)
    }

    /// Signed out; one button back to an app that would not open without a gesture.
    static func returnToApp(location: String, appName: String, cookies: [String]) -> HTTPResponse {
        Pages.page(
            title: "Return to the app",
            body: """
                <h1>You're signed out</h1>
                <p>Return to \(HTML.escape(appName)) to continue.</p>
                <a class="button" href="\(HTML.escape(location))">Return to the app</a>
                """, cookies: cookies)
    }
}
