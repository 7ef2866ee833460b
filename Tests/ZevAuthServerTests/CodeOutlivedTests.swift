import Authorize
import Crypto
import Foundation
import Postgres
import Synchronization
import Testing
import ZevAuthTesting

@testable import PostgresStore

/// A code stands for a signed-in ZevID browser session: once that session is signed out (alone or
/// everywhere), the account's password changes, or the account is closed, the code is `invalid_grant` on
/// both exchanges and stays unused (docs/protocol.md, "Exchange", row 3), and no app session comes of it,
/// even when the change commits while the exchange runs.
@Suite struct CodeOutlivedTests {
    enum Cause: String, CaseIterable, Sendable {
        case signOut, signOutEverywhere, passwordChange, accountClosed
    }

    enum Endpoint: String, CaseIterable, Sendable {
        case handoff = "/v1/auth/handoff/exchange"
        case token = "/oauth2/token"
    }

    struct Signed {
        let server: TestServer
        let fixture: Fixture
        let browser: TestBrowser
        let code: String
        let pkce: PKCEPair
    }

    static let redirect = "http://127.0.0.1:5000/cb"

    /// A browser signed in through the hosted pages, holding its ZevID session, and the code it got.
    func signedIn(_ server: TestServer? = nil) throws -> Signed {
        let server = try server ?? TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let pkce = PKCEPair()
        let result = try SignInDriver(server: server, browser: browser).run(
            clientID: fixture.developmentKey, redirectURI: Self.redirect, state: "s", pkce: pkce, email: fixture.email,
            password: fixture.password)
        return Signed(server: server, fixture: fixture, browser: browser, code: try #require(result.code), pkce: pkce)
    }

    /// What the person (or the operator) does after the code was issued, over HTTP.
    func apply(_ cause: Cause, _ signed: Signed) throws {
        if cause == .accountClosed {
            let closed = try signed.server.client.send(
                "POST", "/v1/admin/users/\(signed.fixture.userID)/close", headers: [("Authorization", "Bearer \(TestServer.operatorToken)")]
            )
            #expect(closed.status == 200)
            return
        }
        let page = try signed.browser.get("/account")
        let csrf = try #require(hiddenField("csrf", in: page.text))
        let answer: TestResponse
        switch cause {
        case .signOut: answer = try signed.browser.postForm("/account/signout", [("csrf", csrf)])
        case .signOutEverywhere: answer = try signed.browser.postForm("/account/signout-everywhere", [("csrf", csrf)])
        case .passwordChange:
            answer = try signed.browser.postForm(
                "/account/password",
                [("csrf", csrf), ("current_password", signed.fixture.password), ("new_password", "a new horse battery staple")])
        case .accountClosed: return
        }
        #expect(answer.status == 303)
    }

    /// Presents the code with everything else right, at `endpoint`.
    static func exchange(_ endpoint: Endpoint, _ signed: Signed, client: TestHTTPClient) throws -> TestResponse {
        switch endpoint {
        case .handoff:
            return try SignInDriver.exchange(
                client, clientID: signed.fixture.developmentKey,
                body: Array(
                    try JSONSerialization.data(withJSONObject: [
                        "code": signed.code, "codeVerifier": signed.pkce.verifier, "redirectUri": Self.redirect,
                    ])))
        case .token:
            let fields = [
                ("grant_type", "authorization_code"), ("code", signed.code), ("redirect_uri", Self.redirect),
                ("code_verifier", signed.pkce.verifier), ("client_id", signed.fixture.developmentKey),
            ]
            return try SessionDriver(server: signed.server, fixture: signed.fixture).postForm("/oauth2/token", fields)
        }
    }

    static func codeState(_ code: String) throws -> (consumed: Bool, sessions: Int) {
        let row = try TestDatabase.pool.query(
            """
            SELECT c.consumed_at IS NOT NULL AS consumed,
                   (SELECT count(*) FROM sessions s WHERE s.authorization_code_id = c.id) AS sessions
            FROM authorization_codes c WHERE c.code_hash = $1
            """, [Crypto.hexSHA256(code)]
        ).rows[0]
        return (try row.bool("consumed"), try row.int("sessions"))
    }

    static func liveSessions(userID: String) throws -> Int {
        try TestDatabase.pool.query("SELECT count(*) AS n FROM sessions WHERE user_id = $1 AND revoked_at IS NULL", [userID])
            .rows[0].int("n")
    }

    @Test(arguments: Cause.allCases, Endpoint.allCases)
    func aCodeOutlivedByWhatItStoodForIsInvalidGrantAndStaysUnused(cause: Cause, endpoint: Endpoint) throws {
        let signed = try signedIn()
        try apply(cause, signed)
        let response = try Self.exchange(endpoint, signed, client: signed.server.client)
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_grant")
        #expect(response.header("cache-control") == "no-store")
        let state = try Self.codeState(signed.code)
        #expect(state.consumed == false, "an outlived code stays unused")
        #expect(state.sessions == 0)
        #expect(try Self.liveSessions(userID: signed.fixture.userID) == 0)
    }

    /// Signing out of another browser leaves a code issued here redeemable: only what the code stood for counts.
    @Test func signingOutOfAnotherBrowserLeavesTheCodeRedeemable() throws {
        let signed = try signedIn()
        let other = signed.server.browser()
        _ = try SignInDriver(server: signed.server, browser: other).run(
            clientID: signed.fixture.developmentKey, redirectURI: Self.redirect, state: "s", pkce: PKCEPair(),
            email: signed.fixture.email, password: signed.fixture.password)
        let page = try other.get("/account")
        #expect(try other.postForm("/account/signout", [("csrf", try #require(hiddenField("csrf", in: page.text)))]).status == 303)
        #expect(try Self.exchange(.handoff, signed, client: signed.server.client).status == 200)
    }

    /// The password change commits while the exchange waits on the account's row: the exchange sees the
    /// change, answers `invalid_grant`, and no session survives.
    @Test(arguments: Endpoint.allCases)
    func aPasswordChangeCommittingWhileTheExchangeWaitsLeavesNoSession(endpoint: Endpoint) throws {
        let signed = try signedIn()
        // The password change's own statements, in a transaction the test keeps open.
        let holder = try PostgresConnection(url: TestDatabase.url)
        try holder.query("BEGIN")
        let now = Date()
        try holder.query(
            "UPDATE users SET password_hash = $2, password_changed_at = to_timestamp($3::float8) WHERE id = $1",
            [signed.fixture.userID, try testPasswordHasher.hash("a new horse battery staple"), SQLTime.parameter(now)])
        try PostgresStore.endEverything(holder, userID: signed.fixture.userID, now: now, reason: "password_changed")

        let outcome = Mutex<TestResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        let client = signed.server.client
        Thread.detachNewThread {
            let response = try? Self.exchange(endpoint, signed, client: client)
            outcome.withLock { $0 = response }
            done.signal()
        }
        #expect(try TestDatabase.waitForWaiters(blockedBy: holder), "the exchange never waited on the password change")
        try holder.query("COMMIT")
        #expect(done.wait(timeout: .now() + 10) == .success)
        let response = try #require(outcome.withLock { $0 })
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_grant")
        #expect(try Self.codeState(signed.code).consumed == false)
        #expect(try Self.liveSessions(userID: signed.fixture.userID) == 0)
    }

    /// The exchange holds its locks when the password change starts: the change waits for it, then its
    /// next statement sees the new session and revokes it.
    @Test func aPasswordChangeStartingWhileTheExchangeRunsRevokesTheNewSession() throws {
        let signed = try signedIn()
        let page = try signed.browser.get("/account")
        let csrf = try #require(hiddenField("csrf", in: page.text))

        let holder = try PostgresConnection(url: TestDatabase.url)
        try holder.query("BEGIN")
        let now = Date()
        let access = try Crypto.mintToken(prefix: "zat_")
        let refresh = try Crypto.mintToken(prefix: "zrt_")
        SuiteCapture.secret(access)
        SuiteCapture.secret(refresh)
        let attempt = ExchangeAttempt(
            publishableKey: signed.fixture.developmentKey, codeHash: Crypto.hexSHA256(signed.code), requestedRedirectURI: Self.redirect,
            verifierChallenge: signed.pkce.challenge, attemptID: UUID().uuidString, accessTokenHash: Crypto.hexSHA256(access),
            refreshTokenHash: Crypto.hexSHA256(refresh), now: now)
        let environment = try #require(
            try PostgresAuthorizations(pool: TestDatabase.pool).uncachedExchangeEnvironment(publishableKey: attempt.publishableKey))
        let row = try holder.query(
            PostgresAuthorizations.exchangeSQL, PostgresAuthorizations.parameters(attempt, environment: environment, proof: false)
        ).rows[0]
        #expect(try row.bool("won"))
        let sessionID = try row.string("session_id")

        let status = Mutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        let browser = signed.browser
        let password = signed.fixture.password
        Thread.detachNewThread {
            let answer = try? browser.postForm(
                "/account/password", [("csrf", csrf), ("current_password", password), ("new_password", "a new horse battery staple")])
            status.withLock { $0 = answer?.status }
            done.signal()
        }
        #expect(try TestDatabase.waitForWaiters(blockedBy: holder), "the password change never waited on the exchange")
        try holder.query("COMMIT")
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(status.withLock { $0 } == 303)
        #expect(try signed.server.store.isSessionRevoked(id: sessionID) == true)
        #expect(try Self.liveSessions(userID: signed.fixture.userID) == 0)
    }
}
