import Encoding

/// The three kinds of native-app redirect URI (RFC 8252 §7.1–7.3), with the `kind` spelling of the admin API.
public enum RedirectKind: String, Sendable, Equatable {
    /// An `https` universal link / app link (RFC 8252 §7.2).
    case link
    /// A private-use, reverse-domain URI scheme such as `com.acme.app:/callback` (RFC 8252 §7.1).
    case customScheme = "custom_scheme"
    /// `http://127.0.0.1`, `http://[::1]` or `http://localhost` (RFC 8252 §7.3, §8.3).
    case loopback
}

/// Why a string is not an acceptable redirect URI. Each case names one rule, so the admin API can say
/// which (docs/protocol.md#callback-registration: "Registration refuses what could never be safe").
public enum RedirectURIProblem: String, Error, Sendable, Equatable, CaseIterable {
    /// The string is empty.
    case empty
    /// Longer than `RedirectURI.maximumLength` bytes.
    case tooLong = "too_long"
    /// A space, control character, non-ASCII character or a character RFC 3986 never allows
    /// (`" < > \ ^ ` { | }`).
    case invalidCharacter = "invalid_character"
    /// A `%` not followed by two hexadecimal digits.
    case malformedPercentEncoding = "malformed_percent_encoding"
    /// No scheme: a relative reference (RFC 3986 §4.2).
    case relative
    /// The scheme is not `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
    case invalidScheme = "invalid_scheme"
    /// The scheme has upper-case letters; registered URIs are written in canonical lower case.
    case schemeNotLowercase = "scheme_not_lowercase"
    /// `javascript:`, `data:`, `file:`, `vbscript:`, `blob:`, `about:` (RFC 9700 §4.1; never a callback).
    case forbiddenScheme = "forbidden_scheme"
    /// A private-use scheme that is not reverse-domain: no `.`, or an empty label (RFC 8252 §7.1, §8.4).
    case schemeNotReverseDomain = "scheme_not_reverse_domain"
    /// `http` on a host other than the exact literals `127.0.0.1`, `[::1]`, `localhost` (RFC 8252 §8.3).
    case httpNotLoopback = "http_not_loopback"
    /// A `#fragment` (RFC 6749 §3.1.2: the redirection endpoint MUST NOT include a fragment).
    case fragment
    /// `user@` before the host (RFC 9700 §4.1.1: userinfo enables look-alike hosts).
    case userinfo
    /// `https://` or `scheme://` with nothing before the path.
    case emptyHost = "empty_host"
    /// A host holding `%`.
    case percentEncodedHost = "percent_encoded_host"
    /// A link host that is an IP address literal; links need a DNS name with association files.
    case ipLiteralHost = "ip_literal_host"
    /// A host that is not a lower-case DNS name of at least two labels (`a-z 0-9 -`, no trailing dot).
    case invalidHost = "invalid_host"
    /// A port that is empty, not all digits, has a leading zero, or is outside 1...65535.
    case invalidPort = "invalid_port"
    /// No path starting with `/` (for example `https://acme.com` or `com.acme.app:callback`).
    case missingPath = "missing_path"
    /// A `.` or `..` path segment, also percent-encoded (`%2e`), which browsers resolve away (RFC 3986 §5.2.4).
    case dotSegment = "dot_segment"
    /// A query that already carries a parameter the authorization response adds (`RedirectURI.responseParameters`):
    /// the redirect would carry two values and a client reading the first would read the wrong one
    /// (RFC 6749 §3.1.2, RFC 9207 §2).
    case responseParameterInQuery = "response_parameter_in_query"
}

/// A parsed redirect URI: one of exactly the shapes docs/protocol.md#redirect-kinds allows.
///
/// Nothing is normalised: `raw` is the string as written, and matching is byte for byte except the
/// loopback port (RFC 8252 §7.3; docs/protocol.md#loopback-matching). Accepted shapes:
/// - link: `https://host[:port]/path[?query]`, `host` a lower-case DNS name of two or more labels;
/// - loopback: `http://127.0.0.1[:port]/path[?query]`, `http://[::1][:port]/…`, `http://localhost[:port]/…`;
/// - custom scheme: `reverse.domain.scheme:/path[?query]` or `reverse.domain.scheme://host[:port][/path][?query]`.
/// Everywhere: at most `maximumLength` bytes, ASCII only, no fragment, no userinfo, no dot segments, well-formed `%XX`, and no response
/// parameter in the query (`responseParameters`).
public struct RedirectURI: Sendable, Equatable {
    /// The URI exactly as given.
    public let raw: String
    /// Its kind.
    public let kind: RedirectKind
    /// The scheme (always lower case: upper case is refused).
    public let scheme: String
    /// The host as written (`[::1]` keeps its brackets); `nil` for a custom scheme with no authority.
    public let host: String?
    /// The explicit port, if any.
    public let port: Int?
    /// Everything from the path on: `/path` plus `?query` when present (may be empty only for a custom
    /// scheme with an authority and no path).
    public let pathAndQuery: String

    /// The longest redirect URI accepted, in bytes (every accepted byte is ASCII, so also in characters):
    /// 2048, the longest URL every browser and mobile web view still carries, and short enough that the URI
    /// fits the PostgreSQL B-tree index of registered callbacks, whose rows cannot exceed about 2.7 KB
    /// (docs/decisions.md, "Redirect URIs"; docs/protocol.md#callback-registration).
    public static let maximumLength = 2048

    /// The exact host literals that make an `http` URI a loopback redirect (RFC 8252 §7.3, §8.3).
    public static let loopbackHosts: Set<String> = ["127.0.0.1", "[::1]", "localhost"]

    /// Schemes that can never be a callback, refused before any other scheme rule.
    public static let forbiddenSchemes: Set<String> = ["javascript", "data", "file", "vbscript", "blob", "about"]

    /// The parameter names an authorization response (success or error, OAuth and OpenID Connect) adds to
    /// the redirect URI's query, in lower case. A registered query naming one of them, compared as a lenient
    /// parser reads the name (`lenientName(_:)`: percent-decoded, case-insensitive, `.` or space for `_`,
    /// `[]` dropped, invisible ends trimmed), is refused (`responseParameterInQuery`): most URL parsers
    /// return the first of two values, so the client would check the registered `iss` or `state` instead
    /// of the server's (RFC 6749 §3.1.2 and §4.1.2, RFC 9207 §2, OpenID Connect Session Management §3).
    public static let responseParameters: Set<String> = [
        "code", "state", "iss", "error", "error_description", "error_uri", "id_token", "session_state",
    ]

    /// A URI that `parse` accepted earlier, rebuilt from the parts stored at registration (the registered
    /// callbacks' columns, sql/008), so a registered URI is parsed once, when it is registered.
    /// - Parameters: the fields of the value `parse` returned for `raw`.
    public init(raw: String, kind: RedirectKind, scheme: String, host: String?, port: Int?, pathAndQuery: String) {
        self.raw = raw
        self.kind = kind
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
    }

    /// Parses a redirect URI.
    /// - Parameter raw: the URI as registered or as requested.
    /// - Returns: the parsed URI, or the first rule it breaks.
    public static func parse(_ raw: String) -> Result<RedirectURI, RedirectURIProblem> {
        let bytes = Array(raw.utf8)
        if bytes.isEmpty { return .failure(.empty) }
        if bytes.count > maximumLength { return .failure(.tooLong) }
        // Character-level rules first, so every later step sees printable ASCII only.
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "#") { return .failure(.fragment) }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    return .failure(.malformedPercentEncoding)
                }
                index += 3
                continue
            }
            guard isURICharacter(byte) else { return .failure(.invalidCharacter) }
            index += 1
        }

        // Scheme (RFC 3986 §3.1): up to the first ":", and that ":" must come before any "/" or "?".
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            !bytes[..<colon].contains(UInt8(ascii: "/")), !bytes[..<colon].contains(UInt8(ascii: "?")), colon > 0
        else { return .failure(.relative) }
        let schemeBytes = Array(bytes[..<colon])
        guard isSchemeStart(schemeBytes[0]), schemeBytes.allSatisfy(isSchemeCharacter) else {
            return .failure(.invalidScheme)
        }
        let lowered = String(decoding: schemeBytes.map(lowercase), as: UTF8.self)
        if forbiddenSchemes.contains(lowered) { return .failure(.forbiddenScheme) }
        guard schemeBytes.allSatisfy({ !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) else {
            return .failure(.schemeNotLowercase)
        }
        let scheme = lowered
        let rest = Array(bytes[(colon + 1)...])

        switch scheme {
        case "https":
            guard rest.starts(with: Array("//".utf8)) else { return .failure(.emptyHost) }
            return parseHierarchical(raw: raw, scheme: scheme, afterSlashes: Array(rest.dropFirst(2)), kind: .link)
        case "http":
            guard rest.starts(with: Array("//".utf8)) else { return .failure(.httpNotLoopback) }
            return parseHierarchical(raw: raw, scheme: scheme, afterSlashes: Array(rest.dropFirst(2)), kind: .loopback)
        default:
            // RFC 8252 §7.1 / §8.4: a reverse-domain name with at least one "." and no empty label.
            let labels = schemeBytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else {
                return .failure(.schemeNotReverseDomain)
            }
            if rest.starts(with: Array("//".utf8)) {
                return parseHierarchical(
                    raw: raw, scheme: scheme, afterSlashes: Array(rest.dropFirst(2)), kind: .customScheme)
            }
            guard rest.first == UInt8(ascii: "/") else { return .failure(.missingPath) }
            if let problem = dotSegmentProblem(rest) ?? responseParameterProblem(rest) { return .failure(problem) }
            return .success(
                RedirectURI(
                    raw: raw, kind: .customScheme, scheme: scheme, host: nil, port: nil,
                    pathAndQuery: String(decoding: rest, as: UTF8.self)))
        }
    }

    /// Whether this (requested) URI matches a registered one.
    ///
    /// Loopback (RFC 8252 §7.3; docs/protocol.md#loopback-matching): same scheme, same host literal, same path
    /// and query, any port (the registered URI may have none). Every other kind, and any mix of kinds:
    /// byte-for-byte equality of `raw`.
    /// - Parameter registered: a URI from the environment's registered callbacks.
    public func matchesRegistered(_ registered: RedirectURI) -> Bool {
        if kind == .loopback && registered.kind == .loopback {
            return scheme.utf8.elementsEqual(registered.scheme.utf8)
                && (host ?? "").utf8.elementsEqual((registered.host ?? "").utf8)
                && pathAndQuery.utf8.elementsEqual(registered.pathAndQuery.utf8)
        }
        return raw.utf8.elementsEqual(registered.raw.utf8)
    }

    // MARK: - Parsing helpers

    /// `authority path-abempty [ "?" query ]` after `scheme://`.
    private static func parseHierarchical(
        raw: String, scheme: String, afterSlashes: [UInt8], kind: RedirectKind
    ) -> Result<RedirectURI, RedirectURIProblem> {
        let end = afterSlashes.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterSlashes.count
        let authority = Array(afterSlashes[..<end])
        let tail = Array(afterSlashes[end...])
        if authority.contains(UInt8(ascii: "@")) { return .failure(.userinfo) }
        if authority.isEmpty { return .failure(.emptyHost) }

        // Split host and port. An IPv6 literal is bracketed; otherwise the host holds no ":".
        let host: [UInt8]
        var portBytes: [UInt8]? = nil
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return .failure(.invalidHost) }
            host = Array(authority[...close])
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return .failure(.invalidHost) }
                portBytes = Array(after.dropFirst())
            }
        } else if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
            host = Array(authority[..<colon])
            portBytes = Array(authority[(colon + 1)...])
        } else {
            host = authority
        }
        if host.isEmpty { return .failure(.emptyHost) }
        if host.contains(UInt8(ascii: "%")) { return .failure(.percentEncodedHost) }
        var port: Int? = nil
        if let portBytes {
            guard let value = parsePort(portBytes) else { return .failure(.invalidPort) }
            port = value
        }
        let hostString = String(decoding: host, as: UTF8.self)

        switch kind {
        case .loopback:
            // Exact literals only: "127.000.000.001", "localhost.", "LOCALHOST" and "127.0.0.1.evil.example"
            // are not loopback, and plain http anywhere else is refused (RFC 8252 §8.3, RFC 9700 §2.6).
            guard loopbackHosts.contains(hostString) else { return .failure(.httpNotLoopback) }
        case .link:
            if host.first == UInt8(ascii: "[") || isIPv4Like(host) { return .failure(.ipLiteralHost) }
            guard isDNSName(host) else { return .failure(.invalidHost) }
        case .customScheme:
            guard isDNSLabelSequence(host) else { return .failure(.invalidHost) }
        }

        if tail.first != UInt8(ascii: "/") && !(kind == .customScheme && tail.isEmpty) {
            return .failure(.missingPath)
        }
        if let problem = dotSegmentProblem(tail) ?? responseParameterProblem(tail) { return .failure(problem) }
        return .success(
            RedirectURI(
                raw: raw, kind: kind, scheme: scheme, host: hostString, port: port,
                pathAndQuery: String(decoding: tail, as: UTF8.self)))
    }

    /// Refuses `.`/`..` segments (also `%2e` spellings, which WHATWG URL parsers treat as dots) in the path.
    private static func dotSegmentProblem(_ pathAndQuery: [UInt8]) -> RedirectURIProblem? {
        let pathEnd = pathAndQuery.firstIndex(of: UInt8(ascii: "?")) ?? pathAndQuery.count
        let path = pathAndQuery[..<pathEnd]
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let text = String(decoding: segment.map(lowercase), as: UTF8.self)
            if [".", "..", "%2e", ".%2e", "%2e.", "%2e%2e"].contains(text) { return .dotSegment }
        }
        return nil
    }

    /// Refuses a query naming a response parameter (`responseParameters`). Names are split on `&` and also
    /// on `;`, which some server-side parsers still treat as a separator, then read the way the most lenient
    /// parsers read them (`lenientName(_:)`), so no spelling a client's framework turns into `code` or `iss`
    /// slips through.
    private static func responseParameterProblem(_ pathAndQuery: [UInt8]) -> RedirectURIProblem? {
        guard let question = pathAndQuery.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let query = pathAndQuery[(question + 1)...]
        for segment in query.split(whereSeparator: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ";") }) {
            let name = segment.prefix { $0 != UInt8(ascii: "=") }
            if responseParameters.contains(lenientName(name)) { return .responseParameterInQuery }
        }
        return nil
    }

    /// A query parameter name as lenient server-side parsers (PHP's `$_GET`, Rack, qs and the like) hand it to
    /// the application: percent-decoded (`+` as a space; bytes that are not UTF-8 become U+FFFD, U+0000 is
    /// kept), lower-cased, leading and trailing whitespace and control characters removed, a trailing
    /// `[…]` array suffix removed (an unmatched `[` read as `_`), and `.`, space and `+` read as `_`.
    /// So `error.description`, `error+description`, `%20iss`, `code[]`, `code%5B%5D`, `code%00` and
    /// `iss%0A` are all read as response parameters.
    /// - Parameter bytes: the name as written in the query (its `%XX` escapes already checked well-formed).
    /// - Returns: the name a lenient parser would see.
    static func lenientName<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var decoded: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), let high = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex),
                high < bytes.endIndex, let low = bytes.index(high, offsetBy: 1, limitedBy: bytes.endIndex), low < bytes.endIndex,
                let value = FormURLEncoding.hexValue(bytes[high]).flatMap({ h in FormURLEncoding.hexValue(bytes[low]).map { h << 4 | $0 } })
            {
                decoded.append(value)
                index = low
            } else {
                decoded.append(byte)
            }
            index = bytes.index(after: index)
        }
        var scalars = Array(String(decoding: decoded, as: UTF8.self).lowercased().unicodeScalars)
        trimInvisibleEnds(&scalars)
        if let open = scalars.firstIndex(of: "[") {
            if scalars[(open + 1)...].contains("]") {
                scalars.removeSubrange(open...)
                trimInvisibleEnds(&scalars)
            } else {
                scalars[open] = "_"
            }
        }
        var name = String.UnicodeScalarView()
        for scalar in scalars { name.append(scalar == "." || scalar == " " || scalar == "+" ? "_" : scalar) }
        return String(name)
    }

    /// Drops whitespace and control characters from both ends.
    private static func trimInvisibleEnds(_ scalars: inout [Unicode.Scalar]) {
        let invisible = { (scalar: Unicode.Scalar) in
            scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
        }
        while let first = scalars.first, invisible(first) { scalars.removeFirst() }
        while let last = scalars.last, invisible(last) { scalars.removeLast() }
    }

    /// `1*5DIGIT`, no leading zero, 1...65535.
    private static func parsePort(_ bytes: [UInt8]) -> Int? {
        guard (1...5).contains(bytes.count), bytes.allSatisfy(isDigit), bytes.first != UInt8(ascii: "0") else {
            return nil
        }
        let value = bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return (1...65535).contains(value) ? value : nil
    }

    /// A lower-case DNS name of at least two labels, each 1–63 of `a-z 0-9 -` not starting or ending in
    /// `-`, at most 253 characters, no trailing dot.
    private static func isDNSName(_ host: [UInt8]) -> Bool {
        guard host.count <= 253 else { return false }
        let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.count >= 2 && isDNSLabelSequence(host)
    }

    /// One or more DNS labels separated by `.` (see `isDNSName`), without the two-label minimum.
    private static func isDNSLabelSequence(_ host: [UInt8]) -> Bool {
        let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.count)
                && label.allSatisfy { isLowerAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
                && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
        }
    }

    /// A host whose last label is all digits: WHATWG URL parsers read it as an IPv4 address
    /// (`1.2.3.4`, `127.1`, `0x7f.1` aside, which `isDNSName` refuses anyway).
    private static func isIPv4Like(_ host: [UInt8]) -> Bool {
        guard let last = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).last else {
            return false
        }
        return !last.isEmpty && last.allSatisfy(isDigit)
    }

    /// RFC 3986 §2: unreserved, gen-delims (`#` handled apart) and sub-delims; `%` is checked separately.
    private static func isURICharacter(_ byte: UInt8) -> Bool {
        if isLowerAlpha(byte) || isDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
            return true
        }
        return Array("-._~:/?[]@!$&'()*+,;=".utf8).contains(byte)
    }

    private static func isSchemeStart(_ byte: UInt8) -> Bool {
        isLowerAlpha(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isSchemeCharacter(_ byte: UInt8) -> Bool {
        isSchemeStart(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

    private static func isLowerAlpha(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}

extension RedirectURI {
    /// Whether `scheme` is a private-use scheme this server accepts for a custom-scheme redirect: the same
    /// rule `parse` applies (RFC 8252 §7.1 and §8.4: reverse-domain with at least one `.` and no empty label,
    /// lower case, RFC 3986 §3.1 characters, not `http`, `https` or a forbidden scheme), so the operator's
    /// production exception (`productionCustomScheme`, docs/protocol.md#admin-calls) can name only a scheme a
    /// callback can use.
    public static func isPrivateUseScheme(_ scheme: String) -> Bool {
        guard case .success(let uri) = parse(scheme + ":/") else { return false }
        return uri.kind == .customScheme && uri.scheme == scheme
    }
}
