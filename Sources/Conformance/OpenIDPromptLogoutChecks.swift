import Encoding
import Foundation

/// OpenID Connect's `prompt`, `max_age`, refused request objects and RP-initiated logout, from outside
/// (docs/protocol.md, "prompt, max_age and hints" and "RP-initiated logout"). Each check cites its clause.
extension Suite {
    /// The start of a fresh sign-in with extra parameters (a new PKCE challenge each time).
    private func openIDStart(_ extra: [(String, String)], state: String = "conformance-state", standard: Bool = false) -> String {
        var request = start(state: state, challenge: agent.pkce().challenge)
        if standard {
            request.path = authorizeEndpoint
            request.pairs.append(("response_type", "code"))
        }
        request.pairs += extra
        return request.target()
    }

    /// An `/oauth2/authorize` start shaped like the OpenID Foundation's `oidcc-unsigned-request-object`:
    /// `client_id`, `redirect_uri`, `response_type` and `scope` outside, and an unsigned request object
    /// (`alg: none`, OpenID Connect Core §6.1) that alone carries `state` and `nonce`; no PKCE.
    private func requestObjectOnlyStart(issuer: String) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8))
        let claims: [String: String] = [
            "iss": options.clientID, "aud": issuer, "response_type": "code", "client_id": options.clientID,
            "redirect_uri": options.redirectURI, "scope": "openid", "state": "conformance-state", "nonce": "conformance-nonce",
        ]
        let payload = Base64URL.encode((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data())
        return authorizeEndpoint + "?"
            + FormURLEncoding.encode([
                ("client_id", options.clientID), ("redirect_uri", options.redirectURI), ("response_type", "code"), ("scope", "openid"),
                ("request", header + "." + payload + "."),
            ])
    }

    /// Whether an answer is a 303 to one of the server's own pages whose path begins with `path`.
    private static func ownPage(_ observed: Observed, _ path: String, issuer: String) -> Bool {
        guard observed.status == 303, let location = observed.header("Location") else { return false }
        let local = location.hasPrefix(issuer) ? String(location.dropFirst(issuer.count)) : location
        return local.hasPrefix(path)
    }

    func openIDPromptLogoutChecks() throws(AgentError) {
        let issuer = options.issuer
        let redirect = options.redirectURI

        // prompt=none never shows a page: a signed-out browser gets login_required by a 303.
        let signedOut = try Browser(agent: agent).get(openIDStart([("prompt", "none")]))
        record(
            "OpenID Connect Core §3.1.2.6", "prompt=none, signed out: login_required by a 303 with state and iss",
            Verdicts.redirectedError(signedOut, redirectURI: redirect, error: "login_required", state: "conformance-state", issuer: issuer))
        let standardSignedOut = try Browser(agent: agent).get(openIDStart([("prompt", "none")], standard: true))
        record(
            "OpenID Connect Core §3.1.2.6", "/oauth2/authorize prompt=none, signed out: login_required",
            Verdicts.redirectedError(
                standardSignedOut, redirectURI: redirect, error: "login_required", state: "conformance-state", issuer: issuer,
                descriptionPrefix: "login_required"))
        let combined = try Browser(agent: agent).get(openIDStart([("prompt", "none login")]))
        record(
            "OpenID Connect Core §3.1.2.1", "prompt=none with another value: invalid_request, redirected",
            Verdicts.redirectedError(combined, redirectURI: redirect, error: "invalid_request", state: "conformance-state", issuer: issuer))
        let unknown = try Browser(agent: agent).get(openIDStart([("prompt", "bogus")]))
        record(
            "OpenID Connect Core §3.1.2.1", "prompt with an unknown value: invalid_request, redirected",
            Verdicts.redirectedError(unknown, redirectURI: redirect, error: "invalid_request", state: "conformance-state", issuer: issuer))
        let request = try Browser(agent: agent).get(openIDStart([("request", "eyJhbGciOiJub25lIn0.e30.")]))
        record(
            "OpenID Connect Core §6.1", "request object: request_not_supported, redirected",
            Verdicts.redirectedError(
                request, redirectURI: redirect, error: "request_not_supported", state: "conformance-state", issuer: issuer))
        let requestURI = try Browser(agent: agent).get(openIDStart([("request_uri", "https://rp.example/request")]))
        record(
            "OpenID Connect Core §6.2", "request_uri: request_uri_not_supported, redirected",
            Verdicts.redirectedError(
                requestURI, redirectURI: redirect, error: "request_uri_not_supported", state: "conformance-state", issuer: issuer))
        // The OpenID Foundation's oidcc-unsigned-request-object: state and nonce only inside an unsigned object.
        let objectOnly = try Browser(agent: agent).get(requestObjectOnlyStart(issuer: issuer))
        record(
            "OpenID Connect Core §6.1, protocol.md#start-check-4",
            "request object refused at the redirect URI (state and nonce only inside it): request_not_supported, no state",
            Verdicts.redirectedError(
                objectOnly, redirectURI: redirect, error: "request_not_supported", state: nil, issuer: issuer,
                descriptionPrefix: "request_not_supported"))
        let mode = try Browser(agent: agent).get(openIDStart([("response_mode", "fragment")]))
        record(
            "OAuth 2.0 Multiple Response Types §2.1", "response_mode other than query: invalid_request, redirected",
            Verdicts.redirectedError(mode, redirectURI: redirect, error: "invalid_request", state: "conformance-state", issuer: issuer))
        let maxAge = try Browser(agent: agent).get(openIDStart([("max_age", "-1")]))
        record(
            "OpenID Connect Core §3.1.2.1", "max_age not a number of seconds: invalid_request, redirected",
            Verdicts.redirectedError(maxAge, redirectURI: redirect, error: "invalid_request", state: "conformance-state", issuer: issuer))

        // A signed-in browser.
        let browser = Browser(agent: agent)
        let issued = try issue(browser: browser)
        let exchanged = try exchange(issued)
        let tokens = tokens(exchanged)
        // A loopback always asks for the click (RFC 8252 §8.6), so prompt=none cannot return a code there.
        let silent = try browser.get(openIDStart([("prompt", "none")]))
        record(
            "OpenID Connect Core §3.1.2.6", "prompt=none, signed in, loopback: consent_required by a 303",
            Verdicts.redirectedError(silent, redirectURI: redirect, error: "consent_required", state: "conformance-state", issuer: issuer))
        let recent = try browser.get(openIDStart([("max_age", "3600")]))
        record(
            "OpenID Connect Core §3.1.2.1", "max_age=3600 after a fresh sign-in: the password is skipped",
            .expect(Self.ownPage(recent, "/v1/auth/zevid/consent", issuer: issuer), Verdicts.describe(recent)))
        agent.sleep(2)
        let old = try browser.get(openIDStart([("max_age", "1")]))
        record(
            "OpenID Connect Core §3.1.2.1", "max_age=1, authenticated 2 s ago: the password is asked again",
            .expect(Self.ownPage(old, "/v1/auth/zevid/signin", issuer: issuer), Verdicts.describe(old)))
        let silentOld = try browser.get(openIDStart([("prompt", "none"), ("max_age", "1")]))
        record(
            "OpenID Connect Core §3.1.2.6", "prompt=none with max_age older than the session: login_required",
            Verdicts.redirectedError(silentOld, redirectURI: redirect, error: "login_required", state: "conformance-state", issuer: issuer))
        let login = try browser.get(openIDStart([("prompt", "login")]))
        record(
            "OpenID Connect Core §3.1.2.1", "prompt=login: the password is asked even when signed in",
            .expect(Self.ownPage(login, "/v1/auth/zevid/signin", issuer: issuer), Verdicts.describe(login)))

        // RP-initiated logout.
        let logoutPath = "/oauth2/logout"
        let unregistered = redirect + "/not-registered"
        let refused = try browser.get(
            logoutPath + "?"
                + FormURLEncoding.encode([
                    ("client_id", options.clientID), ("post_logout_redirect_uri", unregistered), ("state", "bye"),
                ]))
        record(
            "OpenID Connect RP-Initiated Logout 1.0 §3", "logout: an unregistered post_logout_redirect_uri is shown, never followed",
            .expect(refused.status == 400 && refused.header("Location") == nil && !Self.linksTo(refused, unregistered), "\(refused.status)")
        )
        let page = try browser.get(
            logoutPath + "?"
                + FormURLEncoding.encode([("client_id", options.clientID), ("post_logout_redirect_uri", redirect), ("state", "bye")]))
        let form = page.status == 200 && page.isHTML ? HTMLForm.first(in: String(decoding: page.body, as: UTF8.self)) : nil
        record(
            "OpenID Connect RP-Initiated Logout 1.0 §6", "logout without id_token_hint: a confirmation page with a CSRF token",
            .expect(form?.action == logoutPath && form?.hidden.contains { $0.0 == "csrf" } == true, Verdicts.describe(page)))
        if let tokens {
            let before = try sessionStatus(tokens.access)
            record(
                "OpenID Connect RP-Initiated Logout 1.0 §6", "logout: nothing ends before the person confirms",
                .expect(before.status == 200, "\(before.status)"))
        }
        guard let form else { return }
        let confirmed = try browser.post(form.action, form.hidden)
        let back = RedirectBack.find(in: confirmed, redirectURI: redirect)
        record(
            "OpenID Connect RP-Initiated Logout 1.0 §3", "logout confirmed: 303 to post_logout_redirect_uri with state only",
            .expect(
                confirmed.status == 303 && back?.parameters.map(\.name) == ["state"] && back?.value("state") == "bye",
                Verdicts.describe(confirmed)))
        if let tokens {
            let after = try sessionStatus(tokens.access)
            record(
                "protocol.md#session-ends", "logout ended the app session made from the browser session",
                .expect(after.status == 401, "\(after.status)"))
        }
        let again = try browser.get(openIDStart([]))
        record(
            "protocol.md#session-ends", "logout ended the ZevID browser session: the next sign-in asks for the password",
            .expect(Self.ownPage(again, "/v1/auth/zevid/signin", issuer: issuer), Verdicts.describe(again)))
    }

    private static func linksTo(_ observed: Observed, _ target: String) -> Bool {
        observed.isHTML && Verdicts.links(in: String(decoding: observed.body, as: UTF8.self)).contains { $0.hasPrefix(target) }
    }
}
