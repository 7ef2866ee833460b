import Foundation
import HTTPServer
import Testing
import ZevAuthTesting

@testable import ZevAuthServer

/// Request ids, JSON log lines and the metrics listener (docs/operations.md, "Logs", "Request ids",
/// "Metrics"), over real HTTP against the real PostgreSQL.
@Suite struct ObservabilityTests {
    /// A log line's time: RFC 3339 in UTC with exactly three digits of milliseconds.
    @Test func logTimestampsHaveThreeDigitsOfMilliseconds() {
        #expect(StructuredLog.timestamp(seconds: 1_764_000_000, milliseconds: 7) == "2025-11-24T16:00:00.007Z")
        #expect(StructuredLog.timestamp(seconds: 1_764_000_059, milliseconds: 999) == "2025-11-24T16:00:59.999Z")
        #expect(StructuredLog.timestamp(seconds: 0, milliseconds: 40) == "1970-01-01T00:00:00.040Z")
    }

    /// The JSON objects of a server's log lines; a line that is not one fails the test.
    static func jsonLines(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        server.log.all.compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)", sourceLocation: sourceLocation)
            return object
        }
    }

    static func isGenerated(_ id: String?) -> Bool {
        guard let id else { return false }
        return id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    @Test func aRequestIDFromATrustedProxyIsEchoedAndLogged() throws {
        let server = try TestServer { configuration in
            configuration.trustedProxies = ["127.0.0.1"]
            configuration.logFormat = .json
        }
        let response = try server.client.send("GET", "/healthz", headers: [("X-Request-Id", "edge-7f3a:42/x")])
        #expect(response.status == 200)
        #expect(response.header("X-Request-Id") == "edge-7f3a:42/x")
        let access = Self.jsonLines(server).filter { $0["msg"] as? String == "request" }
        #expect(access.count == 1)
        #expect(access.first?["request_id"] as? String == "edge-7f3a:42/x")
        #expect(access.first?["route"] as? String == "/healthz")
    }

    @Test func anUntrustedOrMalformedRequestIDIsReplacedOnEveryAnswer() throws {
        let untrusted = try TestServer()
        let sent = try untrusted.client.send("GET", "/healthz", headers: [("X-Request-Id", "chosen-by-client")])
        #expect(sent.header("X-Request-Id") != "chosen-by-client")
        #expect(Self.isGenerated(sent.header("X-Request-Id")))

        let trusted = try TestServer { $0.trustedProxies = ["127.0.0.1"] }
        var seen = Set<String>()
        for bad in ["has space", String(repeating: "a", count: 129), "tab\there", "caf\u{E9}"] {
            let response = try trusted.client.send("GET", "/healthz", headers: [("X-Request-Id", bad)])
            let id = try #require(response.header("X-Request-Id"))
            #expect(Self.isGenerated(id), "\(bad) was kept as \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 4, "generated ids repeat")
        // Two ids at once are one too many: replaced.
        let twice = try trusted.client.send("GET", "/healthz", headers: [("X-Request-Id", "one"), ("X-Request-Id", "two")])
        #expect(Self.isGenerated(twice.header("X-Request-Id")))
        // 128 visible characters are kept.
        let longest = String(repeating: "~", count: 128)
        #expect(try trusted.client.send("GET", "/healthz", headers: [("X-Request-Id", longest)]).header("X-Request-Id") == longest)
        // The router's own answers and errors carry one too.
        let notFound = try trusted.client.send("GET", "/no/such/path?code=secret-code-value")
        #expect(notFound.status == 404)
        #expect(Self.isGenerated(notFound.header("X-Request-Id")))
        let notAllowed = try trusted.client.send("DELETE", "/healthz")
        #expect(notAllowed.status == 405)
        #expect(Self.isGenerated(notAllowed.header("X-Request-Id")))
        let refused = try trusted.client.send("POST", "/v1/auth/handoff/exchange", body: Array("{}".utf8))
        #expect(refused.status == 401)
        #expect(Self.isGenerated(refused.header("X-Request-Id")))
        // Text lines carry the id too, and name the template, never the raw target.
        let lines = trusted.log.all
        #expect(lines.contains { $0.hasPrefix("GET unmatched 404 ") && $0.hasSuffix("request_id=\(notFound.header("X-Request-Id")!)") })
        #expect(!lines.contains { $0.contains("/no/such/path") || $0.contains("secret-code-value") })
        #expect(lines.contains { $0.hasPrefix("DELETE /healthz 405 ") })
    }

    @Test func jsonLogLinesCarryTheAccessFieldsAndNoSecretThroughASignInAndExchange() throws {
        let server = try TestServer { $0.logFormat = .json }
        let fixture = try Fixture.make(store: server.store)
        let driver = SessionDriver(server: server, fixture: fixture)
        let issued = try driver.issueCode(path: "/v1/auth/zevid/start")
        let browser = server.browser()
        let response = try SignInDriver(server: server, browser: browser).exchange(
            clientID: fixture.developmentKey,
            fields: ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": SessionDriver.redirect])
        let pair = try #require(SessionDriver.Pair(response))
        let replay = try SignInDriver(server: server, browser: browser).exchange(
            clientID: fixture.developmentKey,
            fields: ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": SessionDriver.redirect])
        #expect(replay.status == 400)

        let objects = Self.jsonLines(server)
        #expect(objects.count == server.log.all.count)
        let timestamp = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#)
        for object in objects {
            #expect((object["ts"] as? String).map { $0.wholeMatch(of: timestamp) != nil } == true, "\(object)")
            #expect(["debug", "info", "warn", "error"].contains(object["level"] as? String ?? ""), "\(object)")
            #expect(object["msg"] is String, "\(object)")
        }
        let access = objects.filter { $0["msg"] as? String == "request" }
        #expect(access.count >= 5)
        for line in access {
            #expect(line["request_id"] is String && line["method"] is String && line["route"] is String, "\(line)")
            #expect(line["status"] is Int && line["duration_ms"] is NSNumber && line["client"] as? String == "127.0.0.1", "\(line)")
            #expect(!(line["route"] as? String ?? "?").contains("?"), "\(line)")
        }
        let exchanges = access.filter { $0["route"] as? String == "/v1/auth/handoff/exchange" }
        #expect(exchanges.map { $0["status"] as? Int } == [200, 400])
        #expect(access.contains { $0["route"] as? String == "/v1/auth/zevid/start" && $0["method"] as? String == "GET" })
        #expect(server.context.metrics.count(.ok) == 1)
        #expect(server.context.metrics.count(.invalidGrant) + server.context.metrics.count(.replayRevoked) == 1)

        let log = server.log.all.joined(separator: "\n")
        var secrets = [issued.code, issued.pkce.verifier, pair.accessToken, pair.refreshToken, fixture.password, fixture.email]
        secrets += browser.cookies.values
        for secret in secrets { #expect(!log.contains(secret), "a secret is in the log") }
        #expect(!log.contains("code_challenge"), "a query string is in the log")
    }

    @Test func theMetricsListenerServesEveryFamilyAndThePublicPortDoesNot() throws {
        let server = try TestServer(live: true) { $0.metricsListen = ("127.0.0.1", 0) }
        let publicServer = try #require(server.http)
        let listener = try #require(try ServerRunner.startMetrics(server.context, publicServer: publicServer))
        defer { listener.shutdown(gracePeriodSeconds: 1) }

        let publicAnswer = try server.client.send("GET", "/metrics")
        #expect(publicAnswer.status == 404)
        #expect(try server.client.send("GET", "/healthz").status == 200)
        _ = try server.client.send("GET", "/v1/admin/apps/not-a-real-id", headers: [("Authorization", "Bearer wrong")])

        let metrics = TestHTTPClient(port: listener.port)
        let scrape = try metrics.send("GET", "/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.header("Content-Type") == MetricsEndpoint.contentType)
        let text = scrape.text
        let families: [(String, String)] = [
            ("zevauth_http_requests_total", "counter"), ("zevauth_http_request_duration_seconds", "histogram"),
            ("zevauth_http_connections_open", "gauge"), ("zevauth_exchanges_total", "counter"),
            ("zevauth_refreshes_total", "counter"), ("zevauth_sign_ins_total", "counter"), ("zevauth_rate_limited_total", "counter"),
            ("zevauth_db_pool_connections", "gauge"), ("zevauth_db_query_duration_seconds", "histogram"),
            ("zevauth_db_errors_total", "counter"), ("zevauth_link_checks_total", "counter"),
            ("zevauth_password_hashes_in_flight", "gauge"), ("zevauth_emails_total", "counter"),
            ("process_resident_memory_bytes", "gauge"), ("process_cpu_seconds_total", "counter"), ("process_open_fds", "gauge"),
        ]
        for (name, type) in families {
            #expect(text.contains("\n# HELP \(name) ") || text.hasPrefix("# HELP \(name) "), "no HELP for \(name)")
            #expect(text.contains("# TYPE \(name) \(type)\n"), "no TYPE for \(name)")
        }
        #expect(text.contains("zevauth_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1\n"))
        #expect(text.contains("zevauth_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1\n"))
        #expect(text.contains("route=\"/v1/admin/apps/{id}\""))
        #expect(!text.contains("not-a-real-id"))
        #expect(text.contains("zevauth_http_request_duration_seconds_count{route=\"/healthz\"} 1\n"))
        #expect(text.contains("zevauth_exchanges_total{outcome=\"pkce_failed\"} 0\n"))
        #expect(text.contains("zevauth_emails_total{result=\"sent\"} 0\n"))
        #expect(text.contains("zevauth_db_pool_connections{state=\"max\"} "))
        #expect(!text.contains("process_resident_memory_bytes 0\n"))
        // Every sample line is `name{labels} value` or `name value` with a number.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").last.flatMap { Double($0) } != nil, "\(line)")
        }
        // The listener serves nothing else.
        #expect(try metrics.send("GET", "/healthz").status == 404)
        #expect(try metrics.send("POST", "/metrics").status == 405)
    }

    @Test func routerMatchNamesTheTemplateNeverTheRawPath() {
        var router = Router()
        router.add("GET", "/v1/admin/apps/{id}") { _, _ in HTTPResponse(status: 200) }
        router.add("DELETE", "/v1/admin/apps/{id}") { _, _ in HTTPResponse(status: 204) }
        func request(_ method: String, _ path: String) -> HTTPRequest {
            HTTPRequest(method: method, path: path, rawQuery: nil, headers: HTTPHeaders(), body: [], remoteAddress: "127.0.0.1")
        }
        let found = router.match(request("GET", "/v1/admin/apps/app_123"))
        #expect(found.template == "/v1/admin/apps/{id}")
        #expect(found.templateIndex == 0)
        #expect(found.respond().status == 200)
        let wrongMethod = router.match(request("POST", "/v1/admin/apps/app_123"))
        #expect(wrongMethod.template == "/v1/admin/apps/{id}")
        #expect(wrongMethod.respond().status == 405)
        let missing = router.match(request("GET", "/v1/admin/nothing"))
        #expect(missing.template == nil && missing.templateIndex == nil)
        #expect(missing.respond().status == 404)
        #expect(router.templates == ["/v1/admin/apps/{id}"])
    }

    @Test func logFormatAndMetricsListenAreReadFromTheOptionsTable() throws {
        let base = [
            "ZEVAUTH_DATABASE_URL": "postgresql://x/y", "ZEVAUTH_ISSUER": "https://auth.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": String(repeating: "t", count: 32),
        ]
        let serve = try ConfigurationLoader.load(environment: base)
        #expect(serve.logFormat == .json)
        #expect(serve.metricsListen == nil)
        let chosen = try ConfigurationLoader.load(
            environment: base.merging(["ZEVAUTH_LOG_FORMAT": "text"]) { $1 }, arguments: ["--metrics-listen", "127.0.0.1:9464"])
        #expect(chosen.logFormat == .text)
        #expect(chosen.metricsListen?.host == "127.0.0.1" && chosen.metricsListen?.port == 9464)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(environment: base.merging(["ZEVAUTH_LOG_FORMAT": "xml"]) { $1 })
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(environment: base.merging(["ZEVAUTH_METRICS_LISTEN": "metrics.internal:9464"]) { $1 })
        }
        #expect(try ConfigurationLoader.loadDevelopment(environment: [:]).configuration.logFormat == .text)
    }
}
