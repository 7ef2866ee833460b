import Foundation

/// Drives the hosted sign-in as a browser would, step by step, so tests can stop at any step.
public struct SignInDriver {
    public let server: TestServer
    public let browser: TestBrowser

    public init(server: TestServer, browser: TestBrowser) {
        self.server = server
        self.browser = browser
    }

    /// What the browser ended with: the redirect back to the app.
    public struct Result {
        public let location: String
        public var query: [String: String] { queryItems(of: location) }
        public var code: String? { query["code"] }
    }

    public enum Failure: Error, CustomStringConvertible {
        case unexpected(step: String, status: Int, body: String)
        public var description: String {
            switch self {
            case .unexpected(let step, let status, let body): return "\(step): status \(status): \(body.prefix(300))"
            }
        }
    }

    /// Start → sign-in (when asked) → consent (allow) → the 303 to the redirect URI.
    /// - Parameter signInExpected: when false, the test asserts the password page was skipped.
    public func run(
        clientID: String, redirectURI: String, state: String, pkce: PKCEPair, email: String, password: String,
        extra: [(String, String)] = [], passwordPageSeen: UnsafeMutablePointer<Bool>? = nil
    ) throws -> Result {
        let start = try browser.get(
            startTarget(
                [
                    ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
                    ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
                ] + extra))
        guard start.status == 303, var next = start.header("location") else {
            throw Failure.unexpected(step: "start", status: start.status, body: start.text)
        }
        passwordPageSeen?.pointee = false
        if next.hasPrefix("/v1/auth/zevid/signin") {
            passwordPageSeen?.pointee = true
            let page = try browser.get(next)
            guard page.status == 200, let csrf = hiddenField("csrf", in: page.text), let request = hiddenField("request", in: page.text)
            else {
                throw Failure.unexpected(step: "sign-in page", status: page.status, body: page.text)
            }
            let posted = try browser.postForm(
                "/v1/auth/zevid/signin", [("request", request), ("csrf", csrf), ("email", email), ("password", password)])
            guard posted.status == 303, let location = posted.header("location") else {
                throw Failure.unexpected(step: "sign-in post", status: posted.status, body: posted.text)
            }
            next = location
        }
        let consent = try browser.get(next)
        guard consent.status == 200, let csrf = hiddenField("csrf", in: consent.text),
            let request = hiddenField("request", in: consent.text)
        else {
            throw Failure.unexpected(step: "consent page", status: consent.status, body: consent.text)
        }
        let allowed = try browser.postForm("/v1/auth/zevid/consent", [("request", request), ("csrf", csrf), ("decision", "allow")])
        guard allowed.status == 303, let location = allowed.header("location") else {
            throw Failure.unexpected(step: "consent post", status: allowed.status, body: allowed.text)
        }
        let result = Result(location: location)
        SuiteCapture.secret(result.code)
        for (_, value) in browser.cookies { SuiteCapture.secret(value) }
        return result
    }

    /// The consent page reached by a fresh start and the password form, and its hidden form fields
    /// (`request`, `csrf`), for tests that decide on consent themselves.
    public struct Consent {
        public let page: TestResponse
        public let fields: [(String, String)]
    }

    /// Start (at `path`) → the sign-in form with `email`/`password` → the consent page.
    public func reachConsent(
        clientID: String, redirectURI: String, state: String, email: String, password: String,
        path: String = "/v1/auth/zevid/start", extra: [(String, String)] = []
    ) throws -> Consent {
        let start = try browser.get(
            startTarget(
                extra + [
                    ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                ], path: path))
        guard start.status == 303, let signInPath = start.header("location") else {
            throw Failure.unexpected(step: "start", status: start.status, body: start.text)
        }
        let page = try browser.get(signInPath)
        guard let csrf = hiddenField("csrf", in: page.text), let request = hiddenField("request", in: page.text) else {
            throw Failure.unexpected(step: "sign-in page", status: page.status, body: page.text)
        }
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin", [("request", request), ("csrf", csrf), ("email", email), ("password", password)])
        guard posted.status == 303, let consentPath = posted.header("location") else {
            throw Failure.unexpected(step: "sign-in post", status: posted.status, body: posted.text)
        }
        let consent = try browser.get(consentPath)
        guard let consentCSRF = hiddenField("csrf", in: consent.text), let consentRequest = hiddenField("request", in: consent.text) else {
            throw Failure.unexpected(step: "consent page", status: consent.status, body: consent.text)
        }
        return Consent(page: consent, fields: [("request", consentRequest), ("csrf", consentCSRF)])
    }

    /// `POST /v1/auth/handoff/exchange` with a JSON body built from the given fields.
    public func exchange(clientID: String?, fields: [String: Any]) throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: fields)
        return try Self.exchange(server.client, clientID: clientID, body: Array(body))
    }

    public static func exchange(_ client: TestHTTPClient, clientID: String?, body: [UInt8]) throws -> TestResponse {
        var headers = [("Content-Type", "application/json")]
        if let clientID { headers.append(("Authorization", "Bearer \(clientID)")) }
        let response = try client.send("POST", "/v1/auth/handoff/exchange", headers: headers, body: body)
        if let session = response.json["session"] as? [String: Any] {
            SuiteCapture.secret(session["accessToken"] as? String)
            SuiteCapture.secret(session["refreshToken"] as? String)
        }
        return response
    }
}
