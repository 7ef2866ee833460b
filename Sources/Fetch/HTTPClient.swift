internal import CCurl

/// One header line of a response, as sent (name case kept).
public struct HTTPClientHeader: Sendable, Equatable {
    /// The field name, e.g. `Set-Cookie`.
    public let name: String
    /// The field value without surrounding spaces.
    public let value: String

    /// A header; the client builds these, tests may too.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A request for ``HTTPClient``.
public struct HTTPClientRequest: Sendable {
    /// The methods the client sends.
    public enum Method: String, Sendable, CaseIterable {
        case get = "GET"
        case post = "POST"
        case patch = "PATCH"
        case delete = "DELETE"
    }

    /// The method.
    public var method: Method
    /// An absolute `http://` or `https://` URL, printable ASCII without spaces.
    public var url: String
    /// Extra request headers, sent in order (a `Host` here replaces the URL's).
    public var headers: [(name: String, value: String)]
    /// The body (sent for POST and PATCH, and for DELETE when not empty).
    public var body: [UInt8]

    /// A request.
    public init(_ method: Method, _ url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response of any status: a 303 or a 404 is a response, not an error.
public struct HTTPClientResponse: Sendable, Equatable {
    /// The HTTP status code.
    public let status: Int
    /// Every header line of the final response, in order, repeated names kept (several `Set-Cookie`).
    public let headers: [HTTPClientHeader]
    /// The body bytes as received (no content coding is requested), at most the configured cap.
    public let body: [UInt8]

    /// A response; the client builds these, tests may too.
    public init(status: Int, headers: [HTTPClientHeader], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of the header `name` (case-insensitive), in order.
    public func headers(named name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a request got no response. Messages name the host and what failed, never the URL's query.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute http(s) URL of printable ASCII.
    case invalidURL(String)
    /// The host name does not resolve.
    case dnsError(String)
    /// Connect or total timeout.
    case timeout(String)
    /// The certificate did not verify or the handshake failed.
    case tlsError(String)
    /// The body passed `limit` bytes.
    case tooLarge(limit: Int)
    /// Refused, reset, or any other transport error.
    case connectionFailed(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidURL(let why): return "invalid URL: \(why)"
        case .dnsError(let why): return "name does not resolve: \(why)"
        case .timeout(let why): return "timed out: \(why)"
        case .tlsError(let why): return "TLS failed: \(why)"
        case .tooLarge(let limit): return "response larger than \(limit) bytes"
        case .connectionFailed(let why): return "connection failed: \(why)"
        }
    }
}

/// Settings of an ``HTTPClient``.
public struct HTTPClientConfiguration: Sendable {
    /// TCP + TLS connect timeout, milliseconds (default 5 000).
    public var connectTimeoutMilliseconds: Int = 5_000
    /// Whole-request timeout, milliseconds (default 30 000).
    public var timeoutMilliseconds: Int = 30_000
    /// The largest response body accepted, in bytes (default 4 MiB).
    public var maxResponseBytes: Int = 4 * 1_048_576
    /// An extra PEM CA bundle trusted besides the system's (a private CA in front of a deployment).
    public var caFile: String?
    /// The `User-Agent` sent.
    public var userAgent: String = "ZevAuth-HTTPClient/1"

    /// The defaults.
    public init() {}
}

/// A general-purpose, blocking HTTP/1.1 client over libcurl for the conformance client and the admin CLI:
/// GET, POST, PATCH, DELETE over `http` and `https`, custom headers and body, **no redirect followed** (a
/// 3xx comes back as the response, so a caller can catch the redirect to an app), connect and total
/// timeouts, every response header (repeated `Set-Cookie` included), and a body size cap enforced from
/// `Content-Length` and while receiving.
///
/// It does **not** apply ``HTTPSFetcher``'s private-address guard (``AddressPolicy``): it talks to the
/// operator's own deployment, which may be on loopback or a private network. Never give it a URL a
/// customer chose. No proxy is used (proxy environment variables are ignored), no cookies are kept (the
/// caller keeps a jar), no content coding is requested, and certificates are always verified.
///
/// Safe to use from several threads at once: each request runs on its own libcurl easy handle.
public final class HTTPClient: Sendable {
    /// The settings every request uses.
    public let configuration: HTTPClientConfiguration

    /// A client; initialises libcurl once per process on first use.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) {
        self.configuration = configuration
        _ = CurlGlobal.initialized
    }

    /// Sends `request` and waits for the whole response.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``HTTPClientError`` when no response came.
    public func send(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let url = request.url
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw .invalidURL("the URL must start with http:// or https://")
        }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidURL("the URL must be printable ASCII without spaces")
        }
        for (name, value) in request.headers {
            guard !name.isEmpty, (name + value).utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }), !name.contains(":") else {
                throw .invalidURL("header \(name) has a control character or an invalid name")
            }
        }
        guard CurlGlobal.initialized, let easy = CurlEasy(maxBytes: max(1, configuration.maxResponseBytes)) else {
            throw .connectionFailed("libcurl could not be initialised")
        }
        do {
            return try transfer(easy, request)
        } catch {
            throw error.reported(as: HTTPClientError.self)
        }
    }

    /// `GET url`.
    /// - Throws: ``HTTPClientError`` when no response came.
    public func get(_ url: String, headers: [(name: String, value: String)] = []) throws(HTTPClientError) -> HTTPClientResponse {
        try send(HTTPClientRequest(.get, url, headers: headers))
    }

    /// `POST url` with `body`.
    /// - Throws: ``HTTPClientError`` when no response came.
    public func post(_ url: String, headers: [(name: String, value: String)] = [], body: [UInt8]) throws(HTTPClientError)
        -> HTTPClientResponse
    {
        try send(HTTPClientRequest(.post, url, headers: headers, body: body))
    }

    /// `PATCH url` with `body`.
    /// - Throws: ``HTTPClientError`` when no response came.
    public func patch(_ url: String, headers: [(name: String, value: String)] = [], body: [UInt8]) throws(HTTPClientError)
        -> HTTPClientResponse
    {
        try send(HTTPClientRequest(.patch, url, headers: headers, body: body))
    }

    /// `DELETE url`.
    /// - Throws: ``HTTPClientError`` when no response came.
    public func delete(_ url: String, headers: [(name: String, value: String)] = []) throws(HTTPClientError) -> HTTPClientResponse {
        try send(HTTPClientRequest(.delete, url, headers: headers))
    }
}

extension HTTPClient {
    /// Runs `request` on `easy`: ``CurlEasy``'s shared options over `http` and `https`, the method and
    /// body, the caller's headers, and every header of the final response collected.
    /// - Throws: ``CurlFailure`` when no response came.
    private func transfer(_ easy: CurlEasy, _ request: HTTPClientRequest) throws(CurlFailure) -> HTTPClientResponse {
        try easy.configure(
            url: request.url, protocols: "http,https", caFile: configuration.caFile,
            connectTimeoutMilliseconds: max(1, configuration.connectTimeoutMilliseconds),
            timeoutMilliseconds: max(1, configuration.timeoutMilliseconds), userAgent: configuration.userAgent)
        switch request.method {
        case .get:
            try easy.set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        case .post, .patch, .delete:
            if request.method != .delete || !request.body.isEmpty {
                try easy.setRequestBody(request.body)
            }
            if request.method != .post {
                try easy.set(CURLOPT_CUSTOMREQUEST, request.method.rawValue, "CURLOPT_CUSTOMREQUEST")
            }
        }
        // "Expect:" stops libcurl's `Expect: 100-continue` on larger bodies; a later caller header wins.
        let lines = ["Expect:"] + request.headers.map { "\($0.name): \($0.value)" }
        try easy.set(CURLOPT_HTTPHEADER, lines: lines, "CURLOPT_HTTPHEADER")
        try easy.collectHeaders()
        try easy.perform()
        let status = try easy.longInfo(CURLINFO_RESPONSE_CODE, "CURLINFO_RESPONSE_CODE")
        return HTTPClientResponse(status: status, headers: easy.headerLines.compactMap(Self.header), body: easy.body)
    }

    /// `Name: value` as a header (value without surrounding spaces), or `nil` for a line without a colon.
    static func header(_ line: String) -> HTTPClientHeader? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let value = String(line[line.index(after: colon)...]).trimmingHeaderSpaces()
        return HTTPClientHeader(name: String(line[..<colon]), value: value)
    }
}

extension String {
    fileprivate func trimmingHeaderSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
