import Authorize
import Crypto
import Encoding
import Foundation
import Postgres
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// "Continue with NAME" on the hosted pages (docs/federation.md, "Hosted sign-in") over PostgreSQL, with a
/// fake `UpstreamAuthority` in place of the provider: every branch of the callback, Apple's form_post, the
/// link confirmation, unlinking, and the clock moved past a flow's 10 minutes.
@Suite struct HostedUpstreamTests {
    /// The provider's side, in memory: the authorization URL carries what the server sent; `redeem` checks
    /// the PKCE verifier against the challenge and the nonce against the one sent with that state, then
    /// answers the identity the test set.
    final class FakeUpstream: UpstreamAuthority, Sendable {
        struct Sent { let nonce: String; let challenge: String; let redirectURI: String }
        let sent = Mutex<[String: Sent]>([:])
        let answer = Mutex<Result<UpstreamIdentity, UpstreamFailure>>(.failure(.providerUnavailable))

        func authorizationURL(
            provider: UpstreamProviderRecord, redirectURI: String, state: String, nonce: String, codeChallenge: String
        ) throws(UpstreamFailure) -> String {
            sent.withLock { $0[state] = Sent(nonce: nonce, challenge: codeChallenge, redirectURI: redirectURI) }
            return "https://idp.test/authorize?" + FormURLEncoding.encode([("client_id", provider.clientID), ("state", state)])
        }

        /// `code` is `code-` and the state it was issued for.
        func redeem(
            provider: UpstreamProviderRecord, code: String, codeVerifier: String, redirectURI: String, nonce: String
        ) throws(UpstreamFailure) -> UpstreamIdentity {
            guard code.hasPrefix("code-"), let sent = sent.withLock({ $0[String(code.dropFirst(5))] }) else {
                throw .tokenEndpoint("invalid_grant")
            }
            guard Base64URL.encode(Crypto.sha256(Array(codeVerifier.utf8))) == sent.challenge, redirectURI == sent.redirectURI else {
                throw .tokenEndpoint("invalid_grant")
            }
            guard nonce == sent.nonce else { throw .nonce }
            return try answer.withLock { $0 }.get()
        }

        func verifyNative(
            provider: UpstreamProviderRecord, idToken: String, audiences: [String], rawNonce: String
        ) throws(UpstreamFailure) -> UpstreamIdentity { throw .malformed }

        func answers(_ identity: UpstreamIdentity) { answer.withLock { $0 = .success(identity) } }
        func fails(_ failure: UpstreamFailure) { answer.withLock { $0 = .failure(failure) } }
    }

    /// A server with the fake, a fixture project showing an Apple-like provider, and the provider, which is
    /// deleted with the world (so the shared database does not collect providers other pages list).
    final class World {
        let server: TestServer
        let clock: ManualClock
        let fake: FakeUpstream
        let fixture: Fixture
        let provider: UpstreamProviderRecord

        init() throws {
            clock = ManualClock()
            fake = FakeUpstream()
            server = try TestServer(clock: clock, upstream: fake)
            fixture = try Fixture.make(store: server.store)
            let now = Date()
            let audit = AuditEntry(actor: .operatorToken, action: "provider.create", clientAddress: nil, at: now)
            provider = try server.context.tenancy.providers.createProvider(
                id: UUID().uuidString.lowercased(), kind: .apple,
                UpstreamProviderColumns(
                    slug: "apple-\(UUID().uuidString.prefix(8).lowercased())", displayName: "Apple", issuer: "https://appleid.apple.com",
                    clientID: "com.acme.signin", appleTeamID: "ABCDE12345", appleKeyID: "KEY1234567", sealedApplePrivateKey: "c2VhbGVk"),
                now: now, audit: audit)
            _ = try server.context.tenancy.providers.setProjectProviders(
                projectID: fixture.projectID, providerIDs: [provider.id], audit: audit)
        }

        deinit {
            try? server.context.tenancy.providers.deleteProvider(
                id: provider.id, audit: AuditEntry(actor: .operatorToken, action: "provider.delete", clientAddress: nil, at: Date()))
        }

        func identity(subject: String = UUID().uuidString, email: String?, verified: Bool = true, name: String? = nil) -> UpstreamIdentity {
            UpstreamIdentity(
                providerID: provider.id, issuer: provider.issuer, subject: subject, email: email, emailVerified: verified, name: name,
                tokenID: UUID().uuidString, expiresAt: Date().timeIntervalSince1970 + 600)
        }

        /// An app sign-in started in `browser`, its page, and the "Continue with Apple" form's fields.
        func continueWithApple(_ browser: TestBrowser, extra: [(String, String)] = []) throws -> (
            page: TestResponse, fields: [(String, String)]
        ) {
            let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey, extra: extra)
            let page = form.page
            let start = try #require(page.text.range(of: "action=\"/oauth2/upstream/start\""))
            let rest = String(page.text[start.upperBound...])
            let value = { (name: String) -> String? in
                guard let end = rest.range(of: "\" name=\"\(name)\"") else { return nil }
                let before = rest[..<end.lowerBound]
                return before.range(of: "value=\"", options: .backwards).map { String(before[$0.upperBound...]) }
            }
            let fields = [
                ("csrf", try #require(value("csrf"))), ("provider", try #require(value("provider"))),
                ("request", try #require(value("request"))),
            ]
            return (page, fields)
        }

        /// Start → the 303 to the provider; returns the state sent.
        func start(_ browser: TestBrowser, extra: [(String, String)] = []) throws -> String {
            let (_, fields) = try continueWithApple(browser, extra: extra)
            let started = try browser.postForm("/oauth2/upstream/start", fields)
            #expect(started.status == 303)
            let location = try #require(started.header("location"))
            #expect(location.hasPrefix("https://idp.test/authorize?"))
            return try #require(queryItems(of: location)["state"])
        }

        /// Apple's form_post from the provider's page (no cookies), then the browser's GET it is sent to.
        func formPost(_ browser: TestBrowser, state: String, user: String? = nil) throws -> TestResponse {
            let crossSite = server.browser()
            var fields = [("code", "code-\(state)"), ("state", state)]
            if let user { fields.append(("user", user)) }
            let posted = try crossSite.postForm("/oauth2/upstream/callback", fields)
            #expect(posted.status == 303)
            let location = try #require(posted.header("location"))
            #expect(location == "/oauth2/upstream/callback?state=\(state)")
            #expect(!location.contains("code"))
            return try browser.get(location)
        }

        func user(email: String) throws -> PostgresRow? {
            try TestDatabase.pool.query(
                "SELECT id, name, password_hash, email_verified_at FROM users WHERE email_normalized = $1", [email.lowercased()]
            ).first
        }

        func links(userID: String) throws -> Int {
            Int(
                try TestDatabase.pool.query("SELECT count(*) AS n FROM upstream_identities WHERE user_id = $1", [userID]).rows[0]["n"] ?? ""
            )
                ?? -1
        }

        /// Follows consent to the app's code.
        func allow(_ browser: TestBrowser, at location: String) throws -> String {
            let consent = try browser.get(location)
            #expect(consent.status == 200)
            let allowed = try browser.postForm(
                "/v1/auth/zevid/consent",
                [
                    ("request", try #require(hiddenField("request", in: consent.text))),
                    ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
                ])
            #expect(allowed.status == 303)
            let location = try #require(allowed.header("location"))
            return try #require(queryItems(of: location)["code"])
        }
    }

    static func sessionAMR(userID: String) throws -> [String] {
        try TestDatabase.pool.query("SELECT amr FROM browser_sessions WHERE user_id = $1 ORDER BY created_at", [userID]).rows.map {
            try $0.string("amr")
        }
    }

    @Test func theSignInPageShowsContinueWithAppleAboveTheEmailForm() throws {
        let world = try World()
        let (page, fields) = try world.continueWithApple(world.server.browser())
        let apple = try #require(page.text.range(of: "Continue with Apple</button>"))
        let email = try #require(page.text.range(of: "action=\"/v1/auth/zevid/signin\""))
        #expect(apple.lowerBound < email.lowerBound)
        #expect(
            page.text.contains("<button type=\"submit\" class=\"upstream upstream-apple\"><img src=\"/assets/apple-logo.svg\" alt=\"\""))
        #expect(fields.first { $0.0 == "provider" }?.1 == world.provider.slug)
        // The email form's own fields come first to a reader of `name="csrf" value=`.
        #expect(hiddenField("request", in: page.text) == fields.first { $0.0 == "request" }?.1)
        let logo = try world.server.browser().get("/assets/apple-logo.svg")
        #expect(logo.status == 200)
        #expect(logo.header("content-type") == "image/svg+xml")
        #expect(logo.text.contains("fill=\"#ffffff\""))
    }

    @Test func aNewAddressMakesAnAccountSignedInWithFedThroughApplesFormPost() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        let email = "new-\(UUID().uuidString.lowercased())@privaterelay.appleid.com"
        world.fake.answers(world.identity(email: email, verified: true))
        let back = try world.formPost(browser, state: state, user: #"{"name":{"firstName":"Grace","lastName":"Hopper"}}"#)
        #expect(back.status == 303)
        let consent = try #require(back.header("location"))
        #expect(consent.hasPrefix("/v1/auth/zevid/consent?request="))
        let row = try #require(try world.user(email: email))
        #expect(try row.string("name") == "Grace Hopper")
        #expect(try row.string("password_hash") == UserRecord.noPassword)
        #expect(row["email_verified_at"] != nil)
        let userID = try row.string("id")
        #expect(try world.links(userID: userID) == 1)
        #expect(try Self.sessionAMR(userID: userID) == ["fed"])
        #expect(try world.allow(browser, at: consent).hasPrefix("hoc_"))
        let actions = try TestDatabase.pool.query("SELECT action FROM audit_log WHERE subject_user_id = $1 ORDER BY id", [userID]).rows.map
        {
            try $0.string("action")
        }
        #expect(Set(actions).isSuperset(of: ["account.create", "upstream.link", "signin.upstream"]))

        // The same identity again (a GET callback this time) signs in to the same account, nothing new made.
        let again = world.server.browser()
        let second = try world.start(again)
        let returned = try again.get(
            "/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(second)"), ("state", second)]))
        #expect(returned.status == 303)
        #expect(returned.header("location")?.hasPrefix("/v1/auth/zevid/consent?request=") == true)
        #expect(try TestDatabase.pool.query("SELECT count(*) AS n FROM users WHERE email_normalized = $1", [email]).rows[0]["n"] == "1")
    }

    @Test func anExistingAddressLinksOnlyAfterSigningInAndConfirming() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        world.fake.answers(world.identity(email: world.fixture.email))
        let back = try world.formPost(browser, state: state)
        #expect(back.header("location") == "/oauth2/upstream/link")
        #expect(try world.links(userID: world.fixture.userID) == 0)
        // Not signed in: the link page sends the browser to this sign-in's page, address filled in.
        let link = try browser.get("/oauth2/upstream/link")
        let signInPath = try #require(link.header("location"))
        #expect(signInPath.hasPrefix("/v1/auth/zevid/signin?request="))
        let page = try browser.get(signInPath)
        #expect(page.text.contains("To link your Apple ID, sign in to your ZevID account first."))
        #expect(page.text.contains("value=\"\(world.fixture.email)\""))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", try #require(hiddenField("request", in: page.text))),
                ("csrf", try #require(hiddenField("csrf", in: page.text))),
                ("email", world.fixture.email), ("password", world.fixture.password),
            ])
        let consentPath = try #require(posted.header("location"))
        // Consent waits for the decision about the link.
        #expect(try browser.get(consentPath).header("location") == "/oauth2/upstream/link")
        let confirm = try browser.get("/oauth2/upstream/link")
        #expect(confirm.status == 200)
        #expect(confirm.text.contains("Link Apple to your ZevID account?"))
        #expect(try world.links(userID: world.fixture.userID) == 0)
        let csrf = try #require(hiddenField("csrf", in: confirm.text))
        #expect(try browser.postForm("/oauth2/upstream/link", [("csrf", "wrong"), ("decision", "link")]).status == 403)
        let linked = try browser.postForm("/oauth2/upstream/link", [("csrf", csrf), ("decision", "link")])
        #expect(linked.status == 303)
        #expect(linked.header("location") == consentPath)
        #expect(try world.links(userID: world.fixture.userID) == 1)
        #expect(browser.cookies["zevid_link"] == nil)
        #expect(try world.allow(browser, at: consentPath).hasPrefix("hoc_"))
        // Linked now: the next upstream sign-in goes straight in.
        let next = world.server.browser()
        let nextState = try world.start(next)
        #expect(try world.formPost(next, state: nextState).header("location")?.hasPrefix("/v1/auth/zevid/consent") == true)
    }

    @Test func cancellingTheLinkLinksNothingAndTheSignInGoesOn() throws {
        let world = try World()
        let browser = world.server.browser()
        world.fake.answers(world.identity(email: world.fixture.email))
        _ = try world.formPost(browser, state: try world.start(browser))
        let page = try browser.get(try #require(try browser.get("/oauth2/upstream/link").header("location")))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", try #require(hiddenField("request", in: page.text))),
                ("csrf", try #require(hiddenField("csrf", in: page.text))),
                ("email", world.fixture.email), ("password", world.fixture.password),
            ])
        let consentPath = try #require(posted.header("location"))
        let confirm = try browser.get("/oauth2/upstream/link")
        let cancelled = try browser.postForm(
            "/oauth2/upstream/link", [("csrf", try #require(hiddenField("csrf", in: confirm.text))), ("decision", "cancel")])
        #expect(cancelled.header("location") == consentPath)
        #expect(try world.links(userID: world.fixture.userID) == 0)
        #expect(try browser.get(consentPath).status == 200)
    }

    @Test func aSessionFromBeforeTheLinkWasAskedMustSignInAgain() throws {
        let world = try World()
        let browser = world.server.browser()
        _ = try AccountTests.appSession(
            world.server, browser, clientID: world.fixture.developmentKey, email: world.fixture.email, password: world.fixture.password)
        world.clock.advance(by: 5)
        world.fake.answers(world.identity(email: world.fixture.email))
        // A signed-in browser sees the buttons when the app asks for a new sign-in.
        _ = try world.formPost(browser, state: try world.start(browser, extra: [("prompt", "login")]))
        let link = try browser.get("/oauth2/upstream/link")
        #expect(link.status == 303)
        #expect(link.header("location")?.hasPrefix("/v1/auth/zevid/signin?request=") == true)
        // The sign-in page asks, rather than passing the old session on to consent.
        let page = try browser.get(try #require(link.header("location")))
        #expect(page.status == 200)
        #expect(page.text.contains("To link your Apple ID, sign in to your ZevID account first."))
        // The account area's sign-in page asks too while the link waits.
        #expect(try browser.get("/account/signin").status == 200)
        #expect(try browser.get("/account").status == 200)
        #expect(try world.links(userID: world.fixture.userID) == 0)
    }

    @Test func anIdentityLinkedToAnotherAccountNeverMoves() throws {
        let world = try World()
        let other = try Fixture.make(store: world.server.store)
        let subject = UUID().uuidString
        let browser = world.server.browser()
        world.fake.answers(world.identity(subject: subject, email: world.fixture.email))
        _ = try world.formPost(browser, state: try world.start(browser))
        let page = try browser.get(try #require(try browser.get("/oauth2/upstream/link").header("location")))
        _ = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", try #require(hiddenField("request", in: page.text))),
                ("csrf", try #require(hiddenField("csrf", in: page.text))),
                ("email", world.fixture.email), ("password", world.fixture.password),
            ])
        // Meanwhile the same identity was linked to the other account.
        #expect(
            try world.server.store.upstreamSignIn.linkIdentity(
                providerID: world.provider.id, issuer: world.provider.issuer, subject: subject, email: nil, userID: other.userID,
                now: Date(), clientAddress: nil))
        let confirm = try browser.get("/oauth2/upstream/link")
        let refused = try browser.postForm(
            "/oauth2/upstream/link", [("csrf", try #require(hiddenField("csrf", in: confirm.text))), ("decision", "link")])
        #expect(refused.status == 409)
        #expect(refused.text.contains("This Apple account is already linked to another ZevID account."))
        #expect(try world.links(userID: world.fixture.userID) == 0)
        #expect(try world.links(userID: other.userID) == 1)
        // And signing in with it goes to the account it is linked to.
        let next = world.server.browser()
        let nextState = try world.start(next)
        #expect(try world.formPost(next, state: nextState).status == 303)
        #expect(try Self.sessionAMR(userID: other.userID).contains("fed"))
    }

    @Test func anUpstreamErrorIsAPageAndEndsTheFlow() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        let crossSite = world.server.browser()
        let cancelled = try crossSite.postForm("/oauth2/upstream/callback", [("error", "user_cancelled_authorize"), ("state", state)])
        #expect(cancelled.status == 400)
        #expect(cancelled.text.contains("Signing in with Apple was cancelled."))
        #expect(cancelled.text.contains("href=\"/v1/auth/zevid/signin?request="))
        world.fake.answers(world.identity(email: "x-\(UUID().uuidString)@example.com"))
        let late = try browser.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(state)"), ("state", state)]))
        #expect(late.status == 400)
        #expect(late.text.contains("That sign-in link was already used. Try again."))
        // A GET error answer too, and a failure of the provider's token endpoint is a page, not a 500.
        let second = try world.start(browser)
        let denied = try browser.get("/oauth2/upstream/callback?error=access_denied&state=\(second)")
        #expect(denied.text.contains("Signing in with Apple was cancelled."))
        let third = try world.start(browser)
        world.fake.fails(.signature)
        let failed = try browser.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(third)"), ("state", third)]))
        #expect(failed.status == 502)
        #expect(failed.text.contains("Signing in with Apple did not work."))
        #expect(!world.server.log.all.joined(separator: "\n").contains(third))
    }

    @Test(arguments: ["", "not-a-state", String(repeating: "a", count: 5000)])
    func aBadStateIsRefused(state: String) throws {
        let world = try World()
        let browser = world.server.browser()
        _ = try world.start(browser)
        let answer = try browser.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-x"), ("state", state)]))
        #expect(answer.status == 400)
        #expect(answer.text.contains("That sign-in link is not valid. Try again."))
        let posted = try world.server.browser().postForm("/oauth2/upstream/callback", [("code", "code-x"), ("state", state)])
        #expect(posted.status == 400)
    }

    @Test func aUsedStateIsRefusedAndAFormPostParksOnce() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        world.fake.answers(world.identity(email: "u-\(UUID().uuidString.lowercased())@example.com"))
        #expect(try world.formPost(browser, state: state).status == 303)
        let replay = try browser.get("/oauth2/upstream/callback?state=\(state)")
        #expect(replay.status == 400)
        #expect(replay.text.contains("That sign-in link was already used. Try again."))
        let reposted = try world.server.browser().postForm("/oauth2/upstream/callback", [("code", "code-\(state)"), ("state", state)])
        #expect(reposted.status == 400)
    }

    @Test func anExpiredStateIsRefused() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        world.fake.answers(world.identity(email: "e-\(UUID().uuidString.lowercased())@example.com"))
        world.clock.advance(by: 601)
        let late = try browser.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(state)"), ("state", state)]))
        #expect(late.status == 400)
        #expect(late.text.contains("That sign-in link has expired. Try again."))
    }

    @Test func anotherBrowserCannotFinishTheFlow() throws {
        let world = try World()
        let browser = world.server.browser()
        let state = try world.start(browser)
        world.fake.answers(world.identity(email: "o-\(UUID().uuidString.lowercased())@example.com"))
        // Login CSRF: the attacker's own code and state, fed to another browser, sign nobody in.
        let victim = world.server.browser()
        _ = try world.start(victim)
        let answer = try victim.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(state)"), ("state", state)]))
        #expect(answer.status == 400)
        #expect(answer.text.contains("This sign-in was started in another browser."))
        #expect(victim.cookies["zevid_session"] == nil)
        // The flow is still the starting browser's.
        #expect(
            try browser.get("/oauth2/upstream/callback?" + FormURLEncoding.encode([("code", "code-\(state)"), ("state", state)])).status
                == 303)
    }

    @Test func aStartNeedsTheFormsTokenAndAShownProvider() throws {
        let world = try World()
        let browser = world.server.browser()
        let (_, fields) = try world.continueWithApple(browser)
        let wrongCSRF = fields.map { $0.0 == "csrf" ? ("csrf", "forged") : $0 }
        #expect(try browser.postForm("/oauth2/upstream/start", wrongCSRF).status == 403)
        let unknown = fields.map { $0.0 == "provider" ? ("provider", "nobody") : $0 }
        let refused = try browser.postForm("/oauth2/upstream/start", unknown)
        #expect(refused.status == 400)
        #expect(refused.text.contains("That way to sign in is not available here."))
    }

    @Test func unlinkingNeedsAnotherWayToSignIn() throws {
        let world = try World()
        let browser = world.server.browser()
        let email = "solo-\(UUID().uuidString.lowercased())@example.com"
        world.fake.answers(world.identity(email: email))
        let back = try world.formPost(browser, state: try world.start(browser))
        _ = try world.allow(browser, at: try #require(back.header("location")))
        let account = try browser.get("/account")
        #expect(account.status == 200)
        #expect(account.text.contains("<h2 id=\"linked\">Linked accounts</h2>"))
        #expect(account.text.contains("Unlink Apple"))
        #expect(account.text.contains("Signed in with a linked account"))
        let csrf = try #require(hiddenField("csrf", in: account.text))
        let id = try #require(
            hiddenField("id", in: account.text[account.text.range(of: "/account/upstream/unlink")!.lowerBound...].description))
        let refused = try browser.postForm("/account/upstream/unlink", [("csrf", csrf), ("id", id)])
        #expect(refused.header("location") == "/account?done=unlink_refused#linked")
        #expect(try browser.get("/account?done=unlink_refused").text.contains("it is your only way to sign in"))
        let userID = try #require(try world.user(email: email)).string("id")
        #expect(try world.links(userID: userID) == 1)

        // An account with a password may unlink.
        let owner = world.server.browser()
        world.fake.answers(world.identity(email: world.fixture.email))
        #expect(
            try world.server.store.upstreamSignIn.linkIdentity(
                providerID: world.provider.id, issuer: world.provider.issuer, subject: "s-\(UUID().uuidString)",
                email: "a@privaterelay.appleid.com",
                userID: world.fixture.userID, now: Date(), clientAddress: nil))
        _ = try AccountTests.appSession(
            world.server, owner, clientID: world.fixture.developmentKey, email: world.fixture.email, password: world.fixture.password)
        let page = try owner.get("/account")
        #expect(page.text.contains("a@privaterelay.appleid.com"))
        let ownerID = try #require(
            hiddenField("id", in: page.text[page.text.range(of: "/account/upstream/unlink")!.lowerBound...].description))
        let ownerCSRF = try #require(hiddenField("csrf", in: page.text))
        #expect(try owner.postForm("/account/upstream/unlink", [("csrf", "forged"), ("id", ownerID)]).status == 403)
        let unlinked = try owner.postForm("/account/upstream/unlink", [("csrf", ownerCSRF), ("id", ownerID)])
        #expect(unlinked.header("location") == "/account?done=unlinked#linked")
        #expect(try world.links(userID: world.fixture.userID) == 0)
        #expect(try owner.get("/account").text.contains("A sign-in provider was unlinked"))
    }

    @Test func housekeepingPrunesExpiredFlowsAndConfirmations() throws {
        let world = try World()
        let store = world.server.store.upstreamSignIn
        let old = Date(timeIntervalSince1970: 631_152_000)  // 1990, older than any other test's rows
        let flowID = UUID().uuidString.lowercased()
        try store.createUpstreamFlow(
            UpstreamFlowRecord(
                id: flowID, providerID: world.provider.id, browserBindingHash: "b", sealedNonce: "n", sealedCodeVerifier: "v",
                authorizationRequestID: nil, expiresAt: old, postedCodeSealed: nil, postedName: nil, used: false),
            stateHash: "state-\(flowID)", now: old)
        let confirmationID = UUID().uuidString.lowercased()
        try store.createLinkConfirmation(
            LinkConfirmationRecord(
                id: confirmationID, providerID: world.provider.id, issuer: world.provider.issuer, subject: "s", email: nil,
                userID: world.fixture.userID, authorizationRequestID: nil, createdAt: old, expiresAt: old, used: false),
            tokenHash: "token-\(confirmationID)")
        _ = try world.server.store.pruneExpired(before: old.addingTimeInterval(86_400))
        #expect(try store.upstreamFlow(stateHash: "state-\(flowID)") == nil)
        #expect(try store.linkConfirmation(tokenHash: "token-\(confirmationID)") == nil)
    }

    @Test func anEnrolledAccountStillGivesItsSecondFactorUnderFed() throws {
        let world = try World()
        // Link the fixture account, then enrol TOTP.
        #expect(
            try world.server.store.upstreamSignIn.linkIdentity(
                providerID: world.provider.id, issuer: world.provider.issuer, subject: "totp-subject", email: world.fixture.email,
                userID: world.fixture.userID, now: Date(), clientAddress: nil))
        let owner = world.server.browser()
        _ = try AccountTests.appSession(
            world.server, owner, clientID: world.fixture.developmentKey, email: world.fixture.email, password: world.fixture.password)
        let (_, csrf) = try AccountTests.accountPage(owner)
        let enrol = try owner.postForm("/account/totp/start", [("csrf", csrf)])
        let shown = try #require(TOTPSignInTests.between(enrol.text, "<code class=\"secret\">", "</code>")).replacingOccurrences(
            of: " ", with: "")
        SuiteCapture.secret(shown)
        let secret = try #require(Base32.decode(shown))
        let step = TOTP.step(atUnixSeconds: world.clock.now().timeIntervalSince1970)
        #expect(
            try owner.postForm("/account/totp/confirm", [("csrf", csrf), ("code", TOTP.code(secret: secret, step: step))]).status == 200)

        let browser = world.server.browser()
        let state = try world.start(browser)
        world.fake.answers(world.identity(subject: "totp-subject", email: world.fixture.email))
        let back = try world.formPost(browser, state: state)
        let mfa = try #require(back.header("location"))
        #expect(mfa.hasPrefix("/v1/auth/zevid/mfa?challenge="))
        #expect(browser.cookies["zevid_session"] == nil)
        world.clock.advance(by: 30)
        let passed = try TOTPSignInTests.submitCode(browser, at: mfa, TOTP.code(secret: secret, step: step + 1))
        #expect(passed.header("location")?.hasPrefix("/v1/auth/zevid/consent?request=") == true)
        #expect(try Self.sessionAMR(userID: world.fixture.userID).last == "fed otp mfa")
    }
}
