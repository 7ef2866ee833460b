import Authorize
import Foundation
import Testing

/// OpenID Connect's request options (docs/protocol.md, "prompt, max_age and hints"), the `prompt=none`
/// decision and the logout policy: pure, no database.
@Suite struct RequestOptionsTests {
    static func parse(_ parameters: [String: String], undecodable: Set<String> = []) -> Result<RequestOptions, OAuthError> {
        RequestOptions.parse(parameters, undecodable: undecodable)
    }

    static let promptCases: [(String, RequestOptions.Prompts)] = [
        ("none", .noInteraction), ("login", .login), ("consent", .consent), ("login consent", [.login, .consent]),
        ("  consent  login ", [.login, .consent]), ("select_account", []),
    ]

    @Test func promptValuesParse() throws {
        for (prompt, expected) in Self.promptCases {
            let options = try Self.parse(["prompt": prompt]).get()
            #expect(options.prompts == expected, "\(prompt)")
        }
    }

    @Test(arguments: ["none login", "none consent", "login none", "LOGIN", "None", "bogus", "login bogus", "\u{FFFD}"])
    func badPromptIsInvalidRequest(prompt: String) {
        guard case .failure(let error) = Self.parse(["prompt": prompt]) else {
            Issue.record("expected invalid_request for \(prompt)")
            return
        }
        #expect(error.code == .invalidRequest)
    }

    @Test(arguments: [("0", 0), ("1", 1), ("3600", 3600), ("007", 7), ("9999999999", 9_999_999_999)])
    func maxAgeIsSeconds(raw: String, seconds: Int) throws {
        let options = try Self.parse(["max_age": raw]).get()
        #expect(options.maxAgeSeconds == seconds)
        // max_age=0 asks for the password as prompt=login does (OpenID Connect Core §3.1.2.1).
        #expect(options.forcesSignIn == (seconds == 0))
    }

    @Test(arguments: ["-1", "1.5", "+3", " 3", "ten", "99999999999", "0x10", "1e3"])
    func badMaxAgeIsInvalidRequest(raw: String) {
        guard case .failure(let error) = Self.parse(["max_age": raw]) else {
            Issue.record("expected invalid_request for \(raw)")
            return
        }
        #expect(error.code == .invalidRequest)
    }

    @Test func responseModeMustBeQueryOrFormPost() throws {
        #expect(try Self.parse(["response_mode": "query"]).get() == RequestOptions())
        #expect(try Self.parse(["response_mode": "form_post"]).get().formPost)
        for mode in ["fragment", "FORM_POST", "QUERY", "query.jwt", "form_post.jwt"] {
            guard case .failure(let error) = Self.parse(["response_mode": mode]) else {
                Issue.record("\(mode) must be refused")
                continue
            }
            #expect(error.code == .invalidRequest)
        }
    }

    @Test func displayAndLocalesAreIgnored() throws {
        let options = try Self.parse(["display": "popup", "ui_locales": "fr-CA fr", "claims_locales": "de"]).get()
        #expect(options == RequestOptions())
    }

    @Test func emptyValuesCountAsMissing() throws {
        let options = try Self.parse(["prompt": "", "max_age": "", "response_mode": ""]).get()
        #expect(options == RequestOptions())
    }

    @Test func hintsAreKeptWhenReasonableAndIgnoredOtherwise() throws {
        let kept = try Self.parse(["id_token_hint": "a.b.c", "login_hint": "ada@example.com"]).get()
        #expect(kept.idTokenHint == "a.b.c")
        #expect(kept.loginHint == "ada@example.com")
        let ignored = try Self.parse(
            ["id_token_hint": "a b", "login_hint": String(repeating: "a", count: 321)]).get()
        #expect(ignored.idTokenHint == nil)
        #expect(ignored.loginHint == nil)
        let undecodable = try Self.parse(["id_token_hint": "x", "login_hint": "y"], undecodable: ["id_token_hint", "login_hint"]).get()
        #expect(undecodable.idTokenHint == nil && undecodable.loginHint == nil)
    }

    @Test func theStartRedirectsTheseErrorsAfterTheRedirectURIIsTrusted() {
        for (name, value, code) in [
            ("prompt", "none login", OAuthErrorCode.invalidRequest), ("request", "x", .requestNotSupported),
            ("request_uri", "x", .requestURINotSupported), ("max_age", "-1", .invalidRequest),
            ("response_mode", "fragment", .invalidRequest),
        ] {
            guard case .redirect(let error, let to, let state) = decide(startQuery([name: value])) else {
                Issue.record("\(name)=\(value) must be redirected")
                continue
            }
            #expect(error.code == code)
            #expect(to.raw == "com.acme.app:/callback")
            #expect(state?.value == "xyz")
        }
        // Before the redirect URI is trusted, the earlier checks still win (shown, never redirected); the
        // request object's own order is in StartValidatorTests.
        guard case .show(let shown) = decide(startQuery(["redirect_uri": "com.acme.app:/other", "request": "x"])) else {
            Issue.record("an unregistered redirect URI is shown")
            return
        }
        #expect(shown.code == .redirectURIMismatch)
    }

    @Test func theValidatedStartCarriesTheOptions() {
        guard case .proceed(let request) = decide(startQuery(["prompt": "consent", "max_age": "60", "id_token_hint": "h.h.h"])) else {
            Issue.record("expected proceed")
            return
        }
        #expect(request.options.prompts == .consent)
        #expect(request.options.maxAgeSeconds == 60)
        #expect(request.options.idTokenHint == "h.h.h")
        #expect(request.prompt == nil)
    }

    @Test func asksNoInteractionReadsPromptLeniently() {
        #expect(RequestOptions.asksNoInteraction(["prompt": "none"]))
        #expect(RequestOptions.asksNoInteraction(["prompt": "none login"]))
        #expect(!RequestOptions.asksNoInteraction(["prompt": "login"]))
        #expect(!RequestOptions.asksNoInteraction([:]))
    }

    /// Form Post Response Mode §2: the mode a start's own redirected errors use, read exactly as `parse` reads it.
    @Test func asksFormPostReadsResponseModeExactly() {
        #expect(RequestOptions.asksFormPost(["response_mode": "form_post"]))
        #expect(!RequestOptions.asksFormPost(["response_mode": "query"]))
        #expect(!RequestOptions.asksFormPost(["response_mode": "FORM_POST"]))
        #expect(!RequestOptions.asksFormPost(["response_mode": ""]))
        #expect(!RequestOptions.asksFormPost([:]))
    }
}

@Suite struct NoInteractionTests {
    static let hint = IDTokenHint(
        subject: "user-1", audience: ["pk_test_dev"], sessionID: nil, issuedAt: Date(timeIntervalSince1970: 0),
        expiresAt: Date(timeIntervalSince1970: 3600))

    @Test func codeOnlyForASignedInBrowserWithRememberedConsentOnAVerifiedLink() {
        #expect(NoInteraction.decide(browserAccount: "user-1", hint: nil, redirectKind: .link, consentRemembered: true) == .issueCode)
        #expect(NoInteraction.decide(browserAccount: "user-1", hint: Self.hint, redirectKind: .link, consentRemembered: true) == .issueCode)
    }

    @Test func signedOutIsLoginRequired() {
        guard case .refuse(let error) = NoInteraction.decide(browserAccount: nil, hint: nil, redirectKind: .link, consentRemembered: true)
        else {
            Issue.record("expected login_required")
            return
        }
        #expect(error.code == .loginRequired)
    }

    @Test func aHintForAnotherAccountIsLoginRequired() {
        guard
            case .refuse(let error) = NoInteraction.decide(
                browserAccount: "user-2", hint: Self.hint, redirectKind: .link, consentRemembered: true)
        else {
            Issue.record("expected login_required")
            return
        }
        #expect(error.code == .loginRequired)
    }

    @Test(arguments: [(RedirectKind.customScheme, true), (.loopback, true), (.link, false)])
    func consentIsRequiredUnlessRememberedForALink(kind: RedirectKind, remembered: Bool) {
        guard
            case .refuse(let error) = NoInteraction.decide(
                browserAccount: "user-1", hint: nil, redirectKind: kind, consentRemembered: remembered)
        else {
            Issue.record("expected consent_required")
            return
        }
        #expect(error.code == .consentRequired)
    }
}

@Suite struct LogoutPolicyTests {
    static let hint = IDTokenHint(
        subject: "user-1", audience: ["pk_test_dev"], sessionID: "11111111-1111-1111-1111-111111111111",
        issuedAt: Date(timeIntervalSince1970: 0), expiresAt: Date(timeIntervalSince1970: 3600))

    static func decide(_ pairs: [(String, String)], browser: String? = "user-1") -> LogoutPolicy.Decision {
        LogoutPolicy.decide(
            query: pairs.map { (name: $0.0, value: $0.1) }, readHint: { $0 == "valid" ? hint : nil }, lookupClient: lookup,
            browserAccount: browser)
    }

    static func plan(_ decision: LogoutPolicy.Decision) -> LogoutPlan? {
        guard case .proceed(let plan) = decision else { return nil }
        return plan
    }

    static func shown(_ decision: LogoutPolicy.Decision) -> OAuthErrorCode? {
        guard case .show(let error) = decision else { return nil }
        return error.code
    }

    @Test func aMatchingHintSkipsTheConfirmation() throws {
        let plan = try #require(
            Self.plan(
                Self.decide([
                    ("id_token_hint", "valid"), ("client_id", "pk_test_dev"), ("post_logout_redirect_uri", "http://127.0.0.1:9000/cb"),
                    ("state", "bye"),
                ])))
        #expect(!plan.confirm)
        #expect(plan.redirect?.raw == "http://127.0.0.1:9000/cb")
        #expect(plan.state?.value == "bye")
        #expect(plan.hintSession?.sessionID == Self.hint.sessionID)
        #expect(plan.hintSession?.userID == "user-1")
        #expect(LogoutPolicy.redirectParameters(plan).map(\.0) == ["state"])
        // The client comes from the hint's aud when client_id is absent.
        let byAudience = try #require(
            Self.plan(Self.decide([("id_token_hint", "valid"), ("post_logout_redirect_uri", "com.acme.app:/callback")])))
        #expect(!byAudience.confirm)
        #expect(byAudience.redirect?.kind == .customScheme)
    }

    @Test func withoutAMatchingHintThePersonConfirms() throws {
        // No hint, an invalid hint, another account in the browser, no browser session, another client.
        for (pairs, browser) in [
            ([("client_id", "pk_test_dev")], "user-1"), ([("id_token_hint", "forged")], "user-1"),
            ([("id_token_hint", "valid")], "user-2"), ([("id_token_hint", "valid")], nil),
            ([("id_token_hint", "valid"), ("client_id", "pk_live_prod")], "user-1"),
        ] as [([(String, String)], String?)] {
            let plan = try #require(Self.plan(Self.decide(pairs, browser: browser)))
            #expect(plan.confirm, "\(pairs) \(browser ?? "signed out")")
        }
    }

    @Test func anUnregisteredOrRefusedURIIsShownNeverFollowed() {
        #expect(
            Self.shown(Self.decide([("client_id", "pk_test_dev"), ("post_logout_redirect_uri", "https://evil.example/cb")]))
                == .redirectURIMismatch)
        #expect(
            Self.shown(Self.decide([("client_id", "pk_test_dev"), ("post_logout_redirect_uri", "com.acme.app:/callback#x")]))
                == .redirectURIMismatch)
        #expect(
            Self.shown(Self.decide([("client_id", "pk_live_prod"), ("post_logout_redirect_uri", "com.acme.app:/callback")]))
                == .customSchemeNotAllowed)
        #expect(
            Self.shown(Self.decide([("client_id", "pk_live_prod"), ("post_logout_redirect_uri", "http://127.0.0.1:4000/cb")]))
                == .loopbackRedirectNotAllowed)
        #expect(Self.shown(Self.decide([("post_logout_redirect_uri", "http://127.0.0.1:4000/cb")])) == .invalidRequest)
        #expect(Self.shown(Self.decide([("client_id", "pk_test_nope")])) == .invalidClient)
        #expect(Self.shown(Self.decide([("client_id", "pk_test_dev"), ("client_id", "pk_test_dev")])) == .invalidRequest)
        #expect(
            Self.shown(
                Self.decide([("client_id", "pk_test_dev"), ("post_logout_redirect_uri", "http://127.0.0.1:1/cb"), ("state", "a\u{7}")]))
                == .invalidState)
    }

    @Test func loopbackMatchesAnyPort() throws {
        let plan = try #require(
            Self.plan(Self.decide([("client_id", "pk_test_dev"), ("post_logout_redirect_uri", "http://127.0.0.1:65535/cb")])))
        #expect(plan.redirect?.port == 65535)
        #expect(LogoutPolicy.redirectParameters(plan).isEmpty)
    }
}

/// The `claims` request parameter (OpenID Connect Core §5.5; docs/protocol.md, "The claims parameter").
@Suite struct ClaimsParameterTests {
    @Test(arguments: [
        #"{"userinfo":{"email":{"essential":true},"name":null}}"#, #"{"id_token":{"acr":{"values":["x"]}}}"#, "{}",
        #"{"id_token":{},"other":[1]}"#,
    ])
    func aClaimsRequestIsAccepted(_ claims: String) throws {
        #expect(throws: Never.self) { try RequestOptions.parse(["claims": claims]).get() }
    }

    @Test(arguments: [
        "not json", "[]", #"{"userinfo":[]}"#, #"{"id_token":{"email":true}}"#, #"{"userinfo":{"name":"x"}}"#, #"{"id_token":"email"}"#,
    ])
    func aMalformedClaimsRequestIsInvalidRequest(_ claims: String) {
        guard case .failure(let error) = RequestOptions.parse(["claims": claims]) else {
            Issue.record("\(claims) must be refused")
            return
        }
        #expect(error.code == .invalidRequest)
    }
}
