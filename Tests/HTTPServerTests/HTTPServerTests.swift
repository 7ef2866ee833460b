import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// A handler from a closure.
struct ClosureHandler: HTTPHandler {
    let body: @Sendable (HTTPRequest) -> HTTPResponse
    func handle(_ request: HTTPRequest) -> HTTPResponse { body(request) }
}

/// Echoes the method, path, raw query and body back so the wire view can be checked.
let echo = ClosureHandler { request in
    var headers = HTTPHeaders([("Content-Type", "application/octet-stream")])
    headers.add("X-Method", request.method)
    headers.add("X-Path", request.path)
    headers.add("X-Query", request.rawQuery.map { "[\($0)]" } ?? "<nil>")
    headers.add("X-Remote", request.remoteAddress)
    headers.add("X-Test-Values", request.headers.values("x-test").joined(separator: "|"))
    return HTTPResponse(status: 200, headers: headers, body: request.body)
}

func startServer(
    host: String = "127.0.0.1", handler: any HTTPHandler = echo,
    configure: (inout HTTPServerConfiguration) -> Void = { _ in }
) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration()
    configuration.host = host
    configuration.port = 0
    configuration.threadPoolSize = 2
    configure(&configuration)
    return try HTTPServer(configuration: configuration, handler: handler)
}

func jsonError(_ response: RawClient.Response) -> String? {
    guard response.headers["Content-Type"] == "application/json",
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String],
        object["error_description"] != nil
    else { return nil }
    return object["error"]
}

/// Polls `condition` for up to `seconds`.
func eventually(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// Runs `work` on its own thread (not the test's cooperative pool, since it blocks).
final class Background<T: Sendable>: Sendable {
    private let result = Mutex<T?>(nil)
    init(_ work: @escaping @Sendable () -> T) {
        Thread.detachNewThread { [self] in
            let value = work()
            self.result.withLock { $0 = value }
        }
    }
    /// Waits up to `seconds` for the result.
    func wait(seconds: Double = 10) -> T? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let value = result.withLock({ $0 }) { return value }
            usleep(2_000)
        }
        return nil
    }
}

@Suite(.serialized)
struct HTTPServerTests {
    // MARK: Router, in-process

    func sampleRouter() -> Router {
        var router = Router()
        router.add("GET", "/v1/admin/callbacks/{id}") { _, parameters in
            HTTPResponse(status: 200, body: Array("get \(parameters["id"] ?? "?")".utf8))
        }
        router.add("DELETE", "/v1/admin/callbacks/{id}") { _, parameters in
            HTTPResponse(status: 204, body: Array("delete \(parameters["id"] ?? "?")".utf8))
        }
        router.add("GET", "/v1/admin/callbacks/me") { _, _ in HTTPResponse(status: 200, body: Array("me".utf8)) }
        router.add("POST", "/token") { _, _ in HTTPResponse(status: 200) }
        router.add("GET", "/") { _, _ in HTTPResponse(status: 200, body: Array("root".utf8)) }
        return router
    }

    func call(_ router: Router, _ method: String, _ path: String) -> HTTPResponse {
        router.handle(HTTPRequest(method: method, path: path))
    }

    @Test func routerDecodesPathParameters() {
        let router = sampleRouter()
        #expect(call(router, "GET", "/v1/admin/callbacks/a%20b%2Fc").body == Array("get a b/c".utf8))
        #expect(call(router, "GET", "/v1/admin/callbacks/x+y").body == Array("get x+y".utf8))
        #expect(call(router, "DELETE", "/v1/admin/callbacks/42").status == 204)
        #expect(call(router, "GET", "/").body == Array("root".utf8))
    }

    @Test func routerTriesRoutesInOrderAdded() {
        // The parameter route was added first, so it wins over the literal one.
        #expect(call(sampleRouter(), "GET", "/v1/admin/callbacks/me").body == Array("get me".utf8))
    }

    @Test(arguments: [
        "/nope", "/v1/admin/callbacks", "/v1/admin/callbacks/", "/v1/admin/callbacks/42/", "/v1/admin/callbacks/%ZZ",
        "/v1/admin/callbacks/%4", "/v1/admin/callbacks/%FF", "/V1/admin/callbacks/1", "/v1/admin/%63allbacks/1", "",
    ])
    func routerAnswersUnknownPathsWith404(path: String) throws {
        let response = call(sampleRouter(), "GET", path)
        #expect(response.status == 404)
        #expect(response.headers["content-type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
        #expect(object?["error"] == "not_found")
        #expect(object?["error_description"] != nil)
    }

    @Test func routerAnswersOtherMethodsWith405AndAllow() throws {
        let response = call(sampleRouter(), "PUT", "/v1/admin/callbacks/7")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "DELETE, GET, HEAD")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
        #expect(object?["error"] == "method_not_allowed")
        #expect(call(sampleRouter(), "get", "/token").headers["allow"] == "POST")
    }

    @Test func headIsAnsweredByTheGetRoute() {
        let response = call(sampleRouter(), "HEAD", "/v1/admin/callbacks/7")
        #expect(response.status == call(sampleRouter(), "GET", "/v1/admin/callbacks/7").status)
        #expect(response.status != 405)
        #expect(call(sampleRouter(), "HEAD", "/token").status == 405)
    }

    @Test func routerListsRoutesInOrder() {
        let routes = sampleRouter().routes.map { "\($0.method) \($0.pattern)" }
        #expect(
            routes == [
                "GET /v1/admin/callbacks/{id}", "DELETE /v1/admin/callbacks/{id}", "GET /v1/admin/callbacks/me",
                "POST /token", "GET /",
            ])
    }

    // MARK: Headers and framing helpers, in-process

    @Test func headersAreAnOrderedCaseInsensitiveMultiMap() {
        var headers = HTTPHeaders([("Accept", "a"), ("X-One", "1"), ("accept", "b")])
        #expect(headers["ACCEPT"] == "a")
        #expect(headers.values("accept") == ["a", "b"])
        headers.add("x-one", "2")
        #expect(headers.values("X-ONE") == ["1", "2"])
        headers.set("X-One", "3")
        #expect(headers.values("x-one") == ["3"])
        #expect(headers.map(\.name) == ["Accept", "accept", "X-One"])
        #expect(headers["missing"] == nil)
    }

    @Test func splitsTargetAtFirstQuestionMarkAndDropsFragment() {
        func split(_ target: String) -> (String, String?) {
            let parts = Framing.splitTarget(Array(target.utf8))
            return (parts.path, parts.query)
        }
        #expect(split("/a?b=c?d") == ("/a", "b=c?d"))
        #expect(split("/a") == ("/a", nil))
        #expect(split("/a?") == ("/a", ""))
        #expect(split("/a?x#frag?y") == ("/a", "x"))
        #expect(split("/a#f?x") == ("/a", nil))
    }

    @Test func unsendableResponsesBecome500() {
        let splitting = HTTPResponse(status: 200, headers: HTTPHeaders([("X-A", "ok\r\nSet-Cookie: evil=1")]))
        #expect(Framing.sendable(splitting).status == 500)
        #expect(Framing.sendable(HTTPResponse(status: 200, headers: HTTPHeaders([("Bad Name", "v")]))).status == 500)
        #expect(Framing.sendable(HTTPResponse(status: 99)).status == 500)
        let framed = HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Length", "5"), ("X-A", "b")]))
        #expect(Framing.sendable(framed).headers.map(\.name) == ["X-A"])
        let hopByHop = HTTPResponse(status: 200, headers: HTTPHeaders([("Connection", "keep-alive, Close")]))
        #expect(Framing.sendable(hopByHop).headers.map { "\($0.name): \($0.value)" } == ["Connection: close"])
        let keepAlive = HTTPResponse(status: 200, headers: HTTPHeaders([("Connection", "keep-alive")]))
        #expect(Framing.sendable(keepAlive).headers.count == 0)
        let empty = HTTPResponse(status: 200, headers: HTTPHeaders([("X-Empty", ""), ("X-A", "b")]))
        #expect(Framing.sendable(empty).headers.map(\.name) == ["X-A"])
    }

    // MARK: Over the wire

    @Test func routesWithPathParametersOverLoopback() throws {
        let server = try startServer(handler: sampleRouter())
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let found = try RawClient.get("/v1/admin/callbacks/a%20b", port: server.port)
        #expect(found.status == 200)
        #expect(found.bodyText == "get a b")
        let missing = try RawClient.get("/nope?x=1", port: server.port)
        #expect(missing.status == 404)
        #expect(jsonError(missing) == "not_found")
        let wrongMethod = try RawClient.request(
            "PATCH /token HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "POST")
        #expect(jsonError(wrongMethod) == "method_not_allowed")
    }

    @Test func echoesBodyAndRequestMetadata() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let body = "grant_type=authorization_code&code=abc"
        let response = try RawClient.request(
            "POST /token HTTP/1.1\r\nHost: test\r\nX-Test: one\r\nx-test: two\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n\(body)", port: server.port)
        #expect(response.status == 200)
        #expect(response.bodyText == body)
        #expect(response.headers["X-Method"] == "POST")
        #expect(response.headers["X-Path"] == "/token")
        #expect(response.headers["X-Query"] == "<nil>")
        #expect(response.headers["X-Remote"] == "127.0.0.1")
        #expect(response.headers["X-Test-Values"] == "one|two")
    }

    @Test func echoesChunkedBody() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.request(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", port: server.port)
        #expect(response.status == 200)
        #expect(response.bodyText == "hello world")
    }

    @Test func bodyAtTheLimitIsAccepted() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
        let head = "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 65536\r\nConnection: close\r\n\r\n"
        let response = RawClient.parse(try RawClient.exchange(Array(head.utf8) + body, port: server.port))
        #expect(response?.status == 200)
        #expect(response?.body.count == 65_536)
    }

    @Test func declaredBodyOverTheLimitGets413BeforeContinue() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        // No body is sent: the answer must come from the headers alone, before any 100 Continue.
        let bytes = try RawClient.exchange(
            "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 65537\r\nExpect: 100-continue\r\n\r\n",
            port: server.port)
        #expect(String(decoding: bytes.prefix(12), as: UTF8.self) == "HTTP/1.1 413")
        let response = RawClient.parse(bytes)
        #expect(jsonError(response ?? .init(status: 0, headers: .init(), body: [])) == "request_too_large")
        let huge = try RawClient.request(
            "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 99999999999999999999999\r\n\r\n", port: server.port)
        #expect(huge.status == 413 || huge.status == 400)
    }

    @Test func chunkedBodyOverTheLimitIsCutOff() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let chunk = [UInt8](repeating: UInt8(ascii: "y"), count: 16_384)
        var request = Array("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<5 { request += Array("4000\r\n".utf8) + chunk + Array("\r\n".utf8) }
        request += Array("0\r\n\r\n".utf8)
        let response = RawClient.parse(try RawClient.exchange(request, port: server.port))
        #expect(response == nil || response?.status == 413)
        #expect(server.inFlightRequests == 0)
    }

    @Test(arguments: [
        ("Content-Length: 3\r\nContent-Length: 4\r\n", "conflicting Content-Length"),
        ("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "Content-Length with Transfer-Encoding"),
        ("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "Transfer-Encoding with Content-Length"),
    ])
    func ambiguousFramingGets400AndClose(fields: String, label: String) throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        // The trailing bytes would be a smuggled second request if the framing were guessed.
        let response = try RawClient.request(
            "POST /echo HTTP/1.1\r\nHost: test\r\n\(fields)\r\nabcd\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
            port: server.port)
        #expect(response.status == 400, "\(label)")
        #expect(response.headers["Connection"]?.lowercased() == "close", "\(label)")
        #expect(jsonError(response) == "invalid_request", "\(label)")
    }

    @Test func nonNumericContentLengthGets400() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        for value in ["abc", "-1", "+3", "3 3", "0x10"] {
            let response = try RawClient.request(
                "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: \(value)\r\nConnection: close\r\n\r\nabc",
                port: server.port)
            #expect(response.status == 400, "Content-Length: \(value)")
        }
    }

    @Test func unknownTransferCodingGets501() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.request(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", port: server.port)
        #expect(response.status == 501)
        #expect(response.headers["Connection"]?.lowercased() == "close")
    }

    @Test func rawQueryAndPathArePreservedExactly() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.get("/cb%2Fx/%7Ey?a=b+c%20d&a=2", port: server.port)
        #expect(response.headers["X-Path"] == "/cb%2Fx/%7Ey")
        #expect(response.headers["X-Query"] == "[a=b+c%20d&a=2]")
        #expect(try RawClient.get("/p?", port: server.port).headers["X-Query"] == "[]")
        #expect(try RawClient.get("/p", port: server.port).headers["X-Query"] == "<nil>")
    }

    @Test func nonASCIITargetGets400() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let request =
            Array("GET /caf".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8)
        let response = RawClient.parse(try RawClient.exchange(request, port: server.port))
        #expect(response?.status == 400)
    }

    @Test func oversizedHeadersGet431() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let big = String(repeating: "a", count: 40_000)
        let response = try RawClient.request(
            "GET / HTTP/1.1\r\nHost: test\r\nX-Big: \(big)\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(response.status == 431)
        #expect(server.inFlightRequests == 0)
    }

    @Test func missingHostGets400FromStrictMode() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.request("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(response.status == 400)
        #expect(server.inFlightRequests == 0)
    }

    @Test func invalidHandlerResponseBecomes500() throws {
        let server = try startServer(
            handler: ClosureHandler { _ in
                HTTPResponse(status: 200, headers: HTTPHeaders([("Location", "/ok\r\nSet-Cookie: a=b")]))
            })
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.get("/", port: server.port)
        #expect(response.status == 500)
        #expect(response.headers["Set-Cookie"] == nil)
    }

    @Test(arguments: [("Connection", "keep-alive"), ("Date", "Tue, 01 Jan 2030 00:00:00 GMT"), ("X-Empty", "")])
    func handlerFieldsMHDWouldRefuseStillGetAnAnswer(name: String, value: String) throws {
        let server = try startServer(
            handler: ClosureHandler { _ in
                HTTPResponse(status: 200, headers: HTTPHeaders([(name, value)]), body: Array("ok".utf8))
            })
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.get("/", port: server.port)
        #expect(response.status == 200)
        #expect(response.bodyText == "ok")
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port)
        defer { close(fd) }
        RawClient.send(
            fd,
            Array(
                ("GET /one HTTP/1.1\r\nHost: t\r\n\r\n" + "GET /two?q HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                    .utf8))
        let text = String(decoding: RawClient.readAll(fd), as: UTF8.self)
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == 3)
        #expect(text.contains("X-Path: /one") && text.contains("X-Query: [q]"))
        #expect(server.inFlightRequests == 0)
    }

    @Test func gracefulShutdownFinishesInFlightAndRefusesNewConnections() throws {
        let started = Atomic<Bool>(false)
        let server = try startServer(
            handler: ClosureHandler { _ in
                started.store(true, ordering: .sequentiallyConsistent)
                usleep(300_000)
                return HTTPResponse(status: 200, body: Array("slow".utf8))
            })
        let port = server.port
        let slow = Background { () -> String in
            (try? RawClient.get("/slow", port: port)).map { "\($0.status) \($0.bodyText)" } ?? "failed"
        }
        while !started.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
        let stopping = Background { () -> Bool in
            server.shutdown(gracePeriodSeconds: 5)
            return true
        }
        // Wait until shutdown has begun (the server is draining), then try a new connection.
        while !server.isDraining { usleep(1_000) }
        usleep(20_000)
        let late = Result { try RawClient.get("/late", port: port) }
        switch late {
        case .success(let response): Issue.record("a connection after shutdown was answered: \(response.status)")
        case .failure(let error as RawClient.Failure):
            #expect(error.operation == "connect" && error.code == ECONNREFUSED)
        case .failure(let error): Issue.record("unexpected \(error)")
        }
        #expect(slow.wait() == "200 slow")
        #expect(stopping.wait() == true)
        #expect(server.inFlightRequests == 0)
        server.shutdown()  // idempotent
    }

    @Test func abandonedRequestIsReleased() throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port)
        RawClient.send(fd, Array("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc".utf8))
        #expect(eventually { server.inFlightRequests == 1 })
        close(fd)
        #expect(eventually { server.inFlightRequests == 0 })
    }

    @Test func idleConnectionIsClosedAfterTimeout() throws {
        let server = try startServer { $0.connectionTimeoutSeconds = 1 }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port, timeoutSeconds: 10)
        defer { close(fd) }
        let start = ContinuousClock.now
        RawClient.send(fd, Array("GET / HTTP/1.1\r\nHost: t\r\n".utf8))  // never finished (slowloris)
        #expect(RawClient.readAll(fd).isEmpty)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(eventually { server.inFlightRequests == 0 })
    }

    @Test func bindsIPv6Loopback() throws {
        let server = try startServer(host: "::1")
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let response = try RawClient.get("/six?x", host: "::1", port: server.port)
        #expect(response.status == 200)
        #expect(response.headers["X-Remote"] == "::1")
        #expect(response.headers["X-Query"] == "[x]")
    }

    @Test func addressInUseIsThrown() throws {
        let first = try startServer()
        defer { first.shutdown(gracePeriodSeconds: 0) }
        #expect(throws: HTTPServerError.addressInUse(host: "127.0.0.1", port: first.port)) {
            try startServer { $0.port = first.port }
        }
    }

    @Test func badConfigurationIsThrownNamingTheField() {
        #expect(throws: HTTPServerError.invalidHost("localhost")) { try startServer(host: "localhost") }
        #expect(throws: HTTPServerError.invalidConfiguration(field: "threadPoolSize", reason: "must be 1...1024")) {
            try startServer { $0.threadPoolSize = 0 }
        }
        #expect(throws: HTTPServerError.self) { try startServer { $0.connectionTimeoutSeconds = 0 } }
    }
}
