import Crypto
import Encoding
import Foundation
import Testing
import ZevAuthTesting

/// Someone who can plant a cookie in the person's browser (a sibling subdomain, a plain-HTTP answer)
/// gains nothing from it: a binding id the server never minted is replaced, one it minted for the
/// planter's own browser stops counting when the person authenticates, a cookie name sent twice counts as
/// no cookie, and on an `https` issuer every cookie carries the `__Host-` prefix (docs/threat-model.md,
/// "Planted browser cookies"; docs/protocol.md, "Browser cookies").
@Suite struct PlantedCookieTests {
    static let binding = "zevauth_browser"
    static let session = "zevid_session"
    static let redirect = "http://127.0.0.1:5000/cb"

    /// A value of the binding id's shape (`zbb_` + 43 base64url characters) the server never minted.
    static func forged() throws -> String { try Crypto.mintToken(prefix: "zbb_") }

    /// The CSRF token of a pending sign-in's forms as whoever knows `binding` computes it.
    static func pendingCSRF(binding: String, requestID: String) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: Array(binding.utf8), message: Array("csrf:\(requestID)".utf8)))
    }

    static func start(_ browser: TestBrowser, clientID: String) throws -> TestResponse {
        try browser.get(
            startTarget([
                ("client_id", clientID), ("redirect_uri", Self.redirect), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]))
    }

    /// What the planter's own jar — holding only `binding` — can do with the person's pending sign-in
    /// `requestID`: each must be refused as "started in another browser", never a form, a consent or a
    /// sign-in attached to it.
    func expectPlanterGainsNothing(_ server: TestServer, binding: String, requestID: String, planter: Fixture) throws {
        let jar = server.browser()
        jar.plantCookie(Self.binding, binding)
        let csrf = Self.pendingCSRF(binding: binding, requestID: requestID)
        let page = try jar.get("/v1/auth/zevid/signin?request=\(requestID)")
        #expect(page.status == 400, "the planter loaded the person's pending sign-in")
        #expect(!page.text.contains("name=\"csrf\""))
        let attach = try jar.postForm(
            "/v1/auth/zevid/signin", [("request", requestID), ("csrf", csrf), ("email", planter.email), ("password", planter.password)])
        #expect(attach.status == 400, "the planter signed their own account into the person's pending sign-in")
        #expect(jar.cookies[Self.session] == nil)
        let consent = try jar.postForm("/v1/auth/zevid/consent", [("request", requestID), ("csrf", csrf), ("decision", "deny")])
        #expect(consent.status == 400, "the planter's consent form was accepted")
    }

    @Test func aBindingIdTheServerNeverMintedIsReplacedAndGainsThePlanterNothing() throws {
        let server = try TestServer()
        let person = try Fixture.make(store: server.store)
        let planter = try Fixture.make(store: server.store, name: "Planter")
        let planted = try Self.forged()
        let browser = server.browser()
        browser.plantCookie(Self.binding, planted)

        let started = try Self.start(browser, clientID: person.developmentKey)
        #expect(started.status == 303)
        #expect(started.headerValues("set-cookie").contains { $0.hasPrefix("\(Self.binding)=") }, "the planted id was adopted")
        #expect(browser.cookies[Self.binding] != planted)
        let startedAt = try #require(started.header("location"))
        let requestID = try #require(queryItems(of: startedAt)["request"])
        // Before the password and after it, the planted id opens nothing.
        try expectPlanterGainsNothing(server, binding: planted, requestID: requestID, planter: planter)
        let form = try browser.get(try #require(started.header("location")))
        let fields = [("request", requestID), ("csrf", try #require(hiddenField("csrf", in: form.text)))]
        #expect(
            try browser.postForm("/v1/auth/zevid/signin", fields + [("email", person.email), ("password", person.password)]).status == 303)
        try expectPlanterGainsNothing(server, binding: planted, requestID: requestID, planter: planter)
    }

    /// A planter who plants a binding id the server minted for the planter's own browser (so it is on
    /// record) loses it the moment the person authenticates: the sign-in answers a fresh id and moves the
    /// pending sign-in to it, and the person's sign-in completes as the person.
    @Test func aMintedBindingPlantedBeforeTheSignInStopsCountingWhenThePersonAuthenticates() throws {
        let server = try TestServer()
        let person = try Fixture.make(store: server.store)
        let planter = try Fixture.make(store: server.store, name: "Planter")
        let planterBrowser = server.browser()
        _ = try Self.start(planterBrowser, clientID: planter.developmentKey)
        let known = try #require(planterBrowser.cookies[Self.binding])

        let browser = server.browser()
        browser.plantCookie(Self.binding, known)
        let pkce = PKCEPair()
        let started = try browser.get(
            startTarget([
                ("client_id", person.developmentKey), ("redirect_uri", Self.redirect), ("state", "s"),
                ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
            ]))
        let location = try #require(started.header("location"))
        let requestID = try #require(queryItems(of: location)["request"])
        let form = try browser.get(location)
        let fields = [("request", requestID), ("csrf", try #require(hiddenField("csrf", in: form.text)))]
        let signedIn = try browser.postForm("/v1/auth/zevid/signin", fields + [("email", person.email), ("password", person.password)])
        #expect(signedIn.status == 303)
        #expect(signedIn.headerValues("set-cookie").contains { $0.hasPrefix("\(Self.binding)=") }, "no fresh id at authentication")
        #expect(browser.cookies[Self.binding] != known)

        try expectPlanterGainsNothing(server, binding: known, requestID: requestID, planter: planter)

        // The person's own browser carries on to a code and a session of the person's account.
        let consent = try browser.get(try #require(signedIn.header("location")))
        #expect(consent.status == 200)
        #expect(consent.text.contains(person.email))
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [("request", requestID), ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow")])
        let back = try #require(allowed.header("location"))
        let code = try #require(queryItems(of: back)["code"])
        SuiteCapture.secret(code)
        let exchanged = try SignInDriver(server: server, browser: browser).exchange(
            clientID: person.developmentKey, fields: ["code": code, "codeVerifier": pkce.verifier, "redirectUri": Self.redirect])
        #expect(exchanged.status == 200)
        #expect((exchanged.json["user"] as? [String: Any])?["email"] as? String == person.email)
    }

    /// The signed-out account forms take their CSRF token from the binding id too: one computed from a
    /// planted id cannot sign the browser in to the planter's account (login CSRF).
    @Test func aPlantedBindingCannotSignTheBrowserInToThePlantersAccount() throws {
        let server = try TestServer()
        let planter = try Fixture.make(store: server.store, name: "Planter")
        let planted = try Self.forged()
        let browser = server.browser()
        browser.plantCookie(Self.binding, planted)
        let csrf = Base64URL.encode(Crypto.hmacSHA256(key: Array(planted.utf8), message: Array("account-form:signin".utf8)))
        let posted = try browser.postForm("/account/signin", [("csrf", csrf), ("email", planter.email), ("password", planter.password)])
        #expect(posted.status == 403)
        #expect(browser.cookies[Self.session] == nil)
        // The page a real browser gets mints an id of its own instead of adopting the planted one.
        let page = try browser.get("/account/signin")
        #expect(page.headerValues("set-cookie").contains { $0.hasPrefix("\(Self.binding)=") })
        #expect(browser.cookies[Self.binding] != planted)
    }

    /// A cookie name sent twice with different values counts as not sent: a planter's own signed-in
    /// session, planted beside the person's, neither wins nor shows the planter's account.
    @Test func aCookieNameSentTwiceLetsNeitherValueWin() throws {
        let server = try TestServer()
        let person = try Fixture.make(store: server.store)
        let planter = try Fixture.make(store: server.store, name: "Planter")
        func signedInSession(_ fixture: Fixture) throws -> String {
            let browser = server.browser()
            _ = try SignInDriver(server: server, browser: browser).run(
                clientID: fixture.developmentKey, redirectURI: Self.redirect, state: "s", pkce: PKCEPair(), email: fixture.email,
                password: fixture.password)
            return try #require(browser.cookies[Self.session])
        }
        let mine = try signedInSession(person)
        let theirs = try signedInSession(planter)
        for header in ["\(Self.session)=\(theirs); \(Self.session)=\(mine)", "\(Self.session)=\(mine); \(Self.session)=\(theirs)"] {
            let page = try server.client.send("GET", "/account", headers: [("Cookie", header)])
            #expect(page.status == 303)
            #expect(page.header("location") == "/account/signin")
            #expect(!page.text.contains(planter.email))
        }
        // The same value twice is no ambiguity.
        let same = try server.client.send("GET", "/account", headers: [("Cookie", "\(Self.session)=\(mine); \(Self.session)=\(mine)")])
        #expect(same.status == 200)
        #expect(same.text.contains(person.email))
    }

    /// On an `https` issuer every cookie is `Secure` and so carries the `__Host-` prefix, with `Path=/`
    /// and no `Domain`, and the sign-in works under those names.
    @Test func secureCookiesCarryTheHostPrefix() throws {
        let server = try TestServer(issuer: "https://auth.example")
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        var setCookies: [String] = []
        let started = try Self.start(browser, clientID: fixture.developmentKey)
        setCookies += started.headerValues("set-cookie")
        let location = try #require(started.header("location"))
        let form = try browser.get(location)
        let fields = [
            ("request", try #require(queryItems(of: location)["request"])), ("csrf", try #require(hiddenField("csrf", in: form.text))),
        ]
        let signedIn = try browser.postForm("/v1/auth/zevid/signin", fields + [("email", fixture.email), ("password", fixture.password)])
        #expect(signedIn.status == 303)
        setCookies += signedIn.headerValues("set-cookie")
        #expect(setCookies.count >= 3)
        for cookie in setCookies {
            #expect(cookie.hasPrefix("__Host-"), "\(cookie.prefix(20))")
            #expect(cookie.contains("; Secure") && cookie.contains("; Path=/") && !cookie.lowercased().contains("domain="))
        }
        #expect(browser.cookies["__Host-\(Self.session)"] != nil)
        #expect(browser.cookies[Self.session] == nil)
        let consent = try browser.get(try #require(signedIn.header("location")))
        #expect(consent.status == 200)
        #expect(consent.text.contains(fixture.email))
        // An unprefixed cookie of the old name is not read on such a deployment.
        let unprefixed = try server.client.send(
            "GET", "/account", headers: [("Cookie", "\(Self.session)=\(try #require(browser.cookies["__Host-\(Self.session)"]))")])
        #expect(unprefixed.status == 303)
    }
}
