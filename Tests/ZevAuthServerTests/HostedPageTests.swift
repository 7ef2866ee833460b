import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The hosted pages as a person meets them (docs/protocol.md#error-pages, #page-accessibility,
/// #totp-enrolment): the stylesheet's contrast ratios (WCAG 2.2 SC 1.4.3, 1.4.11), every page's labels
/// and error wiring (SC 1.3.1, 3.3.1, 3.3.2, 3.1.1), error pages that speak to the person with the
/// developer detail behind a disclosure, and the QR code of the TOTP enrolment page.
@Suite struct HostedPageTests {
    // MARK: Reading pages

    /// The served stylesheet as rules: each selector of a rule with its declarations.
    static func rules(_ css: String) -> [String: [String: String]] {
        var rules: [String: [String: String]] = [:]
        for block in css.split(separator: "}") {
            let parts = block.split(separator: "{", maxSplits: 1)
            guard parts.count == 2 else { continue }
            var declarations: [String: String] = [:]
            for declaration in parts[1].split(separator: ";") {
                let pair = declaration.split(separator: ":", maxSplits: 1)
                guard pair.count == 2 else { continue }
                declarations[pair[0].trimmingCharacters(in: .whitespaces)] = pair[1].trimmingCharacters(in: .whitespaces)
            }
            for selector in parts[0].split(separator: ",") {
                rules[selector.trimmingCharacters(in: .whitespaces), default: [:]].merge(declarations) { $1 }
            }
        }
        return rules
    }

    /// The first `#rgb` or `#rrggbb` colour in a CSS value.
    static func colour(_ value: String?) -> String? {
        guard let value, let match = value.firstMatch(of: /#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b/) else { return nil }
        return String(match.output.1)
    }

    /// WCAG 2.2 relative luminance of an sRGB hex colour.
    static func luminance(_ hex: String) -> Double {
        let full = hex.count == 3 ? hex.map { "\($0)\($0)" }.joined() : hex
        let value = Int(full, radix: 16) ?? 0
        let channels = [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff].map { Double($0) / 255 }
        let linear = channels.map { $0 <= 0.04045 ? $0 / 12.92 : pow(($0 + 0.055) / 1.055, 2.4) }
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    }

    /// WCAG 2.2 contrast ratio, 1 to 21.
    static func contrast(_ a: String, _ b: String) -> Double {
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    /// The page's text a person reads outside the developer disclosure: tags removed.
    static func visibleText(_ html: String) -> String {
        var text = html
        while let open = text.range(of: "<details"), let close = text.range(of: "</details>", range: open.upperBound..<text.endIndex) {
            text.removeSubrange(open.lowerBound..<close.upperBound)
        }
        if let title = text.range(of: "<title>"), let end = text.range(of: "</title>") {
            text.removeSubrange(title.lowerBound..<end.upperBound)
        }
        return text.replacing(/<[^>]*>/, with: " ").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The parameter names and wire codes a person must never read outside the disclosure.
    static let developerWords = [
        "client_id", "redirect_uri", "code_challenge", "code_verifier", "response_type", "state=", "invalid_", "pkce",
        "_required", "_mismatch", "PKCE", "S256",
    ]

    /// Checks the structure every hosted page must have; returns what is wrong (empty when nothing).
    static func problems(_ html: String) -> [String] {
        var problems: [String] = []
        if !html.contains("<html lang=\"en\">") { problems.append("no lang") }
        if !html.contains("name=\"viewport\" content=\"width=device-width, initial-scale=1\"") { problems.append("no viewport") }
        // The one script a page may load is the same-origin passkey script, by `src` and with no body.
        let scripts = html.matches(of: /<script\b[^>]*>[^<]*<\/script>/).map { String($0.output) }
        let inlineScript =
            html.matches(of: /<script\b/).count != scripts.count
            || scripts.contains { $0 != "<script src=\"/account/static/passkeys.js\" defer></script>" }
        if html.contains("style=") || inlineScript { problems.append("inline style or script (the CSP refuses them)") }
        let ids = Set(html.matches(of: /\bid="([^"]+)"/).map { String($0.output.1) })
        let labels = Set(html.matches(of: /<label for="([^"]+)">[^<]+<\/label>/).map { String($0.output.1) })
        for tag in html.matches(of: /<input\b[^>]*>/).map({ String($0.output) }) where !tag.contains("type=\"hidden\"") {
            guard let id = tag.firstMatch(of: /\bid="([^"]+)"/).map({ String($0.output.1) }) else {
                problems.append("input without id: \(tag)")
                continue
            }
            if !labels.contains(id) { problems.append("input \(id) has no label") }
            if let described = tag.firstMatch(of: /aria-describedby="([^"]+)"/) {
                for target in described.output.1.split(separator: " ") where !ids.contains(String(target)) {
                    problems.append("input \(id) describedby missing \(target)")
                }
            }
            if tag.contains("aria-invalid=\"true\""), !(tag.firstMatch(of: /aria-describedby="[^"]*form-error/) != nil) {
                problems.append("invalid input \(id) not tied to the error")
            }
        }
        // A form's error, or the passkey script's sentence area (docs/passkeys.md, "The passkey script").
        for tag in html.matches(of: /<[a-z]+\b[^>]*class="error"[^>]*>/).map({ String($0.output) })
        where !tag.contains("id=\"form-error\" role=\"alert\"") && !tag.contains("id=\"passkey-error\" role=\"alert\"") {
            problems.append("an error without its id and role")
        }
        return problems
    }

    func expectWellFormed(_ response: TestResponse, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Self.problems(response.text) == [], "\(name)", sourceLocation: sourceLocation)
        #expect(response.header("content-type") == "text/html; charset=utf-8", "\(name)", sourceLocation: sourceLocation)
    }

    func expectInvalid(_ response: TestResponse, _ ids: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for id in ids {
            let tag = response.text.firstMatch(of: Regex<Substring>(verbatim: "<input id=\"\(id)\"")).flatMap { match in
                response.text[match.range.lowerBound...].firstMatch(of: /<input\b[^>]*>/).map { String($0.output) }
            }
            #expect(tag?.contains("aria-invalid=\"true\"") == true, "\(id) is marked invalid", sourceLocation: sourceLocation)
            #expect(tag?.contains("form-error") == true, "\(id) names the error", sourceLocation: sourceLocation)
        }
    }

    // MARK: Contrast

    @Test func theStylesheetsColoursMeetWCAGContrast() throws {
        let server = try TestServer()
        let css = try server.client.send("GET", "/assets/zevauth.css").text
        let rules = Self.rules(css)
        let card = try #require(Self.colour(rules[".card"]?["background"]))
        let page = try #require(Self.colour(rules["body"]?["background"]))
        let text = try #require(Self.colour(rules["body"]?["color"]))
        // Text: 4.5:1 (SC 1.4.3).
        let textPairs: [(String, String?, String?)] = [
            ("body text on the card", rules["body"]?["color"], rules[".card"]?["background"]),
            ("body text on the page", rules["body"]?["color"], rules["body"]?["background"]),
            ("muted text on the card", rules[".muted"]?["color"], rules[".card"]?["background"]),
            ("hints on the card", rules[".hint"]?["color"], rules[".card"]?["background"]),
            ("links on the card", rules["a"]?["color"], rules[".card"]?["background"]),
            ("button text", rules["button"]?["color"], rules["button"]?["background"]),
            ("secondary button text", rules["button.secondary"]?["color"], rules["button.secondary"]?["background"]),
            ("error text", rules[".error"]?["color"], rules[".error"]?["background"]),
            ("the disclosure's summary", rules["summary"]?["color"], rules[".card"]?["background"]),
            ("input text", rules["input[type=text]"]?["color"], rules["input[type=text]"]?["background"]),
        ]
        for (what, foreground, background) in textPairs {
            let ratio = Self.contrast(try #require(Self.colour(foreground), "\(what)"), try #require(Self.colour(background), "\(what)"))
            #expect(ratio >= 4.5, "\(what): \(ratio)")
        }
        // Input borders and the focus ring: 3:1 against what surrounds them (SC 1.4.11).
        let border = try #require(Self.colour(rules["input[type=password]"]?["border"]))
        let invalid = try #require(Self.colour(rules["input[aria-invalid=true]"]?["border"]))
        let focus = try #require(Self.colour(rules[":focus-visible"]?["outline"]))
        #expect(Self.colour(rules["input:focus"]?["outline"]) == focus)
        for (what, colour) in [("input border", border), ("invalid input border", invalid), ("focus ring", focus)] {
            #expect(Self.contrast(colour, card) >= 3, "\(what) on the card: \(Self.contrast(colour, card))")
        }
        #expect(Self.contrast(focus, page) >= 3)
        #expect(Self.contrast(text, card) >= 7)
        // Reflow at 320 px (SC 1.4.10): inputs and buttons fill the column, long words wrap.
        #expect(rules["input[type=email]"]?["width"] == "100%")
        #expect(rules["body"]?["overflow-wrap"] == "anywhere")
        #expect(rules["main"]?["max-width"] == "26rem")
    }

    // MARK: Error pages

    @Test func everyErrorPageSaysWhatHappenedAndWhatToDoWithTheDetailBehindADisclosure() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let valid: [(String, String)] = [
            ("client_id", fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"), ("state", "s"),
            ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
        ]
        let cases: [(String, [(String, String)], String, Int)] = [
            ("/v1/auth/zevid/start", valid.filter { $0.0 != "client_id" }, "invalid_client", 400),
            ("/v1/auth/zevid/start", valid.map { $0.0 == "client_id" ? ($0.0, "pk_test_unknown") : $0 }, "invalid_client", 400),
            ("/v1/auth/zevid/start", valid.filter { $0.0 != "redirect_uri" }, "redirect_uri_required", 400),
            (
                "/v1/auth/zevid/start", valid.map { $0.0 == "redirect_uri" ? ($0.0, "https://evil.example/cb") : $0 },
                "redirect_uri_mismatch", 400
            ),
            ("/v1/auth/zevid/start", valid.filter { $0.0 != "state" }, "invalid_state", 400),
            ("/v1/auth/zevid/start", valid + [("state", "again")], "invalid_request", 400),
            ("/oauth2/authorize", [("response_type", "code")] + valid.filter { $0.0 != "client_id" }, "invalid_client", 400),
        ]
        for (path, pairs, code, status) in cases {
            let page = try server.browser().get(startTarget(pairs, path: path))
            #expect(page.status == status, "\(code)")
            expectWellFormed(page, code)
            let visible = Self.visibleText(page.text)
            #expect(visible.contains("This app's sign-in link is not set up correctly."), "\(code): \(visible)")
            #expect(visible.contains("Go back to the app and try again."), "\(code)")
            for word in Self.developerWords { #expect(!visible.contains(word), "\(code) shows \(word) outside the disclosure") }
            #expect(page.text.contains("<details><summary>Details for the app's developer</summary>"), "\(code)")
            #expect(page.text.contains("Error code: <code>\(code)</code>"), "\(code)")
        }
        // The developer's description is inside the disclosure.
        let unknown = try server.browser().get(startTarget(valid.filter { $0.0 != "client_id" }))
        let details = try #require(TOTPSignInTests.between(unknown.text, "<details>", "</details>"))
        #expect(details.contains("client_id"))

        // The flows' own situations, in the person's words, with the code in the disclosure.
        let notValid = try server.browser().get("/v1/auth/zevid/signin?request=\(UUID().uuidString)")
        #expect(notValid.status == 400)
        expectWellFormed(notValid, "link not valid")
        #expect(Self.visibleText(notValid.text).contains("This sign-in link is not valid."))
        #expect(Self.visibleText(notValid.text).contains("start the sign-in again"))
        #expect(notValid.text.contains("Error code: <code>invalid_request</code>"))
        let otherBrowser = try SignInDriver(server: server, browser: server.browser()).reachSignInForm(clientID: fixture.developmentKey)
        let elsewhere = try server.browser().get("/v1/auth/zevid/signin?request=\(otherBrowser.fields[0].1)")
        #expect(Self.visibleText(elsewhere.text).contains("This sign-in was started in another browser."))
        #expect(Self.visibleText(elsewhere.text).contains("Finish it in the browser where it started"))
        // A page the funnel renders (an unknown route asked for as a page) speaks the same way.
        let missing = try server.browser().get("/v1/auth/zevid/nothing-here")
        #expect(missing.status == 404)
    }

    @Test func theRedirectedErrorsReturnPageNamesWhatHappened() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        // A custom-scheme redirect without PKCE: redirected, and held for a gesture on the "Return to the app" page.
        let held = try server.browser().get(
            startTarget([("client_id", fixture.developmentKey), ("redirect_uri", "com.acme.app:/callback"), ("state", "s")]))
        #expect(held.status == 200)
        expectWellFormed(held, "return to the app")
        #expect(Self.visibleText(held.text).contains("This app's sign-in link is not set up correctly."))
        #expect(Self.visibleText(held.text).contains("Return to Acme to try again."))
        #expect(held.text.contains("href=\"com.acme.app:/callback?error=pkce_required"))
    }

    // MARK: Every page's structure

    @Test func everyPageLabelsItsInputsAndTiesErrorsToTheirFields() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)

        // The app sign-in page, and a wrong password: both fields invalid, tied to the message.
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        expectWellFormed(form.page, "sign-in")
        let wrong = try browser.postForm("/v1/auth/zevid/signin", form.fields + [("email", fixture.email), ("password", "nope nope nope")])
        #expect(wrong.status == 401)
        expectWellFormed(wrong, "sign-in, wrong password")
        expectInvalid(wrong, ["email", "password"])
        let badEmail = try browser.postForm("/v1/auth/zevid/signin", form.fields + [("email", "not an address"), ("password", "x")])
        expectInvalid(badEmail, ["email"])
        #expect(
            !badEmail.text.contains("id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" required aria"))

        // Consent.
        let consent = try SignInDriver(server: server, browser: server.browser()).reachConsent(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", email: fixture.email,
            password: fixture.password)
        expectWellFormed(consent.page, "consent")

        // Sign-up, and its field errors.
        let signUpBrowser = server.browser()
        let signUp = try signUpBrowser.get("/account/signup")
        expectWellFormed(signUp, "sign-up")
        #expect(signUp.text.contains("aria-describedby=\"password-hint\""))
        let csrf = try #require(hiddenField("csrf", in: signUp.text))
        let badAddress = try signUpBrowser.postForm(
            "/account/signup", [("csrf", csrf), ("name", "Pat"), ("email", "nope"), ("password", "long enough password")])
        #expect(badAddress.status == 400)
        expectWellFormed(badAddress, "sign-up, bad email")
        expectInvalid(badAddress, ["email"])
        let short = try signUpBrowser.postForm(
            "/account/signup", [("csrf", csrf), ("name", "Pat"), ("email", "pat-\(UUID().uuidString)@example.com"), ("password", "short")])
        expectInvalid(short, ["password"])
        #expect(short.text.contains("aria-describedby=\"password-hint form-error\""))

        // The email pages (docs/protocol.md, "Email codes"): the code page, and a wrong code marks the input
        // and says how many tries are left.
        let signUpAddress = EmailFlowTests.unique("pages")
        let codeBrowser = server.browser()
        let codePage = try EmailFlowTests.signUp(codeBrowser, email: signUpAddress, password: "a long sign-up password")
        #expect(codePage.status == 200)
        expectWellFormed(codePage, "code page")
        #expect(codePage.text.contains("aria-describedby=\"code-hint\""))
        #expect(!codePage.text.contains("aria-invalid"))
        let wrongEmailed = try EmailFlowTests.enter(
            codeBrowser, page: codePage, code: EmailFlowTests.wrong(try Mailbox.code(for: signUpAddress)))
        #expect(wrongEmailed.status == 400)
        expectWellFormed(wrongEmailed, "code page, wrong code")
        expectInvalid(wrongEmailed, ["code"])
        #expect(wrongEmailed.text.contains("aria-describedby=\"code-hint form-error\""))
        #expect(Self.visibleText(wrongEmailed.text).contains("That code is not right. You have 4 tries left."))
        // A code page that is over (another browser's flow) is an error page with a way back.
        let overPage = try server.browser().get("/account/code?flow=\(UUID().uuidString)")
        #expect(overPage.status == 400)
        expectWellFormed(overPage, "code page, over")
        #expect(Self.visibleText(overPage.text).contains("This page has expired."))

        // "Forgot password?", a malformed address, then the new password and a too-short one.
        let resetBrowser = server.browser()
        let forgot = try resetBrowser.get("/account/reset")
        expectWellFormed(forgot, "forgot password")
        let forgotCSRF = try #require(hiddenField("csrf", in: forgot.text))
        let notAnAddress = try resetBrowser.postForm("/account/reset", [("csrf", forgotCSRF), ("email", "not an address")])
        #expect(notAnAddress.status == 400)
        expectWellFormed(notAnAddress, "forgot password, bad email")
        expectInvalid(notAnAddress, ["email"])
        let resetCodePage = try resetBrowser.postForm("/account/reset", [("csrf", forgotCSRF), ("email", fixture.email)])
        expectWellFormed(resetCodePage, "reset code page")
        let newPasswordPage = try EmailFlowTests.enter(resetBrowser, page: resetCodePage, code: try Mailbox.code(for: fixture.email))
        #expect(newPasswordPage.status == 200)
        expectWellFormed(newPasswordPage, "new password")
        #expect(newPasswordPage.text.contains("aria-describedby=\"new_password-hint\""))
        let tooShort = try resetBrowser.postForm(
            "/account/reset/password",
            [
                ("flow", try #require(hiddenField("flow", in: newPasswordPage.text))),
                ("csrf", try #require(hiddenField("csrf", in: newPasswordPage.text))), ("new_password", "short"),
            ])
        #expect(tooShort.status == 400)
        expectWellFormed(tooShort, "new password, too short")
        expectInvalid(tooShort, ["new_password"])
        #expect(tooShort.text.contains("aria-describedby=\"new_password-hint form-error\""))

        // The account area's sign-in, the account page, a wrong current password.
        let accountSignIn = try server.browser().get("/account/signin")
        expectWellFormed(accountSignIn, "account sign-in")
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (account, accountCSRF) = try AccountTests.accountPage(owner)
        expectWellFormed(account, "account")
        let wrongCurrent = try owner.postForm(
            "/account/password", [("csrf", accountCSRF), ("current_password", "wrong wrong"), ("new_password", "a new long password")])
        #expect(wrongCurrent.status == 401)
        expectWellFormed(wrongCurrent, "account, wrong current password")
        expectInvalid(wrongCurrent, ["current"])

        // TOTP enrolment: the QR code, the link, the key in groups of four; a wrong code marks the input.
        let enrol = try owner.postForm("/account/totp/start", [("csrf", accountCSRF)])
        #expect(enrol.status == 200)
        expectWellFormed(enrol, "TOTP enrolment")
        let key = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>"))
        #expect(key.wholeMatch(of: /[A-Z2-7]{4}( [A-Z2-7]{4})*/) != nil, "the key in groups of four: \(key)")
        let secret = try #require(Base32.decode(key.replacingOccurrences(of: " ", with: "")))
        SuiteCapture.secret(key.replacingOccurrences(of: " ", with: ""))
        #expect(enrol.text.contains("<svg class=\"qr\" xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(enrol.text.contains("aria-label=\"QR code to scan with your authenticator app\""))
        #expect(enrol.text.contains("href=\"otpauth://totp/ZevAuth:"))
        let wrongCode = try owner.postForm("/account/totp/confirm", [("csrf", accountCSRF), ("code", "000000")])
        expectWellFormed(wrongCode, "TOTP enrolment, wrong code")
        expectInvalid(wrongCode, ["code"])
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let codes = try owner.postForm("/account/totp/confirm", [("csrf", accountCSRF), ("code", TOTP.code(secret: secret, step: step))])
        #expect(codes.status == 200)
        expectWellFormed(codes, "recovery codes")
        // The account page now asks for the code to close the account.
        let enrolled = try owner.get("/account")
        expectWellFormed(enrolled, "account with TOTP")
        #expect(enrolled.text.contains("id=\"close-code\""))

        // The MFA step of a sign-in, and a wrong code.
        let (mfaBrowser, afterPassword) = try TOTPSignInTests.passwordStep(server, fixture)
        let mfaLocation = try #require(afterPassword.header("location"))
        let mfa = try mfaBrowser.get(mfaLocation)
        expectWellFormed(mfa, "MFA")
        let refused = try TOTPSignInTests.submitCode(mfaBrowser, at: mfaLocation, "123456")
        #expect(refused.status == 401)
        expectWellFormed(refused, "MFA, wrong code")
        expectInvalid(refused, ["code"])

        // A reset of an account with MFA asks for the second factor after the emailed code; a wrong one marks it.
        let mfaReset = server.browser()
        let mfaForgot = try mfaReset.get("/account/reset")
        let mfaCodePage = try mfaReset.postForm(
            "/account/reset", [("csrf", try #require(hiddenField("csrf", in: mfaForgot.text))), ("email", fixture.email)])
        let secondFactor = try EmailFlowTests.enter(mfaReset, page: mfaCodePage, code: try Mailbox.code(for: fixture.email, count: 2))
        #expect(secondFactor.status == 200)
        expectWellFormed(secondFactor, "reset, second factor")
        let wrongSecond = try mfaReset.postForm(
            "/account/reset/second-factor",
            [
                ("flow", try #require(hiddenField("flow", in: secondFactor.text))),
                ("csrf", try #require(hiddenField("csrf", in: secondFactor.text))), ("code", "123456"),
            ])
        #expect(wrongSecond.status == 401)
        expectWellFormed(wrongSecond, "reset, wrong second factor")
        expectInvalid(wrongSecond, ["code"])
    }
}
