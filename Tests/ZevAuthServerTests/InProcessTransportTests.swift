import Foundation
import HTTPServer
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Handler tests run in process (docs/architecture.md, "Testing"): the in-process transport of
/// `TestHTTPClient` must answer exactly what the live daemon answers for the same request, so a test means
/// the same on either. Each request goes to both, and the answers are compared field by field.
@Suite struct InProcessTransportTests {
    /// Everything of an answer but the `Date` value (which the clock decides).
    func comparable(_ response: TestResponse) -> [String] {
        ["status \(response.status)"]
            + response.headers.map {
                // The date and the generated request id differ between any two answers; their presence is compared.
                $0.name == "date" || $0.name == "x-request-id" ? $0.name : "\($0.name): \($0.value)"
            }
            + [response.text]
    }

    @Test func theInProcessTransportAnswersWhatTheLiveServerAnswers() throws {
        let live = try TestServer(live: true, issuer: "http://127.0.0.1:9")
        let local = try TestServer()
        #expect(local.issuer == "http://127.0.0.1:9" && !local.isLive && live.isLive)
        let json = [("Content-Type", "application/json")]
        let requests: [(method: String, target: String, headers: [(String, String)], body: [UInt8])] = [
            ("GET", "/healthz", [], []),
            // HEAD: the length of the body GET would have, no body.
            ("HEAD", "/healthz", [], []),
            ("GET", "/.well-known/oauth-authorization-server", [], []),
            // The query starts at the first "?", a fragment is dropped, the path stays percent-encoded.
            ("GET", "/nope?a=1?b#frag", [], []),
            ("GET", "/%68ealthz", [], []),
            ("GET", "/healthz#fragment", [], []),
            ("OPTIONS", "/oauth2/token", [], []),
            ("POST", "/v1/auth/session/refresh", json, Array("{\"refreshToken\":1}".utf8)),
            ("POST", "/oauth2/token", [("Content-Type", "application/x-www-form-urlencoded")], Array("grant_type=nope".utf8)),
            // Past the body limit: the framing check answers before the handler.
            ("POST", "/v1/auth/session/refresh", json, [UInt8](repeating: 0x20, count: 70_000)),
            // Past the query-field limit.
            ("GET", "/healthz?" + Array(repeating: "a", count: 300).joined(separator: "&"), [], []),
            (
                "GET", startTarget([("client_id", "pk_test_unknown"), ("redirect_uri", "http://127.0.0.1/cb")]),
                [("Accept", "application/json")], []
            ),
        ]
        for request in requests {
            let overSocket = try live.client.send(request.method, request.target, headers: request.headers, body: request.body)
            let inProcess = try local.client.send(request.method, request.target, headers: request.headers, body: request.body)
            #expect(comparable(inProcess) == comparable(overSocket), "\(request.method) \(request.target.prefix(60))")
        }
    }

    /// A handler answer the server cannot send (a status outside 200–599, a field with CR LF) is the server's
    /// 500 on both transports, never the handler's answer.
    @Test func aResponseTheServerRefusesIsItsServerErrorInProcessToo() throws {
        struct Broken: HTTPHandler {
            func handle(_ request: HTTPRequest) -> HTTPResponse {
                request.path == "/status"
                    ? HTTPResponse(status: 99, body: Array("early".utf8))
                    : HTTPResponse(status: 200, headers: HTTPHeaders([("X-Split", "a\r\nSet-Cookie: b=c")]))
            }
        }
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threadPoolSize = 1
        let server = try HTTPServer(configuration: configuration, handler: Broken())
        defer { server.shutdown(gracePeriodSeconds: 1) }
        for target in ["/status", "/header"] {
            let overSocket = try TestHTTPClient(port: server.port).send("GET", target)
            let inProcess = try TestHTTPClient(handler: Broken(), port: server.port).send("GET", target)
            #expect(overSocket.status == 500)
            #expect(inProcess.json["error"] as? String == "server_error")
            #expect(inProcess.header("set-cookie") == nil)
            #expect(comparable(inProcess) == comparable(overSocket), "\(target)")
        }
    }

    /// What only a socket carries is refused in process with a sentence naming the way out, rather than
    /// answered differently from the daemon.
    @Test func whatOnlyASocketCarriesNeedsTheLiveServer() throws {
        let client = try TestServer().client
        let refusals: [() throws -> TestResponse] = [
            { try client.send("GET", targetBytes: Array("/healthz?a=".utf8) + [0xFF]) },
            { try client.send("GET", "/healthz", headers: [("Transfer-Encoding", "chunked")]) },
            { try client.send("GET", "/healthz", headers: [("Content-Length", "1")]) },
        ]
        for refusal in refusals {
            #expect {
                _ = try refusal()
            } throws: { error in
                "\(error)".hasSuffix("Only a socket carries it: use TestServer(live: true).")
            }
        }
    }
}

/// The router test helper (`InProcessApp`): a `ZevAuthApp` over a context the test builds, with no
/// database behind the ports.
@Suite struct InProcessAppTests {
    @Test func answersARouteThatNeedsNoStore() throws {
        let app = InProcessApp(context: InProcessApp.context())
        let metadata = try app.get("/.well-known/oauth-authorization-server")
        #expect(metadata.status == 200)
        #expect(metadata.json["issuer"] as? String == "http://127.0.0.1:9")
    }

    @Test func aStoreOutOfReachIsTheFunnelsRetryableAnswer() throws {
        let log = CapturingLog()
        let app = InProcessApp(context: InProcessApp.context(log: log))
        let exchange = try app.postJSON(
            "/v1/auth/handoff/exchange",
            ["code": "c", "codeVerifier": String(repeating: "v", count: 43), "redirectUri": "http://127.0.0.1/cb"],
            bearer: "pk_test_unknown")
        #expect(exchange.status == 503)
        #expect(exchange.json["error"] as? String == "temporarily_unavailable")
        #expect(exchange.header("retry-after") == "1")
        let form = try app.postForm("/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", "r"), ("client_id", "pk_test_x")])
        #expect(form.status == 503)
        #expect(log.all.contains { $0.hasPrefix("POST /oauth2/token 503 ") })
    }
}
