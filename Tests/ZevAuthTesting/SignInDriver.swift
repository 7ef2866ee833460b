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

    /// A hosted page and its hidden form fields (`request`, `csrf`).
    public struct Form {
        public let page: TestResponse
        public let fields: [(String, String)]
    }

    /// A fresh start (at `path`, with a new PKCE challenge) followed to the password form.
    public func reachSignInForm(
        clientID: String, redirectURI: String = "http://127.0.0.1:5000/cb", state: String = "s",
        path: String = "/v1/auth/zevid/start", extra: [(String, String)] = []
    ) throws -> Form {
        let start = try browser.get(
            startTarget(
                extra + [
                    ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                ], path: path))
        guard start.status == 303, let signInPath = start.header("location") else {
            throw Failure.unexpected(step: "start", status: start.status, body: start.text)
        }
        return try form(at: signInPath, step: "sign-in page")
    }

    /// Start → the password form with `email`/`password` → the consent page.
    public func reachConsent(
        clientID: String, redirectURI: String, state: String, email: String, password: String,
        path: String = "/v1/auth/zevid/start", extra: [(String, String)] = []
    ) throws -> Form {
        let signIn = try reachSignInForm(clientID: clientID, redirectURI: redirectURI, state: state, path: path, extra: extra)
        let posted = try browser.postForm("/v1/auth/zevid/signin", signIn.fields + [("email", email), ("password", password)])
        guard posted.status == 303, let consentPath = posted.header("location") else {
            throw Failure.unexpected(step: "sign-in post", status: posted.status, body: posted.text)
        }
        return try form(at: consentPath, step: "consent page")
    }

    private func form(at path: String, step: String) throws -> Form {
        let page = try browser.get(path)
        guard let request = hiddenField("request", in: page.text), let csrf = hiddenField("csrf", in: page.text) else {
            throw Failure.unexpected(step: step, status: page.status, body: page.text)
        }
        return Form(page: page, fields: [("request", request), ("csrf", csrf)])
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
