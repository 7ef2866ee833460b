import Encoding
import Fetch
import Foundation

/// A response as the checks see it: status, headers, body, with helpers that never expose a secret.
public struct Observed: Sendable {
    /// The HTTP status.
    public let status: Int
    /// Every header line.
    public let headers: [HTTPClientHeader]
    /// The body.
    public let body: [UInt8]

    /// An observation of a client response.
    public init(_ response: HTTPClientResponse) {
        self.init(status: response.status, headers: response.headers, body: response.body)
    }

    /// An observation built by hand (tests).
    public init(status: Int, headers: [(String, String)] = [], body: String = "") {
        self.init(status: status, headers: headers.map { HTTPClientHeader(name: $0.0, value: $0.1) }, body: Array(body.utf8))
    }

    init(status: Int, headers: [HTTPClientHeader], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name`, case-insensitive.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The body as a JSON object, or nil.
    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }

    /// `error` of a JSON error body, or the code an HTML error page shows in `<code>…</code>`.
    public var errorCode: String? {
        if let code = json?["error"] as? String { return code }
        guard isHTML else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: "<code>"), let end = text.range(of: "</code>", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        let code = String(text[start.upperBound..<end.lowerBound])
        return Verdicts.isErrorCode(code) ? code : nil
    }

    /// `Content-Type` starts with `text/html`.
    public var isHTML: Bool { header("Content-Type")?.lowercased().hasPrefix("text/html") ?? false }
    /// `Content-Type` is `application/json` (parameters allowed).
    public var isJSON: Bool { header("Content-Type")?.lowercased().hasPrefix("application/json") ?? false }
    /// `Cache-Control` carries the `no-store` directive.
    public var hasNoStore: Bool {
        headers.filter { $0.name.lowercased() == "cache-control" }.contains { value in
            value.value.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "no-store" }
        }
    }
}

/// Where the server sent the browser back to the app: a 303 `Location`, or the link of the "Return to the
/// app" page (docs/protocol.md#redirected-error,
/// docs/protocol.md#remembered-consent). Holds the parameters; ``description`` never shows `code`.
public struct RedirectBack: Sendable {
    /// How it was delivered.
    public enum Delivery: String, Sendable {
        case seeOther = "303"
        case heldPage = "the Return to the app page"
        case otherRedirect = "a redirect"
    }

    /// The delivery.
    public let delivery: Delivery
    /// The target URL exactly as sent.
    public let target: String
    /// The raw query of the target (without `?`).
    public let rawQuery: String
    /// The decoded query parameters, in order.
    public let parameters: [(name: String, value: String)]

    /// The first value of `name`.
    public func value(_ name: String) -> String? { parameters.first { $0.name == name }?.value }

    /// Finds the redirect back to `redirectURI` in `observed`: a 3xx whose `Location` starts with the
    /// redirect URI followed by `?` (or `&` when it has a query), or a 200 HTML page with such a link.
    public static func find(in observed: Observed, redirectURI: String) -> RedirectBack? {
        var candidates: [(Delivery, String)] = []
        if (300..<400).contains(observed.status), let location = observed.header("Location") {
            candidates.append((observed.status == 303 ? .seeOther : .otherRedirect, location))
        }
        if observed.status == 200, observed.isHTML {
            for href in Verdicts.links(in: String(decoding: observed.body, as: UTF8.self)) { candidates.append((.heldPage, href)) }
        }
        for (delivery, target) in candidates {
            let separator = redirectURI.contains("?") ? "&" : "?"
            guard target.hasPrefix(redirectURI + separator) || target == redirectURI else { continue }
            let query = target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let parameters = (try? FormURLEncoding.decode(query)) ?? []
            return RedirectBack(delivery: delivery, target: target, rawQuery: query, parameters: parameters)
        }
        return nil
    }
}

/// The pure verdict functions: an observation and an expectation in, an ``Outcome`` out. Descriptions
/// name statuses, error codes and header presence, never a value that could be a secret.
public enum Verdicts {
    /// A snake_case word of at most 64 characters (an OAuth or product error code).
    public static func isErrorCode(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || $0 == "_" || ("0"..."9").contains($0) }
    }

    /// The leading error code of an `error_description` (`pkce_required: …` or `pkce_required …`), if any.
    public static func leadingCode(_ description: String?) -> String? {
        guard let description else { return nil }
        let word = description.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return isErrorCode(String(word)) && word.contains("_") ? String(word) : nil
    }

    /// The `href` values of `<a>` links in an HTML page, HTML-unescaped.
    public static func links(in html: String) -> [String] {
        var out: [String] = []
        var rest = html[...]
        while let range = rest.range(of: "href=\"") {
            let after = rest[range.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            out.append(htmlUnescape(String(after[..<end])))
            rest = after[after.index(after: end)...]
        }
        return out
    }

    /// Undoes `&amp; &lt; &gt; &quot; &#39; &#x27;`.
    public static func htmlUnescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&#x27;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// A short, secret-free description: `400 invalid_grant`, `303 to /v1/auth/zevid/signin`,
    /// `303 to the redirect URI with error=pkce_required`, `200 HTML`, plus `no-store` when asked.
    public static func describe(_ observed: Observed, redirectURI: String? = nil) -> String {
        var text = "\(observed.status)"
        if let redirectURI, let back = RedirectBack.find(in: observed, redirectURI: redirectURI) {
            let what =
                back.value("error").map { isErrorCode($0) ? "error=\($0)" : "an error" }
                ?? (back.value("code") != nil ? "a code" : "no code or error")
            let via = back.delivery == .heldPage ? " on the Return to the app page" : ""
            return "\(text) to the redirect URI with \(what)\(via)"
        }
        if (300..<400).contains(observed.status) {
            if let location = observed.header("Location") {
                if location.hasPrefix("/") {
                    text += " to \(location.split(separator: "?").first.map(String.init) ?? "/")"
                } else {
                    text += " to another URL"
                }
            } else {
                text += " without Location"
            }
            return text
        }
        if let code = observed.errorCode {
            text += " \(isErrorCode(code) ? code : "(unrecognised error)")"
        } else if observed.isHTML {
            text += " HTML"
        } else if observed.isJSON {
            text += " JSON"
        }
        return text
    }

    // MARK: Errors

    /// An error shown to the person, never redirected: `status`, `error`, and no `Location`.
    public static func shownError(_ observed: Observed, status: Int, error: String) -> Outcome {
        let seen = describe(observed)
        let redirected = observed.header("Location") != nil
        return .expect(observed.status == status && observed.errorCode == error && !redirected, redirected ? "\(seen), redirected" : seen)
    }

    /// An error sent back to `redirectURI` with `error`, the unchanged `state` and `iss`; on the standard
    /// endpoint `descriptionPrefix` must lead `error_description`. A loopback redirect must be a 303.
    /// `state` nil: no `state` may come back (a refused request object whose outer state was missing,
    /// docs/protocol.md#start-check-4).
    public static func redirectedError(
        _ observed: Observed, redirectURI: String, error: String, state: String?, issuer: String, descriptionPrefix: String? = nil
    ) -> Outcome {
        guard let back = RedirectBack.find(in: observed, redirectURI: redirectURI) else {
            return .fail("\(describe(observed)), not redirected to the redirect URI")
        }
        var problems: [String] = []
        if back.value("error") != error { problems.append("error is not \(error)") }
        if back.value("state") != state {
            problems.append(
                state == nil ? "a state came back though none was expected" : back.value("state") == nil ? "no state" : "state changed")
        }
        if back.value("iss") != issuer { problems.append(back.value("iss") == nil ? "no iss" : "iss differs from the issuer") }
        if back.value("code") != nil { problems.append("a code came with the error") }
        if let descriptionPrefix, leadingCode(back.value("error_description")) != descriptionPrefix {
            problems.append("error_description does not begin with \(descriptionPrefix)")
        }
        if isLoopback(redirectURI) && back.delivery != .seeOther { problems.append("a loopback redirect was not a 303") }
        let seen = describe(observed, redirectURI: redirectURI) + (state == nil ? ", no state, iss" : ", state and iss")
        return problems.isEmpty
            ? .pass(seen) : .fail("\(describe(observed, redirectURI: redirectURI)): \(problems.joined(separator: ", "))")
    }

    /// A JSON error answer: `status` and `error`, optionally `error_description` beginning with a product code.
    public static func jsonError(_ observed: Observed, status: Int, error: String, descriptionPrefix: String? = nil) -> Outcome {
        var seen = describe(observed)
        var ok = observed.status == status && (observed.json?["error"] as? String) == error
        if let descriptionPrefix {
            let lead = leadingCode(observed.json?["error_description"] as? String)
            seen += lead.map { " (\($0) first in error_description)" } ?? " (no product code in error_description)"
            ok = ok && lead == descriptionPrefix
        }
        return .expect(ok, seen)
    }

    /// `Cache-Control: no-store` is present.
    public static func noStore(_ observed: Observed) -> Outcome {
        .expect(observed.hasNoStore, "\(observed.status), Cache-Control \(observed.hasNoStore ? "no-store" : "without no-store")")
    }

    /// The start accepted the request: a redirect to one of the server's own pages (sign-in or consent),
    /// not an error and not yet the app.
    public static func startProceeds(_ observed: Observed, issuer: String, redirectURI: String) -> Outcome {
        let seen = describe(observed, redirectURI: redirectURI)
        guard (300..<400).contains(observed.status), let location = observed.header("Location") else { return .fail(seen) }
        let own = location.hasPrefix("/") || location.hasPrefix(issuer + "/")
        return .expect(own && RedirectBack.find(in: observed, redirectURI: redirectURI) == nil, seen)
    }

    // MARK: Success

    /// The success redirect: to `redirectURI` with a `code`, `state` equal to `state` and `iss` equal to the issuer.
    public static func successRedirect(_ observed: Observed, redirectURI: String, state: String, issuer: String) -> (
        codeReturned: Outcome, iss: Outcome, state: Outcome
    ) {
        guard let back = RedirectBack.find(in: observed, redirectURI: redirectURI), back.value("code") != nil, back.value("error") == nil
        else {
            let seen = describe(observed, redirectURI: redirectURI)
            return (.fail(seen), .fail("no success redirect (\(seen))"), .fail("no success redirect (\(seen))"))
        }
        let seen = describe(observed, redirectURI: redirectURI)
        let iss: Outcome =
            back.value("iss") == issuer
            ? .pass("iss equals the issuer") : .fail(back.value("iss") == nil ? "no iss" : "iss differs from the issuer")
        let stateOutcome: Outcome =
            back.value("state") == state
            ? .pass("state decoded to the same \(state.unicodeScalars.count) scalars")
            : .fail(
                back.value("state") == nil ? "no state" : "state changed (\(back.value("state")!.unicodeScalars.count) scalars came back)")
        return (.pass(seen), iss, stateOutcome)
    }

    /// docs/protocol.md#state: the raw `state` in the redirect is the value re-encoded with only RFC 3986
    /// unreserved characters bare (a space as `%20`); hex case is not significant.
    public static func stateEncoding(rawQuery: String, state: String) -> Outcome {
        let raw = rawQuery.split(separator: "&").first { $0.hasPrefix("state=") }.map { String($0.dropFirst(6)) }
        guard let raw else { return .fail("no state in the redirect") }
        let expected = FormURLEncoding.percentEncodeUnreserved(state)
        if raw.uppercased() == expected.uppercased() { return .pass("only unreserved characters bare") }
        let bare = raw.unicodeScalars.filter {
            !FormURLEncoding.isUnreserved(UInt8(truncatingIfNeeded: $0.value)) && $0 != "%" || !$0.isASCII
        }
        if raw.contains("+") { return .fail("a space came back as + (or + left bare)") }
        return .fail("encoded differently (\(bare.count) reserved or non-ASCII characters left bare)")
    }

    /// docs/protocol.md#exchange-success (and a refresh's).
    public static func sessionShape(_ observed: Observed) -> Outcome {
        guard observed.status == 200, let json = observed.json else { return .fail(describe(observed)) }
        guard let session = json["session"] as? [String: Any] else { return .fail("200 without a session object") }
        var missing: [String] = []
        for field in ["id", "accessToken", "refreshToken", "expiresAt", "idleExpiresAt"] where !(session[field] is String) {
            missing.append("session.\(field)")
        }
        if session["tokenType"] as? String != "Bearer" { missing.append("session.tokenType Bearer") }
        if !(session["expiresIn"] is NSNumber) || session["expiresIn"] is Bool { missing.append("session.expiresIn number") }
        for field in ["expiresAt", "idleExpiresAt"] {
            if let value = session[field] as? String, !isRFC3339UTC(value) { missing.append("session.\(field) RFC 3339 UTC") }
        }
        let user = json["user"] as? [String: Any]
        for field in ["id", "email"] where !(user?[field] is String) { missing.append("user.\(field)") }
        for field in ["name", "imageUrl"] where user?.keys.contains(field) != true { missing.append("user.\(field)") }
        return missing.isEmpty ? .pass("200 with session and user") : .fail("200 missing \(missing.joined(separator: ", "))")
    }

    /// RFC 6749 §5.1 token response: `access_token`, `token_type` Bearer, `refresh_token`, `expires_in`.
    public static func tokenShape(_ observed: Observed) -> Outcome {
        guard observed.status == 200, let json = observed.json else { return .fail(describe(observed)) }
        var missing: [String] = []
        if !(json["access_token"] is String) { missing.append("access_token") }
        if (json["token_type"] as? String)?.lowercased() != "bearer" { missing.append("token_type Bearer") }
        if !(json["refresh_token"] is String) { missing.append("refresh_token") }
        if !(json["expires_in"] is NSNumber) { missing.append("expires_in") }
        return missing.isEmpty
            ? .pass("200 with access_token, token_type, refresh_token, expires_in")
            : .fail("200 missing \(missing.joined(separator: ", "))")
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    public static func isRFC3339UTC(_ text: String) -> Bool {
        let formatter = ISO8601DateFormatter()
        if text.hasSuffix("Z"), formatter.date(from: text) != nil { return true }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return text.hasSuffix("Z") && formatter.date(from: text) != nil
    }

    /// N concurrent exchanges of one code: exactly one 200, every other a 400 `invalid_grant`.
    public static func concurrentExchanges(_ observed: [Observed]) -> Outcome {
        let ok = observed.filter { $0.status == 200 }.count
        let grant = observed.filter { $0.status == 400 && $0.errorCode == "invalid_grant" }.count
        let other = observed.count - ok - grant
        let seen = "\(ok) × 200, \(grant) × 400 invalid_grant" + (other > 0 ? ", \(other) other" : "") + " of \(observed.count)"
        return .expect(ok == 1 && grant == observed.count - 1, seen)
    }

    // MARK: Metadata (RFC 8414)

    /// The metadata answer is 200 JSON.
    public static func metadataServed(_ observed: Observed) -> Outcome {
        .expect(
            observed.status == 200 && observed.isJSON && observed.json != nil,
            describe(observed) + (observed.isJSON ? "" : ", not application/json"))
    }

    /// `issuer` is identical to the configured issuer (RFC 8414 §3.3).
    public static func metadataIssuer(_ json: [String: Any], issuer: String) -> Outcome {
        .expect(
            json["issuer"] as? String == issuer,
            json["issuer"] is String ? "issuer \(json["issuer"] as? String == issuer ? "identical" : "differs")" : "no issuer")
    }

    /// `code_challenge_methods_supported` is exactly `["S256"]`.
    public static func metadataPKCE(_ json: [String: Any]) -> Outcome {
        let methods = json["code_challenge_methods_supported"] as? [String]
        return .expect(
            methods == ["S256"], methods.map { "code_challenge_methods_supported \($0)" } ?? "code_challenge_methods_supported missing")
    }

    /// `response_types_supported ["code"]`, both grants, `none` client authentication.
    public static func metadataCapabilities(_ json: [String: Any]) -> Outcome {
        var problems: [String] = []
        if json["response_types_supported"] as? [String] != ["code"] { problems.append("response_types_supported is not [code]") }
        let grants = Set(json["grant_types_supported"] as? [String] ?? [])
        if !grants.isSuperset(of: ["authorization_code", "refresh_token"]) { problems.append("grant_types_supported lacks a grant") }
        if grants.contains("implicit") || grants.contains("password") {
            problems.append("grant_types_supported advertises implicit or password")
        }
        if !(json["token_endpoint_auth_methods_supported"] as? [String] ?? []).contains("none") {
            problems.append("token_endpoint_auth_methods_supported lacks none")
        }
        return problems.isEmpty ? .pass("code, authorization_code + refresh_token, none") : .fail(problems.joined(separator: "; "))
    }

    /// The endpoints sit under the issuer.
    public static func metadataEndpoints(_ json: [String: Any], issuer: String) -> Outcome {
        var problems: [String] = []
        for field in ["authorization_endpoint", "token_endpoint", "revocation_endpoint"] {
            guard let value = json[field] as? String else {
                problems.append("\(field) missing")
                continue
            }
            if !value.hasPrefix(issuer + "/") { problems.append("\(field) not under the issuer") }
        }
        return problems.isEmpty
            ? .pass("authorization, token and revocation endpoints under the issuer") : .fail(problems.joined(separator: "; "))
    }

    /// `authorization_response_iss_parameter_supported` is `true` (RFC 9207 §3).
    public static func metadataIss(_ json: [String: Any]) -> Outcome {
        let value = json["authorization_response_iss_parameter_supported"] as? NSNumber
        // A JSON boolean arrives as an NSNumber of objCType "c"; a number 1 is not `true`.
        let isTrue = value.map { $0.objCType.pointee == CChar(UInt8(ascii: "c")) && $0.boolValue } ?? false
        return .expect(isTrue, "authorization_response_iss_parameter_supported \(isTrue ? "true" : value == nil ? "missing" : "not true")")
    }

    /// A served association file: 200 `application/json`, strict JSON, never a redirect; AASA an object
    /// with `applinks`, assetlinks an array.
    public static func associationFile(_ observed: Observed, apple: Bool) -> Outcome {
        var seen = describe(observed)
        guard observed.status == 200 else { return .fail(seen) }
        guard observed.isJSON else { return .fail(seen + ", Content-Type \(observed.header("Content-Type") ?? "missing")") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(observed.body)
        } catch {
            return .fail(seen + ", not strict JSON")
        }
        if apple {
            let ok = value["applinks"]?.isObject == true
            seen += ok ? " with applinks" : " without applinks"
            return .expect(ok, seen)
        }
        let ok = value.arrayValue != nil
        seen += ok ? " with a statement list" : ", not a JSON array"
        return .expect(ok, seen)
    }

    /// Whether `uri` is an `http` loopback redirect URI (RFC 8252 §7.3).
    public static func isLoopback(_ uri: String) -> Bool {
        uri.hasPrefix("http://127.0.0.1") || uri.hasPrefix("http://[::1]") || uri.hasPrefix("http://localhost")
    }

    /// `uri` with its loopback port replaced by `port` (no port → one added), or nil for a non-loopback URI.
    public static func withPort(_ uri: String, _ port: Int) -> String? {
        for host in ["http://127.0.0.1", "http://[::1]", "http://localhost"] where uri.hasPrefix(host) {
            var rest = uri.dropFirst(host.count)
            if rest.hasPrefix(":") { rest = rest.drop { $0 != "/" && $0 != "?" } }
            return "\(host):\(port)\(rest)"
        }
        return nil
    }
}
