import Authorize
import Fetch
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Outbound email through a real SMTP server (`Tests/Mail/smtp_sink.py`) over the real PostgreSQL
/// (docs/operations.md, "Outbound email").
@Suite(.serialized) struct SMTPDeliveryTests {
    static func smtpServer(
        _ sink: SMTPSink, scope: String? = nil, timeoutMilliseconds: Int = 2_000, smtp: SMTPConfiguration? = nil
    ) throws -> TestServer {
        try TestServer(live: true) { configuration in
            configuration.mail.smtp =
                smtp ?? (try? SMTPConfiguration(url: sink.url, from: "no-reply@zevauth.test", timeoutMilliseconds: timeoutMilliseconds))
            configuration.mail.outboxDirectory = nil
            if let scope { configuration.mail.scope = scope }
        }
    }

    @Test func aCodeIsSentThroughTheRelayAndSignsUp() throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let server = try Self.smtpServer(sink)
        let browser = server.browser()
        let email = EmailFlowTests.unique("smtp")
        let page = try EmailFlowTests.signUp(browser, email: email, password: "a long sign-up passphrase")
        #expect(page.status == 200)
        let message = try #require(try Mailbox.wait(for: email, in: sink.directory).last)
        #expect(message.header("From") == "ZevID <no-reply@zevauth.test>")
        #expect(message.envelopeFrom == "<no-reply@zevauth.test>")
        let code = try #require(message.code)
        #expect(try EmailFlowTests.enter(browser, page: page, code: code).status == 303)
        #expect(server.context.metrics.count(.sent) >= 1)
        #expect(server.log.all.contains { $0.contains("email sent id=") })
        #expect(!server.log.all.contains { $0.contains(email) || $0.contains(code) })
    }

    /// `ZEVAUTH_SMTP_FROM` as a name-addr with a non-ASCII name, read as `serve` reads it: the relay gets
    /// the encoded name-addr as the `From:` header and the bare address as `MAIL FROM`.
    @Test func aNamedFromIsTheHeaderAndItsBareAddressTheEnvelopeSender() throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let loaded = try ConfigurationLoader.load(environment: [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 40), "ZEVAUTH_SMTP_URL": sink.url,
            "ZEVAUTH_SMTP_FROM": "Zév Auth <no-reply@zevauth.test>", "ZEVAUTH_SMTP_TIMEOUT_MS": "2000",
        ])
        let server = try Self.smtpServer(sink, smtp: try #require(loaded.mail.smtp))
        let fixture = try Fixture.make(store: server.store)
        try server.context.accounts.notices.queue(.passwordChanged, userID: fixture.userID, now: Date())
        try server.context.mail.drain()
        let message = try #require(try Mailbox.wait(for: fixture.email, in: sink.directory).last)
        #expect(message.header("From") == "=?UTF-8?B?WsOpdiBBdXRo?= <no-reply@zevauth.test>")
        #expect(message.envelopeFrom == "<no-reply@zevauth.test>")
        #expect(message.header("Message-ID")?.hasSuffix("@zevauth.test>") == true)
    }

    @Test func aRelayThatIsDownNeverHoldsThePageAndTheMessageGoesOutWhenItReturns() throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        sink.stop()
        let server = try Self.smtpServer(sink)
        let browser = server.browser()
        let email = EmailFlowTests.unique("down")
        let started = Date()
        let page = try EmailFlowTests.signUp(browser, email: email, password: "a long sign-up passphrase")
        #expect(page.status == 200)
        #expect(Date().timeIntervalSince(started) < 5)
        // The first attempt fails and is scheduled again.
        let deadline = Date().addingTimeInterval(10)
        while server.context.metrics.count(.retry) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(server.context.metrics.count(.retry) >= 1)
        #expect(server.log.all.contains { $0.contains("will retry") && $0.contains("error=unreachable") })
        try sink.start()
        // The retry is due after its backoff: move it forward instead of waiting.
        _ = try TestDatabase.pool.query(
            "UPDATE email_outbox SET next_attempt_at = now() - interval '1 second' WHERE scope = $1 AND sent_at IS NULL",
            [try #require(server.context.configuration.mail.scope)])
        try server.context.mail.drain()
        let messages = try Mailbox.wait(for: email, in: sink.directory)
        #expect(messages.count == 1)
        #expect(try EmailFlowTests.enter(browser, page: page, code: try #require(messages[0].code)).status == 303)
    }

    @Test func twoInstancesDrainingOneQueueNeverSendAMessageTwice() throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let scope = "shared-" + UUID().uuidString.lowercased()
        let first = try Self.smtpServer(sink, scope: scope)
        let second = try Self.smtpServer(sink, scope: scope)
        let email = EmailFlowTests.unique("twice")
        // Twenty notices queued at once, then both drainers race for them.
        let fixture = try Fixture.make(store: first.store)
        _ = email
        let notices = first.store.email.scoped(scope)
        for _ in 0..<20 { try notices.queue(.passwordChanged, userID: fixture.userID, now: Date()) }
        let group = DispatchGroup()
        for server in [first, second] {
            group.enter()
            Thread {
                _ = try? server.context.mail.drain(limit: 2)
                group.leave()
            }.start()
        }
        group.wait()
        let received = try Mailbox.wait(for: fixture.email, count: 20, in: sink.directory)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(Mailbox.messages(to: fixture.email, in: sink.directory).count == 20)
        let ids = Set(received.compactMap { $0.header("Message-ID") })
        #expect(ids.count == 20)
        #expect(first.context.metrics.count(.sent) + second.context.metrics.count(.sent) == 20)
    }
}

/// The deployment's hourly cap and the relay's credentials (docs/operations.md, "Outbound email").
@Suite struct MailLimitTests {
    @Test func messagesPastTheHourlyCapAreNotSent() throws {
        let server = try TestServer { $0.mail.emailsPerHour = 2 }
        let fixture = try Fixture.make(store: server.store)
        for _ in 0..<4 { try server.context.accounts.notices.queue(.passwordChanged, userID: fixture.userID, now: Date()) }
        try server.context.mail.drain()
        Thread.sleep(forTimeInterval: 0.3)
        try server.context.mail.drain()
        #expect(Mailbox.messages(to: fixture.email).count == 2)
        #expect(server.context.metrics.count(.capped) == 2)
    }

    @Test func theRelaysCredentialsAreNeverPrintedAndBadSettingsNameTheirVariable() throws {
        let smtp = try SMTPConfiguration(url: "smtp://mailer:s3cret-pass@relay.example:587", from: "no-reply@example.com")
        #expect(smtp.redacted == "smtp://relay.example:587")
        #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration(url: "http://relay.example", from: "a@b.example") }
        do {
            _ = try ConfigurationLoader.load(environment: [
                "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
                "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 40), "ZEVAUTH_SMTP_URL": "ftp://mailer:s3cret-pass@relay",
            ])
            Issue.record("a bad ZEVAUTH_SMTP_URL was accepted")
        } catch let error as ConfigurationError {
            #expect(error.key == "ZEVAUTH_SMTP_URL")
            #expect(!error.description.contains("s3cret-pass"))
        }
        let loaded = try ConfigurationLoader.load(environment: [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 40), "ZEVAUTH_SMTP_URL": "smtps://relay.example:465",
            "ZEVAUTH_SMTP_FROM": "id@example.com", "ZEVAUTH_SMTP_TIMEOUT_MS": "2500", "ZEVAUTH_RATE_EMAILS_PER_HOUR": "50",
        ])
        #expect(loaded.mail.smtp?.timeoutMilliseconds == 2500)
        #expect(loaded.mail.from.address == "id@example.com")
        #expect(loaded.mail.emailsPerHour == 50)
    }

    /// `serve` refuses to start on a From with a line break (header injection), with or without a relay,
    /// naming the key and not echoing the value.
    @Test(arguments: ["ZevAuth <no-reply@example.com>\r\nBcc: victim@example.com", "no-reply@example.com\n"], [true, false])
    func aFromWithALineBreakIsRefusedNamingTheKey(from: String, relay: Bool) {
        var environment = [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 40), "ZEVAUTH_SMTP_FROM": from,
        ]
        if relay { environment["ZEVAUTH_SMTP_URL"] = "smtp://relay.example:587" }
        do {
            _ = try ConfigurationLoader.load(environment: environment)
            Issue.record("a ZEVAUTH_SMTP_FROM with a line break was accepted")
        } catch let error as ConfigurationError {
            #expect(error.key == "ZEVAUTH_SMTP_FROM")
            #expect(error.description == "configuration ZEVAUTH_SMTP_FROM (--smtp-from): must be one line (it contains a line break)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func aNamedFromIsAcceptedWithoutARelayToo() throws {
        let loaded = try ConfigurationLoader.load(environment: [
            "ZEVAUTH_DATABASE_URL": "postgresql:///x", "ZEVAUTH_ISSUER": "https://id.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 40), "ZEVAUTH_SMTP_FROM": "\"Zev, Auth\" <id@example.com>",
        ])
        #expect(loaded.mail.smtp == nil)
        #expect(loaded.mail.from.headerValue == "\"Zev, Auth\" <id@example.com>")
        #expect(loaded.mail.from.address == "id@example.com")
    }
}
