import Crypto
import Encoding
import Fetch
import Foundation
import Synchronization

/// Why a check could not observe what it needed.
public enum AgentError: Error, Sendable {
    /// The deployment kept answering 429; `retryAfter` is its last `Retry-After` (seconds) if any.
    case rateLimited(retryAfter: Int?, attempts: Int)
    /// No HTTP answer at all.
    case transport(String)
    /// The scripted sign-in stopped at `step` with what was seen there.
    case signInStopped(step: String, seen: String)
}

/// Sends requests to the deployment: absolute URLs under the issuer, 429 answered by waiting out
/// `Retry-After` (at most the configured bound, twice) before giving up with ``AgentError/rateLimited(retryAfter:attempts:)``.
public final class Agent: Sendable {
    let client: HTTPClient
    let options: Options
    let redactor: Redactor
    let sleep: @Sendable (Int) -> Void

    /// - Parameters:
    ///   - options: the deployment and credentials.
    ///   - redactor: receives every secret the agent sees.
    ///   - sleep: waits a number of seconds (injected for tests).
    public init(options: Options, redactor: Redactor, sleep: @escaping @Sendable (Int) -> Void = { Foundation.sleep(UInt32($0)) }) {
        var configuration = HTTPClientConfiguration()
        configuration.caFile = options.caFile
        configuration.userAgent = "zevauth-conformance/1"
        client = HTTPClient(configuration: configuration)
        self.options = options
        self.redactor = redactor
        self.sleep = sleep
        for secret in options.secrets { redactor.register(secret) }
    }

    /// The URL of `pathOrURL` (a path under the issuer, or an absolute URL).
    func url(_ pathOrURL: String) -> String {
        pathOrURL.hasPrefix("http://") || pathOrURL.hasPrefix("https://") ? pathOrURL : options.issuer + pathOrURL
    }

    /// Sends one request, backing off on 429.
    /// - Throws: ``AgentError``.
    public func send(
        _ method: HTTPClientRequest.Method, _ pathOrURL: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []
    )
        throws(AgentError) -> Observed
    {
        var attempts = 0
        while true {
            attempts += 1
            let response: HTTPClientResponse
            do {
                response = try client.send(HTTPClientRequest(method, url(pathOrURL), headers: headers, body: body))
            } catch {
                throw .transport(redactor.scrub(error.description))
            }
            let observed = Observed(response)
            guard observed.status == 429 else { return observed }
            let retryAfter = observed.header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let wait = retryAfter ?? 5
            guard attempts < 3, wait <= options.maxBackoffSeconds else {
                throw .rateLimited(retryAfter: retryAfter, attempts: attempts)
            }
            sleep(max(1, wait))
        }
    }

    /// `POST` a JSON object.
    func postJSON(_ path: String, _ object: [String: Any], bearer: String?) throws(AgentError) -> Observed {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { Array($0) } ?? []
        return try postRaw(path, body, bearer: bearer)
    }

    /// `POST` raw bytes as `application/json`.
    func postRaw(_ path: String, _ body: [UInt8], bearer: String?) throws(AgentError) -> Observed {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json"), ("Accept", "application/json")]
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        return try send(.post, path, headers: headers, body: body)
    }

    /// `POST` a form.
    func postForm(_ path: String, _ pairs: [(String, String)], bearer: String? = nil) throws(AgentError) -> Observed {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/x-www-form-urlencoded")]
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        return try send(.post, path, headers: headers, body: Array(FormURLEncoding.encode(pairs).utf8))
    }

    /// A fresh PKCE pair (RFC 7636 §4.1: 32 random octets, base64url → 43 characters; S256 challenge).
    func pkce() -> (verifier: String, challenge: String) {
        let verifier = Base64URL.encode((try? Crypto.randomBytes(32)) ?? Array(repeating: 7, count: 32))
        redactor.register(verifier)
        return (verifier, Base64URL.encode(Crypto.sha256(Array(verifier.utf8))))
    }

    /// Registers every secret-looking value of a JSON answer (tokens, keys) with the redactor.
    func remember(_ observed: Observed) {
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if let text = inner as? String, Self.secretFields.contains(key) { redactor.register(text) } else { walk(inner) }
                }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        if let json = try? JSONSerialization.jsonObject(with: Data(observed.body)) { walk(json) }
    }

    static let secretFields: Set<String> = [
        "accessToken", "refreshToken", "access_token", "refresh_token", "secretKey", "code", "verificationToken", "secret",
    ]
}

/// A scripted browser: a cookie jar over the ``Agent``, following the server's own pages (start, sign-in
/// with its CSRF token, optional TOTP, consent) and stopping at the redirect back to the app without
/// following it.
public final class Browser: Sendable {
    let agent: Agent
    private let cookies = Mutex<[String: String]>([:])

    /// An empty browser.
    public init(agent: Agent) {
        self.agent = agent
    }

    /// A GET with this browser's cookies; stores the cookies it sets.
    func get(_ pathOrURL: String, accept: String? = nil) throws(AgentError) -> Observed {
        var headers = cookieHeader()
        if let accept { headers.append(("Accept", accept)) }
        let observed = try agent.send(.get, pathOrURL, headers: headers)
        store(observed)
        return observed
    }

    /// A form POST with this browser's cookies.
    func post(_ path: String, _ fields: [(String, String)]) throws(AgentError) -> Observed {
        let headers = cookieHeader() + [("Content-Type", "application/x-www-form-urlencoded")]
        let observed = try agent.send(.post, path, headers: headers, body: Array(FormURLEncoding.encode(fields).utf8))
        store(observed)
        return observed
    }

    private func cookieHeader() -> [(name: String, value: String)] {
        let jar = cookies.withLock { $0 }
        guard !jar.isEmpty else { return [] }
        return [("Cookie", jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]
    }

    private func store(_ observed: Observed) {
        for header in observed.headers where header.name.lowercased() == "set-cookie" {
            let pair = header.value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals]).trimmingCharacters(in: .whitespaces)
            let value = String(pair[pair.index(after: equals)...])
            agent.redactor.register(value)
            let expired = header.value.lowercased().contains("max-age=0")
            cookies.withLock { jar in
                if expired || value.isEmpty { jar[name] = nil } else { jar[name] = value }
            }
        }
    }

    /// What a scripted sign-in saw.
    public struct Flow: Sendable {
        /// The final answer: the redirect back to the app (or whatever stopped the flow).
        public let final: Observed
        /// The status of the sign-in form's POST, when a password was entered.
        public let signInPostStatus: Int?
        /// Whether the sign-in page forbade framing (`X-Frame-Options` or CSP `frame-ancestors`).
        public let signInPageFramingDenied: Bool?
        /// The redirect back, when it came.
        public func back(_ redirectURI: String) -> RedirectBack? { RedirectBack.find(in: final, redirectURI: redirectURI) }
    }

    /// Opens `startTarget` (a path with query) and plays the person: sign in, give the TOTP code, allow.
    /// Stops at the first answer that leaves the server's own pages. With `startForm`, the start is a form
    /// POST of those parameters to `startTarget` (OpenID Connect Core §3.1.2.1) instead of a GET.
    /// - Throws: ``AgentError``; `.signInStopped` when a page did not go as a person would expect.
    public func signIn(startTarget: String, startForm: [(String, String)]? = nil) throws(AgentError) -> Flow {
        var response: Observed
        if let startForm { response = try post(startTarget, startForm) } else { response = try get(startTarget) }
        var postStatus: Int?
        var framing: Bool?
        var totpTried = 0
        for _ in 0..<12 {
            if (300..<400).contains(response.status), let location = response.header("Location"), isOwn(location) {
                response = try get(location)
                continue
            }
            guard response.status == 200 || response.status == 401, response.isHTML else { break }
            let page = String(decoding: response.body, as: UTF8.self)
            guard let form = HTMLForm.first(in: page) else { break }
            var fields = form.hidden
            if form.action.hasSuffix("/signin") {
                if framing == nil {
                    let csp = response.header("Content-Security-Policy") ?? ""
                    framing = response.header("X-Frame-Options")?.uppercased() == "DENY" || csp.contains("frame-ancestors 'none'")
                }
                if response.status == 401 { throw .signInStopped(step: "sign-in", seen: "401: the email or password was refused") }
                fields += [("email", agent.options.email), ("password", agent.options.password)]
                response = try post(form.action, fields)
                postStatus = response.status
            } else if form.action.hasSuffix("/mfa") {
                guard let secret = agent.options.totpSecret,
                    let key = Base32.decode(secret.replacingOccurrences(of: " ", with: "").uppercased())
                else {
                    throw .signInStopped(step: "two-step verification", seen: "the account asks for a TOTP code; pass --totp-secret")
                }
                if totpTried > 0 {
                    // The same step may not be accepted twice: wait for the next one.
                    let now = Date().timeIntervalSince1970
                    agent.sleep(Int(30 - now.truncatingRemainder(dividingBy: 30)) + 1)
                }
                guard totpTried < 2 else { throw .signInStopped(step: "two-step verification", seen: "the TOTP code was refused twice") }
                totpTried += 1
                let code = TOTP.code(secret: key, step: TOTP.step(atUnixSeconds: Date().timeIntervalSince1970))
                fields.append(("code", code))
                response = try post(form.action, fields)
            } else if form.action.hasSuffix("/consent") {
                fields.append(("decision", "allow"))
                response = try post(form.action, fields)
                break
            } else {
                break
            }
        }
        return Flow(final: response, signInPostStatus: postStatus, signInPageFramingDenied: framing)
    }

    private func isOwn(_ location: String) -> Bool {
        location.hasPrefix("/") || location.hasPrefix(agent.options.issuer + "/")
    }
}

/// The first `<form>` of a page: its action, method (lower-cased, `get` when absent) and hidden inputs.
struct HTMLForm {
    let action: String
    let method: String
    let hidden: [(String, String)]

    static func first(in page: String) -> HTMLForm? {
        guard let formStart = page.range(of: "<form") else { return nil }
        let tail = page[formStart.lowerBound...]
        let formEnd = tail.range(of: "</form>")?.lowerBound ?? tail.endIndex
        let formText = tail[..<formEnd]
        guard let tagEnd = formText.firstIndex(of: ">") else { return nil }
        let attributes = Self.attributes(String(formText[..<tagEnd]))
        var hidden: [(String, String)] = []
        var rest = formText[...]
        while let input = rest.range(of: "<input") {
            let after = rest[input.upperBound...]
            let end = after.firstIndex(of: ">") ?? after.endIndex
            let inputAttributes = Self.attributes(String(after[..<end]))
            if inputAttributes["type"] == "hidden", let name = inputAttributes["name"] {
                hidden.append((name, inputAttributes["value"] ?? ""))
            }
            rest = after[end...]
        }
        return HTMLForm(action: attributes["action"] ?? "", method: attributes["method"]?.lowercased() ?? "get", hidden: hidden)
    }

    /// `name="value"` pairs of one tag, values HTML-unescaped.
    static func attributes(_ tag: String) -> [String: String] {
        var out: [String: String] = [:]
        var rest = tag[...]
        while let equals = rest.range(of: "=\"") {
            let name = rest[..<equals.lowerBound].reversed().prefix { $0.isLetter || $0 == "-" }.reversed()
            let after = rest[equals.upperBound...]
            guard let close = after.firstIndex(of: "\"") else { break }
            out[String(name).lowercased()] = Verdicts.htmlUnescape(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        return out
    }
}
