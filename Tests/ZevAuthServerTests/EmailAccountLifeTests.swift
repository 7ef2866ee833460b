import Crypto
import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The rest of the account's life over HTTP (docs/protocol.md §13): a reset never skips TOTP, notices for
/// MFA and a new browser, and changing the address with a code to the new one.
@Suite struct EmailAccountLifeTests {
    /// Enrols TOTP for the fixture's account from its account page. - Returns: the secret.
    static func enrol(_ server: TestServer, _ fixture: Fixture, clock: ManualClock) throws -> [UInt8] {
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let link = try #require(TOTPSignInTests.between(enrol.text, "secret=", "&"))
        let secret = try #require(Base32.decode(link))
        SuiteCapture.secret(link)
        let code = TOTP.code(secret: secret, step: TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970))
        let confirmed = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", code)])
        #expect(confirmed.status == 200)
        return secret
    }

    @Test func aResetOfAnAccountWithMFAAsksForTheSecondFactorAndNeverSkipsIt() throws {
        let clock = ManualClock(Date())
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let secret = try Self.enrol(server, fixture, clock: clock)
        let enrolled = try Mailbox.wait(for: fixture.email, count: 2)
        let turnedOn = try #require(enrolled.first { $0.header("Subject") == "Two-step verification was turned on" })
        #expect(turnedOn.code == nil)
        clock.advance(by: 60)

        let browser = server.browser()
        let forgot = try browser.get("/account/reset")
        let page = try browser.postForm(
            "/account/reset", [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", fixture.email)])
        let second = try EmailFlowTests.enter(browser, page: page, code: try Mailbox.code(for: fixture.email))
        #expect(second.text.contains("Two-step verification"))
        let flow = try #require(hiddenField("flow", in: second.text))
        let csrf = try #require(hiddenField("csrf", in: second.text))
        // Straight to the new password: refused, the second factor is asked again.
        let skipped = try browser.postForm(
            "/account/reset/password", [("flow", flow), ("csrf", csrf), ("new_password", "a skipped passphrase")])
        #expect(skipped.text.contains("Two-step verification"))
        let wrong = try browser.postForm("/account/reset/second-factor", [("flow", flow), ("csrf", csrf), ("code", "000000")])
        #expect(wrong.status == 401)
        let code = TOTP.code(secret: secret, step: TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970))
        let passwordPage = try browser.postForm("/account/reset/second-factor", [("flow", flow), ("csrf", csrf), ("code", code)])
        #expect(passwordPage.text.contains("Choose a new password"))
        let newPassword = "a reset passphrase with mfa"
        SuiteCapture.secret(newPassword)
        let done = try browser.postForm("/account/reset/password", [("flow", flow), ("csrf", csrf), ("new_password", newPassword)])
        #expect(done.status == 303)
        #expect(done.header("location") == "/account")
    }

    @Test func aSignInFromANewBrowserTellsTheAccountOnceAndAKnownBrowserDoesNot() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        for _ in 0..<2 {
            _ = try AccountTests.appSession(
                server, browser, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        }
        try Mailbox.wait(for: fixture.email)
        try server.context.mail.drain()
        #expect(Mailbox.messages(to: fixture.email).filter { $0.header("Subject") == "New sign-in to your ZevID account" }.count == 1)
        _ = try AccountTests.appSession(
            server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        try Mailbox.wait(for: fixture.email, count: 2)
    }

    @Test func changingTheAddressSendsACodeToTheNewOneAndANoticeToTheOld() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (page, csrf) = try AccountTests.accountPage(owner)
        #expect(page.text.contains("Change email"))
        let newEmail = EmailFlowTests.unique("moved")
        let codePage = try owner.postForm(
            "/account/email", [("csrf", csrf), ("new_email", newEmail), ("password", fixture.password)])
        #expect(codePage.status == 200)
        #expect(codePage.text.contains("Confirm your new address"))
        let code = try Mailbox.code(for: newEmail)
        let old = try Mailbox.wait(for: fixture.email, count: 2)
        #expect(old.contains { $0.header("Subject") == "A change of your ZevID address was asked for" })
        // Not the login yet.
        #expect(try server.store.user(emailNormalized: newEmail) == nil)
        let done = try EmailFlowTests.enter(owner, page: codePage, code: code)
        #expect(done.header("location") == "/account?done=email")
        #expect(try server.store.user(emailNormalized: newEmail)?.emailVerified == true)
        _ = try AccountTests.appSession(
            server, server.browser(), clientID: fixture.developmentKey, email: newEmail, password: fixture.password)
    }
}
