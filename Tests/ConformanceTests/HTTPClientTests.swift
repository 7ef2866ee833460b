import Fetch
import Foundation
import Glibc
import HTTPServer
import Testing

/// A handler from a closure.
struct Handler: HTTPHandler {
    let body: @Sendable (HTTPRequest) -> HTTPResponse
    func handle(_ request: HTTPRequest) -> HTTPResponse { body(request) }
}

/// Fetch's general client against a real libmicrohttpd server on loopback.
@Suite struct HTTPClientTests {
    let server: HTTPServer

    init() throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threadPoolSize = 2
        server = try HTTPServer(
            configuration: configuration,
            handler: Handler { request in
                switch request.path {
                case "/redirect":
                    return HTTPResponse(status: 303, headers: HTTPHeaders([("Location", "com.acme.app:/cb?code=x")]))
                case "/cookies":
                    var headers = HTTPHeaders([("Set-Cookie", "a=1; Path=/")])
                    headers.add("Set-Cookie", "b=2; Path=/")
                    return HTTPResponse(status: 200, headers: headers, body: Array("ok".utf8))
                case "/big":
                    return HTTPResponse(status: 200, body: [UInt8](repeating: 0x41, count: 10_000))
                default:
                    var headers = HTTPHeaders([("X-Method", request.method), ("Content-Type", "text/plain")])
                    headers.add("X-Auth", request.headers["authorization"] ?? "none")
                    return HTTPResponse(status: 200, headers: headers, body: request.body)
                }
            })
    }

    var base: String { "http://127.0.0.1:\(server.port)" }

    @Test func returnsRedirectsWithoutFollowingThem() throws {
        let response = try HTTPClient().get(base + "/redirect")
        #expect(response.status == 303)
        #expect(response.header("location") == "com.acme.app:/cb?code=x")
    }

    @Test func keepsEveryHeaderIncludingRepeatedSetCookie() throws {
        let response = try HTTPClient().get(base + "/cookies")
        #expect(response.headers(named: "Set-Cookie") == ["a=1; Path=/", "b=2; Path=/"])
        #expect(response.text == "ok")
    }

    @Test(arguments: HTTPClientRequest.Method.allCases)
    func sendsEachMethodWithHeadersAndBody(method: HTTPClientRequest.Method) throws {
        let body = method == .get ? [] : Array("{\"a\":1}".utf8)
        let response = try HTTPClient().send(
            HTTPClientRequest(method, base + "/echo", headers: [("Authorization", "Bearer pk_test_x")], body: body))
        #expect(response.status == 200)
        #expect(response.header("X-Method") == method.rawValue)
        #expect(response.header("X-Auth") == "Bearer pk_test_x")
        #expect(response.body == body)
    }

    @Test func capsTheBody() {
        var configuration = HTTPClientConfiguration()
        configuration.maxResponseBytes = 1_000
        #expect(throws: HTTPClientError.tooLarge(limit: 1_000)) { try HTTPClient(configuration: configuration).get(base + "/big") }
    }

    @Test func refusesOtherSchemesAndReportsRefusedConnections() throws {
        #expect(throws: HTTPClientError.self) { try HTTPClient().get("ftp://127.0.0.1/") }
        #expect(throws: HTTPClientError.self) { try HTTPClient().get("http://127.0.0.1:1/") }
    }

    @Test func timesOut() throws {
        // A listener that never accepts: the kernel completes the handshake, no answer ever comes.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        listen(socket, 1)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        var configuration = HTTPClientConfiguration()
        configuration.timeoutMilliseconds = 300
        let client = HTTPClient(configuration: configuration)
        #expect {
            try client.get("http://127.0.0.1:\(port)/")
        } throws: { error in
            if case HTTPClientError.timeout = error { return true }
            return false
        }
    }
}
