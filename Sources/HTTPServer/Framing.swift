/// The HTTP/1.1 message rules libmicrohttpd leaves to us (docs/decisions.md#libmicrohttpd): pure functions, no C.
enum Framing {
    /// The response to send instead of calling the handler, or `nil` when the request may proceed.
    /// Runs in the headers phase, so a rejection goes out before any `100 Continue`.
    static func rejection(target: [UInt8], headers: HTTPHeaders, maxBodyBytes: Int) -> HTTPResponse? {
        // RFC 9110 §15.5.15: a target longer than the server is willing to interpret is 414.
        guard target.count <= maxTargetBytes, queryFieldCount(target) <= maxQueryFields else {
            return HTTPResponse.jsonError(
                status: 414, error: "invalid_request",
                description:
                    "The request target is too long or has too many query parameters (at most \(maxTargetBytes) bytes and \(maxQueryFields) parameters).",
                close: true)
        }
        // RFC 6585 §5. Larger header sections never get here: libmicrohttpd answers 431 itself.
        let headerBytes = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        guard headers.count <= maxHeaderFields, headerBytes <= maxHeaderBytes else {
            return HTTPResponse.jsonError(
                status: 431, error: "invalid_request",
                description:
                    "The request header fields are too large (at most \(maxHeaderFields) fields and \(maxHeaderBytes) bytes).",
                close: true)
        }
        // RFC 9112 §3.2: the request-target is visible ASCII (RFC 3986 characters, percent-encoded otherwise).
        guard !target.isEmpty, target.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return invalid("The request target must be visible ASCII.")
        }
        // RFC 9112 §5.1: no whitespace between a field name and its colon, and a server MUST answer such a
        // line 400; libmicrohttpd keeps the space in the name, so "Content-Length : 5" would not frame the
        // body and the body would be read as the next request. A name that is not a token is refused too.
        guard headers.allSatisfy({ isToken($0.name) }) else {
            return invalid("A header field name must be a token directly followed by a colon.")
        }
        let lengths = headers.values("Content-Length")
        let codings = headers.values("Transfer-Encoding")
        // RFC 9112 §6.1: a server MAY reject a request with both; it MUST then close the connection.
        // libmicrohttpd would silently prefer chunked, which a proxy in front may not.
        if !lengths.isEmpty && !codings.isEmpty {
            return invalid("Content-Length and Transfer-Encoding must not both be sent.")
        }
        if !codings.isEmpty {
            // RFC 9112 §6.1: an unknown transfer coding SHOULD get 501. libmicrohttpd only decodes a lone
            // "chunked"; anything else it would read as an empty body, leaving the rest to desynchronize.
            let coding = codings.joined(separator: ",").utf8.filter { $0 != 0x20 && $0 != 0x09 }
            guard coding.map(HTTPHeaders.asciiLower) == Array("chunked".utf8) else {
                return HTTPResponse.jsonError(
                    status: 501, error: "invalid_request",
                    description: "Only the chunked transfer coding is supported.",
                    close: true)
            }
        }
        guard let first = lengths.first else { return nil }
        // RFC 9112 §6.3 item 5: differing or invalid Content-Length values are unrecoverable framing errors.
        guard lengths.allSatisfy({ $0 == first }) else {
            return invalid("Conflicting Content-Length values.")
        }
        guard !first.isEmpty, first.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return invalid("Content-Length must be a decimal number.")
        }
        // All digits; nil means it overflows Int, which is too large as well.
        guard let length = Int(first), length <= maxBodyBytes else {
            return HTTPResponse.jsonError(
                status: 413, error: "request_too_large", description: "The request body is too large.", close: true)
        }
        return nil
    }

    /// The response to a request whose `Host` is missing (HTTP/1.1) or repeated (RFC 9112 §3.2), or `nil`.
    /// libmicrohttpd's own check (`MHD_OPTION_STRICT_FOR_CLIENT` 1) answers in HTML and writes the status
    /// line twice, so the daemon runs at 0 and checks here; an in-process request skips it, as it skips the
    /// rest of libmicrohttpd's parsing (`HTTPServer.answerInProcess`).
    /// - Parameter version: the request line's HTTP version as libmicrohttpd reports it, e.g. `HTTP/1.1`.
    static func hostRejection(version: String, headers: HTTPHeaders) -> HTTPResponse? {
        let hosts = headers.values("Host")
        if hosts.count > 1 {
            return invalid("A request must carry one Host header field.")
        }
        if hosts.isEmpty && version != "HTTP/1.0" {
            return invalid("An HTTP/1.1 request must carry a Host header field.")
        }
        return nil
    }

    /// The longest request target the server interprets, in bytes (docs/decisions.md, "Request limits"):
    /// nginx's default limit for a request line, so anything a default proxy passes on is answered.
    static let maxTargetBytes = 8_192

    /// The most query fields (`&`-separated, empty ones included) a target may carry. The widest request the
    /// API defines (an OpenID start) has about fifteen.
    static let maxQueryFields = 256

    /// The most request header fields (Apache httpd's default `LimitRequestFields`).
    static let maxHeaderFields = 100

    /// The largest request header section, in bytes (each field counted as `name: value` plus CRLF).
    static let maxHeaderBytes = 16_384

    /// The number of `&`-separated fields in the target's query (0 without a "?"), fragment excluded.
    static func queryFieldCount(_ target: [UInt8]) -> Int {
        guard let mark = target.firstIndex(of: UInt8(ascii: "?")) else { return 0 }
        var count = 1
        for byte in target[(mark + 1)...] {
            if byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "&") { count += 1 }
        }
        return count
    }

    /// Splits a request target into the path and the raw query at the first "?", dropping any "#" fragment
    /// (RFC 3986 §3.5: never sent, but ignored if it is). Both stay percent-encoded.
    static func splitTarget(_ target: [UInt8]) -> (path: String, query: String?) {
        let withoutFragment =
            target.split(separator: UInt8(ascii: "#"), maxSplits: 1, omittingEmptySubsequences: false)
            .first ?? []
        guard let mark = withoutFragment.firstIndex(of: UInt8(ascii: "?")) else {
            return (String(decoding: withoutFragment, as: UTF8.self), nil)
        }
        return (
            String(decoding: withoutFragment[..<mark], as: UTF8.self),
            String(decoding: withoutFragment[(mark + 1)...], as: UTF8.self)
        )
    }

    /// `response` as it may go on the wire. Fields the server owns are normalized: `Content-Length` and
    /// `Transfer-Encoding` are dropped (framing, RFC 9112 §6), and `Connection` (hop-by-hop, RFC 9110 §7.6.1)
    /// survives only as `Connection: close` when a handler asked to close (libmicrohttpd 0.9.75 refuses
    /// `Connection: keep-alive`). Fields with an empty value are dropped (libmicrohttpd refuses them; an
    /// empty list-based field equals an absent one, RFC 9110 §5.6.1). A status outside 200–599, a field name
    /// that is not a token (RFC 9110 §5.1) or a value with CR, LF or NUL (RFC 9110 §5.5, response splitting)
    /// turns the response into a 500.
    static func sendable(_ response: HTTPResponse) -> HTTPResponse {
        var out = response
        let closes = out.headers.values("Connection").contains { value in
            value.split(separator: ",").contains { HTTPHeaders.namesMatch(String($0.filter { $0 != " " }), "close") }
        }
        for owned in ["Content-Length", "Transfer-Encoding", "Connection"] {
            out.headers.remove(owned)
        }
        out.headers = HTTPHeaders(out.headers.filter { !$0.value.isEmpty }.map { ($0.name, $0.value) })
        if closes { out.headers.add("Connection", "close") }
        let fieldsOK = out.headers.allSatisfy { field in
            isToken(field.name) && !field.value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }
        }
        guard (200...599).contains(out.status), fieldsOK else { return serverError }
        return out
    }

    /// The 500 sent when a handler's response cannot be sent as given.
    static let serverError = HTTPResponse.jsonError(
        status: 500, error: "server_error", description: "The server could not produce a valid response.")

    /// The 503 sent at once when a request's `WorkQueue` is full (RFC 9110 §15.6.4, `Retry-After` §10.2.3):
    /// the client may try again a second later (docs/operations.md, "Work queues").
    static let queueFull: HTTPResponse = {
        var response = HTTPResponse.jsonError(
            status: 503, error: "temporarily_unavailable",
            description: "The server is busy; try again in a moment.")
        response.headers.add("Retry-After", "1")
        return response
    }()

    /// RFC 9110 §5.6.2 token: one or more tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }

    private static func invalid(_ description: String) -> HTTPResponse {
        HTTPResponse.jsonError(status: 400, error: "invalid_request", description: description, close: true)
    }
}
