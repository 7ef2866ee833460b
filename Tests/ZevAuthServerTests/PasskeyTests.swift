import CBOR
import Crypto
import Encoding
import Fetch
import Foundation
import Postgres
import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// Passkeys on the hosted pages (docs/passkeys.md), with a software authenticator over HTTP and the real
/// PostgreSQL: creating, listing, signing in (no TOTP, `amr` in the ID token), renaming, removing, and
/// each refusal the contract pins.
@Suite struct PasskeyTests {
    /// A signed-in account browser and what the account page gave it.
    struct Account {
        let setup: OpenIDTests.Setup
        let browser: TestBrowser
        /// The signed-in forms' CSRF.
        let formCSRF: String
        /// The passkey calls' CSRF (`data-csrf`).
        let passkeyCSRF: String
        var server: TestServer { setup.server }
        var rpID: String { "127.0.0.1" }
    }

    static func account(clock: ManualClock, configure: ((inout ServerConfiguration) -> Void)? = nil) throws -> Account {
        let signer = FakeIDTokenSigner()
        let server = try TestServer(clock: clock, configure: configure ?? { _ in }, ports: { $0.idTokenSigner = signer })
        let setup = OpenIDTests.Setup(server: server, fixture: try Fixture.make(store: server.store), signer: signer)
        let browser = server.browser()
        _ = try AccountTests.appSession(
            server, browser, clientID: setup.fixture.developmentKey, email: setup.fixture.email, password: setup.fixture.password)
        let (page, csrf) = try AccountTests.accountPage(browser)
        return Account(setup: setup, browser: browser, formCSRF: csrf, passkeyCSRF: try #require(dataCSRF(page.text)))
    }

    static func dataCSRF(_ html: String) -> String? {
        TOTPSignInTests.between(html, "data-csrf=\"", "\"")
    }

    /// A JSON POST as the page script sends it: `Origin` the issuer unless given.
    static func post(_ browser: TestBrowser, _ server: TestServer, _ path: String, _ body: [String: Any], origin: String? = nil) throws
        -> TestResponse
    {
        var headers = [("Content-Type", "application/json")]
        if let origin = origin ?? Optional(server.issuer), !origin.isEmpty { headers.append(("Origin", origin)) }
        return try browser.send("POST", path, headers: headers, body: Array(try JSONSerialization.data(withJSONObject: body)))
    }

    static func challenge(_ response: TestResponse) throws -> [UInt8] {
        let publicKey = try #require(response.json["publicKey"] as? [String: Any])
        let text = try #require(publicKey["challenge"] as? String)
        return try #require(Base64URL.decodeCanonical(text))
    }

    /// Creates a passkey from the account page; `transports` is the `response.transports` sent, nil to leave
    /// it out. - Returns: the create call's answer.
    @discardableResult
    static func create(
        _ account: Account, _ authenticator: SoftwareAuthenticator, name: String? = nil, transports: Any? = ["internal", "hybrid"],
        credential changes: [(String, Any?)] = []
    ) throws -> TestResponse {
        let options = try post(account.browser, account.server, "/account/passkeys/create/options", ["csrf": account.passkeyCSRF])
        guard options.status == 200 else { return options }
        let publicKey = try #require(options.json["publicKey"] as? [String: Any])
        let user = try #require(publicKey["user"] as? [String: Any])
        let handle = try #require(user["id"] as? String)
        authenticator.userHandle = try #require(Base64URL.decodeCanonical(handle))
        let made = try authenticator.attestation(challenge: try challenge(options))
        var response: [String: Any] = [
            "clientDataJSON": Base64URL.encode(made.clientDataJSON), "attestationObject": Base64URL.encode(made.attestationObject),
        ]
        if let transports { response["transports"] = transports }
        var credential: [String: Any] = [
            "id": Base64URL.encode(authenticator.credentialID), "rawId": Base64URL.encode(authenticator.credentialID),
            "type": "public-key", "response": response,
        ]
        for (member, value) in changes { credential[member] = value }
        var body: [String: Any] = ["csrf": account.passkeyCSRF, "credential": credential]
        if let name { body["name"] = name }
        return try post(account.browser, account.server, "/account/passkeys/create", body)
    }

    /// The assertion body for `challenge`.
    static func assertionBody(
        _ authenticator: SoftwareAuthenticator, challenge: [UInt8], csrf: String, request: String?, origin: String? = nil, uv: Bool = true
    ) throws -> [String: Any] {
        let signed = try authenticator.assertion(challenge: challenge, origin: origin, uv: uv)
        var body: [String: Any] = [
            "csrf": csrf,
            "credential": [
                "id": Base64URL.encode(authenticator.credentialID), "rawId": Base64URL.encode(authenticator.credentialID),
                "type": "public-key",
                "response": [
                    "clientDataJSON": Base64URL.encode(signed.clientDataJSON),
                    "authenticatorData": Base64URL.encode(signed.authenticatorData), "signature": Base64URL.encode(signed.signature),
                    "userHandle": Base64URL.encode(authenticator.userHandle),
                ],
            ] as [String: Any],
        ]
        if let request { body["request"] = request }
        return body
    }

    /// An app sign-in page (`scope=openid`) in a new browser: the browser, its PKCE pair, the pending
    /// sign-in and the page's passkey CSRF.
    static func appSignInPage(_ account: Account) throws -> (
        browser: TestBrowser, pkce: PKCEPair, request: String, csrf: String, page: TestResponse
    ) {
        let browser = account.server.browser()
        let pkce = PKCEPair()
        let start = try browser.get(
            startTarget([
                ("client_id", account.setup.fixture.developmentKey), ("redirect_uri", OpenIDTests.redirect), ("state", "s"),
                ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"), ("scope", "openid"), ("nonce", "n"),
            ]))
        let page = try browser.get(try #require(start.header("location")))
        #expect(page.status == 200)
        return (browser, pkce, try #require(hiddenField("request", in: page.text)), try #require(dataCSRF(page.text)), page)
    }

    /// Signs in to the app with the passkey. - Returns: the sign-in call's answer, and the browser.
    static func passkeySignIn(_ account: Account, _ authenticator: SoftwareAuthenticator, origin: String? = nil) throws -> (
        TestResponse, TestBrowser, PKCEPair
    ) {
        let app = try appSignInPage(account)
        let options = try post(app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": app.request])
        #expect(options.status == 200)
        let body = try assertionBody(authenticator, challenge: try challenge(options), csrf: app.csrf, request: app.request, origin: origin)
        return (try post(app.browser, account.server, "/account/passkeys/signin", body), app.browser, app.pkce)
    }

    /// Consent → code → exchange; the ID token's claims.
    static func finish(_ account: Account, _ browser: TestBrowser, _ pkce: PKCEPair, at location: String) throws -> [String: Any] {
        let consent = try browser.get(location)
        #expect(consent.status == 200)
        let allowed = try browser.postForm(
            "/v1/auth/zevid/consent",
            [
                ("request", try #require(hiddenField("request", in: consent.text))),
                ("csrf", try #require(hiddenField("csrf", in: consent.text))), ("decision", "allow"),
            ])
        let location = try #require(allowed.header("location"))
        let code = try #require(queryItems(of: location)["code"])
        let exchanged = try OpenIDTests.nativeExchange(account.setup, (code, pkce))
        #expect(exchanged.status == 200)
        let session = try #require(exchanged.json["session"] as? [String: Any])
        return try #require(DecodedJWT(session["idToken"] as? String)).claims
    }

    static func activity(_ userID: String) throws -> [String] {
        try TestDatabase.pool.query("SELECT action FROM audit_log WHERE subject_user_id = $1 ORDER BY at, id", [userID]).rows.map {
            try $0.string("action")
        }
    }

    static func outbox(_ userID: String, kind: String) throws -> Int {
        try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM email_outbox WHERE user_id = $1 AND kind = $2", [userID, kind]
        ).rows[0].int("n")
    }

    // MARK: The journey

    @Test func createsListsSignsInRenamesAndRemoves() throws {
        let clock = ManualClock()
        let account = try Self.account(clock: clock)
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        let synced = try SoftwareAuthenticator(
            rpID: account.rpID, origin: account.server.issuer, synced: true, signCount: 0,
            aaguid: Array(hex: "fbfc3007154e4ecc8c0b6e020557d7bd"))
        let created = try Self.create(account, device, name: "Work laptop")
        #expect(created.status == 201)
        #expect(created.json["redirect"] as? String == "/account#passkeys")
        #expect(created.header("cache-control") == "no-store")
        #expect(try Self.create(account, synced).status == 201)

        // Listed with name, provider, and synced or device-bound.
        let (page, _) = try AccountTests.accountPage(account.browser)
        #expect(page.text.contains("<section id=\"passkeys\""))
        #expect(page.text.contains("<strong>Work laptop</strong>"))
        #expect(page.text.contains("Passkey · This device only"))
        #expect(page.text.contains("<strong>iCloud Keychain</strong>"))
        #expect(page.text.contains("iCloud Keychain · Synced"))
        #expect(page.text.contains("id=\"passkey-create\" hidden"))
        #expect(page.header("content-security-policy")?.contains("script-src 'self'; connect-src 'self'") == true)
        #expect(page.text.contains("<script src=\"/account/static/passkeys.js\" defer></script>"))

        // Signing in skips TOTP even when enrolled; amr hwk for the device-bound passkey.
        try TestDatabase.pool.query(
            """
            INSERT INTO totp_factors (user_id, secret_sealed, created_at, confirmed_at) VALUES ($1, 'x', now(), now())
            """, [account.setup.fixture.userID])
        let (answer, browser, pkce) = try Self.passkeySignIn(account, device)
        #expect(answer.status == 200)
        let next = try #require(answer.json["redirect"] as? String)
        #expect(next.hasPrefix("/v1/auth/zevid/consent?request="))
        let claims = try Self.finish(account, browser, pkce, at: next)
        #expect(claims["amr"] as? [String] == ["hwk", "user", "mfa"])
        let (syncedAnswer, syncedBrowser, syncedPKCE) = try Self.passkeySignIn(account, synced)
        let syncedClaims = try Self.finish(account, syncedBrowser, syncedPKCE, at: try #require(syncedAnswer.json["redirect"] as? String))
        #expect(syncedClaims["amr"] as? [String] == ["swk", "user", "mfa"])

        // Rename.
        let ids = try TestDatabase.pool.query(
            "SELECT id FROM passkey_credentials WHERE user_id = $1 ORDER BY created_at, id", [account.setup.fixture.userID]
        ).rows.map { try $0.string("id") }
        #expect(ids.count == 2)
        let renamed = try account.browser.postForm(
            "/account/passkeys/rename", [("csrf", account.formCSRF), ("id", ids[0]), ("name", "Home desktop")])
        #expect(renamed.status == 303)
        #expect(try AccountTests.accountPage(account.browser).page.text.contains("<strong>Home desktop</strong>"))
        #expect(
            try account.browser.postForm("/account/passkeys/rename", [("csrf", account.formCSRF), ("id", ids[0]), ("name", "")]).status
                == 400)

        // Remove with a recent sign-in, then with an old one: the password is needed.
        let removed = try account.browser.postForm("/account/passkeys/remove", [("csrf", account.formCSRF), ("id", ids[0])])
        #expect(removed.status == 303)
        clock.advance(by: 11 * 60)
        let refused = try account.browser.postForm("/account/passkeys/remove", [("csrf", account.formCSRF), ("id", ids[1])])
        #expect(refused.status == 401)
        #expect(refused.text.contains("Enter your current password to remove a passkey."))
        let confirmed = try account.browser.postForm(
            "/account/passkeys/remove", [("csrf", account.formCSRF), ("id", ids[1]), ("password", account.setup.fixture.password)])
        #expect(confirmed.status == 303)
        #expect(try account.server.store.passkeys.passkeyCount(userID: account.setup.fixture.userID) == 0)

        let events = try Self.activity(account.setup.fixture.userID)
        #expect(events.filter { $0 == "passkey.create" }.count == 2)
        #expect(events.filter { $0 == "signin.passkey" }.count == 2)
        #expect(events.filter { $0 == "passkey.remove" }.count == 2)
        #expect(try Self.outbox(account.setup.fixture.userID, kind: "passkey_removed") == 2)
    }

    /// `response.transports` is a hint (WebAuthn Level 3 §5.2.1 `getTransports()`): missing, null, empty,
    /// not a list, or only unknown values, the passkey is created with none and listed.
    @Test func createsAPasskeyWithoutTransports() throws {
        let account = try Self.account(clock: ManualClock())
        let shapes: [Any?] = [nil, NSNull(), [String](), "internal", ["bluetooth-le", "", "USB"]]
        for shape in shapes {
            let authenticator = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
            let created = try Self.create(account, authenticator, transports: shape)
            #expect(created.status == 201, "transports \(String(describing: shape))")
        }
        let listed = try account.server.store.passkeys.passkeys(userID: account.setup.fixture.userID)
        #expect(listed.count == shapes.count)
        #expect(listed.allSatisfy { $0.transports.isEmpty })
        let options = try Self.post(
            account.browser, account.server, "/account/passkeys/create/options", ["csrf": account.passkeyCSRF])
        let excluded = try #require((options.json["publicKey"] as? [String: Any])?["excludeCredentials"] as? [[String: Any]])
        #expect(excluded.count == shapes.count)
        #expect(excluded.allSatisfy { ($0["transports"] as? [String]) == [] })
    }

    /// An Ed25519 key of small order would accept R = identity, S = 0 for a share of messages (RFC 8032
    /// §5.1.7 checks no order): creating a passkey with one is refused, and such a key planted in the
    /// database is refused when read back, so the forged sign-in fails.
    @Test func refusesSmallOrderEd25519KeysSoAForgedSignInFails() throws {
        let account = try Self.account(clock: ManualClock())
        let high = String(repeating: "ff", count: 30) + "7f"
        let keys = [
            "01" + String(repeating: "00", count: 31), "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", "ec" + high, "ef" + high,
        ]
        for key in keys {
            let authenticator = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
            authenticator.attestedKey = .ed25519(x: Array(hex: key))
            let created = try Self.create(account, authenticator)
            #expect(created.status == 400, "key \(key)")
            #expect(created.json["error"] as? String == "passkey_invalid")

            let app = try Self.appSignInPage(account)
            let options = try Self.post(
                app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": app.request])
            let planted = try #require(CBOR.encode(COSEKey.ed25519(x: Array(hex: key)).cbor))
            try TestDatabase.pool.query(
                """
                INSERT INTO passkey_credentials (credential_id, user_id, public_key, sign_count, aaguid, backup_eligible,
                    backed_up, attestation_format, name, created_at)
                VALUES (decode($1, 'hex'), $2, decode($3, 'hex'), 0, decode(repeat('00', 16), 'hex'), false, false, 'none',
                    'Planted', now())
                """,
                [Crypto.hex(authenticator.credentialID), account.setup.fixture.userID, Crypto.hex(planted)])
            var body = try Self.assertionBody(authenticator, challenge: try Self.challenge(options), csrf: app.csrf, request: app.request)
            var credential = try #require(body["credential"] as? [String: Any])
            var response = try #require(credential["response"] as? [String: Any])
            response["signature"] = Base64URL.encode([1] + [UInt8](repeating: 0, count: 63))
            credential["response"] = response
            body["credential"] = credential
            let forged = try Self.post(app.browser, account.server, "/account/passkeys/signin", body)
            #expect(forged.status == 400)
            #expect(forged.json["error"] as? String == "passkey_invalid")
        }
        #expect(try account.server.store.passkeys.passkeyCount(userID: account.setup.fixture.userID) == keys.count)
    }

    /// `credential.type` must be "public-key" and `credential.id` the base64url of `rawId` (WebAuthn Level 3
    /// §5.1), when creating and when signing in.
    @Test func theCredentialsTypeAndIDAreChecked() throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 4_000_000_000 + Double(Int.random(in: 0..<1_000_000)) * 900))
        let account = try Self.account(clock: clock, configure: { $0.rateLimits.passwordPerAddress = 100 })
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        let id = Base64URL.encode(device.credentialID)
        let changes: [(String, Any?)] = [
            ("type", "password"), ("type", nil), ("type", ["public-key"]), ("id", Base64URL.encode(try Crypto.randomBytes(16))),
            ("id", nil), ("id", id + "="), ("id", id.uppercased()),
        ]
        for change in changes {
            let created = try Self.create(account, device, credential: [change])
            #expect(created.status == 400, "\(change)")
            #expect(created.json["error"] as? String == "passkey_invalid")
        }
        #expect(try Self.create(account, device).status == 201)

        for change in changes {
            let app = try Self.appSignInPage(account)
            let options = try Self.post(
                app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": app.request])
            var body = try Self.assertionBody(device, challenge: try Self.challenge(options), csrf: app.csrf, request: app.request)
            var credential = try #require(body["credential"] as? [String: Any])
            credential[change.0] = change.1
            body["credential"] = credential
            let answer = try Self.post(app.browser, account.server, "/account/passkeys/signin", body)
            #expect(answer.status == 400, "\(change)")
            #expect(answer.json["error"] as? String == "passkey_invalid")
        }
        #expect(try Self.passkeySignIn(account, device).0.status == 200)
    }

    /// Both options calls read `request` as the ceremonies do: an object, a number or a string that is no
    /// pending sign-in's id is 400 `invalid_request`; absent, empty or a pending sign-in's id is fine.
    @Test func theOptionsCallsRefuseAMalformedRequest() throws {
        let account = try Self.account(clock: ManualClock())
        let app = try Self.appSignInPage(account)
        let malformed: [Any] = [["id": app.request], 5, "not-a-request", app.request + "x", [app.request]]
        for value in malformed {
            let signIn = try Self.post(
                app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": value])
            #expect(signIn.status == 400, "\(value)")
            #expect(signIn.json["error"] as? String == "invalid_request")
            let create = try Self.post(
                account.browser, account.server, "/account/passkeys/create/options", ["csrf": account.passkeyCSRF, "request": value])
            #expect(create.status == 400, "\(value)")
            #expect(create.json["error"] as? String == "invalid_request")
        }
        for value in ["", app.request] {
            #expect(
                try Self.post(app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": value]).status
                    == 200)
            #expect(
                try Self.post(
                    account.browser, account.server, "/account/passkeys/create/options", ["csrf": account.passkeyCSRF, "request": value]
                ).status == 200)
        }
    }

    @Test func servesTheScriptFromThisOrigin() throws {
        let account = try Self.account(clock: ManualClock())
        let script = try account.browser.get("/account/static/passkeys.js")
        #expect(script.status == 200)
        #expect(script.header("content-type") == "text/javascript; charset=utf-8")
        #expect(script.text == PasskeyScript.source)
    }

    // MARK: The offer after a sign-up

    /// The code form as the passkey script leaves it on a device that can hold a passkey.
    static func enterCode(_ browser: TestBrowser, page: TestResponse, code: String, capable: Bool) throws -> TestResponse {
        try browser.postForm(
            "/account/code",
            [
                ("flow", try #require(hiddenField("flow", in: page.text))), ("csrf", try #require(hiddenField("csrf", in: page.text))),
                ("passkey_capable", capable ? "1" : "0"), ("code", code),
            ])
    }

    @Test func aSignUpOffersAPasskeyOnceItsCodeIsEntered() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let requestID = try #require(form.fields.first { $0.0 == "request" }?.1)
        let email = EmailFlowTests.unique("signup-offer")
        let page = try EmailFlowTests.signUp(browser, email: email, password: "a long sign-up passphrase", request: requestID)
        // The code page's form carries the field the script sets, and loads the script.
        #expect(page.text.contains("name=\"passkey_capable\" id=\"passkey-capable\" value=\"0\""))
        #expect(page.text.contains("<script src=\"/account/static/passkeys.js\" defer></script>"))
        let entered = try Self.enterCode(browser, page: page, code: try Mailbox.code(for: email), capable: true)
        #expect(entered.status == 303)
        #expect(entered.header("location") == "/account/passkeys/offer?request=\(requestID)")
        let offer = try browser.get(try #require(entered.header("location")))
        #expect(offer.status == 200)
        #expect(offer.text.contains("Create a passkey"))
        // "Not now" goes on to the app's consent.
        let skipped = try browser.postForm(
            "/account/passkeys/offer/skip",
            [
                ("csrf", try #require(hiddenField("csrf", in: offer.text))),
                ("request", try #require(hiddenField("request", in: offer.text))),
            ])
        #expect(skipped.header("location") == "/v1/auth/zevid/consent?request=\(requestID)")
        #expect(try browser.get(try #require(skipped.header("location"))).status == 200)

        // A device that cannot hold one goes straight on.
        let other = server.browser()
        let otherEmail = EmailFlowTests.unique("signup-no-offer")
        let otherPage = try EmailFlowTests.signUp(other, email: otherEmail, password: "a long sign-up passphrase")
        let straight = try Self.enterCode(other, page: otherPage, code: try Mailbox.code(for: otherEmail), capable: false)
        #expect(straight.header("location") == "/account")
    }

    @Test func aCodeThatVerifiesTheAddressAtSignInIsFollowedByTheOffer() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let patched = try server.client.send(
            "PATCH", "/v1/admin/settings",
            headers: [("Authorization", "Bearer \(fixture.developmentSecret)"), ("Content-Type", "application/json")],
            body: Array(#"{"requireVerifiedEmail":true}"#.utf8))
        #expect(patched.status == 200)
        let browser = server.browser()
        let form = try SignInDriver(server: server, browser: browser).reachSignInForm(clientID: fixture.developmentKey)
        let requestID = try #require(form.fields.first { $0.0 == "request" }?.1)
        let page = try browser.postForm("/v1/auth/zevid/signin", form.fields + [("email", fixture.email), ("password", fixture.password)])
        #expect(page.text.contains("Verify your email address"))
        let entered = try Self.enterCode(browser, page: page, code: try Mailbox.code(for: fixture.email), capable: true)
        #expect(entered.header("location") == "/account/passkeys/offer?request=\(requestID)")
    }

    // MARK: Challenges

    @Test func aChallengeIsUsedOnceExpiresAndBelongsToItsBrowser() throws {
        let clock = ManualClock()
        let account = try Self.account(clock: clock)
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        try Self.create(account, device)

        // Replay: the second use of one challenge is refused.
        let app = try Self.appSignInPage(account)
        let options = try Self.post(
            app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf, "request": app.request])
        let challenge = try Self.challenge(options)
        let body = try Self.assertionBody(device, challenge: challenge, csrf: app.csrf, request: app.request)
        let other = try Self.appSignInPage(account)
        // Another browser presenting this browser's challenge (with its own csrf) is refused.
        var stolen = body
        stolen["csrf"] = other.csrf
        stolen["request"] = other.request
        let fromOther = try Self.post(other.browser, account.server, "/account/passkeys/signin", stolen)
        #expect(fromOther.status == 400)
        #expect(fromOther.json["error"] as? String == "passkey_challenge_expired")
        #expect(try Self.post(app.browser, account.server, "/account/passkeys/signin", body).status == 200)
        // The sign-in gave the browser a fresh binding: the old csrf no longer matches, so replay with it is
        // 403; the same body from a browser whose binding is the old one is covered by `fromOther` above.
        let replay = try Self.post(other.browser, account.server, "/account/passkeys/signin", stolen)
        #expect(replay.json["error"] as? String == "passkey_challenge_expired")

        // Replay in one browser: a refused answer uses its challenge up, so the same challenge is refused next.
        let once = try Self.appSignInPage(account)
        let onceOptions = try Self.post(once.browser, account.server, "/account/passkeys/signin/options", ["csrf": once.csrf])
        let onceChallenge = try Self.challenge(onceOptions)
        let unverified = try Self.post(
            once.browser, account.server, "/account/passkeys/signin",
            try Self.assertionBody(device, challenge: onceChallenge, csrf: once.csrf, request: nil, uv: false))
        #expect(unverified.json["error"] as? String == "passkey_not_verified")
        let again = try Self.post(
            once.browser, account.server, "/account/passkeys/signin",
            try Self.assertionBody(device, challenge: onceChallenge, csrf: once.csrf, request: nil))
        #expect(again.status == 400)
        #expect(again.json["error"] as? String == "passkey_challenge_expired")

        // Expiry: 5 minutes, by the injected clock.
        let late = try Self.appSignInPage(account)
        let lateOptions = try Self.post(late.browser, account.server, "/account/passkeys/signin/options", ["csrf": late.csrf])
        clock.advance(by: 301)
        let expired = try Self.post(
            late.browser, account.server, "/account/passkeys/signin",
            try Self.assertionBody(device, challenge: try Self.challenge(lateOptions), csrf: late.csrf, request: nil))
        #expect(expired.status == 400)
        #expect(expired.json["error"] as? String == "passkey_challenge_expired")
        #expect(expired.json["message"] as? String == "The passkey request timed out. Try again.")
    }

    @Test func refusesAnotherOriginAMissingCSRFAndTheWrongSite() throws {
        let account = try Self.account(clock: ManualClock())
        let app = try Self.appSignInPage(account)
        #expect(app.page.text.contains("autocomplete=\"username webauthn\""))
        #expect(
            app.page.text.contains(
                "<button type=\"button\" id=\"passkey-signin\" class=\"secondary\" hidden>Sign in with a passkey</button>"))
        #expect(app.page.text.contains("id=\"passkey-error\" role=\"alert\""))
        #expect(app.page.text.contains("<main id=\"passkey-context\" data-csrf=\""))
        #expect(app.page.text.contains("data-request=\"\(app.request)\""))
        let wrongOrigin = try Self.post(
            app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf], origin: "https://evil.example")
        #expect(wrongOrigin.status == 403)
        #expect(wrongOrigin.json["error"] as? String == "invalid_request")
        let noOrigin = try Self.post(app.browser, account.server, "/account/passkeys/signin/options", ["csrf": app.csrf], origin: "")
        #expect(noOrigin.status == 403)
        let noCSRF = try Self.post(app.browser, account.server, "/account/passkeys/signin/options", [:])
        #expect(noCSRF.status == 403)
        let forged = try Self.post(account.browser, account.server, "/account/passkeys/create/options", ["csrf": "forged"])
        #expect(forged.status == 403)

        // A passkey made for another origin is refused as another site's.
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        try Self.create(account, device)
        let (answer, _, _) = try Self.passkeySignIn(account, device, origin: "https://evil.example")
        #expect(answer.status == 400)
        #expect(answer.json["error"] as? String == "passkey_wrong_site")
        // An unknown credential.
        let stranger = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        stranger.userHandle = device.userHandle
        let (unknown, _, _) = try Self.passkeySignIn(account, stranger)
        #expect(unknown.json["error"] as? String == "passkey_unknown")
        #expect(unknown.json["message"] as? String == "This passkey isn't registered here.")
    }

    // MARK: Limits

    @Test func anAccountHoldsAtMostTwentyPasskeys() throws {
        let account = try Self.account(clock: ManualClock())
        for _ in 0..<20 {
            #expect(
                try Self.create(account, try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: true)).status
                    == 201)
        }
        let over = try Self.create(account, try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: true))
        #expect(over.status == 409)
        #expect(over.json["error"] as? String == "passkey_limit")
        #expect(over.json["message"] as? String == "You already have 20 passkeys. Remove one to add another.")
        // The database refuses a 21st on its own.
        #expect(throws: PostgresError.self) {
            try TestDatabase.pool.query(
                """
                INSERT INTO passkey_credentials (credential_id, user_id, public_key, sign_count, aaguid, backup_eligible, backed_up,
                    attestation_format, name, created_at)
                VALUES ('\\x01020304', $1, '\\x00', 0, decode(repeat('00', 16), 'hex'), true, true, 'none', 'x', now())
                """, [account.setup.fixture.userID])
        }
        let search = try account.server.client.send(
            "POST", "/v1/admin/users/search",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
            body: Array(#"{"email":"\#(account.setup.fixture.email)"}"#.utf8))
        let items = try #require(search.json["items"] as? [[String: Any]])
        #expect(items.first?["passkeys"] as? Int == 20)
    }

    @Test func aCounterThatGoesBackwardsIsRefusedRecordedAndEmailed() throws {
        let account = try Self.account(clock: ManualClock())
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false, signCount: 5)
        try Self.create(account, device)
        let (first, _, _) = try Self.passkeySignIn(account, device)
        #expect(first.status == 200)
        device.signCount = 2
        let (copied, _, _) = try Self.passkeySignIn(account, device)
        #expect(copied.status == 400)
        #expect(copied.json["error"] as? String == "passkey_counter_regressed")
        #expect(try Self.activity(account.setup.fixture.userID).contains("passkey.counter_regressed"))
        #expect(try Self.outbox(account.setup.fixture.userID, kind: "passkey_counter_regressed") == 1)
    }

    @Test func failedPasskeySignInsCountAgainstTheAddressPasswordLimit() throws {
        // A time of its own, so no other test's attempts share this rate-limit window.
        let clock = ManualClock(Date(timeIntervalSince1970: 4_000_000_000 + Double(Int.random(in: 0..<1_000_000)) * 900))
        let account = try Self.account(clock: clock, configure: { $0.rateLimits.passwordPerAddress = 4 })
        // The account's own sign-in used one attempt of the address's 4.
        let stranger = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        stranger.userHandle = [1]
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try Self.passkeySignIn(account, stranger).0.status) }
        #expect(statuses == [400, 400, 400, 429])
        let (limited, _, _) = try Self.passkeySignIn(account, stranger)
        #expect(limited.status == 429)
        #expect(limited.json["error"] as? String == "rate_limited")
        #expect(limited.header("retry-after") != nil)
    }

    @Test func removingAPasskeyIsEmailedThroughTheRelayRecordedAndShownAsActivity() throws {
        let sink = try SMTPSink()
        defer { sink.stop() }
        let account = try Self.account(
            clock: ManualClock(),
            configure: { configuration in
                configuration.mail.smtp = try? SMTPConfiguration(
                    url: sink.url, from: "no-reply@zevauth.test", timeoutMilliseconds: 2_000)
                configuration.mail.outboxDirectory = nil
            })
        let userID = account.setup.fixture.userID
        try Self.create(account, try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false))
        let id = try TestDatabase.pool.query("SELECT id FROM passkey_credentials WHERE user_id = $1", [userID]).rows[0].string("id")
        let removed = try account.browser.postForm("/account/passkeys/remove", [("csrf", account.formCSRF), ("id", id)])
        #expect(removed.header("location") == "/account?done=passkey_removed#passkeys")
        try account.server.context.mail.drain()
        // The sign-in's own notices may arrive first: wait for the removal's.
        let deadline = Date().addingTimeInterval(8)
        var found: ReceivedEmail?
        while found == nil && Date() < deadline {
            found = Mailbox.messages(to: account.setup.fixture.email, in: sink.directory).first {
                $0.header("Subject") == "A passkey was removed"
            }
            if found == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let message = try #require(found)
        #expect(message.body.contains("A passkey was removed from your ZevID account. It can no longer be used to sign in."))
        #expect(message.header("From") == "ZevID <no-reply@zevauth.test>")
        // In the audit log, with the person as subject, and on the account page's activity.
        #expect(try Self.activity(userID).contains("passkey.remove"))
        let (page, _) = try AccountTests.accountPage(account.browser)
        #expect(page.text.contains("Passkey removed"))
    }

    @Test func aPasswordResetKeepsPasskeys() throws {
        let account = try Self.account(clock: ManualClock())
        let device = try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false)
        try Self.create(account, device)
        // "Forgot password?", the emailed code, a new password.
        let email = account.setup.fixture.email
        let browser = account.server.browser()
        let forgot = try browser.get("/account/reset")
        let codePage = try browser.postForm(
            "/account/reset", [("csrf", try #require(hiddenField("csrf", in: forgot.text))), ("email", email)])
        #expect(codePage.status == 200)
        let newPasswordPage = try EmailFlowTests.enter(browser, page: codePage, code: try Mailbox.code(for: email))
        #expect(newPasswordPage.text.contains("Choose a new password"))
        let done = try browser.postForm(
            "/account/reset/password",
            [
                ("flow", try #require(hiddenField("flow", in: newPasswordPage.text))),
                ("csrf", try #require(hiddenField("csrf", in: newPasswordPage.text))), ("new_password", "a brand new passphrase"),
            ])
        #expect(done.status == 303)
        #expect(try Self.activity(account.setup.fixture.userID).contains("password.reset"))
        // The passkey is still there and still signs in.
        #expect(try account.server.store.passkeys.passkeyCount(userID: account.setup.fixture.userID) == 1)
        let (answer, passkeyBrowser, pkce) = try Self.passkeySignIn(account, device)
        #expect(answer.status == 200)
        let claims = try Self.finish(account, passkeyBrowser, pkce, at: try #require(answer.json["redirect"] as? String))
        #expect(claims["amr"] as? [String] == ["hwk", "user", "mfa"])
    }

    @Test func theOperatorsMFAResetKeepsPasskeysAndClosingDeletesThem() throws {
        let account = try Self.account(clock: ManualClock())
        try Self.create(account, try SoftwareAuthenticator(rpID: account.rpID, origin: account.server.issuer, synced: false))
        let reset = try account.server.client.send(
            "POST", "/v1/admin/users/\(account.setup.fixture.userID)/mfa/reset",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)")])
        #expect(reset.status == 200)
        #expect(try account.server.store.passkeys.passkeyCount(userID: account.setup.fixture.userID) == 1)
        // Every admin answer with the account's record counts its passkeys.
        #expect(reset.json["passkeys"] as? Int == 1)
        let closed = try account.server.client.send(
            "POST", "/v1/admin/users/\(account.setup.fixture.userID)/close",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)")])
        #expect(closed.status == 200)
        #expect(try account.server.store.passkeys.passkeyCount(userID: account.setup.fixture.userID) == 0)
        #expect(closed.json["passkeys"] as? Int == 0)
        let created = try account.server.client.send(
            "POST", "/v1/admin/users",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
            body: Array(
                try JSONSerialization.data(withJSONObject: [
                    "email": EmailFlowTests.unique("admin-created"), "password": "a long admin passphrase", "name": "Ada",
                ])))
        #expect(created.status == 201)
        #expect(created.json["passkeys"] as? Int == 0)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from hex digits (fixtures only).
    init(hex text: String) {
        self = stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }
}
