import Authorize
import Encoding
import Foundation
import HTTPServer

/// Building responses: JSON bodies, OAuth error bodies, cookies, and the headers every page carries.
enum Wire {
    /// `{"error": code, "error_description": description}` with `Cache-Control: no-store`.
    /// Source: RFC 6749 §5.2 (error body), docs/protocol.md#json-error-body.
    static func error(_ error: OAuthError, wireCode: String? = nil, description: String? = nil, extraHeaders: [(String, String)] = [])
        -> HTTPResponse
    {
        var response = json(
            status: error.status,
            [
                "error": .string(wireCode ?? error.code.rawValue),
                "error_description": .string(description ?? error.description),
            ] as JSONValue)
        for (name, value) in extraHeaders { response.headers.add(name, value) }
        return response
    }

    /// A JSON error for a code and a description, with the code's status.
    static func error(_ code: OAuthErrorCode, _ description: String, status: Int? = nil) -> HTTPResponse {
        json(status: status ?? code.httpStatus, ["error": .string(code.rawValue), "error_description": .string(description)] as JSONValue)
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

    /// The old Foundation path, kept only while call sites move to `json(status:_:)` with typed values.
    /// A value that fails to encode is a 500, never an empty object with the original status.
    static func anyJSON(status: Int, _ value: Any) -> HTTPResponse {
        guard let body = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            return json(status: 500, ["error": "server_error", "error_description": "Something went wrong on our side."] as JSONValue)
        }
        return jsonBytes(status: status, Array(body))
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
    static func pageHeaders() -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.set("Content-Type", "text/html; charset=utf-8")
        headers.set("Cache-Control", "no-store")
        // No form-action: Chrome applies it to the redirect after a form post, which goes to the app.
        headers.set(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'")
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

    /// The cookies of a request (RFC 6265 §5.4 `cookie-string`). A name sent more than once with
    /// different values is left out: the order a browser sends same-named cookies in says nothing about
    /// who set them, so a planted one must not win by coming first (docs/decisions.md, "Ambiguous cookies").
    static func cookies(of request: HTTPRequest) -> [String: String] {
        var result: [String: String] = [:]
        var ambiguous: Set<String> = []
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard let eq = trimmed.firstIndex(of: "=") else { continue }
                let name = String(trimmed[..<eq])
                let value = String(trimmed[trimmed.index(after: eq)...])
                if let seen = result[name], seen != value { ambiguous.insert(name) } else { result[name] = value }
            }
        }
        for name in ambiguous { result[name] = nil }
        return result
    }

    /// Whether the client asked for JSON (`Accept: application/json`) rather than a page.
    static func wantsJSON(_ request: HTTPRequest) -> Bool {
        request.headers.values("Accept").contains { $0.lowercased().contains("application/json") }
    }

    /// The bearer credential of `Authorization: Bearer …` (RFC 6750 §2.1), or nil. A credential that
    /// fails `StorableText` is no credential (it could never match one, and must not reach SQL).
    static func bearer(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty || !StorableText.isStorable(token) ? nil : token
    }

    /// RFC 3339 UTC with seconds (`2026-11-30T11:16:16Z`).
    static func timestamp(_ date: Date) -> String {
        Timestamp.rfc3339(secondsSinceEpoch: Int64(date.timeIntervalSince1970.rounded(.down)))
    }
}

/// A JSON request body checked strictly (RFC 8259: Foundation accepts a BOM and trailing commas, so
/// `StrictJSON` runs first) and read as an object. This is the edge where every JSON request value is
/// decoded, so it also applies `StorableText` to every string and member name at any depth: a `\u0000`
/// anywhere makes the body unreadable (`invalid_request`) before a handler or SQL sees it.
struct JSONObjectBody {
    let fields: [String: Any]

    /// - Returns: nil when the body is not one strict JSON object, or holds U+0000 in a string or name.
    init?(_ bytes: [UInt8]) {
        guard (try? StrictJSON.validate(bytes)) != nil,
            let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? [String: Any],
            Self.isStorable(object)
        else { return nil }
        fields = object
    }

    /// Whether every string and member name in `value` passes `StorableText` (depth is bounded by
    /// `StrictJSON`'s limit).
    private static func isStorable(_ value: Any) -> Bool {
        switch value {
        case let text as String:
            return StorableText.isStorable(text)
        case let object as [String: Any]:
            return object.allSatisfy { StorableText.isStorable($0.key) && isStorable($0.value) }
        case let array as [Any]:
            return array.allSatisfy(isStorable)
        default:
            return true
        }
    }

    enum Field<T> { case missing, wrongType, value(T) }

    /// A string field: missing (absent or null), of the wrong type, or its value.
    func string(_ name: String) -> Field<String> {
        guard let raw = fields[name], !(raw is NSNull) else { return .missing }
        guard let value = raw as? String else { return .wrongType }
        return .value(value)
    }
}
