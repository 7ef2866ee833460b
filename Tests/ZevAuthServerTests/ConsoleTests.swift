import Crypto
import Encoding
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The console over real HTTP against the real PostgreSQL (docs/console.md): its sign-in as the
/// first-party client `console`, its sessions' windows, the TOTP requirement, the recent sign-in of
/// sensitive actions, and the role rule on every action.
@Suite struct ConsoleTests {
    /// A browser signing in to the console and using it.
    struct Console {
        let server: TestServer
        let browser: TestBrowser
        let email: String
        let password: String
        /// The account's TOTP secret once enrolled.
        var totp: [UInt8]?
        /// Recovery codes left from the enrolment: a second factor under the system clock, where the
        /// enrolment's own TOTP step cannot count again.
        var recoveryCodes: [String] = []

        init(_ server: TestServer, email: String, password: String) {
            self.server = server
            self.browser = server.browser()
            self.email = email
            self.password = password
        }

        /// A `Location` without this server's origin.
        func local(_ location: String) -> String {
            location.hasPrefix(server.issuer) ? String(location.dropFirst(server.issuer.count)) : location
        }

        /// Follows a sign-in from `response` (a 303 into it) to the console callback's answer: the password
        /// page, the second factor when enrolled, and the console's redirect chain.
        mutating func complete(_ response: TestResponse) throws -> TestResponse {
            var current = response
            for _ in 0..<12 {
                guard current.status == 303, let raw = current.header("location") else { return current }
                let location = local(raw)
                if location.hasPrefix("/console") && !location.hasPrefix("/console/callback") { return current }
                if location.hasPrefix("/v1/auth/zevid/signin") {
                    let page = try browser.get(location)
                    current = try browser.postForm(
                        "/v1/auth/zevid/signin",
                        [
                            ("request", try #require(hiddenField("request", in: page.text))),
                            ("csrf", try #require(hiddenField("csrf", in: page.text))), ("email", email), ("password", password),
                        ])
                } else if location.hasPrefix("/v1/auth/zevid/mfa") {
                    let secret = try #require(totp)
                    if let clock = server.clock {
                        clock.advance(by: 30)
                        let step = TOTP.step(atUnixSeconds: server.context.clock.now().timeIntervalSince1970)
                        current = try TOTPSignInTests.submitCode(browser, at: location, TOTP.code(secret: secret, step: step))
                    } else {
                        current = try TOTPSignInTests.submitCode(browser, at: location, recoveryCodes.removeFirst())
                    }
                } else {
                    current = try browser.get(location)
                }
            }
            return current
        }

        /// Signs in from `/console` and returns the callback's answer.
        @discardableResult
        mutating func signIn() throws -> TestResponse {
            let start = try browser.get("/console")
            #expect(start.status == 303)
            return try complete(start)
        }

        /// The CSRF token of the console's forms on `path`.
        func csrf(_ path: String = "/console/projects") throws -> String {
            let page = try browser.get(path)
            #expect(page.status == 200, "\(path): \(page.text.prefix(300))")
            return try #require(hiddenField("csrf", in: page.text))
        }

        /// Enrols TOTP on `/account` (the ZevID browser session the console sign-in left).
        /// Enrols TOTP on /account; the enrolment ends the console session, so (unless `signInAgain` is
        /// false) signs in to the console again with the new factor.
        mutating func enrolTOTP(signInAgain: Bool = true) throws {
            let (_, csrf) = try AccountTests.accountPage(browser)
            let enrol = try browser.postForm("/account/totp/start", [("csrf", csrf)])
            let shown = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>"))
                .replacingOccurrences(of: " ", with: "")
            SuiteCapture.secret(shown)
            let secret = try #require(Base32.decode(shown))
            let step = TOTP.step(atUnixSeconds: server.context.clock.now().timeIntervalSince1970)
            let confirmed = try browser.postForm(
                "/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))])
            #expect(confirmed.status == 200)
            totp = secret
            recoveryCodes = confirmed.text.matches(of: /zrc_[A-Z2-7]{5}-[A-Z2-7]{5}/).map { String($0.output) }
            recoveryCodes.forEach { SuiteCapture.secret($0) }
            if signInAgain { try signIn() }
        }
    }

    static func member(_ projectID: String, _ userID: String, _ role: String) throws {
        _ = try TestDatabase.pool.query(
            "INSERT INTO project_members (project_id, user_id, role, added_at) VALUES ($1::uuid, $2::uuid, $3, now())",
            [projectID, userID, role])
    }

    static func markOperator(_ userID: String) throws {
        _ = try TestDatabase.pool.query("INSERT INTO operators (user_id, marked_at) VALUES ($1::uuid, now())", [userID])
    }

    /// A second account, with a unique address.
    static func account(_ server: TestServer) throws -> (id: String, email: String, password: String) {
        let email = "console-\(UUID().uuidString.lowercased())@example.com"
        let password = "console password \(UUID().uuidString.prefix(8))"
        let user = try server.store.createUser(
            email: email, emailNormalized: email, name: "Console Person", passwordHash: try testPasswordHasher.hash(password), now: Date())
        SuiteCapture.secret(email)
        SuiteCapture.secret(password)
        return (user.id, email, password)
    }

    static func count(_ sql: String, _ parameters: [String?]) throws -> Int {
        Int(try #require(try TestDatabase.pool.query(sql, parameters).first?["n"])) ?? -1
    }

    // MARK: Sign-in

    @Test func signsInThroughTheServersOwnOpenIDSignIn() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Round Trip")
        try Self.member(fixture.projectID, fixture.userID, "viewer")
        let console = Console(server, email: fixture.email, password: fixture.password)

        // Not signed in: into the standard start as client `console`, with PKCE S256, a nonce and state.
        let start = try console.browser.get("/console")
        #expect(start.status == 303)
        let authorize = try #require(start.header("location"))
        let query = queryItems(of: authorize)
        #expect(authorize.hasPrefix("/oauth2/authorize?"))
        #expect(query["client_id"] == "console")
        #expect(query["redirect_uri"] == server.issuer + "/console/callback")
        #expect(query["code_challenge_method"] == "S256")
        #expect((query["code_challenge"] ?? "").count == 43)
        #expect((query["nonce"] ?? "").isEmpty == false)
        #expect((query["state"] ?? "").isEmpty == false)
        #expect(query["scope"] == "openid")

        // The password page, then no consent: straight back to the callback, which opens the session.
        let passwordPage = try console.browser.get(authorize)
        #expect(passwordPage.status == 303)
        var callbackLocation = ""
        var current = passwordPage
        for _ in 0..<6 {
            guard let raw = current.header("location") else { break }
            let location = console.local(raw)
            if location.hasPrefix("/console/callback") {
                callbackLocation = location
                break
            }
            if location.hasPrefix("/v1/auth/zevid/signin") {
                let page = try console.browser.get(location)
                current = try console.browser.postForm(
                    "/v1/auth/zevid/signin",
                    [
                        ("request", try #require(hiddenField("request", in: page.text))),
                        ("csrf", try #require(hiddenField("csrf", in: page.text))), ("email", fixture.email),
                        ("password", fixture.password),
                    ])
            } else {
                #expect(!location.hasPrefix("/v1/auth/zevid/consent") || current.status == 303)
                current = try console.browser.get(location)
            }
        }
        #expect(callbackLocation.hasPrefix("/console/callback?code="))
        SuiteCapture.secret(queryItems(of: callbackLocation)["code"])

        // A forged callback (a browser that did not start this sign-in) is refused and opens nothing.
        let stranger = server.browser()
        let forged = try stranger.get(callbackLocation)
        #expect(forged.status == 400)
        #expect(forged.headerValues("set-cookie").allSatisfy { !$0.hasPrefix("zevauth_console=") })
        // A callback with another state is refused too (the code stays unused).
        let otherState = try console.browser.get(
            "/console/callback?code=\(queryItems(of: callbackLocation)["code"] ?? "")&state=forged&iss=x")
        #expect(otherState.status == 400)

        let finished = try console.browser.get(callbackLocation)
        #expect(finished.status == 303, "\(server.log.all.suffix(5))")
        #expect(finished.header("location") == "/console")
        let cookie = try #require(finished.headerValues("set-cookie").first { $0.hasPrefix("zevauth_console=") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"))
        let projects = try console.browser.get("/console")
        #expect(projects.status == 200)
        #expect(projects.text.contains("<h1>Projects</h1>"))
        #expect(projects.text.contains("Console Round Trip"))
        #expect(projects.header("content-security-policy")?.contains("script-src 'self'") == true)
        #expect(!projects.text.contains("<style") && !projects.text.contains("<script>"))

        // The console's own project is no project of anyone's list.
        #expect(!projects.text.contains("ZevAuth console</a></li>"))

        // Replaying the callback (the code is used) is refused and opens no second session.
        let sessions = try Self.count("SELECT count(*) AS n FROM console_sessions WHERE user_id = $1::uuid", [fixture.userID])
        let replayer = server.browser()
        let replayed = try replayer.get(callbackLocation)
        #expect(replayed.status == 400)
        #expect(try Self.count("SELECT count(*) AS n FROM console_sessions WHERE user_id = $1::uuid", [fixture.userID]) == sessions)

        // Signing out ends the console session.
        let csrf = try console.csrf()
        let out = try console.browser.postForm("/console/signout", [("csrf", csrf)])
        #expect(out.status == 303)
        #expect(out.header("location") == "/console/signed-out")
        #expect(try console.browser.get("/console/projects").status == 303)
        #expect(try console.browser.get("/console/signed-out").status == 200)
    }

    @Test func sessionsEndAfterAnHourIdleAndTwelveHoursInAll() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console Expiry")
        try Self.member(fixture.projectID, fixture.userID, "admin")
        var console = Console(server, email: fixture.email, password: fixture.password)
        #expect(try console.signIn().header("location") == "/console")
        clock.advance(by: 59 * 60)
        #expect(try console.browser.get("/console/projects").status == 200)
        clock.advance(by: 61 * 60)
        let idle = try console.browser.get("/console/projects")
        #expect(idle.status == 303)
        #expect(idle.header("location")?.hasPrefix("/oauth2/authorize?") == true)

        // Used every 50 minutes, a session still ends 12 hours after its sign-in.
        #expect(try console.complete(idle).header("location") == "/console/projects")
        for _ in 0..<14 {
            clock.advance(by: 50 * 60)
            #expect(try console.browser.get("/console/projects").status == 200)
        }
        clock.advance(by: 50 * 60)  // 12 h 30 min after the sign-in
        #expect(try console.browser.get("/console/projects").status == 303)
    }

    /// A console session is one of the account's sessions: "Sign out everywhere" on /account (and
    /// every other end of all sessions: a password change or reset, closing, the MFA reset) ends it too.
    @Test func signingOutEverywhereEndsTheConsoleSession() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Everywhere")
        try Self.member(fixture.projectID, fixture.userID, "admin")
        var console = Console(server, email: fixture.email, password: fixture.password)
        #expect(try console.signIn().header("location") == "/console")
        #expect(try console.browser.get("/console/projects").status == 200)
        let account = try console.browser.get("/account")
        let csrf = try #require(hiddenField("csrf", in: account.text))
        #expect(try console.browser.postForm("/account/signout-everywhere", [("csrf", csrf)]).status == 303)
        let after = try console.browser.get("/console/projects")
        #expect(after.status == 303)
        #expect(after.header("location")?.hasPrefix("/oauth2/authorize?") == true)
        let left = try TestDatabase.pool.query("SELECT count(*) AS n FROM console_sessions WHERE user_id = $1", [fixture.userID])
        #expect(try left.rows[0].int("n") == 0)
    }

    @Test func ownersAndOperatorsEnrolTOTPBeforeAnythingElse() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console TOTP")
        try Self.member(fixture.projectID, fixture.userID, "owner")
        var console = Console(server, email: fixture.email, password: fixture.password)
        try console.signIn()
        let asked = try console.browser.get("/console/projects")
        #expect(asked.status == 200)
        #expect(asked.text.contains("Set up two-step verification"))
        #expect(asked.text.contains("href=\"/account\""))
        #expect(try console.browser.get("/console/projects/\(fixture.projectID)/development/domains").text.contains("Set up two-step"))
        try console.enrolTOTP(signInAgain: false)
        // The enrolment ended the console session signed in without the factor: the next visit signs in
        // again, and the sign-in asks for the second factor before the console opens.
        let again = try console.browser.get("/console/projects")
        #expect(again.status == 303)
        #expect(again.header("location")?.hasPrefix("/oauth2/authorize?") == true)
        let reopened = try console.complete(again)
        #expect(reopened.header("location") == "/console/projects")
        let after = try console.browser.get("/console/projects")
        #expect(after.text.contains("<h1>Projects</h1>"))

        let operatorAccount = try Self.account(server)
        try Self.markOperator(operatorAccount.id)
        var operatorConsole = Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try operatorConsole.signIn()
        #expect(try operatorConsole.browser.get("/console/signing-keys").text.contains("Set up two-step verification"))
    }

    @Test func sensitiveActionsNeedASignInFromTheLastTenMinutes() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console Recent")
        try Self.member(fixture.projectID, fixture.userID, "owner")
        var console = Console(server, email: fixture.email, password: fixture.password)
        try console.signIn()
        try console.enrolTOTP()
        let keys = "/console/projects/\(fixture.projectID)/development/keys"
        let before = try Self.count(
            "SELECT count(*) AS n FROM secret_keys k JOIN environments e ON e.id = k.environment_id WHERE e.project_id = $1::uuid",
            [fixture.projectID])
        clock.advance(by: 11 * 60)
        let csrf = try console.csrf(keys)
        let asked = try console.browser.postForm(keys, [("csrf", csrf)])
        #expect(asked.status == 303)
        let location = try #require(asked.header("location"))
        #expect(queryItems(of: location)["max_age"] == "600")
        #expect(
            try Self.count(
                "SELECT count(*) AS n FROM secret_keys k JOIN environments e ON e.id = k.environment_id WHERE e.project_id = $1::uuid",
                [fixture.projectID]) == before)
        // The sign-in again (password and TOTP: max_age asks both), back to the page, and the action works.
        let back = try console.complete(asked)
        #expect(back.header("location") == keys)
        let created = try console.browser.postForm(keys, [("csrf", try console.csrf(keys))])
        #expect(created.status == 200)
        #expect(created.text.contains("sk_test_"))
        SuiteCapture.secret(TOTPSignInTests.between(created.text, "id=\"new-secret\">", "<"))
    }

    // MARK: Roles

    /// One console action: its form and how to tell whether it changed something.
    struct Action {
        let name: String
        let path: String
        let fields: [(String, String)]
    }

    @Test func everyActionIsRefusedToEveryRoleThatMayNotTakeIt() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console Roles", verifiedDomains: ["roles.invalid"])
        let other = try Fixture.make(store: server.store, name: "Console Other")
        let project = "/console/projects/\(fixture.projectID)"
        let dev = project + "/development"
        let environment = try #require(try server.store.environment(publishableKey: fixture.developmentKey))
        let callbackID = try #require(
            try TestDatabase.pool.query("SELECT id FROM callbacks WHERE environment_id = $1::uuid LIMIT 1", [environment.id]).first?["id"])
        let keyID = try #require(
            try TestDatabase.pool.query("SELECT id FROM secret_keys WHERE environment_id = $1::uuid", [environment.id]).first?["id"])
        let configure: [Action] = [
            Action(
                name: "domain.add", path: dev + "/domains", fields: [("domain", "new-\(UUID().uuidString.prefix(6).lowercased()).example")]),
            Action(name: "domain.verify", path: dev + "/domains/roles.invalid/verify", fields: []),
            Action(name: "callback.add", path: dev + "/callbacks", fields: [("uri", "com.roles.app:/added")]),
            Action(name: "callback.delete", path: dev + "/callbacks/\(callbackID)/delete", fields: []),
            Action(
                name: "app.create", path: dev + "/apps",
                fields: [("platform", "ios"), ("bundleId", "com.roles.app"), ("teamId", "ABCDE12345")]),
            Action(
                name: "settings.update", path: dev + "/sessions",
                fields: [
                    ("sessionMaxAgeDays", "30"), ("sessionIdleDays", "7"), ("accessTokenTtlMinutes", "10"),
                    ("refreshReuseGraceSeconds", "5"),
                    ("idTokenSigningAlg", "ES256"),
                ]),
        ]
        let keys: [Action] = [
            Action(name: "secret_key.create", path: dev + "/keys", fields: []),
            Action(name: "secret_key.revoke", path: dev + "/keys/\(keyID)/revoke", fields: []),
        ]
        let operatorOnly: [Action] = [
            Action(name: "project.create", path: "/console/projects", fields: [("name", "Made By Console"), ("ownerEmail", "")]),
            Action(name: "account.close", path: "/console/accounts/\(other.userID)/close", fields: []),
            Action(name: "signing_key.rotate", path: "/console/signing-keys/rotate", fields: []),
        ]

        /// A snapshot of everything the actions could change.
        func state() throws -> String {
            try TestDatabase.pool.query(
                """
                SELECT (SELECT string_agg(domain, ',' ORDER BY domain) FROM project_domains WHERE project_id = $1::uuid) AS d,
                       (SELECT string_agg(uri, ',' ORDER BY uri) FROM callbacks WHERE environment_id = $2::uuid) AS c,
                       (SELECT count(*) FROM mobile_apps WHERE environment_id = $2::uuid) AS a,
                       (SELECT session_max_age_days || '/' || id_token_signing_alg FROM environments WHERE id = $2::uuid) AS s,
                       (SELECT count(*) || '/' || count(revoked_at) FROM secret_keys WHERE environment_id = $2::uuid) AS k,
                       (SELECT count(*) FROM projects WHERE name = 'Made By Console' AND created_at > now() - interval '1 hour') AS p,
                       (SELECT closed_at IS NULL FROM users WHERE id = $3::uuid) AS u,
                       (SELECT count(*) FROM signing_keys WHERE state = 'retired' AND created_at > now() - interval '1 hour') AS g
                """, [fixture.projectID, environment.id, other.userID]
            ).first.map { row in ["d", "c", "a", "s", "k", "p", "u", "g"].map { row[$0] ?? "-" }.joined(separator: "|") } ?? ""
        }

        func refused(_ console: Console, _ actions: [Action], who: String) throws {
            for action in actions {
                let before = try state()
                let refusedBefore = try Self.count(
                    "SELECT count(*) AS n FROM audit_log WHERE action = $1 AND outcome = 'refused'", [action.name])
                let answer = try console.browser.postForm(action.path, [("csrf", try console.csrf())] + action.fields)
                #expect(answer.status == 403, "\(who) \(action.name): \(answer.status) \(answer.text.prefix(200))")
                #expect(answer.text.contains("Not allowed"))
                #expect(try state() == before, "\(who) \(action.name) changed something")
                #expect(
                    try Self.count("SELECT count(*) AS n FROM audit_log WHERE action = $1 AND outcome = 'refused'", [action.name])
                        == refusedBefore + 1, "\(who) \(action.name): no refused audit row")
            }
        }

        // A viewer: every change refused (a forged POST; the page shows no button).
        let viewer = try Self.account(server)
        try Self.member(fixture.projectID, viewer.id, "viewer")
        var viewerConsole = Console(server, email: viewer.email, password: viewer.password)
        try viewerConsole.signIn()
        #expect(try viewerConsole.browser.get(dev + "/domains").text.contains("Add domain") == false)
        try refused(viewerConsole, configure + keys + operatorOnly, who: "viewer")

        // An admin: configuration yes, keys and the operator's actions no.
        let admin = try Self.account(server)
        try Self.member(fixture.projectID, admin.id, "admin")
        var adminConsole = Console(server, email: admin.email, password: admin.password)
        try adminConsole.signIn()
        try refused(adminConsole, keys + operatorOnly, who: "admin")
        for action in configure where action.name != "domain.verify" {
            let before = try state()
            let answer = try adminConsole.browser.postForm(action.path, [("csrf", try adminConsole.csrf())] + action.fields)
            #expect(answer.status == 303, "admin \(action.name): \(answer.status) \(answer.text.prefix(300))")
            #expect(try state() != before, "admin \(action.name) changed nothing")
        }
        for page in ["/console/accounts", "/console/signing-keys"] {
            #expect(try adminConsole.browser.get(page).status == 403)
        }

        // A member of another project: refused here, whatever their role there.
        let outsider = try Self.account(server)
        try Self.member(other.projectID, outsider.id, "admin")
        var outsiderConsole = Console(server, email: outsider.email, password: outsider.password)
        try outsiderConsole.signIn()
        #expect(try outsiderConsole.browser.get(dev + "/domains").status == 403)
        try refused(outsiderConsole, configure + keys, who: "outsider")

        // The owner: keys yes (after the TOTP requirement), the operator's actions no.
        let owner = try Self.account(server)
        try Self.member(fixture.projectID, owner.id, "owner")
        var ownerConsole = Console(server, email: owner.email, password: owner.password)
        try ownerConsole.signIn()
        try ownerConsole.enrolTOTP()
        try refused(ownerConsole, operatorOnly, who: "owner")
        let created = try ownerConsole.browser.postForm(dev + "/keys", [("csrf", try ownerConsole.csrf())])
        #expect(created.status == 200)
        SuiteCapture.secret(TOTPSignInTests.between(created.text, "id=\"new-secret\">", "<"))
        let revoked = try ownerConsole.browser.postForm(dev + "/keys/\(keyID)/revoke", [("csrf", try ownerConsole.csrf())])
        #expect(revoked.status == 303)
        #expect(try Self.count("SELECT count(*) AS n FROM secret_keys WHERE id = $1::uuid AND revoked_at IS NOT NULL", [keyID]) == 1)

        // An operator: every project and the operator's actions.
        let operatorAccount = try Self.account(server)
        try Self.markOperator(operatorAccount.id)
        var operatorConsole = Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try operatorConsole.signIn()
        try operatorConsole.enrolTOTP()
        let search = try operatorConsole.browser.get("/console/projects?q=Console%20Other")
        #expect(search.text.contains("Console Other"))
        #expect(!search.text.contains("Console Roles"))
        let made = try operatorConsole.browser.postForm(
            "/console/projects", [("csrf", try operatorConsole.csrf()), ("name", "Made By Console"), ("ownerEmail", "")])
        #expect(made.status == 201)
        #expect(made.text.contains("sk_live_"))
        SuiteCapture.secret(TOTPSignInTests.between(made.text, "Production secret key: <span class=\"secret\">", "<"))
        SuiteCapture.secret(TOTPSignInTests.between(made.text, "Development secret key: <span class=\"secret\">", "<"))
        let found = try operatorConsole.browser.postForm("/console/accounts", [("csrf", try operatorConsole.csrf()), ("q", other.email)])
        #expect(found.status == 200)
        #expect(found.text.contains("Close account"))
        let closed = try operatorConsole.browser.postForm(
            "/console/accounts/\(other.userID)/close", [("csrf", try operatorConsole.csrf())])
        #expect(closed.status == 303)
        #expect(try Self.count("SELECT count(*) AS n FROM users WHERE id = $1::uuid AND closed_at IS NOT NULL", [other.userID]) == 1)
        let rotated = try operatorConsole.browser.postForm("/console/signing-keys/rotate", [("csrf", try operatorConsole.csrf())])
        // Allowed: rotated, or refused by the key lifecycle (a next key younger than the JWKS cache time).
        #expect(rotated.status == 303 || rotated.status == 409)
        #expect(try operatorConsole.browser.get(dev + "/domains").status == 200)

        // A form without its CSRF token changes nothing.
        let before = try state()
        let noCSRF = try operatorConsole.browser.postForm(dev + "/domains", [("domain", "nocsrf.example")])
        #expect(noCSRF.status == 403)
        #expect(try state() == before)
    }

    @Test func pagesHaveTheirHeadingsAndTheAssociationFilesPanel() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(
            store: server.store, name: "Console Pages", development: ["https://pages.invalid/callback"], verifiedDomains: ["pages.invalid"])
        try Self.member(fixture.projectID, fixture.userID, "admin")
        var console = Console(server, email: fixture.email, password: fixture.password)
        try console.signIn()
        let dev = "/console/projects/\(fixture.projectID)/development"
        let csrf = try console.csrf()
        let added = try console.browser.postForm(
            dev + "/apps",
            [
                ("csrf", csrf), ("platform", "android"), ("packageName", "com.pages.app"),
                ("fingerprints", (0..<32).map { String(format: "%02x", ($0 * 7 + 3) % 256) }.joined()),
            ])
        #expect(added.status == 303)
        let apps = try console.browser.get(dev + "/apps")
        #expect(apps.text.contains("<h1>Mobile apps</h1>"))
        #expect(apps.text.contains("0 of 10 iOS apps · 1 of 10 Android apps"))
        #expect(apps.text.contains("id=\"aasa-pages.invalid\""))
        #expect(apps.text.contains("id=\"assetlinks-pages.invalid\""))
        #expect(apps.text.contains("https://pages.invalid/.well-known/assetlinks.json"))
        #expect(apps.text.contains("com.pages.app"))
        #expect(apps.text.contains("Not verified") || apps.text.contains("Not checked yet"))
        for (page, heading) in [
            ("domains", "Domains &amp; callbacks"), ("sessions", "Sign in with ZevID sessions"), ("keys", "API keys"),
            ("activity", "Activity"),
        ] {
            let answer = try console.browser.get(dev + "/" + page)
            #expect(answer.status == 200)
            #expect(answer.text.contains("<h1>\(heading)</h1>"), "\(page)")
            #expect(answer.text.contains("href=\"/console/projects/\(fixture.projectID)/production/\(page)\""))
        }
        let membersPage = try console.browser.get("/console/projects/\(fixture.projectID)/members")
        #expect(membersPage.text.contains("<h1>Members</h1>"))
        #expect(membersPage.text.contains(fixture.email))
        #expect(!membersPage.text.contains("Add member"))
        let longer = try console.browser.postForm(
            dev + "/sessions",
            [
                ("csrf", csrf), ("sessionMaxAgeDays", "120"), ("sessionIdleDays", "7"), ("accessTokenTtlMinutes", "10"),
                ("refreshReuseGraceSeconds", "0"), ("idTokenSigningAlg", "RS256"),
            ])
        #expect(longer.status == 400)
        #expect(longer.text.contains("never lengthened past 90 days"))
        #expect(longer.text.contains("aria-invalid=\"true\""))
        let css = try console.browser.get("/console/static/console.css")
        #expect(css.status == 200 && css.header("content-type")?.hasPrefix("text/css") == true)
        #expect(try console.browser.get("/console/static/console.js").status == 200)
    }

    // MARK: Members

    @Test func membersAreManagedByOwnersAndOperatorsOnly() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console Members")
        let members = "/console/projects/\(fixture.projectID)/members"
        let subject = try Self.account(server)
        try Self.member(fixture.projectID, subject.id, "viewer")
        let newcomer = try Self.account(server)

        /// Every member of the project with their role.
        func state() throws -> String {
            try TestDatabase.pool.query(
                "SELECT string_agg(user_id::text || '=' || role, ',' ORDER BY user_id) AS m FROM project_members WHERE project_id = $1::uuid",
                [fixture.projectID]
            ).first?["m"] ?? ""
        }
        let changes: [Action] = [
            Action(name: "member.add", path: members, fields: [("email", newcomer.email), ("role", "admin")]),
            Action(name: "member.update", path: members + "/\(subject.id)", fields: [("role", "owner")]),
            Action(name: "member.remove", path: members + "/\(subject.id)/remove", fields: []),
        ]
        func refused(_ console: Console, who: String) throws {
            for action in changes {
                let before = try state()
                let refusedBefore = try Self.count(
                    "SELECT count(*) AS n FROM audit_log WHERE action = $1 AND outcome = 'refused' AND project_id = $2::uuid",
                    [action.name, fixture.projectID])
                let answer = try console.browser.postForm(action.path, [("csrf", try console.csrf())] + action.fields)
                #expect(answer.status == 403, "\(who) \(action.name): \(answer.status) \(answer.text.prefix(200))")
                #expect(answer.text.contains("Not allowed"))
                #expect(try state() == before, "\(who) \(action.name) changed the members")
                #expect(
                    try Self.count(
                        "SELECT count(*) AS n FROM audit_log WHERE action = $1 AND outcome = 'refused' AND project_id = $2::uuid",
                        [action.name, fixture.projectID]) == refusedBefore + 1, "\(who) \(action.name): no refused audit row")
            }
        }

        // A viewer and an admin read the list but see no change form, and every change is refused.
        for role in ["viewer", "admin"] {
            let account = try Self.account(server)
            try Self.member(fixture.projectID, account.id, role)
            var console = Console(server, email: account.email, password: account.password)
            try console.signIn()
            let page = try console.browser.get(members)
            #expect(page.status == 200)
            #expect(page.text.contains("<h1>Members</h1>"))
            #expect(page.text.contains(subject.email) && page.text.contains("Console Person"))
            #expect(!page.text.contains("Add member") && !page.text.contains(">Remove<") && !page.text.contains(">Save<"))
            try refused(console, who: role)
        }
        // A member of another project may neither read nor change them.
        let other = try Fixture.make(store: server.store, name: "Console Members Other")
        let outsider = try Self.account(server)
        try Self.member(other.projectID, outsider.id, "owner")
        var outsiderConsole = Console(server, email: outsider.email, password: outsider.password)
        try outsiderConsole.signIn()
        try outsiderConsole.enrolTOTP()
        #expect(try outsiderConsole.browser.get(members).status == 403)
        try refused(outsiderConsole, who: "outsider")

        // The owner: add, change a role, remove, each with its audit row naming the console account.
        let owner = try Self.account(server)
        try Self.member(fixture.projectID, owner.id, "owner")
        var ownerConsole = Console(server, email: owner.email, password: owner.password)
        try ownerConsole.signIn()
        try ownerConsole.enrolTOTP()
        let page = try ownerConsole.browser.get(members)
        #expect(page.text.contains("Add member") && page.text.contains(">Remove<") && page.text.contains(">Save<"))
        let added = try ownerConsole.browser.postForm(
            members, [("csrf", try ownerConsole.csrf()), ("email", newcomer.email.uppercased()), ("role", "admin")])
        #expect(added.status == 303, "\(added.status) \(added.text.prefix(300))")
        #expect(try state().contains("\(newcomer.id)=admin"))
        #expect(try ownerConsole.browser.get(added.header("location") ?? members).text.contains("The member was added."))
        #expect(
            try Self.count(
                """
                SELECT count(*) AS n FROM audit_log WHERE action = 'member.add' AND outcome = 'done' AND actor_kind = 'account'
                AND actor_id = $1 AND target = $2 AND project_id = $3::uuid AND client_address IS NOT NULL
                """, [owner.id, newcomer.id, fixture.projectID]) == 1)

        // Errors in words, nothing changed.
        var before = try state()
        let unknown = try ownerConsole.browser.postForm(
            members, [("csrf", try ownerConsole.csrf()), ("email", "nobody-\(UUID().uuidString)@example.com"), ("role", "viewer")])
        #expect(unknown.status == 404)
        #expect(unknown.text.contains("No open account has this email address."))
        let twice = try ownerConsole.browser.postForm(
            members, [("csrf", try ownerConsole.csrf()), ("email", newcomer.email), ("role", "viewer")])
        #expect(twice.status == 409)
        #expect(twice.text.contains("This account is already a member of the project."))
        let badRole = try ownerConsole.browser.postForm(
            members, [("csrf", try ownerConsole.csrf()), ("email", newcomer.email), ("role", "root")])
        #expect(badRole.status == 400)
        #expect(badRole.text.contains("Choose the role Owner, Admin or Viewer."))
        let lastOwner = "A project keeps at least one owner: make another member an owner first."
        let demoted = try ownerConsole.browser.postForm(members + "/\(owner.id)", [("csrf", try ownerConsole.csrf()), ("role", "admin")])
        #expect(demoted.status == 409)
        #expect(demoted.text.contains(lastOwner))
        let leaving = try ownerConsole.browser.postForm(members + "/\(owner.id)/remove", [("csrf", try ownerConsole.csrf())])
        #expect(leaving.status == 409)
        #expect(leaving.text.contains(lastOwner))
        #expect(try state() == before)

        let saved = try ownerConsole.browser.postForm(
            members + "/\(newcomer.id)", [("csrf", try ownerConsole.csrf()), ("role", "viewer")])
        #expect(saved.status == 303)
        #expect(try state().contains("\(newcomer.id)=viewer"))
        let removed = try ownerConsole.browser.postForm(members + "/\(newcomer.id)/remove", [("csrf", try ownerConsole.csrf())])
        #expect(removed.status == 303)
        #expect(!(try state().contains(newcomer.id)))
        #expect(
            try Self.count(
                "SELECT count(*) AS n FROM audit_log WHERE action IN ('member.update', 'member.remove') AND outcome = 'done' AND actor_id = $1",
                [owner.id]) == 2)

        // A sign-in older than 10 minutes: back through the sign-in with max_age=600, nothing changed.
        clock.advance(by: 11 * 60)
        before = try state()
        let stale = try ownerConsole.browser.postForm(
            members, [("csrf", try ownerConsole.csrf(members)), ("email", newcomer.email), ("role", "viewer")])
        #expect(stale.status == 303)
        #expect(queryItems(of: try #require(stale.header("location")))["max_age"] == "600")
        #expect(try state() == before)

        // An operator, no member: every change, and the project's last owner still stays.
        let operatorAccount = try Self.account(server)
        try Self.markOperator(operatorAccount.id)
        var operatorConsole = Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try operatorConsole.signIn()
        try operatorConsole.enrolTOTP()
        #expect(try operatorConsole.browser.get(members).text.contains("Add member"))
        let promoted = try operatorConsole.browser.postForm(
            members + "/\(subject.id)", [("csrf", try operatorConsole.csrf()), ("role", "owner")])
        #expect(promoted.status == 303)
        #expect(try state().contains("\(subject.id)=owner"))
        let demotedOwner = try operatorConsole.browser.postForm(
            members + "/\(owner.id)", [("csrf", try operatorConsole.csrf()), ("role", "viewer")])
        #expect(demotedOwner.status == 303)
        #expect(try state().contains("\(owner.id)=viewer"))
        let addedBack = try operatorConsole.browser.postForm(
            members, [("csrf", try operatorConsole.csrf()), ("email", newcomer.email), ("role", "owner")])
        #expect(addedBack.status == 303)
        let removedBySubject = try operatorConsole.browser.postForm(
            members + "/\(subject.id)/remove", [("csrf", try operatorConsole.csrf())])
        #expect(removedBySubject.status == 303)
        let lastOne = try operatorConsole.browser.postForm(members + "/\(newcomer.id)/remove", [("csrf", try operatorConsole.csrf())])
        #expect(lastOne.status == 409)
        #expect(lastOne.text.contains(lastOwner))
        #expect(try state().contains("\(newcomer.id)=owner"))
        #expect(server.serverFailureLines.isEmpty, "\(server.serverFailureLines)")
    }

    @Test func createProjectMakesTheOwnerOrCreatesNothing() throws {
        let server = try TestServer(live: true)
        _ = try Fixture.make(store: server.store, name: "Console Create")
        let owner = try Self.account(server)
        let operatorAccount = try Self.account(server)
        try Self.markOperator(operatorAccount.id)
        var console = Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try console.signIn()
        try console.enrolTOTP()
        let name = "Owned \(UUID().uuidString.prefix(8))"
        func projects() throws -> Int { try Self.count("SELECT count(*) AS n FROM projects WHERE name = $1", [name]) }

        let unknown = try console.browser.postForm(
            "/console/projects", [("csrf", try console.csrf()), ("name", name), ("ownerEmail", "nobody-\(UUID().uuidString)@example.com")])
        #expect(unknown.status == 404)
        #expect(unknown.text.contains("No open account has this email address, so no project was created."))
        #expect(unknown.text.contains("value=\"\(name)\""))
        let invalid = try console.browser.postForm(
            "/console/projects", [("csrf", try console.csrf()), ("name", name), ("ownerEmail", "not an address")])
        #expect(invalid.status == 400)
        #expect(invalid.text.contains("aria-invalid=\"true\""))
        #expect(try projects() == 0)

        let made = try console.browser.postForm(
            "/console/projects", [("csrf", try console.csrf()), ("name", name), ("ownerEmail", " \(owner.email) ")])
        #expect(made.status == 201, "\(made.status) \(made.text.prefix(300))")
        #expect(made.text.contains("First owner: \(owner.email)"))
        SuiteCapture.secret(TOTPSignInTests.between(made.text, "Production secret key: <span class=\"secret\">", "<"))
        SuiteCapture.secret(TOTPSignInTests.between(made.text, "Development secret key: <span class=\"secret\">", "<"))
        #expect(try projects() == 1)
        #expect(
            try Self.count(
                """
                SELECT count(*) AS n FROM project_members m JOIN projects p ON p.id = m.project_id
                WHERE p.name = $1 AND m.user_id = $2::uuid AND m.role = 'owner'
                """, [name, owner.id]) == 1)
        #expect(
            try Self.count(
                "SELECT count(*) AS n FROM audit_log WHERE action = 'member.add' AND actor_kind = 'account' AND actor_id = $1 AND target = $2",
                [operatorAccount.id, owner.id]) == 1)
    }

    @Test func badInputsAreRefusedWithASentenceNeverA500() throws {
        let clock = ManualClock()
        let server = try TestServer(live: true, clock: clock)
        let fixture = try Fixture.make(store: server.store, name: "Console Bad Input")
        let operatorAccount = try Self.account(server)
        try Self.markOperator(operatorAccount.id)
        var console = Console(server, email: operatorAccount.email, password: operatorAccount.password)
        try console.signIn()
        try console.enrolTOTP()
        let dev = "/console/projects/\(fixture.projectID)/development"
        let junk = "\u{202E}<script>'\"%00"
        let posts: [(String, [(String, String)])] = [
            (dev + "/domains", [("domain", junk)]), (dev + "/domains/not..a..domain/verify", []), (dev + "/callbacks", [("uri", junk)]),
            (dev + "/callbacks/not-a-uuid/delete", []), (dev + "/apps", [("platform", "ios"), ("bundleId", junk), ("teamId", "x")]),
            (dev + "/apps", [("platform", "android"), ("packageName", "com.bad.app"), ("fingerprints", "AB:CD\n" + junk)]),
            (dev + "/apps", [("platform", junk)]), (dev + "/apps/not-a-uuid/check", []), (dev + "/apps/not-a-uuid/remove", []),
            (dev + "/sessions", [("sessionMaxAgeDays", junk)]), (dev + "/keys/not-a-uuid/revoke", []),
            ("/console/projects", [("name", "")]), ("/console/accounts", [("q", junk)]), ("/console/accounts/not-a-uuid/close", []),
            ("/console/projects/not-a-uuid/development/domains", [("domain", "a.example")]),
            ("/console/projects/\(fixture.projectID)/members", [("email", junk), ("role", "viewer")]),
            ("/console/projects/\(fixture.projectID)/members", [("email", "a@example.com"), ("role", junk)]),
            ("/console/projects/\(fixture.projectID)/members/not-a-uuid", [("role", "viewer")]),
            ("/console/projects/\(fixture.projectID)/members/not-a-uuid/remove", []),
            ("/console/projects", [("name", "Bad Owner"), ("ownerEmail", junk)]),
            (dev.replacingOccurrences(of: "/development", with: "/staging") + "/domains", [("domain", "a.example")]),
        ]
        for (path, fields) in posts {
            let answer = try console.browser.postForm(path, [("csrf", try console.csrf())] + fields)
            #expect([303, 400, 404].contains(answer.status), "\(path): \(answer.status)")
            #expect(!answer.text.contains("<script>'"), "\(path) echoed its input unescaped")
        }
        for path in ["/console/projects/not-a-uuid/development/apps", dev.replacingOccurrences(of: "/development", with: "/x") + "/keys"] {
            #expect(try console.browser.get(path).status == 404)
        }
        #expect(server.serverFailureLines.isEmpty, "\(server.serverFailureLines)")
    }

    // MARK: Activity

    /// The rows of an Activity page's table, as text.
    static func activityRows(_ html: String) -> [String] {
        guard let body = TOTPSignInTests.between(html, "<tbody>", "</tbody>") else { return [] }
        return body.components(separatedBy: "</tr>").filter { $0.contains("<td>") }
    }

    @Test func activityListsTheEnvironmentsRowsNewestFirstScopedAndPaged() throws {
        let server = try TestServer(live: true)
        let fixture = try Fixture.make(store: server.store, name: "Console Activity")
        let other = try Fixture.make(store: server.store, name: "Console Activity Other")
        let dev = "/console/projects/\(fixture.projectID)/development"
        let prod = "/console/projects/\(fixture.projectID)/production"
        let devEnvironment = try #require(try server.store.environment(publishableKey: fixture.developmentKey))
        func admin(_ path: String, _ secret: String, _ json: [String: Any]) throws -> TestResponse {
            try server.client.send(
                "POST", path, headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(secret)")],
                body: Array(try JSONSerialization.data(withJSONObject: json)))
        }
        func keyID(_ secret: String) throws -> String {
            let keys = try server.client.send("GET", "/v1/admin/keys", headers: [("Authorization", "Bearer \(secret)")], body: [])
            return try #require((keys.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        }
        let devKeyID = try keyID(fixture.developmentSecret)
        let prodKeyID = try keyID(fixture.productionSecret)

        // Sixty older rows of this environment, to page through.
        _ = try TestDatabase.pool.query(
            """
            INSERT INTO audit_log (at, actor_kind, action, target, project_id, environment_id, outcome)
            SELECT now() - make_interval(mins => 10 + n), 'system', 'callback.delete', 'seed-' || lpad(n::text, 2, '0'),
                   $1::uuid, $2::uuid, 'done'
            FROM generate_series(1, 60) AS n
            """, [fixture.projectID, devEnvironment.id])

        // A change in the console, then changes by the admin API, then a refused one in the console.
        let adminAccount = try Self.account(server)
        try Self.member(fixture.projectID, adminAccount.id, "admin")
        var adminConsole = Console(server, email: adminAccount.email, password: adminAccount.password)
        try adminConsole.signIn()
        let added = try adminConsole.browser.postForm(
            dev + "/domains", [("csrf", try adminConsole.csrf()), ("domain", "activity-console.example")])
        #expect(added.status == 303)
        #expect(try admin("/v1/admin/callbacks", fixture.developmentSecret, ["uri": "com.activity.app:/dev"]).status == 201)
        #expect(try admin("/v1/admin/callbacks", fixture.productionSecret, ["uri": "com.activity.app:/prod"]).status == 201)
        #expect(try admin("/v1/admin/domains", fixture.productionSecret, ["domain": "activity-api.example"]).status == 201)
        #expect(try admin("/v1/admin/domains", other.developmentSecret, ["domain": "activity-other.example"]).status == 201)
        let viewer = try Self.account(server)
        try Self.member(fixture.projectID, viewer.id, "viewer")
        var viewerConsole = Console(server, email: viewer.email, password: viewer.password)
        try viewerConsole.signIn()
        let refused = try viewerConsole.browser.postForm(
            dev + "/domains", [("csrf", try viewerConsole.csrf()), ("domain", "activity-refused.example")])
        #expect(refused.status == 403)

        // The development page (read by the viewer): newest first, in words.
        let first = try viewerConsole.browser.get(dev + "/activity")
        #expect(first.status == 200)
        #expect(first.text.contains("<h1>Activity</h1>"))
        #expect(first.text.contains("<caption"))
        let rows = Self.activityRows(first.text)
        #expect(rows.count == 50)
        func index(_ parts: String...) -> Int? { rows.firstIndex { row in parts.allSatisfy { row.contains($0) } } }
        let refusedRow = try #require(index(HTML.escape(viewer.email), "domain.add"))
        #expect(rows[refusedRow].contains("Refused"))
        let apiDomain = try #require(index("activity-api.example", "Secret key \(prodKeyID)", "Domain added"))
        let apiCallback = try #require(index("Secret key \(devKeyID)", "Callback added"))
        let consoleDomain = try #require(index("activity-console.example", HTML.escape(adminAccount.email), "Domain added"))
        #expect(refusedRow < apiDomain && apiDomain < apiCallback && apiCallback < consoleDomain)
        #expect(!rows[consoleDomain].contains("Refused"))
        #expect(rows[consoleDomain].contains("<time datetime=\""))
        #expect(rows[consoleDomain].contains("127.0.0.1"))
        #expect(index("Secret key \(prodKeyID)", "callback.add") == nil, "a production row on the development page")
        #expect(!first.text.contains("activity-other.example"), "another project's row")

        // Paging: "Older" carries the cursor; every seeded row appears exactly once across the pages.
        let older = try #require(
            TOTPSignInTests.between(first.text, "<a href=\"", "\" rel=\"next\">Older</a>").map {
                String($0.split(separator: "\"").last ?? "")
            })
        #expect(older.hasPrefix(dev + "/activity?cursor="))
        let second = try viewerConsole.browser.get(older)
        #expect(second.status == 200)
        #expect(second.text.contains(">Newest</a>"))
        #expect(!second.text.contains(">Older</a>"))
        let seeds = (rows + Self.activityRows(second.text)).compactMap { TOTPSignInTests.between($0, "<code>seed-", "</code>") }
        #expect(seeds.count == 60)
        #expect(Set(seeds).count == 60)
        #expect(seeds == seeds.sorted())

        // The production page: its own rows and the project-level ones, never development's.
        let production = Self.activityRows(try adminConsole.browser.get(prod + "/activity").text)
        #expect(production.contains { $0.contains("Secret key \(prodKeyID)") && $0.contains("callback.add") })
        #expect(production.contains { $0.contains("activity-console.example") })
        #expect(production.contains { $0.contains("activity-api.example") })
        #expect(!production.contains { $0.contains("Secret key \(devKeyID)") || $0.contains("seed-") })
        #expect(!production.contains { $0.contains("activity-other.example") })

        // A member of another project may not read it.
        let outsider = try Self.account(server)
        try Self.member(other.projectID, outsider.id, "admin")
        var outsiderConsole = Console(server, email: outsider.email, password: outsider.password)
        try outsiderConsole.signIn()
        #expect(try outsiderConsole.browser.get(dev + "/activity").status == 403)
        #expect(server.serverFailureLines.isEmpty, "\(server.serverFailureLines)")
    }
}
