import Authorize
import Encoding
import PKCE
import Testing

/// What a start case must produce.
enum Outcome: Equatable, CustomStringConvertible {
    case show(OAuthErrorCode, Int)
    case redirect(OAuthErrorCode)
    var description: String {
        switch self {
        case .show(let code, let status): "show \(status) \(code.rawValue)"
        case .redirect(let code): "redirect \(code.rawValue)"
        }
    }
}

struct StartCase: CustomTestStringConvertible, Sendable {
    let name: String
    let query: [(name: String, value: String)]
    let standard: Bool
    let expected: Outcome
    var testDescription: String { name }
    init(_ name: String, _ query: [(name: String, value: String)], standard: Bool = false, _ expected: Outcome) {
        self.name = name
        self.query = query
        self.standard = standard
        self.expected = expected
    }
}

func outcome(_ decision: StartDecision) -> Outcome? {
    switch decision {
    case .proceed: return nil
    case .show(let error): return .show(error.code, error.status)
    case .redirect(let error, _, _): return .redirect(error.code)
    }
}

/// Every start error in the order of docs/protocol.md#start-order.
let startErrors: [StartCase] = [
    StartCase("duplicate state", startQuery() + [("state", "again")], .show(.invalidRequest, 400)),
    StartCase("duplicate unknown parameter", startQuery(["foo": "1"]) + [("foo", "2")], .show(.invalidRequest, 400)),
    StartCase("client_id missing", startQuery(["client_id": nil]), .show(.invalidClient, 400)),
    StartCase("client_id empty", startQuery(["client_id": ""]), .show(.invalidClient, 400)),
    StartCase("client_id unknown", startQuery(client: "pk_test_nope"), .show(.invalidClient, 400)),
    StartCase("redirect_uri missing", startQuery(["redirect_uri": nil]), .show(.redirectURIRequired, 400)),
    StartCase("redirect_uri empty", startQuery(["redirect_uri": ""]), .show(.redirectURIRequired, 400)),
    StartCase("redirect_uri malformed", startQuery(["redirect_uri": "com.acme.app:/callback#x"]), .show(.redirectURIMismatch, 400)),
    StartCase("redirect_uri unregistered", startQuery(["redirect_uri": "com.acme.app:/other"]), .show(.redirectURIMismatch, 400)),
    StartCase(
        "custom scheme in production", startQuery(client: "pk_live_prod"), .show(.customSchemeNotAllowed, 403)),
    StartCase(
        "unverified link in production", startQuery(["redirect_uri": "https://acme.org/cb"], client: "pk_live_prod"),
        .show(.nativeRedirectNotVerified, 403)),
    StartCase(
        "unverified link domain in development", startQuery(["redirect_uri": "https://unverified.example/cb"]),
        .show(.nativeRedirectNotVerified, 403)),
    StartCase(
        "loopback in production", startQuery(["redirect_uri": "http://127.0.0.1:4000/cb"], client: "pk_live_prod"),
        .show(.loopbackRedirectNotAllowed, 403)),
    StartCase("request object", startQuery(["request": "eyJhbGciOiJub25lIn0.e30."]), .redirect(.requestNotSupported)),
    StartCase(
        "request object undecodable", startQuery(["request": "\u{FFFD}"]), .redirect(.requestNotSupported)),
    StartCase("request_uri", startQuery(["request_uri": "https://rp.example/r"]), .redirect(.requestURINotSupported)),
    StartCase("state missing", startQuery(["state": nil]), .show(.invalidState, 400)),
    StartCase("state empty", startQuery(["state": ""]), .show(.invalidState, 400)),
    StartCase("state too long", startQuery(["state": String(repeating: "s", count: 513)]), .show(.invalidState, 400)),
    StartCase(
        "response_type missing (standard)", startQuery(["response_type": nil], standard: true), standard: true, .redirect(.invalidRequest)),
    StartCase(
        "response_type token (standard)", startQuery(["response_type": "token"], standard: true), standard: true,
        .redirect(.unsupportedResponseType)),
    StartCase("code_challenge missing", startQuery(["code_challenge": nil]), .redirect(.pkceRequired)),
    StartCase("code_challenge empty", startQuery(["code_challenge": ""]), .redirect(.pkceRequired)),
    StartCase("method missing", startQuery(["code_challenge_method": nil]), .redirect(.pkceMethodUnsupported)),
    StartCase("method empty", startQuery(["code_challenge_method": ""]), .redirect(.pkceMethodUnsupported)),
    StartCase("method plain", startQuery(["code_challenge_method": "plain"]), .redirect(.pkceMethodUnsupported)),
    StartCase("method s256 lower case", startQuery(["code_challenge_method": "s256"]), .redirect(.pkceMethodUnsupported)),
    StartCase("method S512", startQuery(["code_challenge_method": "S512"]), .redirect(.pkceMethodUnsupported)),
    StartCase("challenge padded", startQuery(["code_challenge": rfcChallenge + "="]), .redirect(.invalidCodeChallenge)),
    StartCase("challenge short", startQuery(["code_challenge": String(rfcChallenge.dropLast())]), .redirect(.invalidCodeChallenge)),
    StartCase(
        "challenge with trailing bits", startQuery(["code_challenge": String(rfcChallenge.dropLast()) + "N"]),
        .redirect(.invalidCodeChallenge)),
    StartCase("challenge is a verifier (plain)", startQuery(["code_challenge": rfcVerifier + "abc"]), .redirect(.invalidCodeChallenge)),
]

/// Two faults at once: the earlier check in the contract's order wins.
let precedence: [StartCase] = [
    StartCase("duplicate beats missing client_id", [("state", "a"), ("state", "b")], .show(.invalidRequest, 400)),
    StartCase(
        "duplicate beats everything after it", startQuery(["client_id": nil, "redirect_uri": nil]) + [("x", "1"), ("x", "1")],
        .show(.invalidRequest, 400)),
    StartCase("unknown client beats missing redirect", startQuery(["redirect_uri": nil], client: "pk_nope"), .show(.invalidClient, 400)),
    StartCase(
        "bad redirect beats bad state", startQuery(["redirect_uri": "com.acme.app:/evil", "state": nil]),
        .show(.redirectURIMismatch, 400)),
    StartCase(
        "production refusal beats bad state",
        startQuery(["redirect_uri": "http://127.0.0.1:1/cb", "state": nil], client: "pk_live_prod"),
        .show(.loopbackRedirectNotAllowed, 403)),
    StartCase(
        "duplicate request beats the request object", startQuery(["request": "a.b."]) + [("request", "a.b.")],
        .show(.invalidRequest, 400)),
    StartCase(
        "unknown client beats the request object", startQuery(["request": "a.b."], client: "pk_test_nope"),
        .show(.invalidClient, 400)),
    StartCase(
        "bad redirect beats the request object", startQuery(["redirect_uri": "com.acme.app:/evil", "request": "a.b."]),
        .show(.redirectURIMismatch, 400)),
    StartCase(
        "production refusal beats the request object", startQuery(["request": "a.b."], client: "pk_live_prod"),
        .show(.customSchemeNotAllowed, 403)),
    StartCase(
        "request object beats a missing state (redirected)", startQuery(["state": nil, "request": "a.b."]),
        .redirect(.requestNotSupported)),
    StartCase(
        "request object beats missing PKCE", startQuery(["code_challenge": nil, "code_challenge_method": nil, "request": "a.b."]),
        .redirect(.requestNotSupported)),
    StartCase(
        "request object beats response_type on the standard endpoint",
        startQuery(["response_type": nil, "request": "a.b."], standard: true), standard: true, .redirect(.requestNotSupported)),
    StartCase(
        "request object beats a bad nonce and a bad prompt", startQuery(["nonce": "a\u{7}", "prompt": "bogus", "request": "a.b."]),
        .redirect(.requestNotSupported)),
    StartCase(
        "request wins when both are given", startQuery(["request_uri": "https://rp.example/r", "request": "a.b."]),
        .redirect(.requestNotSupported)),
    StartCase(
        "bad state beats missing PKCE (shown, not redirected)", startQuery(["state": nil, "code_challenge": nil]),
        .show(.invalidState, 400)),
    StartCase(
        "response_type beats PKCE on the standard endpoint",
        startQuery(["response_type": "token", "code_challenge": nil], standard: true), standard: true,
        .redirect(.unsupportedResponseType)),
    StartCase(
        "missing challenge beats bad method", startQuery(["code_challenge": nil, "code_challenge_method": "plain"]),
        .redirect(.pkceRequired)),
    StartCase(
        "bad method beats bad challenge", startQuery(["code_challenge": "x", "code_challenge_method": "plain"]),
        .redirect(.pkceMethodUnsupported)),
]

@Suite struct StartValidatorTests {
    @Test(arguments: startErrors)
    func startErrorInOrder(_ testCase: StartCase) {
        #expect(outcome(decide(testCase.query, standard: testCase.standard)) == testCase.expected)
    }

    @Test(arguments: precedence)
    func earlierCheckWins(_ testCase: StartCase) {
        #expect(outcome(decide(testCase.query, standard: testCase.standard)) == testCase.expected)
    }

    @Test func redirectedErrorGoesToTheRequestedURIWithState() throws {
        let decision = decide(startQuery(["redirect_uri": "http://127.0.0.1:54321/cb", "code_challenge": nil]))
        guard case .redirect(let error, let to, let state) = decision else {
            Issue.record("expected a redirect, got \(decision)")
            return
        }
        #expect(error.code == .pkceRequired)
        #expect(to.raw == "http://127.0.0.1:54321/cb")
        #expect(state?.value == "xyz")
    }

    /// docs/protocol.md#start-check-4: the state and PKCE may travel only inside a request object (OpenID
    /// Connect Core §6.1), so the refusal is redirected before they are checked, with the outer `state`
    /// only when it is valid, and `iss` (`errorRedirectParameters`).
    @Test(arguments: [
        ("request", "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6ImluIiwibm9uY2UiOiJuIn0.", OAuthErrorCode.requestNotSupported),
        ("request_uri", "https://rp.example/request.jwt", .requestURINotSupported),
    ])
    func requestObjectIsRedirectedWithTheOuterStateOnlyWhenValid(name: String, value: String, code: OAuthErrorCode) throws {
        let withoutState = startQuery(["state": nil, "code_challenge": nil, "code_challenge_method": nil, name: value])
        for (query, expectedState) in [
            (withoutState, nil), (startQuery(["state": "", name: value]), nil),
            (startQuery(["state": String(repeating: "s", count: 513), name: value]), nil),
            (startQuery(["state": "xyz", "code_challenge": nil, name: value]), "xyz"),
        ] as [([(name: String, value: String)], String?)] {
            for standard in [false, true] {
                let full = standard ? query + [("response_type", "code")] : query
                guard case .redirect(let error, let to, let state) = decide(full, standard: standard) else {
                    Issue.record("\(name) must be redirected (standard: \(standard))")
                    continue
                }
                #expect(error.code == code)
                #expect(to.raw == "com.acme.app:/callback")
                #expect(state?.value == expectedState)
                let surface: ErrorSurface = standard ? .standard(.authorize) : .zevAuth
                // An OpenID Connect Core §3.1.2.6 code: the same on both starts, never mapped to invalid_request.
                #expect(error.wireError(on: surface) == code.rawValue)
                let location = redirectLocation(
                    base: to, parameters: errorRedirectParameters(error, state: state, issuer: "https://id.example", surface: surface))
                #expect(location.hasPrefix("com.acme.app:/callback?error=\(code.rawValue)&error_description="))
                let tail = expectedState.map { "&state=\($0)&iss=https%3A%2F%2Fid.example" } ?? "&iss=https%3A%2F%2Fid.example"
                #expect(location.hasSuffix(tail))
                #expect(expectedState != nil || !location.contains("state="))
            }
        }
    }

    @Test func anUndecodableOuterStateIsLeftOutOfTheRequestObjectsRefusal() {
        let decision = StartValidator.decide(
            rawQuery: "client_id=pk_test_dev&redirect_uri=com.acme.app%3A%2Fcallback&state=%FF&request=a.b.", standardEndpoint: false,
            lookupClient: lookup)
        guard case .redirect(let error, _, let state) = decision else {
            Issue.record("expected a redirect, got \(decision)")
            return
        }
        #expect(error.code == .requestNotSupported)
        #expect(state == nil)
    }

    @Test func emptyRequestParametersCountAsMissing() {
        guard case .proceed = decide(startQuery(["request": "", "request_uri": ""])) else {
            Issue.record("an empty request or request_uri counts as missing")
            return
        }
    }

    @Test func validStartProceedsWithTheRequestedRedirect() throws {
        let decision = decide(
            startQuery([
                "redirect_uri": "http://127.0.0.1:54321/cb", "prompt": "login", "login_hint": "ada@example.com",
                "scope": "openid",
            ]))
        guard case .proceed(let request) = decision else {
            Issue.record("expected proceed, got \(decision)")
            return
        }
        #expect(request.environmentID == "env_dev")
        #expect(request.redirect.raw == "http://127.0.0.1:54321/cb")
        #expect(request.redirect.port == 54321)
        #expect(request.state.value == "xyz")
        #expect(request.challenge.value == rfcChallenge)
        #expect(request.prompt == .login)
        #expect(request.loginHint == "ada@example.com")
    }

    @Test(arguments: [
        ("com.acme.app:/callback", "pk_test_dev"),
        ("https://acme.com/app/callback", "pk_test_dev"),
        ("http://[::1]:9/cb", "pk_test_dev"),
        ("http://localhost:1/cb", "pk_test_dev"),
        ("com.acme.enabled:/callback", "pk_live_prod"),
        ("https://acme.com/app/callback", "pk_live_prod"),
    ])
    func allowedRedirectProceeds(redirect: String, client: String) {
        let decision = decide(startQuery(["redirect_uri": redirect], client: client))
        guard case .proceed(let request) = decision else {
            Issue.record("expected proceed, got \(decision)")
            return
        }
        #expect(request.redirect.raw == redirect)
    }

    // An unknown value (`LOGIN`: the values are case-sensitive) is refused: RequestOptionsTests.
    @Test(arguments: [("login", Prompt.login), ("consent login", .login), ("none", nil), ("consent", nil)])
    func promptOnlyLoginForcesThePassword(prompt: String, expected: Prompt?) {
        guard case .proceed(let request) = decide(startQuery(["prompt": prompt])) else {
            Issue.record("expected proceed")
            return
        }
        #expect(request.prompt == expected)
    }

    @Test(arguments: [
        (String(repeating: "a", count: 320), true), (String(repeating: "a", count: 321), false), ("a\u{7}b", false),
        ("", false),
    ])
    func loginHintKeptOnlyWhenReasonable(hint: String, kept: Bool) {
        guard case .proceed(let request) = decide(startQuery(["login_hint": hint])) else {
            Issue.record("expected proceed")
            return
        }
        #expect(request.loginHint == (kept ? hint : nil))
    }

    @Test func responseTypeIsNotCheckedOnTheZevAuthStart() {
        guard case .proceed = decide(startQuery(["response_type": "token"])) else {
            Issue.record("the /v1 start ignores response_type")
            return
        }
    }

    @Test func standardEndpointSpellsRedirectedErrorsWithRFCCodes() throws {
        let decision = decide(startQuery(["code_challenge_method": "plain"], standard: true), standard: true)
        guard case .redirect(let error, let to, let state) = decision else {
            Issue.record("expected a redirect, got \(decision)")
            return
        }
        #expect(error.code == .pkceMethodUnsupported)
        let surface = ErrorSurface.standard(.authorize)
        #expect(error.wireError(on: surface) == "invalid_request")
        #expect(error.wireDescription(on: surface).hasPrefix("pkce_method_unsupported: "))
        let location = redirectLocation(
            base: to, parameters: errorRedirectParameters(error, state: state, issuer: "https://id.example", surface: surface))
        #expect(location.hasPrefix("com.acme.app:/callback?error=invalid_request&error_description=pkce_method_unsupported%3A%20"))
        #expect(location.hasSuffix("&state=xyz&iss=https%3A%2F%2Fid.example"))
    }

    @Test func zevAuthStartSpellsRedirectedErrorsWithProductCodes() throws {
        guard case .redirect(let error, let to, let state) = decide(startQuery(["code_challenge": nil])) else {
            Issue.record("expected a redirect")
            return
        }
        #expect(error.wireError(on: .zevAuth) == "pkce_required")
        #expect(error.wireDescription(on: .zevAuth) == error.description)
        let location = redirectLocation(
            base: to, parameters: errorRedirectParameters(error, state: state, issuer: "https://id.example", surface: .zevAuth))
        #expect(location.hasPrefix("com.acme.app:/callback?error=pkce_required&error_description="))
    }
}

/// A valid raw development query; `%@` placeholders are not used, callers append or replace.
private let rawBase =
    "client_id=pk_test_dev&redirect_uri=com.acme.app%3A%2Fcallback&code_challenge=\(rfcChallenge)&code_challenge_method=S256"

@Suite struct RawQueryTests {
    @Test(arguments: [
        ("\(rawBase)&state=%FF", Outcome.show(.invalidState, 400)),  // invalid UTF-8
        ("\(rawBase)&state=%zz", .show(.invalidState, 400)),  // malformed escape
        ("\(rawBase)&state=ok&state=%FF", .show(.invalidRequest, 400)),
        ("client_id=%FF&redirect_uri=com.acme.app%3A%2Fcallback&state=s", .show(.invalidClient, 400)),
        ("client_id=pk_test_dev&redirect_uri=com.acme.app%3A%2Fcallback%zz&state=s", .show(.redirectURIMismatch, 400)),
        (
            "client_id=pk_test_dev&redirect_uri=com.acme.app%3A%2Fcallback&state=s&code_challenge=%FF&code_challenge_method=S256",
            .redirect(.invalidCodeChallenge)
        ),
        (
            "client_id=pk_test_dev&redirect_uri=com.acme.app%3A%2Fcallback&state=s&code_challenge=\(rfcChallenge)&code_challenge_method=S256%",
            .redirect(.pkceMethodUnsupported)
        ),
    ])
    func undecodableValueFailsItsOwnCheck(raw: String, expected: Outcome) {
        #expect(outcome(StartValidator.decide(rawQuery: raw, standardEndpoint: false, lookupClient: lookup)) == expected)
    }

    @Test func plusInStateIsASpaceAndSurvivesTheRoundTrip() throws {
        let decision = StartValidator.decide(
            rawQuery: "\(rawBase)&state=a+b%26c%3Dd%2Be%25f%23g&login_hint=%FF", standardEndpoint: false, lookupClient: lookup)
        guard case .proceed(let request) = decision else {
            Issue.record("expected proceed, got \(decision)")
            return
        }
        #expect(request.state.value == "a b&c=d+e%f#g")
        #expect(request.loginHint == nil)
        let location = redirectLocation(
            base: request.redirect, parameters: successRedirectParameters(code: "hoc_x", state: request.state, issuer: "iss"))
        #expect(location == "com.acme.app:/callback?code=hoc_x&state=a%20b%26c%3Dd%2Be%25f%23g&iss=iss")
    }
}
