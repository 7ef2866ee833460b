import Authorize
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The code limits, the recipient of a code, the security notices and the address change over HTTP against
/// the real PostgreSQL (docs/protocol.md, "Email codes", "Security notices", "Changing the address").
@Suite struct EmailRuleTests {
    /// "Send a new code" on `page`; returns the code page it leads to.
    static func resend(_ browser: TestBrowser, _ page: TestResponse) throws -> TestResponse {
        let resent = try browser.postForm(
            "/account/code/resend",
            [("flow", try #require(hiddenField("flow", in: page.text))), ("csrf", try #require(hiddenField("csrf", in: page.text)))])
        #expect(resent.status == 303)
        let next = try browser.get(try #require(resent.header("location")))
        #expect(next.status == 200)
        return next
    }

    /// The page with its flow id and CSRF token blanked, to compare pages of two flows.
    static func shape(_ page: TestResponse) -> String {
        page.text.replacingOccurrences(of: hiddenField("flow", in: page.text) ?? "-", with: "F")
            .replacingOccurrences(of: hiddenField("csrf", in: page.text) ?? "-", with: "C")
    }

    /// How many messages `email` has once every queued one was sent.
    static func delivered(_ server: TestServer, to email: String) throws -> Int {
        try server.context.mail.drain()
        Thread.sleep(forTimeInterval: 0.3)
        return Mailbox.messages(to: email).count
    }

    @Test func theEleventhCodeOfADaySendsNothingAndThePageLooksTheSame() throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let browser = server.browser()
        let email = EmailFlowTests.unique("daily")
        var page = try EmailFlowTests.signUp(browser, email: email, password: "a long sign-up passphrase")
        for _ in 0..<4 { page = try Self.resend(browser, page) }
        #expect(try Mailbox.wait(for: email, count: 5).count == 5)
        // The next hour: five more, the day's ten.
        clock.advance(by: 3601)
        for _ in 0..<5 { page = try Self.resend(browser, page) }
        #expect(try Mailbox.wait(for: email, count: 10).count == 10)
        let tenth = page
        // Hours later, under the hourly limit, the eleventh code of the 24 hours sends nothing.
        clock.advance(by: 3601)
        page = try Self.resend(browser, page)
        #expect(Self.shape(page) == Self.shape(tenth))
        clock.advance(by: 18 * 3600)
        page = try Self.resend(browser, page)
        #expect(Self.shape(page) == Self.shape(tenth))
        #expect(try Self.delivered(server, to: email) == 10)
        // A day after the first five there is room again (a new page: the browser binding lasts a day).
        clock.advance(by: 4 * 3600)
        let fresh = server.browser()
        page = try EmailFlowTests.signUp(fresh, email: email, password: "a long sign-up passphrase")
        #expect(try Mailbox.wait(for: email, count: 11).count == 11)
        #expect(try EmailFlowTests.enter(fresh, page: page, code: try Mailbox.code(for: email, count: 11)).status == 303)
    }

    @Test func sendANewCodeAfterTheHourlyLimitSendsOnceTheHourHasPassed() throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let browser = server.browser()
        let email = EmailFlowTests.unique("hourly")
        var page = try EmailFlowTests.signUp(browser, email: email, password: "a long sign-up passphrase")
        for _ in 0..<5 { page = try Self.resend(browser, page) }
        // The sixth code of the hour was not sent: the page in hand is of a flow that sent nothing.
        #expect(try Self.delivered(server, to: email) == 5)
        clock.advance(by: 3601)
        page = try Self.resend(browser, page)
        #expect(try Mailbox.wait(for: email, count: 6).count == 6)
        let code = try Mailbox.code(for: email, count: 6)
        #expect(try EmailFlowTests.enter(browser, page: page, code: code).status == 303)
        #expect(try server.store.user(emailNormalized: email)?.emailVerified == true)
    }

    /// A form posted through the trusted proxy on behalf of the client address `address`.
    static func postForm(_ browser: TestBrowser, _ path: String, _ fields: [(String, String)], from address: String) throws
        -> TestResponse
    {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try browser.send(
            "POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", address)],
            body: Array(body.utf8))
    }

    @Test func eachCodeRequestCountsAgainstThePasswordLimitOfTheClientAddress() throws {
        let server = try TestServer(configure: {
            $0.rateLimits.passwordPerAddress = 3
            $0.trustedProxies = ["127.0.0.1"]
        })
        let fixture = try Fixture.make(store: server.store)
        let address = "2001:db8::\(String(UInt16.random(in: 1...UInt16.max), radix: 16)):1"
        for _ in 0..<3 {
            let browser = server.browser()
            let forgot = try browser.get("/account/reset")
            let page = try Self.postForm(
                browser, "/account/reset", [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", fixture.email)],
                from: address)
            #expect(page.status == 200)
        }
        try Mailbox.wait(for: fixture.email, count: 3)
        // The address's next password attempt, with the right password, is limited as a password limit answers.
        let (browser, hidden) = try RateLimitTests.passwordForm(server, fixture)
        let limited = try Self.postForm(
            browser, "/v1/auth/zevid/signin", hidden + [("email", fixture.email), ("password", fixture.password)], from: address)
        #expect(limited.status == 429)
        let retryAfter = try #require(limited.header("retry-after").flatMap { Int($0) })
        #expect((1...900).contains(retryAfter))
        #expect(limited.text.contains("Too many attempts. For your security, try again in"))
        #expect(browser.cookies["zevid_session"] == nil)
        // Another client address signs in.
        let (other, otherHidden) = try RateLimitTests.passwordForm(server, fixture)
        let signedIn = try Self.postForm(
            other, "/v1/auth/zevid/signin", otherHidden + [("email", fixture.email), ("password", fixture.password)],
            from: "2001:db8::\(String(UInt16.random(in: 1...UInt16.max), radix: 16)):2")
        #expect(signedIn.status == 303)
    }

    @Test func aCodeGoesToTheStoredAddressNeverToTheSpellingTyped() throws {
        let server = try TestServer()
        let tag = UUID().uuidString.prefix(8).lowercased()
        let stored = "Sam-\(tag)@Example.com"
        // Fullwidth letters: the same account after NFKC case folding, another address to a mail relay.
        let typed = "ｓａｍ-\(tag)@example.com"
        SuiteCapture.secret(stored)
        let key = try #require(EmailAddress(stored)).key
        #expect(EmailAddress(typed)?.key == key)
        _ = try server.store.createUser(
            email: stored, emailNormalized: key, name: "Sam", passwordHash: try testPasswordHasher.hash("a stored passphrase"), now: Date())
        let browser = server.browser()
        let forgot = try browser.get("/account/reset")
        let page = try browser.postForm("/account/reset", [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", typed)])
        #expect(page.status == 200)
        let message = try #require(try Mailbox.wait(for: stored).last)
        #expect(message.envelopeTo == stored)
        #expect(message.header("To")?.contains(stored) == true)
        #expect(message.code != nil)
        #expect(Mailbox.messages(to: typed).isEmpty)
        #expect(!page.text.contains(typed))
    }

    @Test func aPasswordChangeOnTheAccountPageSendsANoticeWithoutACode() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let newPassword = "a changed passphrase here"
        SuiteCapture.secret(newPassword)
        let changed = try owner.postForm(
            "/account/password", [("csrf", csrf), ("current_password", fixture.password), ("new_password", newPassword)])
        #expect(changed.status == 303)
        #expect(changed.header("location") == "/account?done=password")
        let messages = try Mailbox.wait(for: fixture.email, count: 2)
        let notice = try #require(messages.first { $0.header("Subject") == "Your ZevID password was changed" })
        #expect(notice.code == nil)
        #expect(!notice.body.contains("http"), "a notice carries no link")
    }

    @Test func aNewAddressBecomesTheLoginOnlyOnceVerified() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let newEmail = EmailFlowTests.unique("login")
        let codePage = try owner.postForm("/account/email", [("csrf", csrf), ("new_email", newEmail), ("password", fixture.password)])
        #expect(codePage.status == 200)
        let code = try Mailbox.code(for: newEmail)
        // Before the code: the old address signs in, the new one does not.
        let signIn = { (email: String) in
            try AccountTests.appSession(
                server, server.browser(), clientID: fixture.developmentKey, email: email, password: fixture.password)
        }
        _ = try signIn(fixture.email)
        #expect(throws: SignInDriver.Failure.self) { _ = try signIn(newEmail) }
        #expect(try EmailFlowTests.enter(owner, page: codePage, code: code).header("location") == "/account?done=email")
        // After it: the other way round.
        _ = try signIn(newEmail)
        #expect(throws: SignInDriver.Failure.self) { _ = try signIn(fixture.email) }
    }
}
