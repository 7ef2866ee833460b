import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Every error of docs/protocol.md#start-order over HTTP: status, `error`, and whether it was shown
/// or redirected (and when redirected, that `state` and `iss` came back).
@Suite struct StartErrorTests {
    struct Setup {
        let server: TestServer
        let fixture: Fixture
        init() throws {
            server = try TestServer()
            fixture = try Fixture.make(
                store: server.store,
                development: [
                    "http://127.0.0.1/cb", "com.acme.app:/callback",
                    "https://acme-\(UUID().uuidString.prefix(8).lowercased()).example.com/app/cb",
                ],
                production: ["http://127.0.0.1/cb", "com.acme.app:/callback", "https://unverified.example.org/cb"])
        }

        func start(_ pairs: [(String, String)], json: Bool = true, path: String = "/v1/auth/zevid/start") throws -> TestResponse {
            try server.browser().get(startTarget(pairs, path: path), headers: json ? [("Accept", "application/json")] : [])
        }

        func valid(clientID: String? = nil, redirect: String = "http://127.0.0.1:5000/cb", state: String = "st") -> [(String, String)] {
            [
                ("client_id", clientID ?? fixture.developmentKey), ("redirect_uri", redirect), ("state", state),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]
        }
    }

    static func without(_ pairs: [(String, String)], _ name: String) -> [(String, String)] { pairs.filter { $0.0 != name } }
    static func replacing(_ pairs: [(String, String)], _ name: String, _ value: String) -> [(String, String)] {
        pairs.map { $0.0 == name ? ($0.0, value) : $0 }
    }

    func expectShown(_ response: TestResponse, _ status: Int, _ error: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == error, sourceLocation: sourceLocation)
        #expect(response.header("location") == nil, sourceLocation: sourceLocation)
    }

    @Test func shownErrorsInTheContractsOrder() throws {
        let setup = try Setup()
        let valid = setup.valid()
        expectShown(try setup.start(valid + [("state", "again")]), 400, "invalid_request")
        expectShown(try setup.start(Self.without(valid, "client_id")), 400, "invalid_client")
        expectShown(try setup.start(Self.replacing(valid, "client_id", "")), 400, "invalid_client")
        expectShown(try setup.start(Self.replacing(valid, "client_id", "pk_test_unknown")), 400, "invalid_client")
        expectShown(try setup.start(Self.without(valid, "redirect_uri")), 400, "redirect_uri_required")
        expectShown(try setup.start(Self.replacing(valid, "redirect_uri", "http://127.0.0.1:5000/other")), 400, "redirect_uri_mismatch")
        expectShown(try setup.start(Self.replacing(valid, "redirect_uri", "https://evil.example/cb")), 400, "redirect_uri_mismatch")
        expectShown(try setup.start(Self.without(valid, "state")), 400, "invalid_state")
        expectShown(try setup.start(Self.replacing(valid, "state", "")), 400, "invalid_state")
        // A bad redirect beats a bad state; a duplicate beats everything.
        expectShown(
            try setup.start(Self.replacing(Self.without(valid, "state"), "redirect_uri", "http://127.0.0.1:1/x")), 400,
            "redirect_uri_mismatch")
        expectShown(try setup.start(Self.without(valid, "client_id") + [("state", "x")]), 400, "invalid_request")
    }

    @Test func productionRefusesCustomSchemesLoopbacksAndUnverifiedLinks() throws {
        let setup = try Setup()
        let key = setup.fixture.productionKey
        expectShown(try setup.start(setup.valid(clientID: key, redirect: "com.acme.app:/callback")), 403, "custom_scheme_not_allowed")
        expectShown(try setup.start(setup.valid(clientID: key, redirect: "http://127.0.0.1:5000/cb")), 403, "loopback_redirect_not_allowed")
        expectShown(
            try setup.start(setup.valid(clientID: key, redirect: "https://unverified.example.org/cb")), 403, "native_redirect_not_verified")
    }

    @Test func shownErrorsRenderAPageWithoutAcceptJSON() throws {
        let setup = try Setup()
        let page = try setup.start(Self.without(setup.valid(), "client_id"), json: false)
        #expect(page.status == 400)
        #expect(page.header("content-type")?.hasPrefix("text/html") == true)
        #expect(page.text.contains("invalid_client"))
    }

    @Test(
        arguments: [
            ("code_challenge", nil, "pkce_required"),
            ("code_challenge", "", "pkce_required"),
            ("code_challenge_method", nil, "pkce_method_unsupported"),
            ("code_challenge_method", "plain", "pkce_method_unsupported"),
            ("code_challenge_method", "s256", "pkce_method_unsupported"),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN", "invalid_code_challenge"),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=", "invalid_code_challenge"),
            ("code_challenge", "short", "invalid_code_challenge"),
        ] as [(String, String?, String)])
    func redirectedPKCEErrorsCarryStateAndIssuer(name: String, value: String?, error: String) throws {
        let setup = try Setup()
        let base = setup.valid(state: "keep this")
        let pairs = value.map { Self.replacing(base, name, $0) } ?? Self.without(base, name)
        let response = try setup.start(pairs)
        #expect(response.status == 303)
        let location = try #require(response.header("location"))
        #expect(location.hasPrefix("http://127.0.0.1:5000/cb?"))
        let query = queryItems(of: location)
        #expect(query["error"] == error)
        #expect(query["state"] == "keep this")
        #expect(query["iss"] == setup.server.issuer)
        #expect(query["error_description"] != nil)
    }

    @Test func theStandardEndpointRedirectsRFCCodesWithTheProductCodeFirstInTheDescription() throws {
        let setup = try Setup()
        let response = try setup.start(
            Self.without(setup.valid(), "code_challenge") + [("response_type", "code")], path: "/oauth2/authorize")
        let query = queryItems(of: try #require(response.header("location")))
        #expect(query["error"] == "invalid_request")
        #expect(query["error_description"]?.hasPrefix("pkce_required") == true)
        let wrongType = try setup.start(setup.valid() + [("response_type", "token")], path: "/oauth2/authorize")
        #expect(queryItems(of: try #require(wrongType.header("location")))["error"] == "unsupported_response_type")
    }

    /// docs/protocol.md#start-check-4: a request object is refused at the redirect URI before the state and
    /// PKCE checks (the OpenID Foundation's `oidcc-unsigned-request-object` sends `state` and `nonce` only
    /// inside it), with the outer `state` only when it is valid, and `iss`.
    @Test(arguments: ["/v1/auth/zevid/start", "/oauth2/authorize"])
    func aRequestObjectIsRefusedAtTheRedirectURIBeforeTheStateCheck(path: String) throws {
        let setup = try Setup()
        let object = "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6Imluc2lkZSIsIm5vbmNlIjoibiJ9."
        let responseType = path == "/oauth2/authorize" ? [("response_type", "code")] : []
        let base = [("client_id", setup.fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb")] + responseType
        for (extra, error, state) in [
            ([("request", object), ("scope", "openid")], "request_not_supported", nil),
            ([("request", object), ("state", "keep this")], "request_not_supported", "keep this"),
            ([("request_uri", "https://rp.example/request.jwt"), ("state", "")], "request_uri_not_supported", nil),
            ([("request_uri", "https://rp.example/request.jwt"), ("state", "keep this")], "request_uri_not_supported", "keep this"),
        ] as [([(String, String)], String, String?)] {
            let response = try setup.start(base + extra, path: path)
            #expect(response.status == 303, "\(extra)")
            let location = try #require(response.header("location"))
            #expect(location.hasPrefix("http://127.0.0.1:5000/cb?error=\(error)&"))
            let query = queryItems(of: location)
            #expect(query["error"] == error)
            #expect(query["state"] == state)
            #expect(query["iss"] == setup.server.issuer)
            #expect(query["error_description"]?.hasPrefix(error + ": ") == (path == "/oauth2/authorize"))
            #expect(query["code"] == nil)
        }
        // An empty request counts as missing: the state check comes next.
        expectShown(
            try setup.start(base + [("request", "")], path: path), 400, path == "/oauth2/authorize" ? "invalid_request" : "invalid_state")
        // A request object repeated is still check 1's invalid_request, shown.
        expectShown(
            try setup.start(setup.valid() + responseType + [("request", object), ("request", object)], path: path), 400, "invalid_request")
        // Before the redirect URI is trusted, the request object is never redirected.
        expectShown(
            try setup.start(
                Self.replacing(setup.valid(), "redirect_uri", "http://127.0.0.1:5000/other") + [("request", object)], path: path),
            400, path == "/oauth2/authorize" ? "invalid_request" : "redirect_uri_mismatch")
        expectShown(
            try setup.start(Self.replacing(setup.valid(), "client_id", "pk_test_unknown") + [("request", object)], path: path), 400,
            "invalid_client")
        // A custom scheme holds it behind the "Return to the app" page, like every redirected start error.
        let held = try setup.start(
            base.map { $0.0 == "redirect_uri" ? ($0.0, "com.acme.app:/callback") : $0 } + [("request", object)], path: path)
        #expect(held.status == 200)
        #expect(held.text.contains("Return to the app"))
        #expect(held.text.contains("com.acme.app:/callback?error=request_not_supported"))
    }

    @Test func anAppRedirectWithoutAGestureIsHeldOnAReturnToTheAppPage() throws {
        let setup = try Setup()
        let response = try setup.start(Self.without(setup.valid(redirect: "com.acme.app:/callback", state: "s"), "code_challenge"))
        #expect(response.status == 200)
        #expect(response.header("location") == nil)
        #expect(response.text.contains("Return to the app"))
        #expect(response.text.contains("com.acme.app:/callback?error=pkce_required"))
    }

    @Test(
        arguments: [
            ("a b&c=d+e%f#g", "a%20b%26c%3Dd%2Be%25f%23g"),
            ("héllo wörld ☃ 🚀", nil),
            ("x", nil),
            (String(repeating: "é", count: 512), nil),
        ] as [(String, String?)])
    func stateComesBackByteForByte(state: String, encoded: String?) throws {
        let setup = try Setup()
        let server = setup.server
        let driver = SignInDriver(server: server, browser: server.browser())
        let result = try driver.run(
            clientID: setup.fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: state,
            pkce: PKCEPair(), email: setup.fixture.email, password: setup.fixture.password)
        #expect(result.query["state"] == state)
        if let encoded { #expect(result.location.contains("state=\(encoded)&")) }
    }

    @Test(arguments: [0, 513])
    func stateOfBadLengthIsShownNotRedirected(length: Int) throws {
        let setup = try Setup()
        expectShown(try setup.start(Self.replacing(setup.valid(), "state", String(repeating: "s", count: length))), 400, "invalid_state")
    }

    @Test func stateWithAControlCharacterIsRefused() throws {
        let setup = try Setup()
        expectShown(try setup.start(Self.replacing(setup.valid(), "state", "a\u{7F}b")), 400, "invalid_state")
    }

    @Test(arguments: [
        ("http://127.0.0.1:54321/cb", true),
        ("http://127.0.0.1.evil.example:54321/cb", false),
        ("http://evil@127.0.0.1:1/cb", false),
        ("http://localhost:1/cb", false),
        ("http://127.0.0.1:1/cb/../x", false),
        ("http://127.000.000.001:1/cb", false),
        ("http://127.0.0.1:1/cb/", false),
        ("http://[::1]:1/cb", false),
    ])
    func loopbackMatchesAnyPortAndNothingElse(redirect: String, accepted: Bool) throws {
        let setup = try Setup()
        let response = try setup.start(setup.valid(redirect: redirect))
        if accepted {
            #expect(response.status == 303)
            #expect(response.header("location")?.hasPrefix("/v1/auth/zevid/signin") == true)
        } else {
            expectShown(response, 400, "redirect_uri_mismatch")
        }
    }
}
