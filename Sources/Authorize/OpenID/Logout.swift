import Foundation

/// What RP-initiated logout needs from storage beyond signing out of the browser (`SignOut`).
public protocol LogoutStore: Sendable {
    /// Revokes the live app session `id` when it belongs to `userID` (the `sid` and `sub` of a verified
    /// `id_token_hint`), so an app whose sign-in used an ephemeral browser session can still sign out.
    /// - Returns: whether a session was revoked (false for an id that is not a UUID). - Throws: `StoreUnavailable`.
    func endAppSession(id: String, userID: String, now: Date) throws -> Bool
}

/// What a logout request asks, once its parameters are checked (OpenID Connect RP-Initiated Logout 1.0 §2,
/// §3; docs/protocol.md, "RP-initiated logout").
public struct LogoutPlan: Sendable, Equatable {
    /// The person must confirm on a page first: the request carries no valid `id_token_hint` for the
    /// browser's signed-in account (and `client_id`), so it could be a cross-site request (§6).
    public let confirm: Bool
    /// Where the browser goes afterwards (a registered callback of the client's environment), if anywhere.
    public let redirect: RedirectURI?
    /// The `state` to send back with the redirect.
    public let state: OAuthState?
    /// The app's name, for the pages.
    public let appName: String?
    /// The app session the hint names (`sid`) and its account (`sub`), ended with the logout.
    public let hintSession: (sessionID: String, userID: String)?

    /// Creates a plan.
    public init(
        confirm: Bool, redirect: RedirectURI?, state: OAuthState?, appName: String?, hintSession: (sessionID: String, userID: String)?
    ) {
        self.confirm = confirm
        self.redirect = redirect
        self.state = state
        self.appName = appName
        self.hintSession = hintSession
    }

    public static func == (lhs: LogoutPlan, rhs: LogoutPlan) -> Bool {
        lhs.confirm == rhs.confirm && lhs.redirect == rhs.redirect && lhs.state == rhs.state && lhs.appName == rhs.appName
            && lhs.hintSession?.sessionID == rhs.hintSession?.sessionID && lhs.hintSession?.userID == rhs.hintSession?.userID
    }
}

/// The checks of `GET`/`POST /oauth2/logout` (OpenID Connect RP-Initiated Logout 1.0).
public enum LogoutPolicy {
    /// What the logout endpoint does.
    public enum Decision: Sendable, Equatable {
        /// Show the error to the person; never redirect (an unregistered URI is never followed).
        case show(OAuthError)
        /// Sign out (after confirmation when `plan.confirm`).
        case proceed(LogoutPlan)
    }

    /// Decides a logout request.
    ///
    /// Shown, in order: a parameter given twice → `invalid_request`; `client_id` unknown →
    /// `invalid_client`; `post_logout_redirect_uri` without a client (no `client_id`, no valid hint whose
    /// `aud` names one) → `invalid_request`; `post_logout_redirect_uri` not a registered callback of the
    /// client's environment, or refused by its policy → the start's redirect codes
    /// (`redirect_uri_mismatch`, `custom_scheme_not_allowed`, `native_redirect_not_verified`,
    /// `loopback_redirect_not_allowed`; loopback matches any port); `state` given and not 1–512 characters
    /// without a control character → `invalid_state`.
    ///
    /// The confirmation is skipped only when the hint is valid, its `sub` is the browser's signed-in
    /// account, and its `aud` contains `client_id` when both are given (§2, §6).
    /// - Parameters:
    ///   - query: the decoded parameters, in order, duplicates kept.
    ///   - readHint: the hint reader (nil for a hint that is not this server's ID token).
    ///   - lookupClient: the environment of a publishable key, nil when unknown.
    ///   - browserAccount: the account the browser's ZevID session belongs to, nil when signed out.
    public static func decide(
        query: [(name: String, value: String)], readHint: (String) -> IDTokenHint?, lookupClient: (String) -> ClientEnvironment?,
        browserAccount: String?
    ) -> Decision {
        let parameters: [String: String]
        switch StartValidator.uniqueParameters(query) {
        case .failure(let error): return .show(error)
        case .success(let unique): parameters = unique
        }
        func present(_ name: String) -> String? {
            guard let value = parameters[name], !value.isEmpty else { return nil }
            return value
        }
        let hint = present("id_token_hint").flatMap(readHint)
        let clientID = present("client_id")
        var client: ClientEnvironment?
        if let clientID {
            guard let found = lookupClient(clientID) else {
                return .show(OAuthError(.invalidClient, "client_id is unknown.", status: 400))
            }
            client = found
        } else if let audience = hint?.audience.first {
            client = lookupClient(audience)
        }
        var redirect: RedirectURI?
        if let raw = present("post_logout_redirect_uri") {
            guard let client else {
                return .show(OAuthError(.invalidRequest, "post_logout_redirect_uri needs client_id or a valid id_token_hint."))
            }
            switch StartValidator.checkRedirect(["redirect_uri": raw], client: client) {
            case .failure(let error):
                return .show(
                    OAuthError(error.code, "post_logout_redirect_uri is not a registered callback this app may use.", status: error.status))
            case .success(let trusted): redirect = trusted
            }
        }
        var state: OAuthState?
        if let raw = present("state") {
            guard let valid = OAuthState(decoded: raw) else {
                return .show(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."))
            }
            state = valid
        }
        let hintMatches =
            hint.map { hint in
                browserAccount.map { hint.subject.utf8.elementsEqual($0.utf8) } == true
                    && clientID.map { id in hint.audience.contains { $0.utf8.elementsEqual(id.utf8) } } != false
            } ?? false
        return .proceed(
            LogoutPlan(
                confirm: !hintMatches, redirect: redirect, state: redirect == nil ? nil : state, appName: client?.appName,
                hintSession: hint.flatMap { hint in hint.sessionID.map { ($0, hint.subject) } }))
    }

    /// The redirect's parameters: `state` only, when it was given (§3).
    public static func redirectParameters(_ plan: LogoutPlan) -> [(String, String)] {
        plan.state.map { [("state", $0.value)] } ?? []
    }
}
