import Foundation
import Testing

@testable import Fetch

/// The fetcher against a local HTTPS server on 127.0.0.1, reached as `assoc.test` through a resolve
/// override and trusted through a throwaway CA. No other address is ever contacted.
@Suite struct HTTPSFetcherTests {
    let server: LocalHTTPSServer

    init() throws { server = try LocalHTTPSServer.get() }

    func fetch(_ path: String, maxBytes: Int = 4_096, configuration: OutboundConfiguration? = nil, port: Int? = nil)
        -> Result<FetchedResponse, FetchFailure>
    {
        HTTPSFetcher(configuration: configuration ?? server.configuration(port: port))
            .get(host: "assoc.test", port: port ?? server.goodPort, path: path, maxBytes: maxBytes)
    }

    @Test func fetchesJSONWithStatusBodyAndContentType() throws {
        let response = try fetch("/ok").get()
        #expect(response.status == 200)
        #expect(response.contentType == "application/json")
        #expect(response.body == Array(#"{"ok":true}"#.utf8))
        #expect(response.redirectLocation == nil)
    }

    @Test func reportsTheContentTypeAsSent() throws {
        let response = try fetch("/html").get()
        #expect(response.status == 200)
        #expect(response.contentType == "text/html; charset=utf-8")
    }

    @Test(arguments: [("/missing", 404), ("/error", 500)])
    func passesErrorStatusesThrough(path: String, status: Int) throws {
        let response = try fetch(path).get()
        #expect(response.status == status)
        #expect(response.redirectLocation == nil)
    }

    @Test func sendsFixedUserAgentAndAcceptWithoutCookiesOrContentCoding() throws {
        let response = try fetch("/echo").get()
        let headers = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(headers["user-agent"] == "ZevAuth-AssociationCheck/1")
        #expect(headers["accept"] == "application/json")
        #expect(headers["cookie"] == nil)
        #expect(headers["accept-encoding"] == nil)
    }

    @Test func doesNotFollowRedirectAndReportsTheTarget() throws {
        let target = "/followed-\(UUID().uuidString)"
        let response = try fetch("/moved?to=\(target)").get()
        #expect(response.status == 301)
        #expect(response.redirectLocation == "https://assoc.test:\(server.goodPort)\(target)")
        #expect(try server.saw(target) == false)
        #expect(try server.saw("/moved"))
    }

    @Test func reportsAnAbsoluteRedirectTargetAsGiven() throws {
        // The target stays on the pinned loopback name, so even a regression that followed it could not
        // reach another address (an unpinned host would be looked up in DNS).
        let target = "https://assoc.test:\(server.goodPort)/absolute-\(UUID().uuidString)"
        let response = try fetch("/moved?to=\(target)").get()
        #expect(response.status == 301)
        #expect(response.redirectLocation == target)
        #expect(try server.saw(String(target.dropFirst("https://assoc.test:\(server.goodPort)".count))) == false)
    }

    @Test func acceptsABodyOfExactlyTheCap() throws {
        #expect(try fetch("/big?n=1000", maxBytes: 1_000).get().body.count == 1_000)
        #expect(try fetch("/big-chunked?n=1000", maxBytes: 1_000).get().body.count == 1_000)
    }

    @Test func refusesABodyOverTheCapWithContentLength() {
        #expect(fetch("/big?n=1001", maxBytes: 1_000) == .failure(.tooLarge(limit: 1_000)))
    }

    @Test func refusesAChunkedBodyOverTheCap() {
        #expect(fetch("/big-chunked?n=5000", maxBytes: 1_000) == .failure(.tooLarge(limit: 1_000)))
    }

    @Test func totalTimeoutEndsASlowResponse() {
        let started = ContinuousClock.now
        let result = fetch("/slow?ms=3000", configuration: server.configuration(timeoutMilliseconds: 500))
        guard case .failure(.timeout(let message)) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(message.contains("timed out"))
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func connectTimeoutCoversAHangingTLSHandshake() {
        var configuration = server.configuration(port: server.silentPort)
        configuration.connectTimeoutMilliseconds = 300
        let started = ContinuousClock.now
        let result = fetch("/ok", configuration: configuration, port: server.silentPort)
        guard case .failure(.timeout) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func refusesACertificateForAnotherName() {
        let result = fetch("/ok", port: server.wrongNamePort)
        guard case .failure(.tlsError(let message)) = result else {
            Issue.record("expected a TLS error, got \(result)")
            return
        }
        #expect(message.contains("assoc.test"))
    }

    @Test func refusesAnIssuerOutsideTheTrustStore() {
        var configuration = server.configuration()
        configuration.caFile = nil
        guard case .failure(.tlsError) = fetch("/ok", configuration: configuration) else {
            Issue.record("expected a TLS error")
            return
        }
    }

    @Test func systemTrustStoreStaysAlongsideTheExtraCAFile() {
        // CURLOPT_CAINFO replaces only the default bundle file; the built-in CA directory remains, which
        // is what keeps public certificates verifiable when ZEVAUTH_OUTBOUND_CA_FILE is set.
        #expect(HTTPSFetcher.systemCAPath != nil)
    }

    @Test func invalidNameIsADNSErrorWithoutAQuery() {
        let result = HTTPSFetcher(configuration: OutboundConfiguration()).get(host: "nothing-here.invalid", path: "/ok", maxBytes: 10)
        guard case .failure(.dnsError(let message)) = result else {
            Issue.record("expected a DNS error, got \(result)")
            return
        }
        #expect(message.contains("nothing-here.invalid"))
    }

    @Test(arguments: ["assoc.test/evil", "user@assoc.test", "assoc test", "", "-assoc.test", "assoc..test", "[::1]"])
    func refusesSomethingThatIsNotAHostName(host: String) {
        let result = HTTPSFetcher(configuration: server.configuration()).get(host: host, port: server.goodPort, path: "/ok", maxBytes: 10)
        guard case .failure(.dnsError) = result else {
            Issue.record("expected a DNS error for \(host), got \(result)")
            return
        }
    }

    @Test(arguments: ["ok", "/ok#x", "/o k", "/ok\r\nX-Evil: 1"])
    func refusesAPathThatIsNotAnAbsolutePath(path: String) {
        guard case .failure(.connectionFailed(let message)) = fetch(path) else {
            Issue.record("expected an invalid request for \(path)")
            return
        }
        #expect(message.hasPrefix("invalid request"))
    }

    @Test func refusesALoopbackOverrideWithoutAllowPrivateAndNeverConnects() throws {
        var configuration = server.configuration()
        configuration.allowPrivate = false
        let path = "/refused-\(UUID().uuidString)"
        let result = fetch(path, configuration: configuration)
        guard case .failure(.addressRefused(let message)) = result else {
            Issue.record("expected addressRefused, got \(result)")
            return
        }
        #expect(message == "assoc.test resolves only to refused addresses: 127.0.0.1 is loopback (127.0.0.0/8)")
        #expect(try server.saw(path) == false)
    }

    @Test(arguments: ["::ffff:0:7f00:1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "::1"])
    func refusesAnIPv6FormOfLoopbackAndNeverConnects(address: String) throws {
        var configuration = server.configuration()
        configuration.allowPrivate = false
        configuration.resolve = [ResolveOverride(host: "assoc.test", port: server.goodPort, address: address)]
        let path = "/refused-\(UUID().uuidString)"
        let result = fetch(path, configuration: configuration)
        guard case .failure(.addressRefused(let message)) = result else {
            Issue.record("expected addressRefused for \(address), got \(result)")
            return
        }
        #expect(message.hasPrefix("assoc.test resolves only to refused addresses: "))
        #expect(try server.saw(path) == false)
    }

    @Test func refusesALoopbackAddressFromTheResolver() {
        // A numeric host goes through getaddrinfo without any DNS query.
        let result = HTTPSFetcher(configuration: OutboundConfiguration()).get(
            host: "127.0.0.1", port: server.goodPort, path: "/ok", maxBytes: 10)
        guard case .failure(.addressRefused(let message)) = result else {
            Issue.record("expected addressRefused, got \(result)")
            return
        }
        #expect(message.contains("127.0.0.1 is loopback"))
    }

    @Test func connectionRefusedIsAConnectionFailure() throws {
        // The silent listener's port is open; a port nobody listens on: bind one and close it.
        let port = try closedLoopbackPort()
        let result = fetch("/ok", configuration: server.configuration(port: port), port: port)
        guard case .failure(.connectionFailed(let message)) = result else {
            Issue.record("expected connectionFailed, got \(result)")
            return
        }
        #expect(message.contains("\(port)"))
    }

    @Test func pinsEveryCheckedAddressInCurlsResolveFormat() {
        let entry = Resolver.pinEntry(host: "assoc.test", port: 443, addresses: [IPAddress("203.0.113.9")!, IPAddress("2001:DB8::0:1")!])
        #expect(entry == "assoc.test:443:203.0.113.9,[2001:db8::1]")
    }

    @Test func overridesForTheHostAndPortReplaceResolution() throws {
        let overrides = try OutboundConfiguration.parseResolve("assoc.test:443:192.0.2.1;assoc.test:8443:192.0.2.2;assoc.test:443:[::1]")
        let resolved = try Resolver.resolve(host: "assoc.test", port: 443, overrides: overrides).get()
        #expect(resolved == [IPAddress("192.0.2.1")!, IPAddress("::1")!])
    }
}

/// A loopback TCP port that nothing listens on (bound, then closed).
func closedLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw LocalHTTPSServer.StartError(message: "cannot bind a loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
