import Glibc
import HTTPServer

/// A tiny blocking HTTP/1.1 client over a raw socket, so tests control every byte on the wire
/// (URLSession would normalize framing, and is unreliable on Linux).
enum RawClient {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation) failed: errno \(code)" }
    }

    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    /// A connected socket; `recv` gives up after `timeoutSeconds`. `source`, an IPv4 loopback literal such
    /// as "127.0.0.2", is the local address to connect from (another client, as the server sees it).
    static func connect(
        host: String = "127.0.0.1", port: UInt16, timeoutSeconds: Int = 5, source: String? = nil
    ) throws -> Int32 {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(operation: "socket", code: errno) }
        if let source, !isIPv6 {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let code = errno
                close(fd)
                throw Failure(operation: "bind", code: code)
            }
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(operation: "connect", code: code)
        }
        return fd
    }

    /// Sends all of `bytes`, ignoring a peer that closed early (it may answer before reading everything).
    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Everything the peer sends until it closes (or a read fails or times out).
    static func readAll(_ fd: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return received }
            received += buffer[..<count]
        }
    }

    /// Sends `request` on a new connection and reads until the server closes it.
    static func exchange(_ request: String, host: String = "127.0.0.1", port: UInt16) throws -> [UInt8] {
        try exchange(Array(request.utf8), host: host, port: port)
    }

    static func exchange(_ request: [UInt8], host: String = "127.0.0.1", port: UInt16) throws -> [UInt8] {
        let fd = try connect(host: host, port: port)
        defer { close(fd) }
        send(fd, request)
        return readAll(fd)
    }

    /// Parses the first response in `bytes` (Content-Length framing only, which is all the server sends).
    static func parse(_ bytes: [UInt8]) -> Response? {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        var body = Array(bytes[(end + separator.count)...])
        if let length = headers["Content-Length"].flatMap({ Int($0) }), length <= body.count {
            body = Array(body[..<length])
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// One request on a fresh connection, parsed; throws when the connection fails or no response arrives.
    static func request(_ request: String, host: String = "127.0.0.1", port: UInt16) throws -> Response {
        guard let response = parse(try exchange(request, host: host, port: port)) else {
            throw Failure(operation: "read response", code: 0)
        }
        return response
    }

    /// A GET with `Connection: close`.
    static func get(_ target: String, host: String = "127.0.0.1", port: UInt16) throws -> Response {
        try request("GET \(target) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", host: host, port: port)
    }
}
