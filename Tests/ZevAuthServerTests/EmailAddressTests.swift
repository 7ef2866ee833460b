import Authorize
import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The account email rule (docs/protocol.md, "Email addresses"): NFKC case-folded local part, IDNA A-label
/// domain; refusals are the field's 400.
@Suite struct EmailAddressTests {
    @Test(arguments: [
        ("Ada@Bücher.example", "ada@xn--bcher-kva.example"),
        ("ada@xn--bcher-kva.example", "ada@xn--bcher-kva.example"),
        ("ａda@bücher.example", "ada@xn--bcher-kva.example"),
        ("ADA@BÜCHER.EXAMPLE", "ada@xn--bcher-kva.example"),
        ("ada@bu\u{308}cher.example", "ada@xn--bcher-kva.example"),  // decomposed ü
        ("Straße@example.com", "strasse@example.com"),  // full case folding
        ("ﬁ@example.com", "fi@example.com"),  // compatibility ligature
        ("ＡＢＣ@ＥＸＡＭＰＬＥ.com", "abc@example.com"),  // fullwidth in both parts
        ("  Pat@Example.COM ", "pat@example.com"),
        ("ada@bücher\u{3002}example", "ada@xn--bcher-kva.example"),  // ideographic full stop separates labels
        ("δοκιμή@παράδειγμα.δοκιμή", "δοκιμη\u{301}@xn--hxajbheg2az3al.xn--jxalpdlp"),
    ])
    func normalisesToOneKey(typed: String, key: String) throws {
        let address = try #require(EmailAddress(typed))
        #expect(address.key == key.precomposedStringWithCompatibilityMapping, "\(typed)")
        #expect(address.typed == typed.trimmingCharacters(in: .whitespaces))
    }

    @Test func theThreeSpellingsOfOneMailboxShareTheKey() {
        let keys = ["Ada@Bücher.example", "ada@xn--bcher-kva.example", "ａda@bücher.example"].map { EmailAddress($0)?.key }
        #expect(Set(keys).count == 1)
        #expect(keys[0] == "ada@xn--bcher-kva.example")
    }

    @Test(arguments: [
        "a@exa_mple.com", "a@exa\u{FF3F}mple.com", "a@exa+mple.com", "a@⑴.example",  // STD3: LDH only, after mapping
        "a@-bad.example",  // leading hyphen
        "a@bad-.example",  // trailing hyphen
        "a@ab--cd.example",  // hyphens in the third and fourth positions
        "a@xn--a.example",  // malformed punycode
        "a@☃.example",  // a symbol IDNA2008 disallows
        "a@\(String(repeating: "x", count: 64)).example",  // label over 63 bytes
        "a@ex ample.com", "a@exam\u{0}ple.com", "a\u{0}b@example.com", "a\u{7}@example.com",  // space, NUL, BEL
        "a\u{200B}b@example.com",  // invisible format character
        "z\u{34F}w@x.example", "zw\u{FE0F}@x.example", "\u{3164}zw@x.example", "a\u{AD}b@example.com",  // default-ignorable
        "a\u{180B}b@example.com", "a@exa\u{AD}mple.com", "a@exa\u{34F}mple.com", "a@example.com\u{FE0F}",
        "a@example", "a@.example.com", "a@example.com.", "a@example..com", "@example.com", "a@", "a", "a@b@example.com",
        "a@10.0.0.1",
        "",
    ])
    func refusesAddressesTheRuleDoesNotAccept(typed: String) {
        #expect(EmailAddress(typed) == nil, "\(typed.debugDescription) must be refused")
    }
}

/// A refusal names the side of the address that is wrong, and never talks about the domain for a bad local part.
@Suite struct EmailRefusalMessageTests {
    @Test(arguments: [
        ("a\u{200B}b@example.com", EmailAddress.Problem.localPart), ("z\u{34F}w@x.example", .localPart),
        ("a\u{AD}b@example.com", .localPart), ("a b@example.com", .localPart), ("a@exa\u{AD}mple.com", .domain),
        ("a@☃.example", .domain), ("a@example", .domain), ("a@b@example.com", .shape), ("@example.com", .shape),
    ])
    func parseSaysWhichSideIsRefused(typed: String, problem: EmailAddress.Problem) {
        #expect(EmailAddress.parse(typed) == .failure(problem), "\(typed.debugDescription)")
    }

    @Test func anInvisibleLocalPartIsRefusedOverHTTPWithoutMentioningTheDomain() throws {
        let server = try TestServer()
        let driver = SessionDriver(server: server, fixture: try Fixture.make(store: server.store))
        let tag = UUID().uuidString.prefix(8).lowercased()
        let plain = try driver.sendJSON(
            "POST", "/v1/admin/users", bearer: TestServer.operatorToken,
            ["email": "zw\(tag)@x.example", "password": "a long enough password", "name": "Z"])
        #expect(plain.status == 201)
        for invisible in ["\u{34F}", "\u{FE0F}", "\u{3164}", "\u{200B}", "\u{AD}"] {
            let response = try driver.sendJSON(
                "POST", "/v1/admin/users", bearer: TestServer.operatorToken,
                ["email": "z\(invisible)w\(tag)@x.example", "password": "a long enough password", "name": "Z"])
            #expect(response.status == 400, "\(invisible.unicodeScalars.first!.value): \(response.text)")
            #expect(response.json["error"] as? String == "invalid_request")
            let description = response.json["error_description"] as? String ?? ""
            #expect(description.hasPrefix("email must be an email address whose local part"), "\(description)")
            #expect(!description.contains("domain"), "\(description)")
        }
    }
}

/// One mailbox is one account over HTTP: sign-up, the operator's user creation and sign-in all meet the same
/// account whichever spelling is typed; the account shows the first spelling.
@Suite struct EmailSpellingsOverHTTPTests {
    static func spellings() -> (first: String, aLabel: String, fullwidth: String) {
        let tag = UUID().uuidString.prefix(8).lowercased()
        return ("Ada.\(tag.uppercased())@Bücher.example", "ada.\(tag)@xn--bcher-kva.example", "ａda.\(tag)@bücher.example")
    }

    @Test func signUpThenTheOperatorAndSignInMeetTheSameAccount() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let (first, aLabel, fullwidth) = Self.spellings()
        let password = "a long enough passphrase \(UUID().uuidString.prefix(6))"
        for secret in [first, aLabel, fullwidth, password] { SuiteCapture.secret(secret) }
        let browser = server.browser()
        let form = try browser.get("/account/signup")
        let signedUp = try browser.postForm(
            "/account/signup",
            [("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "Ada"), ("email", first), ("password", password)])
        #expect(signedUp.status == 200)
        let entered = try browser.postForm(
            "/account/code",
            [
                ("flow", try #require(hiddenField("flow", in: signedUp.text))),
                ("csrf", try #require(hiddenField("csrf", in: signedUp.text))),
                ("code", try Mailbox.code(for: first)),
            ])
        #expect(entered.status == 303)

        let duplicate = try server.client.send(
            "POST", "/v1/admin/users",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: ["email": aLabel, "password": "another passphrase 123", "name": "A"])))
        #expect(duplicate.status == 409)
        #expect(duplicate.json["error"] as? String == "conflict")

        let signIn = SignInDriver(server: server, browser: server.browser())
        let result = try signIn.run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5555/cb", state: "s", pkce: PKCEPair(), email: fullwidth,
            password: password)
        #expect(result.code != nil)
        #expect(try server.store.user(emailNormalized: aLabel)?.email == first)
    }

    @Test func theOperatorsSpellingsAlsoMeetOneAccount() throws {
        let server = try TestServer()
        let (first, aLabel, fullwidth) = Self.spellings()
        for secret in [first, aLabel, fullwidth] { SuiteCapture.secret(secret) }
        let create = { (email: String) throws -> TestResponse in
            try server.client.send(
                "POST", "/v1/admin/users",
                headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: ["email": email, "password": "a passphrase 123", "name": "A"])))
        }
        let created = try create(fullwidth)
        #expect(created.status == 201)
        #expect(created.json["email"] as? String == fullwidth)
        #expect(try create(first).status == 409)
        #expect(try create(aLabel).status == 409)
    }

    @Test(arguments: ["ada@exa_mple.com", "ada@☃.example", "ada@xn--a.example"])
    func anAddressIDNARefusesIsInvalidRequest(email: String) throws {
        let server = try TestServer()
        let response = try server.client.send(
            "POST", "/v1/admin/users",
            headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
            body: Array(try JSONSerialization.data(withJSONObject: ["email": email, "password": "a passphrase 123", "name": "A"])))
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        let description = try #require(response.json["error_description"] as? String)
        #expect(description.hasPrefix("email "))
        #expect(!description.contains(email))

        let browser = server.browser()
        let form = try browser.get("/account/signup")
        let page = try browser.postForm(
            "/account/signup",
            [
                ("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "Ada"), ("email", email),
                ("password", "a passphrase 123"),
            ])
        #expect(page.status == 400)
        #expect(page.text.contains("Enter a valid email address."))

        let signInForm = try browser.get("/account/signin")
        let signIn = try browser.postForm(
            "/account/signin",
            [("csrf", try #require(hiddenField("csrf", in: signInForm.text))), ("email", email), ("password", "a passphrase 123")])
        #expect(signIn.status == 400)
        #expect(signIn.text.contains("Enter a valid email address."))
    }
}

/// A duplicate sign-up or user creation never raises a unique violation, so PostgreSQL's own log never
/// records the normalised address (docs/threat-model.md).
@Suite struct DuplicateEmailLeavesNoDatabaseErrorTests {
    /// The test cluster's log (`scripts/test-postgres.sh` writes it beside the socket named by `host=`).
    static func postgresLog() throws -> String {
        let components = try #require(URLComponents(string: TestDatabase.url))
        let host = try #require(components.queryItems?.first { $0.name == "host" }?.value)
        let data = try #require(FileManager.default.contents(atPath: host + "/postgres.log"), "cannot read \(host)/postgres.log")
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aDuplicateSignUpOrCreationLeavesNoUniqueViolationInThePostgresLog() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let tag = UUID().uuidString.lowercased()
        let email = "dup-\(tag)@example.com"
        SuiteCapture.secret(email)
        let create = {
            try server.client.send(
                "POST", "/v1/admin/users",
                headers: [("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: ["email": email, "password": "a passphrase 123", "name": "A"])))
        }
        #expect(try create().status == 201)
        #expect(try create().status == 409)
        let browser = server.browser()
        let form = try browser.get("/account/signup")
        let page = try browser.postForm(
            "/account/signup",
            [
                ("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "A"), ("email", fixture.email),
                ("password", "a passphrase 123"),
            ])
        #expect(page.status == 200)
        let signUpAgain = try browser.postForm(
            "/account/signup",
            [
                ("csrf", try #require(hiddenField("csrf", in: form.text))), ("name", "A"), ("email", email.uppercased()),
                ("password", "a passphrase 123"),
            ])
        #expect(signUpAgain.status == 200)
        let log = try Self.postgresLog()
        let loggedTheCreation = log.contains(tag)
        let loggedTheSignUp = log.contains(fixture.email)
        #expect(!loggedTheCreation, "PostgreSQL logged the duplicate address of the user creation")
        #expect(!loggedTheSignUp, "PostgreSQL logged the duplicate address of the sign-up")
    }
}

/// Migration 006 recomputes the keys of existing accounts: colliding accounts are neither merged nor deleted,
/// the later ones lose their key (and so cannot sign in), the run completes and names ids, never addresses.
@Suite struct EmailKeyMigrationTests {
    /// A fresh schema migrated to 005, so the test sees only its own rows.
    final class Schema: Sendable {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let pool: PostgresPool
        init() throws {
            let admin = try PostgresConnection(url: TestDatabase.url)
            try admin.query("CREATE SCHEMA \(name)")
            let url = TestDatabase.url + (TestDatabase.url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(name)"
            pool = PostgresPool(url: url, size: 2)
        }
        deinit {
            if let admin = try? PostgresConnection(url: TestDatabase.url) { _ = try? admin.query("DROP SCHEMA \(name) CASCADE") }
        }
    }

    static let sqlDirectory = TestDatabase.repositoryRoot + "/sql"

    /// Inserts an account as a server before migration 006 did: the key was NFC, lower-cased.
    static func insertOldStyle(_ pool: PostgresPool, email: String, createdAt: Double) throws -> String {
        try pool.query(
            """
            INSERT INTO users (email, email_normalized, name, password_hash, password_changed_at, created_at)
            VALUES ($1, $2, 'Old', 'x', to_timestamp($3::float8), to_timestamp($3::float8)) RETURNING id
            """, [email, email.precomposedStringWithCanonicalMapping.lowercased(), String(createdAt)]
        ).rows[0].string("id")
    }

    static func keys(_ pool: PostgresPool) throws -> [String: String?] {
        var keys: [String: String?] = [:]
        for row in try pool.query("SELECT id, email_normalized FROM users").rows {
            keys[try row.string("id")] = .some(row["email_normalized"])
        }
        return keys
    }

    @Test func collidingAccountsKeepTheirRowsAndTheLaterOnesLoseTheKey() throws {
        let schema = try Schema()
        let full = try ServerRunner.migrator(configured: Self.sqlDirectory)
        _ = try Migrator(migrations: full.migrations.filter { $0.version < 6 }).apply(to: schema.pool)
        let first = try Self.insertOldStyle(schema.pool, email: "Ada@Bücher.example", createdAt: 1_000)
        let second = try Self.insertOldStyle(schema.pool, email: "ada@xn--bcher-kva.example", createdAt: 2_000)
        let third = try Self.insertOldStyle(schema.pool, email: "ａda@bücher.example", createdAt: 3_000)
        let other = try Self.insertOldStyle(schema.pool, email: "Pat@Example.com", createdAt: 4_000)

        var notes: [String] = []
        let applied = try full.apply(to: schema.pool) { notes.append($0) }
        #expect(applied.map(\.version) == full.migrations.map(\.version).filter { $0 >= 6 })
        var keys = try Self.keys(schema.pool)
        #expect(keys.count == 4)
        #expect(keys[first] == .some("ada@xn--bcher-kva.example"))
        #expect(keys[second] == .some(nil))
        #expect(keys[third] == .some(nil))
        #expect(keys[other] == .some("pat@example.com"))
        let report = notes.joined(separator: "\n")
        #expect(report.contains(first) && report.contains(second) && report.contains(third))
        #expect(!report.contains("@"), "the report names addresses: \(report)")

        // Idempotent: nothing changes, and the unresolved collision is named again.
        notes = []
        #expect(try full.apply(to: schema.pool) { notes.append($0) }.isEmpty)
        #expect(try Self.keys(schema.pool) == keys)
        #expect(notes.joined().contains(second))

        // The operator resolves it for the later account: closing the holder hands the key to the earliest
        // open account on the next run.
        try schema.pool.query("UPDATE users SET closed_at = now() WHERE id = $1", [first])
        notes = []
        _ = try full.apply(to: schema.pool) { notes.append($0) }
        keys = try Self.keys(schema.pool)
        #expect(keys[first] == .some(nil))
        #expect(keys[second] == .some("ada@xn--bcher-kva.example"))
        #expect(keys[third] == .some(nil))
        #expect(notes.joined().contains(third))
        // A row an instance of the previous release wrote after the migration (rule 0) is recomputed on the
        // next run; it collides, so it is left without a key too.
        let late = try Self.insertOldStyle(schema.pool, email: "ADA@bücher.example", createdAt: 5_000)
        notes = []
        _ = try full.apply(to: schema.pool) { notes.append($0) }
        keys = try Self.keys(schema.pool)
        #expect(keys[late] == .some(nil))
        #expect(keys[second] == .some("ada@xn--bcher-kva.example"))
        #expect(notes.joined().contains(late))
        try schema.pool.query("UPDATE users SET closed_at = now() WHERE id = $1", [late])
        // Closing the last keyless account resolves it: nothing left to report.
        try schema.pool.query("UPDATE users SET closed_at = now() WHERE id = $1", [third])
        notes = []
        _ = try full.apply(to: schema.pool) { notes.append($0) }
        #expect(notes.isEmpty)
        #expect(try schema.pool.query("SELECT count(*) AS n FROM users").rows[0].int("n") == 5)
        #expect(try schema.pool.query("SELECT count(*) AS n FROM users WHERE email_key_rule < 1").rows[0].int("n") == 0)
    }
}
