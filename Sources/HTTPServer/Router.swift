/// Routes requests by method and path pattern.
///
/// Patterns are absolute paths whose segments are either literal or a parameter such as `{id}`
/// (`"/v1/admin/callbacks/{id}"`). Literal segments match the request path's segment exactly as sent
/// (no decoding, no case folding, no dot-segment removal); a parameter matches one non-empty segment and is
/// handed to the handler percent-decoded (RFC 3986 §2.1) as UTF-8. Routes are tried in the order they were
/// added. Unknown path: 404 `not_found`; known path but another method: 405 `method_not_allowed` with an
/// `Allow` field (RFC 9110 §15.5.6). A parameter segment that does not decode (bad `%XX`, not UTF-8) does
/// not match, so it ends in 404. `HEAD` is not derived from `GET`.
public struct Router: HTTPHandler {
    /// A route's handler: the request and its decoded path parameters by name.
    public typealias Handler = @Sendable (HTTPRequest, [String: String]) -> HTTPResponse

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private struct Route: Sendable {
        let method: String
        let pattern: String
        /// The pattern's position in `templates`.
        let templateIndex: Int
        let segments: [Segment]
        let handler: Handler
        let placement: Placement
    }

    private var table: [Route] = []
    /// Every distinct pattern, in the order first added.
    public private(set) var templates: [String] = []

    /// What the router found for one request: the matched route's template (its pattern, e.g.
    /// `/v1/admin/apps/{id}`) when a route's path matched, and the answer, produced by `respond()`.
    public struct Match: Sendable {
        /// The pattern of the first route whose path matched (for a 405, that path's pattern); nil for 404.
        public let template: String?
        /// `template`'s position in `Router.templates`; nil for 404.
        public let templateIndex: Int?
        private let answer: Answer

        fileprivate enum Answer: Sendable {
            case route(Handler, HTTPRequest, [String: String])
            case fixed(HTTPResponse)
        }

        fileprivate init(template: String?, templateIndex: Int?, answer: Answer) {
            self.template = template
            self.templateIndex = templateIndex
            self.answer = answer
        }

        /// Runs the matched handler, or returns the 404/405 answer.
        public func respond() -> HTTPResponse {
            switch answer {
            case .route(let handler, let request, let parameters): handler(request, parameters)
            case .fixed(let response): response
            }
        }
    }

    /// `table`'s positions by the pattern's segment count, each list in table order: a path can only
    /// match a pattern with as many segments, so a request looks at a handful of routes, and copies
    /// (retains) only the one it matched. Shared by every HTTP worker, so touching fewer routes also
    /// means fewer atomic reference-count updates on the same cache lines.
    private var bySegmentCount: [Int: [Int]] = [:]
    /// Whether any route's placement is not `.inline` (else `placement(for:)` answers at once).
    private var anyQueued = false

    /// An empty router: every request gets 404.
    public init() {}

    /// The routes in the order added, e.g. to check them against the OpenAPI document.
    public var routes: [(method: String, pattern: String)] {
        table.map { (method: $0.method, pattern: $0.pattern) }
    }

    /// Adds a route.
    /// - Parameters:
    ///   - method: the exact method, e.g. "GET" (methods are case-sensitive, RFC 9110 §9.1).
    ///   - pattern: an absolute path pattern; `{name}` as a whole segment declares a parameter.
    ///   - placement: where the handler runs (`HTTPHandler.placement(for:)`); default `.inline`.
    ///   - handler: called with the request and the decoded parameters.
    /// - Precondition: the pattern starts with "/" and parameter names are non-empty and unique; a bad
    ///   pattern is a wiring mistake and stops the program at start-up.
    public mutating func add(
        _ method: String, _ pattern: String, placement: Placement = .inline, _ handler: @escaping Handler
    ) {
        precondition(pattern.hasPrefix("/"), "route pattern must start with /: \(pattern)")
        var names = Set<String>()
        let segments = Self.split(pattern).map { text -> Segment in
            guard text.hasPrefix("{"), text.hasSuffix("}"), text.count >= 2 else { return .literal(String(text)) }
            let name = String(text.dropFirst().dropLast())
            precondition(!name.isEmpty && names.insert(name).inserted, "bad parameter in route pattern \(pattern)")
            return .parameter(name)
        }
        let templateIndex: Int
        if let known = templates.firstIndex(of: pattern) {
            templateIndex = known
        } else {
            templateIndex = templates.count
            templates.append(pattern)
        }
        let route = Route(
            method: method, pattern: pattern, templateIndex: templateIndex, segments: segments, handler: handler,
            placement: placement)
        table.append(route)
        bySegmentCount[segments.count, default: []].append(table.count - 1)
        if case .inline = placement {} else { anyQueued = true }
    }

    /// The placement of the route `handle(_:)` would dispatch `request` to; `.inline` for every other
    /// request (including 404 and 405 answers).
    public func placement(for request: HTTPRequest) -> Placement {
        guard anyQueued else { return .inline }
        let pathSegments = Self.split(request.path)
        let method = request.method == "HEAD" ? "GET" : request.method
        // The first route matching method and path decides, as in `handle(_:)`.
        for index in bySegmentCount[pathSegments.count] ?? [] where table[index].method == method {
            if Self.match(table[index].segments, pathSegments) != nil { return table[index].placement }
        }
        return .inline
    }

    /// Dispatches `request` to the first route matching its method and path.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        match(request).respond()
    }

    /// Finds the first route matching `request`'s method and path, without running it, so a caller can
    /// name the route (its template, never the raw path) in logs and metrics.
    public func match(_ request: HTTPRequest) -> Match {
        let pathSegments = Self.split(request.path)
        var allowed: [String] = []
        var pathMatch: Route?
        // HEAD is answered as GET (RFC 9110 §9.3.2); libmicrohttpd sends the headers without the body.
        let method = request.method == "HEAD" ? "GET" : request.method
        for index in bySegmentCount[pathSegments.count] ?? [] {
            guard let parameters = Self.match(table[index].segments, pathSegments) else { continue }
            let route = table[index]
            if route.method == method {
                return Match(
                    template: route.pattern, templateIndex: route.templateIndex, answer: .route(route.handler, request, parameters))
            }
            if pathMatch == nil { pathMatch = route }
            if !allowed.contains(route.method) { allowed.append(route.method) }
            if route.method == "GET", !allowed.contains("HEAD") { allowed.append("HEAD") }
        }
        guard let pathMatch else {
            return Match(
                template: nil, templateIndex: nil,
                answer: .fixed(HTTPResponse.jsonError(status: 404, error: "not_found", description: "No resource at this path.")))
        }
        var response = HTTPResponse.jsonError(
            status: 405, error: "method_not_allowed", description: "This path does not support this method.")
        response.headers.set("Allow", allowed.sorted().joined(separator: ", "))
        return Match(template: pathMatch.pattern, templateIndex: pathMatch.templateIndex, answer: .fixed(response))
    }

    private static func split(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: false)
    }

    private static func match(_ segments: [Segment], _ path: [Substring]) -> [String: String]? {
        guard segments.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, text) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard literal == text else { return nil }
            case .parameter(let name):
                guard !text.isEmpty, let decoded = percentDecode(text) else { return nil }
                parameters[name] = decoded
            }
        }
        return parameters
    }

    /// Percent-decodes one path segment (RFC 3986 §2.1); `nil` for a malformed escape or non-UTF-8 result.
    /// `+` stays `+`: form encoding does not apply to paths.
    static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
