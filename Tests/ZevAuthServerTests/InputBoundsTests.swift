import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Values an outsider or a key holder can make long or strange, answered with the field's ordinary error
/// and never a 500 (docs/protocol.md#callback-registration, docs/protocol.md#text-inputs).
@Suite struct InputBoundsTests {
    func make(live: Bool = false) throws -> SessionDriver {
        return try SessionDriver.started(live: live)
    }

    func expectNoServerError(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(server.serverFailureLines.isEmpty, "\(server.serverFailureLines)", sourceLocation: sourceLocation)
    }

    /// A loopback callback of exactly `length` bytes whose path does not compress (PostgreSQL compresses a
    /// long repetitive value, which would then still fit the index).
    static func loopbackURI(length: Int) -> String {
        let prefix = "http://127.0.0.1/"
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let path = (0..<(length - prefix.utf8.count)).map { _ -> Character in
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return letters[Int(seed >> 33) % letters.count]
        }
        return prefix + String(path)
    }

    @Test func aCallbackOverTheLengthCapIsRefusedNamingURI() throws {
        let driver = try make()
        let secret = driver.fixture.developmentSecret
        for length in [2049, 3000, 9000] {
            let response = try driver.sendJSON("POST", "/v1/admin/callbacks", bearer: secret, ["uri": Self.loopbackURI(length: length)])
            #expect(response.status == 400, "\(length): \(response.text)")
            #expect(response.json["error"] as? String == "invalid_request")
            let description = response.json["error_description"] as? String ?? ""
            #expect(description == "uri is not a redirect URI this server accepts: it is longer than 2048 bytes.", "\(description)")
        }
        let longest = try driver.sendJSON("POST", "/v1/admin/callbacks", bearer: secret, ["uri": Self.loopbackURI(length: 2048)])
        #expect(longest.status == 201, "\(longest.text)")
        expectNoServerError(driver.server)
    }

    @Test func aStartWithARedirectURIOverTheCapIsAShownMismatch() throws {
        let driver = try make()
        for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
            var pairs = [
                ("client_id", driver.fixture.developmentKey), ("redirect_uri", Self.loopbackURI(length: 3000)), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]
            if path == "/oauth2/authorize" { pairs.append(("response_type", "code")) }
            let response = try driver.server.browser().get(startTarget(pairs, path: path), headers: [("Accept", "application/json")])
            #expect(response.status == 400)
            #expect(response.header("location") == nil)
            if path == "/oauth2/authorize" {
                #expect(response.json["error"] as? String == "invalid_request")
                #expect((response.json["error_description"] as? String ?? "").hasPrefix("redirect_uri_mismatch: "))
            } else {
                #expect(response.json["error"] as? String == "redirect_uri_mismatch")
            }
        }
        expectNoServerError(driver.server)
    }
}

/// docs/protocol.md#admin-validation: one name rule for projects, accounts and the sign-up form.
@Suite struct DisplayNameTests {
    static let combining = "Z" + String(repeating: "\u{301}", count: 8000)
    static let refused = [
        combining, String(repeating: "a", count: 201), "Acme \u{202E}ppa", "\u{2066}Acme", "Acme\u{200F}", "A\u{061C}b", "A\u{7}b",
        " \n ",
    ]

    @Test func aRefusedProjectOrAccountNameIsInvalidRequestNamingName() throws {
        let driver = try InputBoundsTests().make()
        let token = TestServer.operatorToken
        for (index, name) in Self.refused.enumerated() {
            let project = try driver.sendJSON("POST", "/v1/admin/projects", bearer: token, ["name": name])
            #expect(project.status == 400, "\(index): \(project.text)")
            #expect(project.json["error"] as? String == "invalid_request")
            #expect((project.json["error_description"] as? String ?? "").hasPrefix("name must be 1 to 200 characters"))
            let user = try driver.sendJSON(
                "POST", "/v1/admin/users", bearer: token,
                ["email": "name\(index)@example.com", "password": "a long enough password", "name": name])
            #expect(user.status == 400, "\(index): \(user.text)")
            #expect((user.json["error_description"] as? String ?? "").hasPrefix("name must be 1 to 200 characters"))
        }
        for name in [String(repeating: "é", count: 200), "👩‍💻 Zoë", "مرحبا", "Ada\u{200D}"] {
            let project = try driver.sendJSON("POST", "/v1/admin/projects", bearer: token, ["name": name])
            #expect(project.status == 201, "\(project.text)")
        }
        InputBoundsTests().expectNoServerError(driver.server)
    }

    @Test func aRefusedSignUpNameIsTheFormsFieldError() throws {
        let driver = try InputBoundsTests().make()
        for (index, name) in Self.refused.enumerated() {
            let browser = driver.server.browser()
            let page = try browser.get("/account/signup")
            let csrf = try #require(hiddenField("csrf", in: page.text))
            let posted = try browser.postForm(
                "/account/signup",
                [("csrf", csrf), ("name", name), ("email", "signup\(index)@example.com"), ("password", "a long enough password")])
            #expect(posted.status == 400, "\(index)")
            #expect(posted.text.contains("Enter your name"), "\(index)")
        }
        InputBoundsTests().expectNoServerError(driver.server)
    }
}

/// docs/protocol.md#callback-registration: a response parameter spelled the way lenient parsers rewrite it.
@Suite struct LenientResponseParameterTests {
    @Test(arguments: [
        "http://127.0.0.1/cb?error.description=x", "http://127.0.0.1/cb?error+description=x", "http://127.0.0.1/cb?%20iss=x",
        "http://127.0.0.1/cb?code[]=x", "http://127.0.0.1/cb?code%5B%5D=x", "http://127.0.0.1/cb?code%00=x",
        "http://127.0.0.1/cb?iss%0A=x",
    ])
    func registrationRefusesALenientlyReadResponseParameter(uri: String) throws {
        let driver = try InputBoundsTests().make()
        let response = try driver.sendJSON("POST", "/v1/admin/callbacks", bearer: driver.fixture.developmentSecret, ["uri": uri])
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        #expect(
            (response.json["error_description"] as? String ?? "").hasPrefix(
                "uri is not a redirect URI this server accepts: its query already carries a parameter"))
    }
}

/// docs/protocol.md#token-client-authentication: no spelling of client credentials is silently ignored.
@Suite struct ClientCredentialSpellingTests {
    static let credentials = Data("client:secret".utf8).base64EncodedString()

    func expectInvalidRequest(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == "invalid_request", sourceLocation: sourceLocation)
        #expect((response.json["error_description"] as? String ?? "").hasPrefix("invalid_request: "), sourceLocation: sourceLocation)
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func basicSeparatedByATabOrInAnyCaseBesideClientIDIsInvalidRequest(path: String) throws {
        let driver = try InputBoundsTests().make()
        let fields = [
            ("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x"), ("client_id", driver.fixture.developmentKey),
        ]
        for header in ["Basic\t\(Self.credentials)", "BASIC \(Self.credentials)", "bAsIc\t \(Self.credentials)", "basic"] {
            expectInvalidRequest(try driver.postForm(path, fields, headers: [("Authorization", header)]))
        }
    }

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func aClientAssertionIsInvalidRequest(path: String) throws {
        let driver = try InputBoundsTests().make()
        let base = [("grant_type", "refresh_token"), ("refresh_token", "zrt_x"), ("token", "zrt_x")]
        let key = ("client_id", driver.fixture.developmentKey)
        let assertionType = ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        let assertion = ("client_assertion", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
        for extra in [[key, assertionType, assertion], [key, assertion], [assertionType, assertion], [key, assertionType]] {
            let response = try driver.postForm(path, base + extra)
            expectInvalidRequest(response)
            #expect((response.json["error_description"] as? String ?? "").contains("client_assertion"))
        }
    }
}

/// docs/protocol.md#text-inputs: raw bytes that are not UTF-8 (not percent-encoded) are refused where the
/// form or query is decoded, exactly as their `%XX` spelling is, never read as U+FFFD.
@Suite struct RawInvalidUTF8Tests {
    static let invalid: [UInt8] = [0xFF, 0xFE]

    @Test(arguments: ["/oauth2/token", "/oauth2/revoke"])
    func aFormBodyWithRawInvalidUTF8IsInvalidRequest(path: String) throws {
        let driver = try InputBoundsTests().make()
        let key = driver.fixture.developmentKey
        for body in [
            Array("grant_type=refresh_token&client_id=\(key)&token=zrt_x&refresh_token=zrt_".utf8) + Self.invalid,
            Array("grant_type=refresh_token&client_id=\(key)&token=zrt_x&refresh_token=zrt_x&x".utf8) + Self.invalid + Array("=1".utf8),
        ] {
            let response = try driver.server.client.send(
                "POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body)
            #expect(response.status == 400, "\(response.text)")
            #expect(response.json["error"] as? String == "invalid_request", "\(response.text)")
        }
        InputBoundsTests().expectNoServerError(driver.server)
    }

    @Test func aHostedFormWithRawInvalidUTF8IsInvalidRequest() throws {
        let driver = try InputBoundsTests().make()
        let browser = driver.server.browser()
        let page = try browser.get("/account/signin")
        let csrf = try #require(hiddenField("csrf", in: page.text))
        let body = Array("csrf=\(csrf)&password=whatever+password&email=a".utf8) + Self.invalid + Array("@example.com".utf8)
        let posted = try browser.send(
            "POST", "/account/signin", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body)
        #expect(posted.status == 400)
        #expect(posted.text.contains("<code>invalid_request</code>"))
    }

    /// A raw byte outside ASCII never reaches the query decoder: the request target itself is refused
    /// (docs/protocol.md#http-layer-errors), shown, never redirected.
    @Test func aStartQueryWithRawInvalidUTF8IsRefusedShown() throws {
        let driver = try InputBoundsTests().make(live: true)
        for path in ["/v1/auth/zevid/start", "/oauth2/authorize"] {
            let pairs = [
                ("client_id", driver.fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"), ("response_type", "code"),
            ]
            let target = Array(startTarget(pairs, path: path).utf8) + Array("&state=s".utf8) + Self.invalid
            let response = try driver.server.client.send("GET", targetBytes: target, headers: [("Accept", "application/json")])
            #expect(response.status == 400, "\(path): \(response.text)")
            #expect(response.json["error"] as? String == "invalid_request")
            #expect(response.header("location") == nil)
        }
        InputBoundsTests().expectNoServerError(driver.server)
    }
}
