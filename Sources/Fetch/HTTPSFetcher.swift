internal import CCurl
import Glibc

/// A fetched HTTP response, whatever its status (a 404 or a 301 is a response, not a failure).
public struct FetchedResponse: Sendable, Equatable {
    /// The HTTP status code, e.g. 200, 404, 301.
    public let status: Int
    /// The `Content-Type` header as sent (parameters included, e.g. `application/json; charset=utf-8`),
    /// or `nil` when absent.
    public let contentType: String?
    /// The body bytes exactly as received (no content coding is requested), at most `maxBytes`.
    public let body: [UInt8]
    /// For a 3xx status, the absolute URL the `Location` header points to (resolved against the request
    /// URL); `nil` otherwise. The redirect is never followed.
    public let redirectLocation: String?
    /// The final response's header lines, in order (only for ``HTTPSFetcher/send(_:host:port:path:headers:body:maxBytes:)``;
    /// empty from ``HTTPSFetcher/get(host:port:path:maxBytes:)``).
    public let headers: [HTTPClientHeader]

    /// A response; the fetcher builds these, tests may too.
    public init(status: Int, contentType: String?, body: [UInt8], redirectLocation: String?, headers: [HTTPClientHeader] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.redirectLocation = redirectLocation
        self.headers = headers
    }

    /// The first value of the header `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}

/// Why a fetch produced no response. The strings are for an operator or a problem message: they name the
/// host, the address and what went wrong, and never carry a secret. Maps onto docs/protocol.md#problem-codes
/// (`timeout`, `dns_error`, `address_refused`, `too_large`; TLS and connection failures are transient).
public enum FetchFailure: Error, Sendable, Equatable {
    /// The connect (TCP + TLS) or total timeout passed.
    case timeout(String)
    /// The host name does not resolve (or is not a valid host name, or is a `.invalid` name, RFC 6761 §6.4).
    case dnsError(String)
    /// The host resolved only to refused addresses (``AddressPolicy``); the message names each address and
    /// why. No connection was made.
    case addressRefused(String)
    /// The certificate did not verify (unknown issuer, wrong name, expired) or the TLS handshake failed.
    case tlsError(String)
    /// The body is larger than `limit` bytes (from `Content-Length`, or counted while receiving).
    case tooLarge(limit: Int)
    /// Refused, reset or any other transport error; also an invalid request (bad path, port or limit).
    case connectionFailed(String)
}

extension FetchFailure {
    /// What went wrong, in words for a person (never a Swift case name): the host, the address and the cause,
    /// e.g. `acme.example does not resolve: Name or service not known`.
    public var explanation: String {
        switch self {
        case .timeout(let message), .dnsError(let message), .addressRefused(let message), .tlsError(let message): message
        case .tooLarge(let limit): "the response is larger than \(limit) bytes"
        case .connectionFailed(let message): "no HTTP response: \(message)"
        }
    }
}

/// Fetches small HTTPS documents (association files, domain-ownership token files) from hosts named by
/// customers, safely.
///
/// Each ``get(host:port:path:maxBytes:)``:
/// 1. resolves the host itself (a matching ``OutboundConfiguration/resolve`` override, else `getaddrinfo`);
/// 2. drops every address ``AddressPolicy`` refuses, unless ``OutboundConfiguration/allowPrivate``; when none
///    is left, fails with ``FetchFailure/addressRefused(_:)`` before any connection;
/// 3. pins the remaining addresses with `CURLOPT_RESOLVE`, so DNS cannot answer differently between the
///    check and the connect (DNS rebinding);
/// 4. runs one libcurl transfer: HTTPS only, certificate and host name verified, no redirect followed, no
///    proxy, no cookies, no content coding, `User-Agent: ZevAuth-AssociationCheck/1`,
///    `Accept: application/json`, the configured timeouts, and `maxBytes` enforced from `Content-Length`
///    and while receiving.
///
/// The call blocks its thread for up to the name lookup plus the total timeout; run it off request threads.
/// The name lookup (`getaddrinfo`) is not bounded by the configured timeouts.
public final class HTTPSFetcher: Sendable {
    /// The configuration every fetch uses.
    public let configuration: OutboundConfiguration

    /// The `User-Agent` sent with every fetch.
    public static let userAgent = "ZevAuth-AssociationCheck/1"

    /// A fetcher; initialises libcurl once per process (`curl_global_init`) on first use.
    public init(configuration: OutboundConfiguration) {
        self.configuration = configuration
        _ = CurlGlobal.initialized
    }

    /// `GET https://host[:port]/path`.
    ///
    /// - Parameters:
    ///   - host: a DNS host name (letters, digits, hyphens, dots; compared case-insensitively).
    ///   - port: the TCP port, 1…65535; default 443.
    ///   - path: the absolute path and optional query, starting with `/`, printable ASCII without spaces or `#`.
    ///   - maxBytes: the largest body accepted, in bytes (> 0); the AASA is capped at 128 KB and
    ///     `assetlinks.json` at 1 MiB (docs/association.md#aasa-hosting, docs/association.md#android-verification).
    /// - Returns: the response for any HTTP status, or why there is none.
    public func get(host: String, port: Int = 443, path: String, maxBytes: Int) -> Result<FetchedResponse, FetchFailure> {
        fetch(.get, host: host, port: port, path: path, headers: [], body: [], maxBytes: maxBytes, userAgent: Self.userAgent)
    }

    /// The methods ``send(_:host:port:path:headers:body:maxBytes:)`` uses.
    public enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
    }

    /// The `User-Agent` of ``send(_:host:port:path:headers:body:maxBytes:)`` (requests to upstream OpenID
    /// providers: discovery, key sets, token endpoints).
    public static let federationUserAgent = "ZevAuth-Federation/1"

    /// A `GET` or a `POST` to `https://host[:port]/path` with every guard of ``get(host:port:path:maxBytes:)``
    /// (the name resolved and checked, the address pinned, HTTPS verified, no redirect followed, the
    /// timeouts and `maxBytes`), extra request `headers` (after `Accept: application/json`), a `body` for a
    /// POST, and the response's header lines kept in ``FetchedResponse/headers``.
    /// - Returns: the response for any HTTP status, or why there is none.
    public func send(
        _ method: Method, host: String, port: Int = 443, path: String, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], maxBytes: Int
    ) -> Result<FetchedResponse, FetchFailure> {
        guard headers.allSatisfy({ Self.isHeaderSafe($0.name) && Self.isHeaderSafe($0.value) }) else {
            return .failure(.connectionFailed("invalid request: a header has a control character"))
        }
        return fetch(
            method, host: host, port: port, path: path, headers: headers, body: body, maxBytes: maxBytes,
            userAgent: Self.federationUserAgent, keepHeaders: true)
    }

    private static func isHeaderSafe(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }

    private func fetch(
        _ method: Method, host: String, port: Int, path: String, headers: [(name: String, value: String)], body: [UInt8],
        maxBytes: Int, userAgent: String, keepHeaders: Bool = false
    ) -> Result<FetchedResponse, FetchFailure> {
        let host = host.lowercased()
        guard HostName.isValid(host) else { return .failure(.dnsError("\"\(host)\" is not a valid host name")) }
        guard (1...65_535).contains(port) else { return .failure(.connectionFailed("invalid request: port \(port) is not 1-65535")) }
        guard maxBytes > 0 else { return .failure(.connectionFailed("invalid request: maxBytes must be positive")) }
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            return .failure(.connectionFailed("invalid request: the path must start with / and be printable ASCII without spaces or #"))
        }
        guard CurlGlobal.initialized else { return .failure(.connectionFailed("libcurl could not be initialised")) }

        let addresses: [IPAddress]
        switch Resolver.resolve(host: host, port: port, overrides: configuration.resolve) {
        case .success(let resolved): addresses = resolved
        case .failure(let failure): return .failure(failure)
        }
        let allowed: [IPAddress]
        if configuration.allowPrivate {
            allowed = addresses
        } else {
            allowed = addresses.filter { AddressPolicy.refusalReason($0) == nil }
            if allowed.isEmpty {
                let reasons = addresses.prefix(4).map { "\($0) is \(AddressPolicy.refusalReason($0) ?? "refused")" }
                let more = addresses.count > 4 ? " (and \(addresses.count - 4) more)" : ""
                return .failure(.addressRefused("\(host) resolves only to refused addresses: \(reasons.joined(separator: "; "))\(more)"))
            }
        }

        let url = port == 443 ? "https://\(host)\(path)" : "https://\(host):\(port)\(path)"
        guard let easy = CurlEasy(maxBytes: maxBytes) else {
            return .failure(.connectionFailed("libcurl could not create a transfer"))
        }
        do {
            let pin = Resolver.pinEntry(host: host, port: port, addresses: allowed)
            return .success(
                try transfer(
                    easy, url: url, pin: pin, method: method, headers: headers, body: body, userAgent: userAgent,
                    keepHeaders: keepHeaders))
        } catch {
            return .failure(error.reported())
        }
    }

    /// Runs the GET on `easy`: ``CurlEasy``'s shared options, HTTPS only (redirect targets too),
    /// `Accept: application/json`, and the host pinned to the checked addresses by `pin` (a
    /// `CURLOPT_RESOLVE` entry).
    /// - Throws: ``CurlFailure`` when no response came.
    private func transfer(
        _ easy: CurlEasy, url: String, pin: String, method: Method, headers: [(name: String, value: String)], body: [UInt8],
        userAgent: String, keepHeaders: Bool
    ) throws(CurlFailure) -> FetchedResponse {
        try easy.configure(
            url: url, protocols: "https", caFile: configuration.caFile,
            connectTimeoutMilliseconds: configuration.connectTimeoutMilliseconds,
            timeoutMilliseconds: configuration.timeoutMilliseconds, userAgent: userAgent)
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "https", "CURLOPT_REDIR_PROTOCOLS_STR")
        try easy.set(
            CURLOPT_HTTPHEADER, lines: ["Accept: application/json"] + headers.map { "\($0.name): \($0.value)" }, "CURLOPT_HTTPHEADER")
        if method == .post { try easy.setRequestBody(body) }
        if keepHeaders { try easy.collectHeaders() }
        // The address checked by AddressPolicy is the one connected to: libcurl takes it from here and
        // never asks DNS for this host and port.
        try easy.set(CURLOPT_RESOLVE, lines: [pin], "CURLOPT_RESOLVE")
        try easy.perform()

        let status = try easy.longInfo(CURLINFO_RESPONSE_CODE, "getinfo")
        let contentType = try easy.stringInfo(CURLINFO_CONTENT_TYPE, "getinfo")
        let location = try (300..<400).contains(status) ? easy.stringInfo(CURLINFO_REDIRECT_URL, "getinfo") : nil
        return FetchedResponse(
            status: status, contentType: contentType, body: easy.body, redirectLocation: location,
            headers: easy.headerLines.compactMap(HTTPClient.header))
    }

    /// libcurl's built-in CA directory (`CURLINFO_CAPATH`), which stays trusted when ``OutboundConfiguration/caFile``
    /// adds a bundle; `nil` when this libcurl was built without one.
    static var systemCAPath: String? { CurlEasy.defaultCAPath() }
}
