import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Closing one's own account from `/account` (docs/protocol.md#closing-an-account) and the operator's MFA
/// reset (docs/protocol.md#mfa-reset), over HTTP against PostgreSQL.
@Suite struct OwnAccountTests {
    /// Enrols TOTP from the account page of a signed-in `owner`. - Returns: the secret and the recovery codes.
    static func enrol(_ owner: TestBrowser, clock: ManualClock) throws -> (secret: [UInt8], codes: [String]) {
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let shown = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>"))
            .replacingOccurrences(of: " ", with: "")
        SuiteCapture.secret(shown)
        let secret = try #require(Base32.decode(shown))
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let confirmed = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))])
        #expect(confirmed.status == 200)
        let codes = confirmed.text.matches(of: /zrc_[A-Z2-7]{5}-[A-Z2-7]{5}/).map { String($0.output) }
        codes.forEach { SuiteCapture.secret($0) }
        return (secret, codes)
    }

    static func closedAt(_ userID: String) throws -> Bool {
        try #require(try TestDatabase.pool.query("SELECT closed_at FROM users WHERE id = $1", [userID]).first)["closed_at"] != nil
    }

    @Test func closingTheAccountNeedsThePasswordAndEndsEverySession() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        let token = try AccountTests.appSession(
            server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let otherToken = try AccountTests.appSession(
            server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (page, csrf) = try AccountTests.accountPage(owner)
        #expect(page.text.contains("<form method=\"post\" action=\"/account/close\">"))
        #expect(!page.text.contains("id=\"close-code\""))

        let wrong = try owner.postForm("/account/close", [("csrf", csrf), ("password", "not the password")])
        #expect(wrong.status == 401)
        #expect(wrong.text.contains("The password is incorrect. Your account is still open."))
        #expect(try !Self.closedAt(fixture.userID))
        #expect(try AccountTests.sessionStatus(server, token) == 200)
        #expect(try owner.postForm("/account/close", [("csrf", "forged"), ("password", fixture.password)]).status == 403)
        #expect(try server.browser().postForm("/account/close", [("csrf", csrf), ("password", fixture.password)]).status == 303)
        #expect(try !Self.closedAt(fixture.userID))

        let closed = try owner.postForm("/account/close", [("csrf", csrf), ("password", fixture.password)])
        #expect(closed.status == 200)
        #expect(closed.text.contains("Your account is closed"))
        #expect(closed.headerValues("set-cookie").contains { $0.hasPrefix("zevid_session=;") && $0.contains("Max-Age=0") })
        #expect(try Self.closedAt(fixture.userID))
        #expect(try AccountTests.sessionStatus(server, token) == 401)
        #expect(try AccountTests.sessionStatus(server, otherToken) == 401)
        #expect(throws: SignInDriver.Failure.self) {
            _ = try AccountTests.appSession(
                server, server.browser(), clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        }
    }

    @Test func closingAnEnrolledAccountAlsoNeedsTheSecondFactor() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        let token = try AccountTests.appSession(
            server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (secret, _) = try Self.enrol(owner, clock: clock)
        let (page, csrf) = try AccountTests.accountPage(owner)
        #expect(page.text.contains("id=\"close-code\""))
        let noCode = try owner.postForm("/account/close", [("csrf", csrf), ("password", fixture.password)])
        #expect(noCode.status == 401)
        let wrongCode = try owner.postForm("/account/close", [("csrf", csrf), ("password", fixture.password), ("code", "000000")])
        #expect(wrongCode.status == 401)
        #expect(wrongCode.text.contains("That code is not right."))
        #expect(try !Self.closedAt(fixture.userID))
        clock.advance(by: 30)
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let closed = try owner.postForm(
            "/account/close", [("csrf", csrf), ("password", fixture.password), ("code", TOTP.code(secret: secret, step: step))])
        #expect(closed.status == 200)
        #expect(try Self.closedAt(fixture.userID))
        #expect(try AccountTests.sessionStatus(server, token) == 401)
    }

    @Test func theOperatorsMFAResetRemovesTheFactorAndEndsEverySession() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        let token = try AccountTests.appSession(
            server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        _ = try Self.enrol(owner, clock: clock)
        let reset = { (bearer: String?, id: String) in
            try server.client.send(
                "POST", "/v1/admin/users/\(id)/mfa/reset", headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
        }
        #expect(try reset(nil, fixture.userID).status == 401)
        #expect(try reset(fixture.developmentSecret, fixture.userID).status == 403)
        #expect(try reset(TestServer.operatorToken, UUID().uuidString).status == 404)
        #expect(try reset(TestServer.operatorToken, "not-a-uuid").json["error"] as? String == "not_found")
        #expect(try AccountTests.sessionStatus(server, token) == 200)

        let done = try reset(TestServer.operatorToken, fixture.userID)
        #expect(done.status == 200)
        #expect(done.json["id"] as? String == fixture.userID)
        #expect(done.json["mfaRemoved"] as? Bool == true)
        #expect(try AccountTests.sessionStatus(server, token) == 401)
        #expect(try owner.get("/account").status == 303)
        let left = try TestDatabase.pool.query(
            "SELECT (SELECT count(*) FROM totp_factors WHERE user_id = $1) + (SELECT count(*) FROM recovery_codes WHERE user_id = $1) AS n",
            [fixture.userID])
        #expect(try left.first?.string("n") == "0")
        // The account is told, without a code (docs/protocol.md#mfa-reset).
        let told = try Mailbox.wait(for: fixture.email, count: 3)
        let notice = try #require(told.first { $0.header("Subject") == "Two-step verification was turned off" })
        #expect(notice.code == nil)
        // The next sign-in asks for the password only.
        let (_, afterPassword) = try TOTPSignInTests.passwordStep(server, fixture)
        #expect(afterPassword.header("location")?.hasPrefix("/v1/auth/zevid/consent") == true)
        // A repeat answers the same account with nothing left to remove.
        let again = try reset(TestServer.operatorToken, fixture.userID)
        #expect(again.status == 200)
        #expect(again.json["mfaRemoved"] as? Bool == false)
    }
}
