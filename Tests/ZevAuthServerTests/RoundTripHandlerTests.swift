import Authorize
import Foundation
import HTTPServer
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The exchange, refresh, current-session and introspection handlers in process over fake store ports:
/// what the statement reports (its facts) becomes the contract's wire answer (docs/protocol.md#exchange-checks,
/// docs/protocol.md#refresh-checks, docs/protocol.md#current-session, docs/protocol.md#introspect).
@Suite struct RoundTripHandlerTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let session = IssuedSession(
        sessionID: "7d9f1c52-8a31-4a8e-9a43-2f7c1a5e6b10", accessExpiresAt: now.addingTimeInterval(900),
        expiresAt: now.addingTimeInterval(90 * 86_400), idleExpiresAt: now.addingTimeInterval(30 * 86_400),
        user: SessionUser(id: "u-1", email: "ada@example.com", name: "Ada", imageURL: nil))

    static func post(_ path: String, bearer: String?, json: String) -> HTTPRequest {
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        if let bearer { headers.set("Authorization", "Bearer " + bearer) }
        return HTTPRequest(method: "POST", path: path, headers: headers, body: Array(json.utf8))
    }

    static func object(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    static let exchangeBody =
        #"{"code":"hoc_c","redirectUri":"http://127.0.0.1:5000/cb","codeVerifier":"\#(String(repeating: "v", count: 43))"}"#

    @Test func anIssuedSessionIsTheSuccessBody() throws {
        let fake = FakeRoundTripStore(
            exchangeFacts: ExchangeFacts(
                clientKnown: true, code: .won, redirectPresent: true, redirectMatches: true, challengeMatches: true, session: Self.session))
        let response = fake.app().handle(Self.post("/v1/auth/handoff/exchange", bearer: "pk_test_x", json: Self.exchangeBody))
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        let body = Self.object(response)
        let session = try #require(body["session"] as? [String: Any])
        #expect(session["id"] as? String == Self.session.sessionID)
        #expect((session["accessToken"] as? String)?.hasPrefix("zat_") == true)
        #expect((session["refreshToken"] as? String)?.hasPrefix("zrt_") == true)
        #expect(session["tokenType"] as? String == "Bearer")
        #expect(session["expiresIn"] as? Int == 900)
        #expect(session["expiresAt"] as? String == "2027-04-15T08:00:00Z")
        #expect(session["idleExpiresAt"] as? String == "2027-02-14T08:00:00Z")
        let user = try #require(body["user"] as? [String: Any])
        #expect(user["id"] as? String == "u-1")
        #expect(user["email"] as? String == "ada@example.com")
        #expect(user["name"] as? String == "Ada")
        #expect(user["imageUrl"] is NSNull)
        // The verifier reached the store once, as its S256 challenge; the code only as its digest.
        let attempt = try #require(fake.exchangeAttempts.withLock { $0.first })
        #expect(attempt.verifierChallenge?.count == 43)
        #expect(attempt.codeHash != "hoc_c")
        #expect(attempt.failureGate?.bucket == "exchange_failure_address")
    }

    @Test(arguments: [
        (ExchangeFacts(clientKnown: false), 401, "invalid_client"),
        (ExchangeFacts(clientKnown: true), 400, "invalid_grant"),
        (
            ExchangeFacts(
                clientKnown: true, code: .alreadyConsumed(revokedSession: true), redirectPresent: true,
                redirectMatches: true, challengeMatches: true), 400, "invalid_grant"
        ),
        (ExchangeFacts(clientKnown: true, code: .won, redirectPresent: false), 400, "redirect_uri_required"),
        (ExchangeFacts(clientKnown: true, code: .won, redirectPresent: true, challengeMatches: true), 400, "redirect_uri_mismatch"),
        (ExchangeFacts(clientKnown: true, code: .won, redirectPresent: true, redirectMatches: true), 400, "pkce_verification_failed"),
        (
            ExchangeFacts(clientKnown: true, code: .won, redirectPresent: true, redirectMatches: true, challengeMatches: true), 400,
            "invalid_grant"
        ),
        (ExchangeFacts(clientKnown: true, rateLimited: true), 429, "temporarily_unavailable"),
    ])
    func factsBecomeTheContractsAnswer(facts: ExchangeFacts, status: Int, error: String) {
        let fake = FakeRoundTripStore(exchangeFacts: facts)
        let response = fake.app().handle(Self.post("/v1/auth/handoff/exchange", bearer: "pk_test_x", json: Self.exchangeBody))
        #expect(response.status == status)
        #expect(Self.object(response)["error"] as? String == error)
        if status == 401 { #expect(response.headers["WWW-Authenticate"] == "Bearer") }
        if status == 429 { #expect(response.headers["Retry-After"] != nil) }
        // Failed exchanges count against the client address, a 429 does not.
        let counted = fake.counts.withLock { $0["exchange_failure_address 127.0.0.1"] ?? 0 }
        #expect(counted == (status == 429 ? 0 : 1))
    }

    @Test func theStandardTokenEndpointAnswersTheSameGrantInRFCShape() throws {
        let fake = FakeRoundTripStore(
            exchangeFacts: ExchangeFacts(
                clientKnown: true, code: .won, redirectPresent: true, redirectMatches: true, challengeMatches: true, session: Self.session))
        let form =
            "grant_type=authorization_code&client_id=pk_test_x&code=hoc_c&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb&code_verifier="
            + String(repeating: "v", count: 43)
        let response = fake.app().handle(
            HTTPRequest(
                method: "POST", path: "/oauth2/token", headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")]),
                body: Array(form.utf8)))
        #expect(response.status == 200)
        let body = Self.object(response)
        #expect((body["access_token"] as? String)?.hasPrefix("zat_") == true)
        #expect((body["refresh_token"] as? String)?.hasPrefix("zrt_") == true)
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["expires_in"] as? Int == 900)
        // The grant's own statement checks the failure limit.
        #expect(fake.exchangeAttempts.withLock { $0.first?.failureGate?.bucket } == "exchange_failure_address")
    }

    @Test func aRefreshChecksItsLimitInsideTheStatementAndAnswersTheSessionBody() throws {
        let fake = FakeRoundTripStore()
        fake.refreshOutcome.withLock { $0 = .refreshed(Self.session) }
        let response = fake.app().handle(Self.post("/v1/auth/session/refresh", bearer: "pk_test_x", json: #"{"refreshToken":"zrt_old"}"#))
        #expect(response.status == 200)
        #expect((Self.object(response)["session"] as? [String: Any])?["id"] as? String == Self.session.sessionID)
        let attempt = try #require(fake.refreshAttempts.withLock { $0.first })
        #expect(attempt.failureGate?.bucket == "refresh_failure_address")

        fake.refreshOutcome.withLock { $0 = .rateLimited }
        let limited = fake.app().handle(Self.post("/v1/auth/session/refresh", bearer: "pk_test_x", json: #"{"refreshToken":"zrt_old"}"#))
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] != nil)

        fake.refreshOutcome.withLock { $0 = .reauthenticationRequired }
        let expired = fake.app().handle(Self.post("/v1/auth/session/refresh", bearer: "pk_test_x", json: #"{"refreshToken":"zrt_old"}"#))
        #expect(expired.status == 401)
        #expect(Self.object(expired)["error"] as? String == "reauthentication_required")
    }

    @Test func theCurrentSessionAnswersItsWindowsOr401() throws {
        let fake = FakeRoundTripStore()
        let secrets = OpenSSLSecrets()
        fake.sessions.withLock { $0[secrets.digest("zat_live")] = Self.session }
        let app = fake.app()
        let live = app.handle(
            HTTPRequest(method: "GET", path: "/v1/auth/session", headers: HTTPHeaders([("Authorization", "Bearer zat_live")])))
        #expect(live.status == 200)
        let session = try #require(Self.object(live)["session"] as? [String: Any])
        #expect(session["accessTokenExpiresAt"] as? String == "2027-01-15T08:15:00Z")
        #expect(session["expiresAt"] as? String == "2027-04-15T08:00:00Z")
        #expect((Self.object(live)["user"] as? [String: Any])?["email"] as? String == "ada@example.com")
        let unknown = app.handle(
            HTTPRequest(method: "GET", path: "/v1/auth/session", headers: HTTPHeaders([("Authorization", "Bearer zat_other")])))
        #expect(unknown.status == 401)
        #expect(unknown.headers["WWW-Authenticate"] == "Bearer error=\"invalid_token\"")
    }

    @Test func introspectionOfALiveTokenNamesItsSessionAndClient() throws {
        let fake = FakeRoundTripStore()
        let secrets = OpenSSLSecrets()
        fake.environmentsBySecretKeyHash.withLock { $0[secrets.digest("sk_test_key")] = "env-1" }
        fake.introspections.withLock {
            $0["env-1 " + secrets.digest("zat_live")] = IntrospectedToken(
                sessionID: "s-1", userID: "u-1", clientID: "pk_test_x", issuedAt: Self.now, expiresAt: Self.now.addingTimeInterval(900))
        }
        func introspect(_ token: String) -> HTTPResponse {
            fake.app().handle(
                HTTPRequest(
                    method: "POST", path: "/oauth2/introspect",
                    headers: HTTPHeaders([
                        ("Authorization", "Bearer sk_test_key"), ("Content-Type", "application/x-www-form-urlencoded"),
                    ]), body: Array("token=\(token)".utf8)))
        }
        let live = Self.object(introspect("zat_live"))
        #expect(live["active"] as? Bool == true)
        #expect(live["client_id"] as? String == "pk_test_x")
        #expect(live["sub"] as? String == "u-1")
        #expect(live["sid"] as? String == "s-1")
        #expect(live["token_type"] as? String == "Bearer")
        #expect(live["iss"] as? String == "https://auth.example.com")
        #expect(live["exp"] as? Int == 1_800_000_900)
        #expect(live["iat"] as? Int == 1_800_000_000)
        let other = Self.object(introspect("zat_other"))
        #expect(other["active"] as? Bool == false)
        #expect(other.count == 1)
    }
}
