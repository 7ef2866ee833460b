import Glibc

/// How the server makes outbound HTTPS requests (association-file and domain-token checks).
///
/// docs/operations.md#outbound: `ZEVAUTH_OUTBOUND_CA_FILE`, `ZEVAUTH_OUTBOUND_RESOLVE`,
/// `ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`, `ZEVAUTH_OUTBOUND_TIMEOUT_MS`, `ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS`.
/// Parse it from the environment with ``fromEnvironment(_:)``.
public struct OutboundConfiguration: Sendable {
    /// `ZEVAUTH_OUTBOUND_CA_FILE`: a PEM bundle of extra trusted CAs, trusted in addition to the system
    /// store (libcurl's built-in CA path, `/etc/ssl/certs` on Debian). `nil` (default): the system store only.
    public var caFile: String?
    /// `ZEVAUTH_OUTBOUND_RESOLVE`: `host:port:address` overrides, as curl's `--resolve`. A fetch to a
    /// matching host and port uses these addresses instead of DNS. Empty by default.
    public var resolve: [ResolveOverride] = []
    /// `ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`: when `true`, fetches to private, loopback and link-local addresses
    /// are allowed (tests, private networks). Off by default.
    public var allowPrivate: Bool = false
    /// `ZEVAUTH_OUTBOUND_TIMEOUT_MS`: the whole transfer's limit in milliseconds (connect, TLS, response).
    /// Default 10 000; 1…120 000.
    public var timeoutMilliseconds: Int = 10_000
    /// `ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS`: the limit for TCP connect plus TLS handshake, in milliseconds.
    /// Default 5 000; 1…120 000.
    public var connectTimeoutMilliseconds: Int = 5_000

    /// The defaults: system CAs only, no overrides, private addresses refused, 10 s total, 5 s connect.
    public init() {}

    /// The accepted range for both timeouts, in milliseconds.
    public static let timeoutRange: ClosedRange<Int> = 1...120_000

    /// Reads the five `ZEVAUTH_OUTBOUND_*` variables; an absent variable keeps its default.
    ///
    /// - Parameter env: the process environment (or a test's dictionary).
    /// - Returns: the validated configuration.
    /// - Throws: ``OutboundConfigurationError`` naming the variable: a boolean other than `1`/`true`/`0`/`false`
    ///   (or empty), a timeout that is not an integer in 1…120 000, an unreadable or empty CA file path,
    ///   a malformed resolve entry.
    public static func fromEnvironment(_ env: [String: String]) throws -> OutboundConfiguration {
        var configuration = OutboundConfiguration()
        if let path = env["ZEVAUTH_OUTBOUND_CA_FILE"] {
            guard !path.isEmpty else {
                throw OutboundConfigurationError(key: "ZEVAUTH_OUTBOUND_CA_FILE", message: "is empty; unset it or name a PEM file")
            }
            guard access(path, R_OK) == 0 else {
                throw OutboundConfigurationError(key: "ZEVAUTH_OUTBOUND_CA_FILE", message: "names a file that cannot be read: \(path)")
            }
            configuration.caFile = path
        }
        if let text = env["ZEVAUTH_OUTBOUND_RESOLVE"] {
            configuration.resolve = try parseResolve(text)
        }
        if let text = env["ZEVAUTH_OUTBOUND_ALLOW_PRIVATE"] {
            configuration.allowPrivate = try parseBoolean(text, key: "ZEVAUTH_OUTBOUND_ALLOW_PRIVATE")
        }
        if let text = env["ZEVAUTH_OUTBOUND_TIMEOUT_MS"] {
            configuration.timeoutMilliseconds = try parseTimeout(text, key: "ZEVAUTH_OUTBOUND_TIMEOUT_MS")
        }
        if let text = env["ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS"] {
            configuration.connectTimeoutMilliseconds = try parseTimeout(text, key: "ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS")
        }
        return configuration
    }

    /// Parses `ZEVAUTH_OUTBOUND_RESOLVE`: entries `host:port:address` separated by `;` (empty entries and
    /// surrounding spaces ignored). The host is lower-cased; the port is 1…65535; the address is a numeric
    /// IPv4 or IPv6 address, an IPv6 one optionally in brackets (`assoc.test:443:[::1]`). Several entries
    /// may name the same host and port: all their addresses are used.
    ///
    /// - Returns: the overrides in the order given.
    /// - Throws: ``OutboundConfigurationError`` for `ZEVAUTH_OUTBOUND_RESOLVE`, quoting the bad entry.
    public static func parseResolve(_ text: String) throws -> [ResolveOverride] {
        var overrides: [ResolveOverride] = []
        for rawEntry in text.split(separator: ";", omittingEmptySubsequences: false) {
            let entry = String(rawEntry).trimmingSpaces()
            if entry.isEmpty { continue }
            func bad(_ why: String) -> OutboundConfigurationError {
                OutboundConfigurationError(key: "ZEVAUTH_OUTBOUND_RESOLVE", message: "entry \"\(entry)\" \(why)")
            }
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { throw bad("is not host:port:address") }
            let host = parts[0].lowercased()
            guard HostName.isValid(host) else { throw bad("has an invalid host name \"\(parts[0])\"") }
            guard let port = Int(parts[1]), (1...65_535).contains(port), parts[1].allSatisfy(\.isASCII) else {
                throw bad("has an invalid port \"\(parts[1])\" (1-65535)")
            }
            var address = parts[2]
            if address.hasPrefix("[") && address.hasSuffix("]") && address.count >= 2 {
                address = String(address.dropFirst().dropLast())
            }
            guard let parsed = IPAddress(address) else { throw bad("has an invalid IP address \"\(parts[2])\"") }
            overrides.append(ResolveOverride(host: host, port: port, address: parsed.description))
        }
        return overrides
    }

    static func parseBoolean(_ text: String, key: String) throws -> Bool {
        switch text.lowercased() {
        case "1", "true": return true
        case "", "0", "false": return false
        default: throw OutboundConfigurationError(key: key, message: "must be 1, true, 0 or false, not \"\(text)\"")
        }
    }

    static func parseTimeout(_ text: String, key: String) throws -> Int {
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(text), timeoutRange.contains(value) else {
            throw OutboundConfigurationError(key: key, message: "must be a whole number of milliseconds from 1 to 120000, not \"\(text)\"")
        }
        return value
    }
}

/// One `ZEVAUTH_OUTBOUND_RESOLVE` entry: connect to `address` when fetching `host` on `port`.
public struct ResolveOverride: Sendable, Equatable {
    /// The host name, lower-case.
    public let host: String
    /// The TCP port, 1…65535.
    public let port: Int
    /// A numeric IPv4 or IPv6 address in canonical text form, without brackets.
    public let address: String

    /// An override; the values are taken as given (``OutboundConfiguration/parseResolve(_:)`` validates).
    public init(host: String, port: Int, address: String) {
        self.host = host
        self.port = port
        self.address = address
    }
}

/// A configuration value that cannot be used; `key` is the environment variable, `message` says why.
public struct OutboundConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The environment variable at fault, e.g. `ZEVAUTH_OUTBOUND_TIMEOUT_MS`.
    public let key: String
    /// What is wrong with it.
    public let message: String
    /// `KEY message`, for a startup error.
    public var description: String { "\(key) \(message)" }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
