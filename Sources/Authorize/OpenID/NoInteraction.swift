/// `prompt=none` (OpenID Connect Core 1.0 §3.1.2.1; docs/protocol.md, "prompt, max_age and hints"): the
/// start answers at once, never with a page, so it must know whether a code can be issued without the
/// person doing anything.
public enum NoInteraction {
    /// What a `prompt=none` start answers.
    public enum Answer: Sendable, Equatable {
        /// Issue the code and redirect with it (303).
        case issueCode
        /// Redirect the error (303) with `state` and `iss`.
        case refuse(OAuthError)
    }

    /// Decides a `prompt=none` start.
    /// - Parameters:
    ///   - browserAccount: the account of the ZevID browser session the start attached: nil when the
    ///     browser is not signed in, or its authentication is older than `max_age` or the environment's
    ///     session maximum age, or `prompt=login`/`max_age=0` asked for the password.
    ///   - hint: the `id_token_hint` as the reader verified it, nil when absent or not valid (ignored).
    ///   - redirectKind: the trusted redirect URI's kind.
    ///   - consentRemembered: the account has consented to this environment before (for a web client: to
    ///     this client and a scope set holding the requested one).
    ///   - webClient: the client is a web client, whose redirect URI is a server's page whatever its kind,
    ///     so remembered consent counts for a development loopback one too.
    /// - Returns: `login_required` without a usable browser session or when the hint names another account;
    ///   `consent_required` for a native app's custom scheme or loopback (they always ask for the click, RFC
    ///   8252 §8.6) or without remembered consent; else the code.
    public static func decide(
        browserAccount: String?, hint: IDTokenHint?, redirectKind: RedirectKind, consentRemembered: Bool, webClient: Bool = false
    ) -> Answer {
        guard let browserAccount else {
            return .refuse(OAuthError(.loginRequired, "The person must sign in."))
        }
        if let hint, !hint.subject.utf8.elementsEqual(browserAccount.utf8) {
            return .refuse(OAuthError(.loginRequired, "The browser is signed in to another account than the hint names."))
        }
        guard redirectKind == .link || webClient, consentRemembered else {
            return .refuse(OAuthError(.consentRequired, "The person must allow this app to sign them in."))
        }
        return .issueCode
    }

    /// The answer when the sign-in could still not complete without a page (the pending sign-in ended
    /// before its code was issued): `interaction_required`.
    public static let interactionRequired = OAuthError(.interactionRequired, "The sign-in needs the person to continue on a page.")
}
