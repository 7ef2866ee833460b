import Authorize
import Foundation
import HTTPServer
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The account area's handlers in process, over `FakeAccounts` (no database): what the person or the
/// operator sees, for the decisions the use cases make (docs/protocol.md#accounts, #session-ends, #admin-api).
@Suite struct AccountHandlerTests {
    let accounts = FakeAccounts()

    func app() -> ZevAuthApp { ZevAuthApp(context: accounts.context()) }

    static func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static func operatorRequest(_ method: String, _ path: String, _ body: String = "") -> HTTPRequest {
        HTTPRequest(
            method: method, path: path,
            headers: HTTPHeaders([("Authorization", "Bearer \(TestServer.operatorToken)"), ("Content-Type", "application/json")]),
            body: Array(body.utf8))
    }

    static func browser(_ method: String, _ path: String, token: String, form: String = "") -> HTTPRequest {
        HTTPRequest(
            method: method, path: path,
            headers: HTTPHeaders([("Cookie", "zevid_session=\(token)"), ("Content-Type", "application/x-www-form-urlencoded")]),
            body: Array(form.utf8))
    }

    /// The CSRF token the account page embeds in its forms.
    static func csrf(_ page: HTTPResponse) throws -> String {
        let html = String(decoding: page.body, as: UTF8.self)
        let marker = "name=\"csrf\" value=\""
        let start = try #require(html.range(of: marker)).upperBound
        return String(html[start...].prefix { $0 != "\"" })
    }

    @Test func theOperatorCreatesAnAccountAndATakenAddressIsAConflict() throws {
        let app = app()
        let created = app.handle(
            Self.operatorRequest("POST", "/v1/admin/users", #"{"email":" Ada@Example.COM ","password":"correct horse","name":"  Ada  "}"#))
        #expect(created.status == 201)
        let body = Self.json(created)
        #expect(body["email"] as? String == "Ada@Example.COM")
        #expect(body["name"] as? String == "Ada")
        #expect((body["id"] as? String)?.isEmpty == false)
        #expect(body["passkeys"] as? Int == 0)
        #expect(body.count == 4)
        let again = app.handle(
            Self.operatorRequest("POST", "/v1/admin/users", #"{"email":"ada@example.com","password":"correct horse","name":"Ada"}"#))
        #expect(again.status == 409)
        #expect(Self.json(again)["error"] as? String == "conflict")
    }

    @Test func theOperatorsFieldsAreParsedOnceWithTheirStandardErrors() throws {
        let app = app()
        let short = app.handle(Self.operatorRequest("POST", "/v1/admin/users", #"{"email":"a@example.com","password":"short","name":"A"}"#))
        #expect(short.status == 400)
        #expect(Self.json(short)["error_description"] as? String == "password must be at least 10 characters.")
        let email = app.handle(Self.operatorRequest("POST", "/v1/admin/users", #"{"email":"a@b","password":"correct horse","name":"A"}"#))
        #expect(email.status == 400)
        #expect((Self.json(email)["error_description"] as? String)?.hasPrefix("email must be an email address") == true)
        let name = app.handle(
            Self.operatorRequest("POST", "/v1/admin/users", #"{"email":"a@example.com","password":"correct horse","name":"a\u202Eb"}"#))
        #expect(name.status == 400)
        #expect(accounts.state.withLock { $0.users.isEmpty })
    }

    @Test func closingAnAccountEndsItsSessionsAndRepeatsTheFirstClosingTime() throws {
        let user = accounts.addUser(email: "pat@example.com", passwordHash: "x")
        let token = accounts.signIn(user)
        let app = app()
        let first = app.handle(Self.operatorRequest("POST", "/v1/admin/users/\(user.id)/close"))
        #expect(first.status == 200)
        let body = Self.json(first)
        #expect(body["id"] as? String == user.id)
        #expect(body["email"] as? String == "pat@example.com")
        #expect(body["name"] as? String == "Pat Person")
        let closedAt = try #require(body["closedAt"] as? String)
        #expect(closedAt.hasSuffix("Z"))
        #expect(Self.json(app.handle(Self.operatorRequest("POST", "/v1/admin/users/\(user.id)/close")))["closedAt"] as? String == closedAt)
        #expect(app.handle(Self.operatorRequest("POST", "/v1/admin/users/\(UUID())/close")).status == 404)
        // The closed account's browser is signed out.
        let page = app.handle(Self.browser("GET", "/account", token: token))
        #expect(page.status == 303)
        #expect(page.headers["Location"] == "/account/signin")
    }

    @Test func signingOutEndsThisBrowsersSessionOnlyWithTheFormsToken() throws {
        let user = accounts.addUser(email: "pat@example.com", passwordHash: "x")
        let token = accounts.signIn(user)
        let other = accounts.signIn(user)
        let app = app()
        let page = app.handle(Self.browser("GET", "/account", token: token))
        #expect(page.status == 200)
        #expect(String(decoding: page.body, as: UTF8.self).contains("pat@example.com"))
        let forged = app.handle(Self.browser("POST", "/account/signout", token: token, form: "csrf=forged"))
        #expect(forged.status == 403)
        #expect(accounts.state.withLock { $0.events }.isEmpty)
        let csrf = try Self.csrf(page)
        let out = app.handle(Self.browser("POST", "/account/signout", token: token, form: "csrf=\(csrf)"))
        #expect(out.status == 303)
        #expect(out.headers["Location"] == "/account/signin?signed_out=1")
        #expect(app.handle(Self.browser("GET", "/account", token: token)).status == 303)
        #expect(app.handle(Self.browser("GET", "/account", token: other)).status == 200)
    }

    @Test func removingAConnectedAppNamesItsEnvironment() throws {
        let user = accounts.addUser(email: "pat@example.com", passwordHash: "x")
        let environment = UUID().uuidString.lowercased()
        accounts.state.withLock {
            $0.connectedApps[user.id] = [
                ConnectedApp(environmentID: environment, projectName: "Acme", environmentKind: .development, liveSessions: 2)
            ]
        }
        let token = accounts.signIn(user)
        let app = app()
        let page = app.handle(Self.browser("GET", "/account", token: token))
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("Acme") && html.contains("(development)") && html.contains("2 active sessions"))
        let removed = app.handle(
            Self.browser("POST", "/account/apps/remove", token: token, form: "csrf=\(try Self.csrf(page))&environment=\(environment)"))
        #expect(removed.headers["Location"] == "/account?done=removed")
        #expect(accounts.state.withLock { $0.events } == ["removeApp \(user.id) \(environment)"])
        #expect(!String(decoding: app.handle(Self.browser("GET", "/account", token: token)).body, as: UTF8.self).contains("Remove Acme"))
    }

    @Test func startingTOTPWithoutAnEncryptionKeySaysSoAndStoresNothing() throws {
        let user = accounts.addUser(email: "pat@example.com", passwordHash: "x")
        let token = accounts.signIn(user)
        var context = accounts.context()
        context = ServerContext(
            configuration: {
                var configuration = context.configuration
                configuration.encryptionKey = nil
                return configuration
            }(), store: context.store, roundTrip: context.roundTrip, tenancy: context.tenancy, accounts: context.accounts,
            passwordHasher: testPasswordHasher, log: CapturingLog())
        let app = ZevAuthApp(context: context)
        let page = app.handle(Self.browser("GET", "/account", token: token))
        let started = app.handle(Self.browser("POST", "/account/totp/start", token: token, form: "csrf=\(try Self.csrf(page))"))
        #expect(started.status == 503)
        #expect(String(decoding: started.body, as: UTF8.self).contains("no encryption key"))
        #expect(accounts.state.withLock { $0.factors.isEmpty })
    }

    @Test func startingTOTPSealsTheSecretAndShowsIt() throws {
        let user = accounts.addUser(email: "pat@example.com", passwordHash: "x")
        let token = accounts.signIn(user)
        let app = app()
        let page = app.handle(Self.browser("GET", "/account", token: token))
        let started = app.handle(Self.browser("POST", "/account/totp/start", token: token, form: "csrf=\(try Self.csrf(page))"))
        #expect(started.status == 200)
        #expect(String(decoding: started.body, as: UTF8.self).contains("otpauth://totp/ZevAuth:pat@example.com?secret="))
        let factor = try #require(accounts.state.withLock { $0.factors[user.id] })
        #expect(!factor.confirmed)
        #expect(Data(base64Encoded: factor.secretSealed)?.count == 12 + 20 + 16)  // nonce ‖ secret ‖ tag
    }
}
