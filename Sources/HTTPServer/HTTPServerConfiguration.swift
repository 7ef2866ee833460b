/// Settings of one `HTTPServer`, with the defaults used in production.
///
/// Limits follow docs/decisions.md#libmicrohttpd (libmicrohttpd 0.9.75): thread pool + epoll, connection limits,
/// a per-connection memory budget (oversized headers → 431) and an idle timeout (slowloris).
public struct HTTPServerConfiguration: Sendable {
    /// The IPv4 or IPv6 address literal to bind, e.g. "127.0.0.1", "0.0.0.0" or "::1". No host names.
    public var host: String = "127.0.0.1"
    /// The TCP port to bind; 0 picks an ephemeral port, readable afterwards from `HTTPServer.port`.
    public var port: UInt16 = 8080
    /// Worker threads, at least 1. Handlers block (libpq, Argon2id ~46 ms), and a blocked handler stalls the
    /// other connections of its worker, so size generously.
    public var threadPoolSize: Int = 16
    /// The largest request body accepted, in bytes; larger bodies get 413 (RFC 9110 §15.5.14) or, for a
    /// chunked upload that overflows, a closed connection.
    public var maxBodyBytes: Int = 65_536
    /// The most connections open at once across all workers, at least 1.
    public var connectionLimit: Int = 1024
    /// The most connections open at once from one peer IP; 0 = unlimited. Counted by the server's accept
    /// policy (`ClientLimits`); a connection over it is closed unanswered.
    public var perIPConnectionLimit: Int = 0
    /// Peer IP literals `perIPConnectionLimit` does not apply to: the reverse proxies, every client behind
    /// which has the proxy's address (compared case-insensitively, as `HTTPRequest.remoteAddress` reports it).
    public var perIPLimitExemptAddresses: [String] = []
    /// Seconds a request may take to arrive whole (request line, headers and body), counted from the
    /// connection's opening or the previous response's completion; at least 1. Past it the connection is
    /// closed unanswered, however steadily bytes trickle in (`connectionTimeoutSeconds` restarts with each).
    public var requestDeadlineSeconds: Int = 20
    /// Memory per connection for the request line, headers and buffers, in bytes (at least 4096). The default
    /// holds a request at every limit `Framing` checks (docs/decisions.md, "Request limits"); a request that
    /// does not fit at all gets libmicrohttpd's own 414 or 431 (RFC 6585 §5), or a closed connection.
    public var connectionMemoryLimitBytes: Int = 65_536
    /// Seconds of inactivity after which a connection is closed (slowloris, idle keep-alive); at least 1.
    public var connectionTimeoutSeconds: Int = 15

    /// The defaults above.
    public init() {}

    /// Checks every field; the error names the first bad one.
    func validate() throws(HTTPServerError) {
        func require(_ ok: Bool, _ field: String, _ reason: String) throws(HTTPServerError) {
            if !ok { throw .invalidConfiguration(field: field, reason: reason) }
        }
        try require((1...1024).contains(threadPoolSize), "threadPoolSize", "must be 1...1024")
        try require(maxBodyBytes >= 0, "maxBodyBytes", "must not be negative")
        try require((1...Int(Int32.max)).contains(connectionLimit), "connectionLimit", "must be at least 1")
        try require((0...Int(Int32.max)).contains(perIPConnectionLimit), "perIPConnectionLimit", "must not be negative")
        try require(
            (4096...Int(Int32.max)).contains(connectionMemoryLimitBytes), "connectionMemoryLimitBytes",
            "must be at least 4096")
        try require((1...86_400).contains(requestDeadlineSeconds), "requestDeadlineSeconds", "must be 1...86400")
        try require(
            (1...Int(Int32.max)).contains(connectionTimeoutSeconds), "connectionTimeoutSeconds", "must be at least 1")
    }
}

/// Why an `HTTPServer` could not start. Descriptions name the setting or system call that failed.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A configuration field is out of range.
    case invalidConfiguration(field: String, reason: String)
    /// `host` is not an IPv4 or IPv6 address literal.
    case invalidHost(String)
    /// The address is already bound by another socket (`EADDRINUSE`).
    case addressInUse(host: String, port: UInt16)
    /// libmicrohttpd refused to start; `errno` is the error number it left (0 when none).
    case startFailed(host: String, port: UInt16, errno: Int32)

    /// A one-line description naming what failed.
    public var description: String {
        switch self {
        case .invalidConfiguration(let field, let reason): "HTTP server configuration \(field) \(reason)"
        case .invalidHost(let host): "HTTP server host \(host) is not an IPv4 or IPv6 address literal"
        case .addressInUse(let host, let port): "HTTP server address \(host) port \(port) is already in use"
        case .startFailed(let host, let port, let errno):
            "HTTP server could not start on \(host) port \(port) (errno \(errno))"
        }
    }
}
