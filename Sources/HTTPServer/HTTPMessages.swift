/// One HTTP request as the server hands it to an `HTTPHandler`.
///
/// The target is kept exactly as sent so that decoding is the handler's explicit choice: `path` is still
/// percent-encoded and `rawQuery` is not form-decoded (RFC 9112 §3.2, RFC 3986 §3).
public struct HTTPRequest: Sendable {
    /// The request method, case-sensitive as sent (RFC 9110 §9.1): "GET", "POST", …
    public var method: String
    /// The path exactly as sent (still percent-encoded), without the query and without any fragment.
    public var path: String
    /// The query exactly as sent, without the leading "?"; `nil` when the target has no "?".
    public var rawQuery: String?
    /// The request header fields in the order received.
    public var headers: HTTPHeaders
    /// The request body, at most `HTTPServerConfiguration.maxBodyBytes` bytes.
    public var body: [UInt8]
    /// The peer's IP address literal, e.g. "127.0.0.1" or "::1" (behind a reverse proxy: the proxy).
    public var remoteAddress: String

    /// A request built in-process, e.g. for handler tests without a socket.
    public init(
        method: String, path: String, rawQuery: String? = nil, headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], remoteAddress: String = "127.0.0.1"
    ) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }
}

/// One HTTP response produced by an `HTTPHandler`.
///
/// The server sets the framing itself: `Content-Length` and `Transfer-Encoding` fields given here are
/// dropped (RFC 9110 §8.6, RFC 9112 §6). A status outside 200–599, or a field name that is not a token or
/// a value containing CR, LF or NUL (RFC 9110 §5.1, §5.5), makes the server answer 500 instead.
public struct HTTPResponse: Sendable {
    /// The status code (RFC 9110 §15), 200–599.
    public var status: Int
    /// The response header fields, sent in order.
    public var headers: HTTPHeaders
    /// The response body bytes.
    public var body: [UInt8]

    /// A response with `status`, `headers` and `body`.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON error body `{"error":…,"error_description":…}` in the OAuth style (RFC 6749 §5.2), used for
    /// the errors the HTTP layer produces itself. Like every JSON answer of the server it carries
    /// `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1; docs/protocol.md, "Conventions").
    static func jsonError(status: Int, error: String, description: String, close: Bool = false) -> HTTPResponse {
        var headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("Pragma", "no-cache"),
        ])
        if close { headers.add("Connection", "close") }
        let body = "{\"error\":\(jsonString(error)),\"error_description\":\(jsonString(description))}"
        return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }

    /// A JSON string literal (RFC 8259 §7).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Something that answers requests. Called on one of the server's worker threads, possibly on several at
/// once, or on a `WorkQueue`'s thread when `placement(for:)` says so. A handler that blocks on an HTTP
/// worker holds up the other connections of that worker, so slow work (Argon2id, outbound HTTPS) declares
/// a queue (docs/decisions.md, "Slow work leaves the HTTP workers").
public protocol HTTPHandler: Sendable {
    /// Answers `request`. The HTTP layer has already enforced framing and the body size limit.
    func handle(_ request: HTTPRequest) -> HTTPResponse

    /// Where `handle(_:)` runs for `request`; decided on the HTTP worker, so it must be quick. The default
    /// is `.inline`.
    func placement(for request: HTTPRequest) -> Placement
}

extension HTTPHandler {
    /// Every request runs inline on its HTTP worker.
    public func placement(for request: HTTPRequest) -> Placement { .inline }
}
