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
        guard CurlGlobal.initialized, let transfer = ClientTransfer(maxBytes: configuration.maxResponseBytes) else {
            throw .connectionFailed("libcurl could not be initialised")
        }
        return try transfer.perform(request, configuration: configuration)
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

/// Appends body bytes, or stops the transfer (a short count) past the cap. Captures nothing; the transfer
/// comes through CURLOPT_WRITEDATA and is alive for the whole `curl_easy_perform`.
private let receiveClientBody: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<ClientTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard transfer.body.count + length <= transfer.maxBytes else {
        transfer.exceededLimit = true
        return 0
    }
    if length > 0, let data { transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
    return length
}

/// Receives one header line. A status line starts a new header block (an interim `100 Continue` block is
/// dropped that way), so only the final response's headers remain.
private let receiveClientHeader: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<ClientTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    var bytes = UnsafeRawBufferPointer(start: data, count: length)[...]
    // Strip the line ending on bytes: in a Swift String "\r\n" is a single Character.
    while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
    transfer.headerLine(String(decoding: bytes, as: UTF8.self))
    return length
}

/// One easy transfer of the general client; owns the handle, its slist and error buffer.
final class ClientTransfer {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var slists: [UnsafeMutablePointer<curl_slist>] = []
    fileprivate let maxBytes: Int
    fileprivate var body: [UInt8] = []
    fileprivate var headers: [HTTPClientHeader] = []
    fileprivate var exceededLimit = false

    init?(maxBytes: Int) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.maxBytes = max(1, maxBytes)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in slists { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    fileprivate func headerLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = []
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon])
        let value = String(line[line.index(after: colon)...]).trimmingHeaderSpaces()
        headers.append(HTTPClientHeader(name: name, value: value))
    }

    func perform(_ request: HTTPClientRequest, configuration: HTTPClientConfiguration) throws(HTTPClientError) -> HTTPClientResponse {
        try configure(request, configuration: configuration)
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else { throw failure(for: code) }
        var status = 0
        try check(CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status), "CURLINFO_RESPONSE_CODE")
        return HTTPClientResponse(status: status, headers: headers, body: body)
    }

    private func configure(_ request: HTTPClientRequest, configuration: HTTPClientConfiguration) throws(HTTPClientError) {
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_URL, request.url), "CURLOPT_URL")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        // The caller sees every 3xx itself: the redirect to an app must be caught, never followed.
        try check(CCurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        if let caFile = configuration.caFile {
            try check(CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile), "CURLOPT_CAINFO")
        }
        try check(CCurl_easy_setopt_string(handle, CURLOPT_PROXY, ""), "CURLOPT_PROXY")
        try check(
            CCurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, configuration.connectTimeoutMilliseconds)),
            "CURLOPT_CONNECTTIMEOUT_MS")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, configuration.timeoutMilliseconds)), "CURLOPT_TIMEOUT_MS")
        try check(CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, configuration.userAgent), "CURLOPT_USERAGENT")

        switch request.method {
        case .get:
            try check(CCurl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
        case .post, .patch, .delete:
            if request.method != .delete || !request.body.isEmpty {
                try check(
                    CCurl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
                    "CURLOPT_POSTFIELDSIZE_LARGE")
                // COPYPOSTFIELDS copies the bytes (POSTFIELDSIZE given first, so a NUL byte is data).
                var bytes = request.body
                if bytes.isEmpty { bytes = [0] }
                let code = bytes.withUnsafeMutableBytes { CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
                try check(code, "CURLOPT_COPYPOSTFIELDS")
            }
            if request.method != .post {
                try check(CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "CURLOPT_CUSTOMREQUEST")
            }
        }
        // "Expect:" stops libcurl's `Expect: 100-continue` on larger bodies; a later caller header wins.
        let lines = ["Expect:"] + request.headers.map { "\($0.name): \($0.value)" }
        try check(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, try slist(lines)), "CURLOPT_HTTPHEADER")
        try check(CCurl_easy_setopt_write_function(handle, receiveClientBody), "CURLOPT_WRITEFUNCTION")
        try check(CCurl_easy_setopt_header_function(handle, receiveClientHeader), "CURLOPT_HEADERFUNCTION")
        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
    }

    /// The one funnel from a failed `curl_easy_perform` to an ``HTTPClientError``.
    private func failure(for code: CURLcode) -> HTTPClientError {
        let buffer = String(cString: errorBuffer)
        let detail = buffer.isEmpty ? String(cString: curl_easy_strerror(code)) : buffer
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return .timeout(detail)
        case CURLE_COULDNT_RESOLVE_HOST: return .dnsError(detail)
        case CURLE_FILESIZE_EXCEEDED: return .tooLarge(limit: maxBytes)
        case CURLE_WRITE_ERROR where exceededLimit: return .tooLarge(limit: maxBytes)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE:
            return .tlsError(detail)
        default: return .connectionFailed(detail)
        }
    }

    private func check(_ code: CURLcode, _ option: String) throws(HTTPClientError) {
        guard code == CURLE_OK else {
            throw .connectionFailed("libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    private func slist(_ lines: [String]) throws(HTTPClientError) -> UnsafeMutablePointer<curl_slist> {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw .connectionFailed("libcurl could not allocate a list")
            }
            list = appended
        }
        guard let list else { throw .connectionFailed("libcurl could not allocate a list") }
        slists.append(list)
        return list
    }
}

extension String {
    fileprivate func trimmingHeaderSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
