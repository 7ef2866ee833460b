import Foundation
import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP response as a test sees it.
public struct TestResponse: Sendable {
    public let status: Int
    /// Header names lower-cased, in order, repeated names kept.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    /// The first value of a header (name compared case-insensitively).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    /// Every value of a header.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name == name.lowercased() }.map(\.value)
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// A deliberately small HTTP/1.1 client for tests, over one of two transports:
///
/// - `.socket`: loopback TCP to a live server, one request per connection (`Connection: close`), the whole
///   response read until the server closes, redirects never followed. Test-only: the product itself never
///   parses HTTP by hand (libmicrohttpd does).
/// - `.inProcess`: the same request, with the same header fields in the same order (`Host`, `Connection:
///   close`, the test's fields, `Content-Length`), handed to an `HTTPHandler` (the `ZevAuthApp`) on the
///   calling thread through `HTTPServer.answerInProcess`, the very steps the daemon takes after
///   libmicrohttpd read the request (framing checks, the target split at the first "?", the fragment
///   dropped, peer 127.0.0.1; a response the server would refuse becomes its 500). The fields libmicrohttpd
///   adds (`Date`, `Content-Length`, `Connection: close`) are added the way it adds them, and a HEAD answer
///   has no body. A request only a socket can carry (a target byte outside visible ASCII, framing fields
///   set by the test, a header section past libmicrohttpd's own limits) throws `Failure.needsLiveServer`:
///   such a test runs on `TestServer(live: true)`.
public struct TestHTTPClient: Sendable {
    /// How a request reaches the app.
    public enum Transport: Sendable {
        /// A TCP connection to a live server on loopback.
        case socket
        /// A direct call of the handler, with the server's body size limit in bytes.
        case inProcess(any HTTPHandler, maxBodyBytes: Int)
    }

    public let host: String
    /// The live server's port, or the fake one an in-process server names in its `Host` and issuer.
    public let port: UInt16
    public let transport: Transport

    /// A client of a live server on loopback.
    public init(host: String = "127.0.0.1", port: UInt16) {
        self.host = host
        self.port = port
        self.transport = .socket
    }

    /// A client that calls `handler` in process; `port` only appears in the `Host` field.
    public init(handler: any HTTPHandler, port: UInt16, maxBodyBytes: Int = HTTPServerConfiguration().maxBodyBytes) {
        self.host = "127.0.0.1"
        self.port = port
        self.transport = .inProcess(handler, maxBodyBytes: maxBodyBytes)
    }

    /// Whether requests go over a socket to a live server.
    public var isLive: Bool {
        if case .socket = transport { return true }
        return false
    }

    public enum Failure: Error, CustomStringConvertible {
        case connect(Int32), send, malformed
        /// The request needs a socket (the reason is a sentence): run the test on `TestServer(live: true)`.
        case needsLiveServer(String)

        public var description: String {
            switch self {
            case .connect(let code): "connecting to the test server failed (errno \(code))"
            case .send: "sending the request failed"
            case .malformed: "the response is not HTTP/1.1"
            case .needsLiveServer(let reason): "\(reason) Only a socket carries it: use TestServer(live: true)."
            }
        }
    }

    /// Sends one request and reads the response.
    /// - Parameter target: the request target exactly as it goes on the wire (path and query).
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestResponse {
        try send(method, targetBytes: Array(target.utf8), headers: headers, body: body)
    }

    /// Sends one request whose target is given as bytes, so a test can send bytes that are not UTF-8
    /// (over a socket only).
    public func send(_ method: String, targetBytes: [UInt8], headers: [(String, String)] = [], body: [UInt8] = []) throws
        -> TestResponse
    {
        var fields = [("Host", "\(host):\(port)"), ("Connection", "close")] + headers
        if !body.isEmpty || method == "POST" || method == "PATCH" || method == "PUT" { fields.append(("Content-Length", "\(body.count)")) }
        switch transport {
        case .socket:
            return try sendOverSocket(method, targetBytes: targetBytes, fields: fields, body: body)
        case .inProcess(let handler, let maxBodyBytes):
            return try Self.answer(
                handler, maxBodyBytes: maxBodyBytes, method, targetBytes: targetBytes, fields: fields, testFields: headers, body: body)
        }
    }

    private func sendOverSocket(_ method: String, targetBytes: [UInt8], fields: [(String, String)], body: [UInt8]) throws -> TestResponse {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure.connect(errno) }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect(errno) }
        var head = " HTTP/1.1\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let request = Array("\(method) ".utf8) + targetBytes + Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure.send }
            sent += written
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        return try Self.parse(response)
    }

    /// The in-process transport: refuses what only a socket carries, answers through the server's own steps,
    /// then frames the answer as libmicrohttpd does.
    static func answer(
        _ handler: any HTTPHandler, maxBodyBytes: Int, _ method: String, targetBytes: [UInt8], fields: [(String, String)],
        testFields: [(String, String)], body: [UInt8]
    ) throws -> TestResponse {
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw Failure.needsLiveServer("The request target has a byte outside visible ASCII.")
        }
        for (name, _) in testFields where ["host", "connection", "content-length", "transfer-encoding"].contains(name.lowercased()) {
            throw Failure.needsLiveServer("The test sets the framing field \(name).")
        }
        let headerBytes = fields.reduce(targetBytes.count) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        guard headerBytes <= headerSectionLimit else {
            throw Failure.needsLiveServer("The request line and header section exceed libmicrohttpd's own limits.")
        }
        // libmicrohttpd hands the handler values without surrounding whitespace (RFC 9112 §5.1).
        let headers = HTTPHeaders(fields.map { ($0.0, $0.1.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))) })
        let response = HTTPServer.answerInProcess(
            handler, method: method, target: targetBytes, headers: headers, body: body, maxBodyBytes: maxBodyBytes)
        return frame(response, method: method)
    }

    /// The request line and header section the in-process transport answers; past it libmicrohttpd's
    /// connection memory (64 KiB by default, shared with the read buffer) decides, so only a socket tells.
    static let headerSectionLimit = 32_768

    /// `response` as libmicrohttpd 0.9.75 puts it on the wire for a client that sent `Connection: close`.
    static func frame(_ response: HTTPResponse, method: String) -> TestResponse {
        // Its own fields first (Date, the Connection the request asked for), the handler's in order, the length last.
        var headers: [(name: String, value: String)] = [("date", httpDate()), ("connection", "close")]
        headers += response.headers.filter { $0.name.lowercased() != "connection" }.map { ($0.name.lowercased(), $0.value) }
        headers.append(("content-length", "\(response.body.count)"))
        return TestResponse(status: response.status, headers: headers, body: method == "HEAD" ? [] : response.body)
    }

    /// Now as an IMF-fixdate (RFC 9110 §5.6.7).
    static func httpDate() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date())
    }

    static func parse(_ bytes: [UInt8]) throws -> TestResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure.malformed
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }), length <= body.count {
            body = Array(body[..<length])
        }
        return TestResponse(status: status, headers: headers, body: body)
    }
}

/// A browser for tests: a cookie jar in front of `TestHTTPClient`; never follows redirects.
public final class TestBrowser: @unchecked Sendable {
    public let client: TestHTTPClient
    public private(set) var cookies: [String: String] = [:]

    public init(client: TestHTTPClient) {
        self.client = client
    }

    /// GET a path (with query), sending and storing cookies.
    public func get(_ target: String, headers: [(String, String)] = []) throws -> TestResponse {
        try send("GET", target, headers: headers, body: [])
    }

    /// POST an `application/x-www-form-urlencoded` form.
    public func postForm(_ target: String, _ fields: [(String, String)]) throws -> TestResponse {
        let body = fields.map { "\(Self.formEncode($0.0))=\(Self.formEncode($0.1))" }.joined(separator: "&")
        return try send("POST", target, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(body.utf8))
    }

    public func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws -> TestResponse {
        var all = headers
        if !cookies.isEmpty { all.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "))) }
        let response = try client.send(method, target, headers: all, body: body)
        for header in response.headerValues("set-cookie") {
            let pair = header.split(separator: ";")[0]
            guard let eq = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<eq])
            let value = String(pair[pair.index(after: eq)...])
            if header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    /// Forgets a cookie, as a new browser would not have it.
    public func removeCookie(_ name: String) { cookies[name] = nil }

    /// Puts a cookie in the jar that the server never set, as someone able to plant cookies would.
    public func plantCookie(_ name: String, _ value: String) { cookies[name] = value }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

/// Reads the value of a hidden form field from a page (`name="csrf" value="…"`).
public func hiddenField(_ name: String, in html: String) -> String? {
    guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
    let rest = html[range.upperBound...]
    guard let end = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<end]).replacingOccurrences(of: "&amp;", with: "&")
}

/// The query items of a redirect `Location`, decoded as `application/x-www-form-urlencoded`.
public func queryItems(of location: String) -> [String: String] {
    guard let questionMark = location.firstIndex(of: "?") else { return [:] }
    var items: [String: String] = [:]
    for pair in location[location.index(after: questionMark)...].split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let decode = { (s: Substring) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s) }
        items[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
    }
    return items
}
