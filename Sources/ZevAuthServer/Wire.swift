import Authorize
import Encoding
import Foundation
import HTTPServer

/// Building responses: JSON bodies, OAuth error bodies, cookies, and the headers every page carries.
enum Wire {
    /// The error response for `answer` at `place`, from the one renderer (`ErrorRenderer`): status and
    /// headers from its table, the debug detail to `log` and never to the body.
    static func error(_ answer: ErrorAnswer, at place: ErrorPlace = .api, log: (any LogSink)? = nil) -> HTTPResponse {
        ErrorRenderer.render(answer, at: place, log: log)
    }

    /// `{"error": code, "error_description": description}` with `Cache-Control: no-store`, at
    /// `error.status` (an `OAuthError` carries the start's 400 `invalid_client`), with the renderer's headers
    /// for that status. Source: RFC 6749 §5.2 (error body), docs/protocol.md#json-error-body.
    /// Prefer `error(_:at:log:)`, whose status comes from the renderer's table.
    static func error(_ error: OAuthError, wireCode: String? = nil, description: String? = nil, extraHeaders: [(String, String)] = [])
        -> HTTPResponse
    {
        let answer = ErrorAnswer(error)
        let headers = ErrorRenderer.headers(answer, status: error.status, at: .api) + extraHeaders
        return ErrorRenderer.response(
            status: error.status, code: wireCode ?? error.code.rawValue, description: description ?? error.description, headers: headers,
            format: .json)
    }

    /// A JSON error for a code and a description, with the renderer's status and headers for the code.
    static func error(_ code: OAuthErrorCode, _ description: String) -> HTTPResponse {
        ErrorRenderer.render(ErrorAnswer(code, description), at: .api)
    }

    /// A JSON response of a typed value, encoded in one pass by `JSONWriter`; `no-store` always (tokens and
    /// keys travel in these bodies; RFC 6749 §5.1).
    static func json(status: Int, _ value: some JSONEncodable) -> HTTPResponse {
        jsonBytes(status: status, JSONWriter.encode(value))
    }

    /// A JSON response whose body is already encoded (a constant document encoded once).
    static func jsonBytes(status: Int, _ body: [UInt8]) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/json")
        headers.set("Cache-Control", "no-store")
        headers.set("Pragma", "no-cache")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A 303 See Other to `location` (RFC 9110 §15.4.4): the browser follows it with GET.
    static func seeOther(_ location: String, cookies: [String] = []) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.set("Location", location)
        headers.set("Cache-Control", "no-store")
        for cookie in cookies { headers.add("Set-Cookie", cookie) }
        return HTTPResponse(status: 303, headers: headers, body: [])
    }

    /// Headers of every HTML page: no framing (clickjacking), no third-party anything, no caching.
    /// - Parameter scripts: the page loads this server's own script (the passkey pages): the policy adds
    ///   `script-src 'self'; connect-src 'self'` and nothing inline.
    static func pageHeaders(scripts: Bool = false) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "text/html; charset=utf-8")
        headers.set("Cache-Control", "no-store")
        // No form-action: Chrome applies it to the redirect after a form post, which goes to the app.
        headers.set(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; "
                + (scripts ? "script-src 'self'; connect-src 'self'; " : "") + "base-uri 'none'; frame-ancestors 'none'")
        headers.set("X-Frame-Options", "DENY")
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("Referrer-Policy", "no-referrer")
        return headers
    }

    /// A `Set-Cookie` value: `HttpOnly`, `SameSite=Lax`, `Path=/`, and `Secure` unless development on
    /// loopback. `maxAge` in seconds; nil for a browser-session cookie, 0 to delete.
    static func cookie(name: String, value: String, maxAge: Int?, secure: Bool) -> String {
        var parts = ["\(name)=\(value)", "Path=/", "HttpOnly", "SameSite=Lax"]
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        if secure { parts.append("Secure") }
        return parts.joined(separator: "; ")
    }

    /// The cookies of a request (RFC 6265 §5.4 `cookie-string`; the rule is `CookieHeader.pairs`, where a
    /// name sent more than once with different values is left out).
    static func cookies(of request: HTTPRequest) -> [String: String] {
        CookieHeader.pairs(request.headers.values("Cookie"))
    }

    /// Whether the client asked for JSON (`Accept: application/json`) rather than a page.
    static func wantsJSON(_ request: HTTPRequest) -> Bool {
        request.headers.values("Accept").contains { $0.lowercased().contains("application/json") }
    }

    /// The bearer credential of `Authorization: Bearer …` (RFC 6750 §2.1), or nil. A credential that
    /// fails `StorableText` is no credential (it could never match one, and must not reach SQL).
    static func bearer(_ request: HTTPRequest) -> String? {
        // Exactly one `Authorization` field: two are ambiguous (which one a proxy or the client meant), so
        // neither counts (RFC 9110 §5.3 allows repeating only list-valued fields).
        let fields = request.headers.values("Authorization")
        guard fields.count == 1, let header = fields.first else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = trimmedOfWhitespace(parts[1])
        return token.isEmpty || !StorableText.isStorable(token) ? nil : token
    }

    /// `text` without leading and trailing whitespace (`CharacterSet.whitespaces`: tab and the Unicode space
    /// separators). A credential that neither begins nor ends with one (the common case) is taken as it is,
    /// without Foundation's trimming.
    static func trimmedOfWhitespace(_ text: Substring) -> String {
        let plain: (Unicode.Scalar) -> Bool = { $0.isASCII && $0 != " " && $0 != "\t" }
        if let first = text.unicodeScalars.first, let last = text.unicodeScalars.last, plain(first), plain(last) {
            return String(text)
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// RFC 3339 UTC with seconds (`2026-11-30T11:16:16Z`).
    static func timestamp(_ date: Date) -> String {
        Timestamp.rfc3339(secondsSinceEpoch: Int64(date.timeIntervalSince1970.rounded(.down)))
    }
}

/// A JSON request body parsed strictly (`JSONValue.parse`: RFC 8259, no BOM, no trailing commas, no
/// duplicate names, depth at most 32) and read as an object. This is the edge where every JSON request
/// value is decoded, so it also applies `StorableText` to every string and member name at any depth: a
/// `\u0000` anywhere makes the body unreadable (`invalid_request`) before a handler or SQL sees it.
struct JSONObjectBody: Sendable {
    /// The object's members, in document order (names are unique: the parser refuses repeats).
    let members: [(String, JSONValue)]

    /// - Returns: nil when the body is not one strict JSON object, or holds U+0000 in a string or name.
    init?(_ bytes: [UInt8]) {
        guard case .object(let members)? = try? JSONValue.parse(bytes), Self.isStorable(.object(members)) else { return nil }
        self.members = members
    }

    /// Whether every string and member name in `value` passes `StorableText` (depth is bounded by the
    /// parser's limit).
    private static func isStorable(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): StorableText.isStorable(text)
        case .object(let members): members.allSatisfy { StorableText.isStorable($0.0) && isStorable($0.1) }
        case .array(let elements): elements.allSatisfy(isStorable)
        case .null, .bool, .int, .double: true
        }
    }

    /// A field read as a type: missing (absent or `null`), of the wrong type, or its value.
    enum Field<T> { case missing, wrongType, value(T) }

    /// The member `name` as parsed, nil when absent (`.null` when sent as `null`).
    subscript(name: String) -> JSONValue? { members.first { $0.0 == name }?.1 }

    /// The member names, in document order.
    var names: [String] { members.map(\.0) }

    /// Whether the body has a member `name` (even `null`).
    func contains(_ name: String) -> Bool { self[name] != nil }

    /// A string field.
    func string(_ name: String) -> Field<String> { read(name) { $0.stringValue } }

    /// A whole-number field: a JSON number with no fraction that fits `Int` (`3`, `3.0`, `3e0`); a boolean,
    /// a fraction or a string is the wrong type.
    func int(_ name: String) -> Field<Int> { read(name) { $0.intValue } }

    /// A boolean field (`true`/`false`; a number is the wrong type).
    func bool(_ name: String) -> Field<Bool> { read(name) { $0.boolValue } }

    /// An array of strings; any other element makes it the wrong type.
    func stringArray(_ name: String) -> Field<[String]> {
        read(name) { value in
            guard let elements = value.arrayValue else { return nil }
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for element in elements {
                guard let text = element.stringValue else { return nil }
                strings.append(text)
            }
            return strings
        }
    }

    /// A nested object's members, in document order.
    func object(_ name: String) -> Field<[(String, JSONValue)]> { read(name) { $0.objectValue } }

    private func read<T>(_ name: String, _ convert: (JSONValue) -> T?) -> Field<T> {
        guard let raw = self[name], !raw.isNull else { return .missing }
        guard let value = convert(raw) else { return .wrongType }
        return .value(value)
    }
}
