import Authorize
import Crypto
import Encoding
import Fetch
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The native token exchange at `POST /oauth2/token` (RFC 8693; docs/federation.md, "Native Sign in with
/// Apple and Google") against PostgreSQL, with a real OpenID provider (`Tests/Federation/upstream_op.py`)
/// as Apple and as a plain provider, reached through the outbound fetcher.
@Suite(.serialized) struct NativeTokenExchangeTests {
    static let bundleID = "com.acme.NativeApp"

    /// A project whose development environment has an iOS app and shows an Apple and a plain provider.
    struct World {
        let op: UpstreamOP
        let server: TestServer
        let fixture: Fixture
        let clock: ManualClock
        let plainClientID = "native-" + UUID().uuidString.prefix(8).lowercased()

        init() throws {
            op = try UpstreamOP.shared()
            clock = ManualClock(Date())
            let outbound = op.outbound
            server = try TestServer(clock: clock, configure: { $0.outbound = outbound })
            fixture = try Fixture.make(store: server.store)
            try TestDatabase.pool.query(
                """
                INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at)
                SELECT id, 'ios', 'ABCDE12345', $2, now() FROM environments WHERE publishable_key = $1
                """, [fixture.developmentKey, NativeTokenExchangeTests.bundleID])
            let key = try Crypto.SigningKey.generate(.p256)
            let pem =
                "-----BEGIN PRIVATE KEY-----\n"
                + Data(try key.pkcs8()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                + "\n-----END PRIVATE KEY-----\n"
            let apple = try admin(
                "POST", "/v1/admin/providers",
                [
                    "kind": "apple", "slug": "a-" + UUID().uuidString.lowercased().prefix(12), "clientId": "com.acme.signin",
                    "teamId": "ABCDE12345", "keyId": "KEY1234567", "privateKey": pem,
                ])
            let plain = try admin(
                "POST", "/v1/admin/providers",
                [
                    "kind": "oidc", "slug": "p-" + UUID().uuidString.lowercased().prefix(12), "displayName": "Plain OP",
                    "issuer": UpstreamOP.plain, "clientId": plainClientID, "clientSecret": "plain-secret",
                ])
            try admin("PUT", "/v1/admin/projects/\(fixture.projectID)/providers", ["providerIds": [apple["id"]!, plain["id"]!]])
        }

        @discardableResult
        func admin(_ method: String, _ path: String, _ body: [String: Any]) throws -> [String: Any] {
            let response = try server.client.send(
                method, path, headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: body)))
            #expect(response.status < 300, "\(method) \(path): \(response.text)")
            return response.json
        }

        /// Claims of an Apple identity token for the app, at the server's time.
        func appleClaims(sub: String, email: String, nonce: String = "raw-nonce") -> [String: Any] {
            let now = Int(clock.now().timeIntervalSince1970)
            return [
                "iss": UpstreamOP.apple, "aud": NativeTokenExchangeTests.bundleID, "exp": now + 600, "iat": now, "sub": sub,
                "nonce": Crypto.hexSHA256(nonce), "email": email, "email_verified": "true", "is_private_email": "false",
            ]
        }

        func plainClaims(sub: String, email: String) -> [String: Any] {
            let now = Int(clock.now().timeIntervalSince1970)
            return [
                "iss": UpstreamOP.plain, "aud": plainClientID, "exp": now + 600, "iat": now, "sub": sub, "nonce": "raw-nonce",
                "email": email, "email_verified": true,
            ]
        }

        func exchange(_ token: String, nonce: String = "raw-nonce", extra: [(String, String)] = [], clientID: String? = nil) throws
            -> TestResponse
        {
            let fields =
                [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
                    ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"), ("subject_token", token), ("nonce", nonce),
                    ("client_id", clientID ?? fixture.developmentKey),
                ] + extra
            return try server.client.send(
                "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(FormURLEncoding.encode(fields).utf8))
        }
    }

    static func fresh() -> (sub: String, email: String) {
        let id = UUID().uuidString.lowercased()
        return ("00\(id.prefix(8)).apple", "native-\(id)@privaterelay.appleid.com")
    }

    /// The claims of this server's ID token in a token response.
    static func idClaims(_ response: TestResponse) throws -> [String: Any] {
        let token = try #require(response.json["id_token"] as? String)
        let payload = try #require(Base64URL.decodeCanonical(String(token.split(separator: ".")[1])))
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func appleTokenForARegisteredAppSignsInWithFedOnceOnly() throws {
        let world = try World()
        let person = Self.fresh()
        let token = try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: person.email))
        let response = try world.exchange(token)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["token_type"] as? String == "Bearer")
        #expect((response.json["access_token"] as? String)?.hasPrefix("zat_") == true)
        #expect((response.json["refresh_token"] as? String)?.hasPrefix("zrt_") == true)
        #expect(response.json["scope"] as? String == "openid profile email")
        let claims = try Self.idClaims(response)
        #expect(claims["amr"] as? [String] == ["fed"])
        #expect(claims["email"] as? String == person.email)
        #expect(claims["email_verified"] as? Bool == true)
        #expect(claims["aud"] as? String == world.fixture.developmentKey)

        let events = try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM audit_log WHERE action = 'signin.upstream' AND subject_user_id = $1::uuid",
            [try #require(claims["sub"] as? String)]
        ).rows[0]
        #expect(try events.int("n") == 1)

        let replay = try world.exchange(token)
        #expect(replay.status == 400)
        #expect(replay.json["error"] as? String == "invalid_grant")

        let narrowed = try world.exchange(
            try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: person.email).merging(["jti": "2"]) { $1 }),
            extra: [("scope", "openid")])
        #expect(narrowed.status == 200, "\(narrowed.text)")
        #expect(narrowed.json["scope"] as? String == "openid")
        #expect(try Self.idClaims(narrowed)["sub"] as? String == claims["sub"] as? String)
    }

    @Test func refusesANonceThatDoesNotHashAnUnregisteredAppAndForgedTokens() throws {
        let world = try World()
        let person = Self.fresh()
        let claims = world.appleClaims(sub: person.sub, email: person.email)
        var refused: [TestResponse] = []
        // Apple's nonce is the SHA-256 hex of the raw one: sending the digest itself as the raw nonce fails.
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, claims), nonce: Crypto.hexSHA256("raw-nonce")))
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, claims.merging(["aud": "com.evil.app"]) { $1 })))
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, claims, ["alg": "none"])))
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, claims, ["alg": "HS256-public"])))
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, claims, ["tamper": true])))
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.google, claims.merging(["iss": UpstreamOP.google]) { $1 })))
        let expired = claims.merging(["exp": Int(world.clock.now().timeIntervalSince1970) - 301]) { $1 }
        refused.append(try world.exchange(try world.op.mint(UpstreamOP.apple, expired)))
        for response in refused {
            #expect(response.status == 400, "\(response.text)")
            #expect(response.json["error"] as? String == "invalid_grant", "\(response.text)")
        }
        // The token that would have worked, sent correctly: nothing above used it up or made an account.
        #expect(try world.exchange(try world.op.mint(UpstreamOP.apple, claims)).status == 200)
    }

    @Test func aLinkedIdentitySignsInToItsAccountAndAnUnlinkedAddressNeedsTheBrowser() throws {
        let world = try World()
        let person = Self.fresh()
        let first = try world.exchange(try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: person.email)))
        #expect(first.status == 200, "\(first.text)")
        // The same identity with another address still signs in to the account it is linked to.
        let moved = try world.exchange(try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: Self.fresh().email)))
        #expect(moved.status == 200, "\(moved.text)")
        #expect(try Self.idClaims(moved)["sub"] as? String == (try Self.idClaims(first)["sub"] as? String))

        // An account with TOTP cannot give its code here: the browser's sign-in asks for it.
        let accountID = try #require(try Self.idClaims(first)["sub"] as? String)
        try TestDatabase.pool.query(
            "INSERT INTO totp_factors (user_id, secret_sealed, created_at, confirmed_at) VALUES ($1::uuid, 'x', now(), now())", [accountID])
        let withTOTP = try world.exchange(
            try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: person.sub, email: person.email).merging(["jti": "t"]) { $1 }))
        #expect(withTOTP.status == 400)
        #expect(withTOTP.json["error"] as? String == "interaction_required")
        #expect(withTOTP.json["access_token"] == nil)

        // An address that an account already has: nothing is linked silently.
        let taken = try world.exchange(
            try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: Self.fresh().sub, email: world.fixture.email)))
        #expect(taken.status == 400)
        #expect(taken.json["error"] as? String == "interaction_required")
        #expect(taken.json["error_uri"] as? String == world.server.context.configuration.issuer + "/account/signin")
        let links = try TestDatabase.pool.query(
            "SELECT count(*) AS n FROM upstream_identities WHERE user_id = $1::uuid", [world.fixture.userID]
        ).rows[0]
        #expect(try links.int("n") == 0)
    }

    @Test func refusesAnUnknownClientAndOddParameters() throws {
        let world = try World()
        let token = try world.op.mint(UpstreamOP.apple, world.appleClaims(sub: Self.fresh().sub, email: Self.fresh().email))
        let unknown = try world.exchange(token, clientID: "pk_test_unknown")
        #expect(unknown.status == 401)
        #expect(unknown.json["error"] as? String == "invalid_client")
        let odd = try world.server.client.send(
            "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(
                FormURLEncoding.encode([
                    ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
                    ("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), ("subject_token", token),
                    ("nonce", "raw-nonce"), ("client_id", world.fixture.developmentKey),
                ]).utf8))
        #expect(odd.status == 400)
        #expect(odd.json["error"] as? String == "invalid_request")
        let noNonce = try world.server.client.send(
            "POST", "/oauth2/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(
                FormURLEncoding.encode([
                    ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"),
                    ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"), ("subject_token", token),
                    ("client_id", world.fixture.developmentKey),
                ]).utf8))
        #expect(noNonce.json["error"] as? String == "invalid_request")
    }

    @Test func anUnknownKeyIDFetchesTheKeySetAgainAtMostOnceAMinute() throws {
        let world = try World()
        let claims = world.plainClaims(sub: "plain-\(UUID().uuidString)", email: Self.fresh().email)
        #expect(try world.exchange(try world.op.mint(UpstreamOP.plain, claims)).status == 200)
        let base = try world.op.jwksFetches(UpstreamOP.plain)

        let unknown = try world.exchange(try world.op.mint(UpstreamOP.plain, claims.merging(["jti": "a"]) { $1 }, ["kid": "nope"]))
        #expect(unknown.json["error"] as? String == "invalid_grant")
        #expect(try world.op.jwksFetches(UpstreamOP.plain) == base + 1)
        // A rotated key within the minute: the set is not fetched again, and the token is refused.
        let rotated = try #require(try world.op.call("/rotate", ["issuer": UpstreamOP.plain])["kid"] as? String)
        let fresh = try world.op.mint(UpstreamOP.plain, claims.merging(["jti": "b"]) { $1 }, ["kid": rotated])
        #expect(try world.exchange(fresh).json["error"] as? String == "invalid_grant")
        #expect(try world.op.jwksFetches(UpstreamOP.plain) == base + 1)
        // A minute later the unknown kid fetches the set again, which now has the key.
        world.clock.advance(by: 61)
        let later = try world.op.mint(
            UpstreamOP.plain, world.plainClaims(sub: claims["sub"] as! String, email: "x@example.com"), ["kid": rotated])
        let accepted = try world.exchange(later)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(try world.op.jwksFetches(UpstreamOP.plain) == base + 2)
    }

    // MARK: The hosted flow's redemption (UpstreamAuthorityLive.redeem) against the same provider

    /// The SubjectPublicKeyInfo PEM of a P-256 key (RFC 5480: the fixed DER prefix, then `04 ‖ x ‖ y`).
    static func publicPEM(_ key: Crypto.SigningKey) throws -> String {
        guard case .p256(let x, let y) = try key.publicParameters() else { return "" }
        let prefix: [UInt8] = [
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
            0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
        ]
        return "-----BEGIN PUBLIC KEY-----\n" + Data(prefix + x + y).base64EncodedString(options: [.lineLength64Characters])
            + "\n-----END PUBLIC KEY-----\n"
    }

    /// Follows `url` (the provider's authorization endpoint) once through the outbound fetcher and returns
    /// the code of its answer: from the redirect's query, or from Apple's self-submitting form.
    static func code(at url: String, op: UpstreamOP) throws -> String {
        let components = try #require(URLComponents(string: url))
        let fetched = HTTPSFetcher(configuration: op.outbound).send(
            .get, host: try #require(components.host), path: components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? ""),
            maxBytes: 65_536)
        guard case .success(let response) = fetched else { throw UpstreamOPUnavailable(reason: "no answer from /authorize") }
        if let location = response.redirectLocation {
            return try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
        }
        let page = String(decoding: response.body, as: UTF8.self)
        let marker = try #require(page.range(of: "name=\"code\" value=\""))
        return String(page[marker.upperBound...].prefix { $0 != "\"" })
    }

    @Test func redeemsCodesAtGoogleWithBasicAndAtAppleWithTheMintedSecret() throws {
        let world = try World()
        let callback = "https://zevauth.test/oauth2/upstream/callback"
        let verifier = "v-" + UUID().uuidString + UUID().uuidString
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        let person = Self.fresh()

        let googleClient = "g-\(UUID().uuidString.prefix(8)).apps.googleusercontent.com"
        let google = try world.admin(
            "POST", "/v1/admin/providers",
            [
                "kind": "google", "slug": "g-" + UUID().uuidString.lowercased().prefix(12), "clientId": googleClient,
                "clientSecret": "g-secret",
            ])
        try world.op.call(
            "/clients", ["issuer": UpstreamOP.google, "client_id": googleClient, "client_secret": "g-secret", "redirect_uris": [callback]])
        try world.op.call("/next-user", ["issuer": UpstreamOP.google, "sub": person.sub, "email": person.email, "email_verified": true])
        let googleID = try #require(google["id"] as? String)
        let googleRecord = try #require(try world.server.context.tenancy.providers.provider(id: googleID))
        let authority = world.server.context.upstream
        let googleURL = try authority.authorizationURL(
            provider: googleRecord, redirectURI: callback, state: "s1", nonce: "n-google", codeChallenge: challenge)
        #expect(googleURL.hasPrefix(UpstreamOP.google + "/authorize?"))
        #expect(googleURL.contains("scope=openid%20email%20profile") || googleURL.contains("scope=openid+email+profile"))
        let googleCode = try Self.code(at: googleURL, op: world.op)
        #expect(throws: UpstreamFailure.nonce) {
            try authority.redeem(
                provider: googleRecord, code: try Self.code(at: googleURL, op: world.op), codeVerifier: verifier, redirectURI: callback,
                nonce: "other")
        }
        let identity = try authority.redeem(
            provider: googleRecord, code: googleCode, codeVerifier: verifier, redirectURI: callback, nonce: "n-google")
        #expect(identity.subject == person.sub)
        #expect(identity.email == person.email)
        #expect(identity.emailVerified)
        #expect(throws: UpstreamFailure.tokenEndpoint("invalid_grant")) {
            try authority.redeem(provider: googleRecord, code: googleCode, codeVerifier: verifier, redirectURI: callback, nonce: "n-google")
        }

        // Apple: form_post, and the client secret minted from the provider's .p8 key.
        let key = try Crypto.SigningKey.generate(.p256)
        let pem =
            "-----BEGIN PRIVATE KEY-----\n"
            + Data(try key.pkcs8()).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PRIVATE KEY-----\n"
        let servicesID = "com.acme.signin.\(UUID().uuidString.prefix(8).lowercased())"
        let apple = try world.admin(
            "POST", "/v1/admin/providers",
            [
                "kind": "apple", "slug": "a-" + UUID().uuidString.lowercased().prefix(12), "clientId": servicesID, "teamId": "ABCDE12345",
                "keyId": "KEY1234567", "privateKey": pem,
            ])
        try world.op.call(
            "/clients",
            [
                "issuer": UpstreamOP.apple, "client_id": servicesID, "redirect_uris": [callback], "team_id": "ABCDE12345",
                "key_id": "KEY1234567", "public_key_pem": try Self.publicPEM(key),
            ])
        try world.op.call(
            "/next-user",
            ["issuer": UpstreamOP.apple, "sub": person.sub, "email": person.email, "private_email": true, "name": "Ada Lovelace"])
        let appleID = try #require(apple["id"] as? String)
        let appleRecord = try #require(try world.server.context.tenancy.providers.provider(id: appleID))
        let appleURL = try authority.authorizationURL(
            provider: appleRecord, redirectURI: callback, state: "s2", nonce: "n-apple", codeChallenge: challenge)
        #expect(appleURL.contains("response_mode=form_post"))
        let appleIdentity = try authority.redeem(
            provider: appleRecord, code: try Self.code(at: appleURL, op: world.op), codeVerifier: verifier, redirectURI: callback,
            nonce: "n-apple")
        #expect(appleIdentity.issuer == UpstreamOP.apple)
        #expect(appleIdentity.emailVerified)

        // Apple refuses a secret signed by another key than the one registered.
        try world.op.call(
            "/clients",
            [
                "issuer": UpstreamOP.apple, "client_id": servicesID, "redirect_uris": [callback], "team_id": "ABCDE12345",
                "key_id": "KEY1234567", "public_key_pem": try Self.publicPEM(try Crypto.SigningKey.generate(.p256)),
            ])
        #expect(throws: UpstreamFailure.tokenEndpoint("invalid_client")) {
            try authority.redeem(
                provider: appleRecord, code: try Self.code(at: appleURL, op: world.op), codeVerifier: verifier, redirectURI: callback,
                nonce: "n-apple")
        }
    }
}
