import Foundation
import ZevAuthServer

/// A signed-in app session for tests: sign in through the hosted pages, exchange, then refresh, revoke and
/// introspect. Every token it sees goes to `SuiteCapture.secret`.
public struct SessionDriver {
    public let server: TestServer
    public let fixture: Fixture
    public static let redirect = "http://127.0.0.1:54321/cb"

    public init(server: TestServer, fixture: Fixture) {
        self.server = server
        self.fixture = fixture
    }

    /// A driver over a new test server (in process unless `live`, optionally on a manual clock) and a new
    /// fixture on its store.
    public static func started(clock: ManualClock? = nil, live: Bool = false) throws -> SessionDriver {
        let server = try TestServer(live: live, clock: clock)
        return SessionDriver(server: server, fixture: try Fixture.make(store: server.store))
    }

    /// A session's id and current pair, from an exchange or refresh answer.
    public struct Pair: Sendable {
        public let sessionID: String
        public let accessToken: String
        public let refreshToken: String

        public init?(_ response: TestResponse) {
            guard response.status == 200, let session = response.json["session"] as? [String: Any],
                let id = session["id"] as? String, let access = session["accessToken"] as? String,
                let refresh = session["refreshToken"] as? String
            else { return nil }
            sessionID = id
            accessToken = access
            refreshToken = refresh
        }
    }

    public enum Failure: Error { case noSession(Int, String) }

    /// Signs in with a fresh browser and exchanges the code at `/v1/auth/handoff/exchange`.
    public func signIn() throws -> Pair {
        let code = try issueCode(path: "/v1/auth/zevid/start")
        let response = try SignInDriver(server: server, browser: server.browser()).exchange(
            clientID: fixture.developmentKey,
            fields: ["code": code.code, "codeVerifier": code.pkce.verifier, "redirectUri": Self.redirect])
        guard let pair = Pair(response) else { throw Failure.noSession(response.status, response.text) }
        return pair
    }

    /// Drives the hosted sign-in from `path` (`/v1/auth/zevid/start` or `/oauth2/authorize`) to a code,
    /// with `parameters` added to the start.
    public func issueCode(path: String, parameters: [(String, String)] = []) throws -> (code: String, pkce: PKCEPair) {
        let browser = server.browser()
        let pkce = PKCEPair()
        var extra = parameters
        if path == "/oauth2/authorize" { extra.append(("response_type", "code")) }
        let start = try browser.get(
            startTarget(
                [
                    ("client_id", fixture.developmentKey), ("redirect_uri", Self.redirect), ("state", "s"),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ] + extra, path: path))
        guard start.status == 303, let signIn = start.header("location") else { throw Failure.noSession(start.status, start.text) }
        let page = try browser.get(signIn)
        guard let csrf = hiddenField("csrf", in: page.text), let request = hiddenField("request", in: page.text) else {
            throw Failure.noSession(page.status, page.text)
        }
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin", [("request", request), ("csrf", csrf), ("email", fixture.email), ("password", fixture.password)])
        guard let consentPath = posted.header("location") else { throw Failure.noSession(posted.status, posted.text) }
        let consent = try browser.get(consentPath)
        guard let csrf2 = hiddenField("csrf", in: consent.text), let request2 = hiddenField("request", in: consent.text) else {
            throw Failure.noSession(consent.status, consent.text)
        }
        let allowed = try browser.postForm("/v1/auth/zevid/consent", [("request", request2), ("csrf", csrf2), ("decision", "allow")])
        guard let location = allowed.header("location"), let code = queryItems(of: location)["code"] else {
            throw Failure.noSession(allowed.status, allowed.text)
        }
        SuiteCapture.secret(code)
        for (_, value) in browser.cookies { SuiteCapture.secret(value) }
        return (code, pkce)
    }

    /// `POST /v1/auth/session/refresh` with a JSON body; records any tokens in the answer.
    public func refresh(_ refreshToken: String, clientID: String? = nil) throws -> TestResponse {
        try Self.refresh(server.client, clientID: clientID ?? fixture.developmentKey, body: ["refreshToken": refreshToken])
    }

    public static func refresh(_ client: TestHTTPClient, clientID: String?, body: [String: Any]) throws -> TestResponse {
        try refresh(client, clientID: clientID, rawBody: Array(try JSONSerialization.data(withJSONObject: body)))
    }

    public static func refresh(_ client: TestHTTPClient, clientID: String?, rawBody: [UInt8]) throws -> TestResponse {
        var headers = [("Content-Type", "application/json")]
        if let clientID { headers.append(("Authorization", "Bearer \(clientID)")) }
        let response = try client.send("POST", "/v1/auth/session/refresh", headers: headers, body: rawBody)
        if let session = response.json["session"] as? [String: Any] {
            SuiteCapture.secret(session["accessToken"] as? String)
            SuiteCapture.secret(session["refreshToken"] as? String)
        }
        return response
    }

    /// `GET /v1/auth/session` with a bearer access token.
    public func current(_ accessToken: String) throws -> TestResponse {
        try server.client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(accessToken)")])
    }

    /// A form POST (`application/x-www-form-urlencoded`); records tokens of an RFC 6749 §5.1 answer.
    public func postForm(_ path: String, _ fields: [(String, String)], headers: [(String, String)] = []) throws -> TestResponse {
        let body = fields.map { "\(TestBrowser.formEncode($0.0))=\(TestBrowser.formEncode($0.1))" }.joined(separator: "&")
        let response = try server.client.send(
            "POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: Array(body.utf8))
        SuiteCapture.secret(response.json["access_token"] as? String)
        SuiteCapture.secret(response.json["refresh_token"] as? String)
        return response
    }

    /// A JSON request with a bearer credential (admin and session calls); records a `secretKey` answered.
    public func sendJSON(_ method: String, _ path: String, bearer: String?, _ body: [String: Any]? = nil) throws -> TestResponse {
        var headers: [(String, String)] = []
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        var bytes: [UInt8] = []
        if let body {
            headers.append(("Content-Type", "application/json"))
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        let response = try server.client.send(method, path, headers: headers, body: bytes)
        SuiteCapture.secret(response.json["secretKey"] as? String)
        return response
    }
}
