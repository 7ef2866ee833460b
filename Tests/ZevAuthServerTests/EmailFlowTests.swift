import Authorize
import Foundation
import PostgresStore
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The email flows over HTTP against the real PostgreSQL (docs/protocol.md, "Email codes", "Sign-up",
/// "Password reset"): codes read from the messages the server sent.
@Suite struct EmailFlowTests {
    static func unique(_ tag: String) -> String {
        let email = "\(tag)-\(UUID().uuidString.prefix(12).lowercased())@example.com"
        SuiteCapture.secret(email)
        return email
    }

    /// `POST /account/signup` from a fresh form; returns the code page.
    static func signUp(_ browser: TestBrowser, email: String, password: String, request: String? = nil) throws -> TestResponse {
        let form = try browser.get("/account/signup" + (request.map { "?request=\($0)" } ?? ""))
        var fields = [
            ("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "Sam"), ("email", email), ("password", password),
        ]
        if let request { fields.append(("request", request)) }
        SuiteCapture.secret(password)
        return try browser.postForm("/account/signup", fields)
    }

    static func enter(_ browser: TestBrowser, page: TestResponse, code: String) throws -> TestResponse {
        try browser.postForm(
            "/account/code",
            [
                ("flow", try #require(hiddenField("flow", in: page.text))), ("csrf", try #require(hiddenField("csrf", in: page.text))),
                ("code", code),
            ])
    }

    /// A code that is not `code` (same length).
    static func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    @Test func signUpVerifiesTheAddressWithTheCodeAndContinuesToConsentWithoutASecondPassword() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let signIn = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let requestID = try #require(signIn.fields.first { $0.0 == "request" }?.1)
        let email = Self.unique("signup")
        let page = try Self.signUp(browser, email: email, password: "a long sign-up passphrase", request: requestID)
        #expect(page.status == 200)
        #expect(page.text.contains("Check your email"))
        #expect(page.text.contains("Send a new code"))
        let message = try #require(try Mailbox.wait(for: email).last)
        #expect(message.header("Subject")?.hasPrefix("Your ZevID code") == true)
        #expect(!message.body.contains("http"), "a code email carries no link")
        let code = try #require(message.code)
        let entered = try Self.enter(browser, page: page, code: code)
        #expect(entered.status == 303)
        let location = try #require(entered.header("location"))
        #expect(location == "/v1/auth/zevid/consent?request=\(requestID)")
        #expect(!location.contains(code))
        let consent = try browser.get(location)
        #expect(consent.status == 200)
        #expect(consent.text.contains(email))
        let user = try #require(try server.store.user(emailNormalized: email))
        #expect(user.emailVerified)
        // No code in any log line of this server.
        #expect(!server.log.all.contains { $0.contains(code) })
    }

    @Test func aWrongCodeSaysHowManyTriesAreLeftAndTheFifthEndsTheCode() throws {
        let server = try TestServer()
        let browser = server.browser()
        let email = Self.unique("wrong")
        let page = try Self.signUp(browser, email: email, password: "a long sign-up passphrase")
        let code = try Mailbox.code(for: email)
        for left in [4, 3, 2, 1] {
            let answer = try Self.enter(browser, page: page, code: Self.wrong(code))
            #expect(answer.status == 400)
            #expect(answer.text.contains("You have \(left) \(left == 1 ? "try" : "tries") left."))
            #expect(answer.text.contains("aria-invalid=\"true\""))
            #expect(!answer.text.contains(code))
        }
        let fifth = try Self.enter(browser, page: page, code: Self.wrong(code))
        #expect(fifth.text.contains("no longer works"))
        // The right code no longer works either.
        let late = try Self.enter(browser, page: page, code: code)
        #expect(late.status == 400)
        #expect(late.text.contains("Send a new code"))
        #expect(try server.store.user(emailNormalized: email)?.emailVerified == false)
    }

    @Test func anExpiredCodeSaysToRequestANewOneAndANewCodeReplacesTheOld() throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let browser = server.browser()
        let email = Self.unique("expired")
        let page = try Self.signUp(browser, email: email, password: "a long sign-up passphrase")
        let first = try Mailbox.code(for: email)
        clock.advance(by: 601)
        let expired = try Self.enter(browser, page: page, code: first)
        #expect(expired.status == 400)
        #expect(expired.text.contains("That code has expired. Select “Send a new code” to get a new one."))
        let resent = try browser.postForm(
            "/account/code/resend",
            [("flow", try #require(hiddenField("flow", in: page.text))), ("csrf", try #require(hiddenField("csrf", in: page.text)))])
        #expect(resent.status == 303)
        let newPage = try browser.get(try #require(resent.header("location")))
        #expect(newPage.text.contains("We sent a new code"))
        let second = try Mailbox.code(for: email, count: 2)
        #expect(try Self.enter(browser, page: newPage, code: second).status == 303)
    }

    @Test func signingUpWithATakenAddressLooksTheSameAndTellsTheAccount() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let fresh = Self.unique("fresh")
        let newPage = try Self.signUp(server.browser(), email: fresh, password: "a long sign-up passphrase")
        let takenPage = try Self.signUp(server.browser(), email: fixture.email, password: "a long sign-up passphrase")
        #expect(newPage.status == takenPage.status)
        func shape(_ page: TestResponse) -> String {
            page.text.replacingOccurrences(of: hiddenField("flow", in: page.text) ?? "-", with: "F")
                .replacingOccurrences(of: hiddenField("csrf", in: page.text) ?? "-", with: "C")
                .replacingOccurrences(of: PasskeyTests.dataCSRF(page.text) ?? "-", with: "P")
        }
        #expect(shape(newPage) == shape(takenPage))
        let notice = try #require(try Mailbox.wait(for: fixture.email).last)
        #expect(notice.header("Subject") == "Someone tried to sign up with your address")
        #expect(notice.code == nil)
        // The existing account's password still works.
        _ = try SignInDriver(server: server, browser: server.browser()).run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(), email: fixture.email,
            password: fixture.password)
    }

    @Test func anUnverifiedSelfSignUpCannotSignInAndTheLastSignUpsPasswordApplies() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let email = Self.unique("again")
        _ = try Self.signUp(server.browser(), email: email, password: "the first passphrase")
        let driver = SignInDriver(server: server, browser: server.browser())
        #expect(throws: SignInDriver.Failure.self) {
            _ = try driver.run(
                clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(), email: email,
                password: "the first passphrase")
        }
        let browser = server.browser()
        let second = try Self.signUp(browser, email: email, password: "the second passphrase")
        let code = try Mailbox.code(for: email, count: 2)
        #expect(try Self.enter(browser, page: second, code: code).status == 303)
        _ = try SignInDriver(server: server, browser: server.browser()).run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(), email: email,
            password: "the second passphrase")
    }

    @Test func requireVerifiedEmailAsksAnUnverifiedAccountForACodeAfterThePassword() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let patched = try server.client.send(
            "PATCH", "/v1/admin/settings",
            headers: [("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/json")],
            body: Array(#"{"requireVerifiedEmail":true}"#.utf8))
        #expect(patched.status == 200)
        #expect(patched.json["requireVerifiedEmail"] as? Bool == true)
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let requestID = try #require(form.fields.first { $0.0 == "request" }?.1)
        let page = try browser.postForm("/v1/auth/zevid/signin", form.fields + [("email", fixture.email), ("password", fixture.password)])
        #expect(page.status == 200)
        #expect(page.text.contains("Verify your email address"))
        let entered = try Self.enter(browser, page: page, code: try Mailbox.code(for: fixture.email))
        #expect(entered.header("location") == "/v1/auth/zevid/consent?request=\(requestID)")
        #expect(try server.store.user(emailNormalized: fixture.email)?.emailVerified == true)
        // Verified now: the next sign-in goes straight to consent.
        _ = try SignInDriver(server: server, browser: server.browser()).run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(), email: fixture.email,
            password: fixture.password)
    }

    @Test func aCommonPasswordIsRefused() throws {
        let server = try TestServer()
        let page = try Self.signUp(server.browser(), email: Self.unique("common"), password: "qwertyuiop")
        #expect(page.status == 400)
        #expect(page.text.contains("one of the most common passwords"))
    }

    @Test func theSixthCodeOfAnHourSendsNothingAndThePageLooksTheSame() throws {
        let server = try TestServer()
        let browser = server.browser()
        let email = Self.unique("limit")
        var page = try Self.signUp(browser, email: email, password: "a long sign-up passphrase")
        try Mailbox.wait(for: email)
        for _ in 0..<5 {
            let resent = try browser.postForm(
                "/account/code/resend",
                [("flow", try #require(hiddenField("flow", in: page.text))), ("csrf", try #require(hiddenField("csrf", in: page.text)))])
            #expect(resent.status == 303)
            page = try browser.get(try #require(resent.header("location")))
            #expect(page.status == 200)
        }
        try server.context.mail.drain()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(Mailbox.messages(to: email).count == 5)
    }

    @Test func forgotPasswordSendsACodeEndsEverySessionAndSignsThisBrowserIn() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        // A session elsewhere.
        let elsewhereBrowser = server.browser()
        let elsewhere = try SignInDriver(server: server, browser: elsewhereBrowser).reachConsent(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", email: fixture.email,
            password: fixture.password)
        #expect(elsewhere.page.status == 200)
        let browser = server.browser()
        let signIn = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        #expect(signIn.page.text.contains("Forgot password?"))
        let requestID = try #require(signIn.fields.first { $0.0 == "request" }?.1)
        let forgot = try browser.get("/account/reset?request=\(requestID)")
        let page = try browser.postForm(
            "/account/reset",
            [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", fixture.email), ("request", requestID)])
        #expect(page.status == 200)
        let code = try Mailbox.code(for: fixture.email)
        let newPasswordPage = try Self.enter(browser, page: page, code: code)
        #expect(newPasswordPage.status == 200)
        #expect(newPasswordPage.text.contains("Choose a new password"))
        let newPassword = "a brand new passphrase"
        SuiteCapture.secret(newPassword)
        let done = try browser.postForm(
            "/account/reset/password",
            [
                ("flow", try #require(hiddenField("flow", in: newPasswordPage.text))),
                ("csrf", try #require(hiddenField("csrf", in: newPasswordPage.text))), ("new_password", newPassword),
            ])
        #expect(done.status == 303)
        #expect(done.header("location") == "/v1/auth/zevid/consent?request=\(requestID)")
        // The other browser's session ended: its Continue sends it back to sign in.
        let stale = try elsewhereBrowser.postForm("/v1/auth/zevid/consent", elsewhere.fields + [("decision", "allow")])
        #expect(stale.header("location")?.hasPrefix("/v1/auth/zevid/signin") == true)
        // The old password no longer works; the new one does.
        #expect(throws: SignInDriver.Failure.self) {
            _ = try SignInDriver(server: server, browser: server.browser()).run(
                clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(),
                email: fixture.email, password: fixture.password)
        }
        _ = try SignInDriver(server: server, browser: server.browser()).run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", pkce: PKCEPair(), email: fixture.email,
            password: newPassword)
        let notices = try Mailbox.wait(for: fixture.email, count: 2)
        #expect(notices.contains { $0.header("Subject") == "Your ZevID password was reset" })
    }

    @Test func forgotPasswordForAnUnknownAddressShowsTheSamePage() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        func page(_ email: String) throws -> TestResponse {
            let browser = server.browser()
            let forgot = try browser.get("/account/reset")
            return try browser.postForm("/account/reset", [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", email)])
        }
        let known = try page(fixture.email)
        let unknown = try page(Self.unique("nobody"))
        func shape(_ page: TestResponse) -> String {
            page.text.replacingOccurrences(of: hiddenField("flow", in: page.text) ?? "-", with: "F")
                .replacingOccurrences(of: hiddenField("csrf", in: page.text) ?? "-", with: "C")
        }
        #expect(known.status == unknown.status)
        #expect(shape(known) == shape(unknown))
    }
}

/// The code store's atomicity and lock against the real PostgreSQL.
@Suite struct EmailCodeStoreTests {
    @Test func aBurstOfWrongCodesCountsAtMostFiveAttempts() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let codes = EmailCodes(store: server.store.email, secrets: OpenSSLSecrets(), sealer: FixedSealer())
        let issued = try codes.issue(
            EmailCodes.Request(userID: fixture.userID, purpose: .verifyEmail, browserBindingHash: "b"), now: Date())
        let flow = try #require(try server.store.email.codeFlow(id: issued.flowID))
        let outcomes = Mutex<[CodeAttemptOutcome]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let outcome = (try? codes.enter(flow: flow, typed: "not me", now: Date())) ?? .unknown
            outcomes.withLock { $0.append(outcome) }
        }
        let wrong = outcomes.withLock { $0 }.filter { if case .wrong = $0 { true } else { false } }.count
        #expect(wrong == 4)
        #expect(try server.store.email.codeFlow(id: issued.flowID)?.attempts == 5)
    }

    @Test func threeCodesEndedByWrongAttemptsLockCodeEntryAndTellTheAccount() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let codes = EmailCodes(
            store: server.store.email.scoped(server.context.configuration.mail.scope), secrets: OpenSSLSecrets(), sealer: FixedSealer())
        for _ in 0..<3 {
            let issued = try codes.issue(
                EmailCodes.Request(userID: fixture.userID, purpose: .passwordReset, browserBindingHash: "b"), now: Date())
            let flow = try #require(try server.store.email.codeFlow(id: issued.flowID))
            for _ in 0..<5 { _ = try codes.enter(flow: flow, typed: "1", now: Date()) }
        }
        let issued = try codes.issue(
            EmailCodes.Request(userID: fixture.userID, purpose: .passwordReset, browserBindingHash: "b"), now: Date())
        let flow = try #require(try server.store.email.codeFlow(id: issued.flowID))
        #expect(try codes.enter(flow: flow, typed: "123456", now: Date()) == .locked)
    }
}

/// A sealer for store tests (the server's own is AES-256-GCM; the store never opens what it keeps).
struct FixedSealer: SecretSealing {
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] { plaintext }
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] { sealed }
}
