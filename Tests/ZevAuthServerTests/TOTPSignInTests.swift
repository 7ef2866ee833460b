import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// TOTP enrolment from the account page and the second factor on sign-in, over HTTP with a `ManualClock`.
@Suite struct TOTPSignInTests {
    /// Text between `start` and the next `end` in `text`.
    static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard let from = text.range(of: start) else { return nil }
        guard let to = text[from.upperBound...].range(of: end) else { return nil }
        return String(text[from.upperBound..<to.lowerBound])
    }

    /// Starts an app sign-in in a new browser and posts the password. - Returns: the browser and the 303.
    static func passwordStep(_ server: TestServer, _ fixture: Fixture) throws -> (TestBrowser, TestResponse) {
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin", form.fields + [("email", fixture.email), ("password", fixture.password)])
        return (browser, posted)
    }

    /// Posts a second factor on the MFA page the browser was sent to.
    static func submitCode(_ browser: TestBrowser, at location: String, _ code: String) throws -> TestResponse {
        let page = try browser.get(location)
        #expect(page.status == 200)
        return try browser.postForm(
            "/v1/auth/zevid/mfa",
            [
                ("challenge", try #require(hiddenField("challenge", in: page.text))),
                ("csrf", try #require(hiddenField("csrf", in: page.text))), ("code", code),
            ])
    }

    @Test func enrolsAndSignsInWithTOTPAndRecoveryCodes() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)

        // Enrolment: the otpauth URI as a link and the secret as selectable text.
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        #expect(enrol.status == 200)
        let shown = try #require(Self.between(enrol.text, "<code class=\"secret\">", "</code>")).replacingOccurrences(of: " ", with: "")
        let secret = try #require(Base32.decode(shown))
        #expect(secret.count == 20)
        SuiteCapture.secret(shown)
        let uri =
            "otpauth://" + (try #require(Self.between(enrol.text, "href=\"otpauth://", "\""))).replacingOccurrences(of: "&amp;", with: "&")
        #expect(uri.hasPrefix("otpauth://totp/ZevAuth:\(fixture.email)?secret=\(shown)&issuer=ZevAuth"))

        // Not readable from the database without the key.
        let row = try #require(
            try TestDatabase.pool.query("SELECT secret_sealed, confirmed_at FROM totp_factors WHERE user_id = $1", [fixture.userID]).first)
        let sealedText = try row.string("secret_sealed")
        #expect(row["confirmed_at"] == nil)
        #expect(!sealedText.contains(shown))
        #expect(!sealedText.contains(Crypto.hex(secret)))
        let sealed = Array(try #require(Data(base64Encoded: sealedText)))
        #expect(Data(sealed).range(of: Data(secret)) == nil)
        #expect(
            try Crypto.aesGCMOpen(
                key: TestServer.encryptionKey, sealed: sealed, associatedData: Array("zevauth:totp:v1:\(fixture.userID)".utf8))
                == secret)
        #expect(throws: Crypto.SealError.self) {
            try Crypto.aesGCMOpen(
                key: try Crypto.randomBytes(32), sealed: sealed, associatedData: Array("zevauth:totp:v1:\(fixture.userID)".utf8))
        }

        // Active only after a correct code.
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        let wrong = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step + 5))])
        #expect(wrong.status == 400)
        let (_, beforeConfirm) = try Self.passwordStep(server, fixture)
        #expect(beforeConfirm.header("location")?.hasPrefix("/v1/auth/zevid/consent") == true)
        let confirmCode = TOTP.code(secret: secret, step: step)
        let confirmed = try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", confirmCode)])
        #expect(confirmed.status == 200)
        let codes = confirmed.text.matches(of: /zrc_[A-Z2-7]{5}-[A-Z2-7]{5}/).map { String($0.output) }
        #expect(codes.count == 10)
        #expect(Set(codes).count == 10)
        codes.forEach { SuiteCapture.secret($0) }
        let stored = try TestDatabase.pool.query("SELECT code_hash FROM recovery_codes WHERE user_id = $1", [fixture.userID]).rows
        #expect(stored.count == 10)
        #expect(try stored.allSatisfy { try $0.string("code_hash").count == 64 })
        #expect(try owner.get("/account").text.contains("Recovery codes left: 10"))

        // Sign-in now asks for a code before any browser session exists, bound to this browser.
        let (browser, afterPassword) = try Self.passwordStep(server, fixture)
        let mfaLocation = try #require(afterPassword.header("location"))
        #expect(mfaLocation.hasPrefix("/v1/auth/zevid/mfa?challenge="))
        #expect(browser.cookies["zevid_session"] == nil)
        #expect(try server.browser().get(mfaLocation).status == 400)

        // The step used to confirm cannot be used again; a wrong code is refused.
        let replayed = try Self.submitCode(browser, at: mfaLocation, confirmCode)
        #expect(replayed.status == 401)
        #expect(try Self.submitCode(browser, at: mfaLocation, TOTP.code(secret: secret, step: step + 7)).status == 401)

        clock.advance(by: 30)
        let fresh = TOTP.code(secret: secret, step: step + 1)
        let passed = try Self.submitCode(browser, at: mfaLocation, fresh)
        #expect(passed.status == 303)
        #expect(passed.header("location")?.hasPrefix("/v1/auth/zevid/consent?request=") == true)
        #expect(browser.cookies["zevid_session"] != nil)
        let consent = try browser.get(try #require(passed.header("location")))
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        #expect(allowed.status == 303)
        #expect(queryItems(of: try #require(allowed.header("location")))["code"]?.hasPrefix("hoc_") == true)

        // The same code in another sign-in, within its 30 seconds, is a replay.
        let (other, otherPassword) = try Self.passwordStep(server, fixture)
        let otherLocation = try #require(otherPassword.header("location"))
        #expect(try Self.submitCode(other, at: otherLocation, fresh).status == 401)

        // Recovery codes: each works once, typed in any case and without the prefix or hyphen.
        let typed = String(codes[0].dropFirst(4)).replacingOccurrences(of: "-", with: "").lowercased()
        #expect(try Self.submitCode(other, at: otherLocation, typed).status == 303)
        let (third, thirdPassword) = try Self.passwordStep(server, fixture)
        let thirdLocation = try #require(thirdPassword.header("location"))
        #expect(try Self.submitCode(third, at: thirdLocation, codes[0]).status == 401)
        #expect(try Self.submitCode(third, at: thirdLocation, codes[1]).status == 303)
        #expect(try owner.get("/account").text.contains("Recovery codes left: 8"))
    }

    @Test func accountSignInAsksForTheSecondFactorToo() throws {
        let clock = ManualClock()
        let server = try TestServer(clock: clock)
        let fixture = try Fixture.make(store: server.store)
        let owner = server.browser()
        _ = try AccountTests.appSession(server, owner, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let shown = try #require(Self.between(enrol.text, "<code class=\"secret\">", "</code>")).replacingOccurrences(of: " ", with: "")
        SuiteCapture.secret(shown)
        let secret = try #require(Base32.decode(shown))
        let step = TOTP.step(atUnixSeconds: clock.now().timeIntervalSince1970)
        #expect(
            try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))]).status == 200)

        let browser = server.browser()
        let form = try browser.get("/account/signin")
        let posted = try browser.postForm(
            "/account/signin",
            [("csrf", try #require(hiddenField("csrf", in: form.text))), ("email", fixture.email), ("password", fixture.password)])
        let location = try #require(posted.header("location"))
        #expect(location.hasPrefix("/v1/auth/zevid/mfa?challenge="))
        #expect(try browser.get("/account").status == 303)
        clock.advance(by: 30)
        let passed = try Self.submitCode(browser, at: location, TOTP.code(secret: secret, step: step + 1))
        #expect(passed.header("location") == "/account")
        #expect(try browser.get("/account").status == 200)
    }

    @Test func enrolmentWithoutAnEncryptionKeySaysSo() throws {
        let server = try TestServer(configure: { $0.encryptionKey = nil })
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        _ = try AccountTests.appSession(server, browser, clientID: fixture.developmentKey, email: fixture.email, password: fixture.password)
        let (_, csrf) = try AccountTests.accountPage(browser)
        let refused = try browser.postForm("/account/totp/start", [("csrf", csrf)])
        #expect(refused.status == 503)
        #expect(refused.text.contains("no encryption key"))
        #expect(try TestDatabase.pool.query("SELECT 1 FROM totp_factors WHERE user_id = $1", [fixture.userID]).first == nil)
    }
}
