import Testing

@testable import Fetch

@Suite struct OutboundConfigurationTests {
    @Test func defaultsMatchTheContract() throws {
        let configuration = try OutboundConfiguration.fromEnvironment([:])
        #expect(configuration.caFile == nil)
        #expect(configuration.resolve.isEmpty)
        #expect(configuration.allowPrivate == false)
        #expect(configuration.timeoutMilliseconds == 10_000)
        #expect(configuration.connectTimeoutMilliseconds == 5_000)
    }

    @Test func readsAllFiveVariables() throws {
        let configuration = try OutboundConfiguration.fromEnvironment([
            "ZEVAUTH_OUTBOUND_CA_FILE": "/etc/hostname",
            "ZEVAUTH_OUTBOUND_RESOLVE": "Assoc.Test:8443:127.0.0.1; other.test:443:[::1];",
            "ZEVAUTH_OUTBOUND_ALLOW_PRIVATE": "true",
            "ZEVAUTH_OUTBOUND_TIMEOUT_MS": "120000",
            "ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS": "1",
        ])
        #expect(configuration.caFile == "/etc/hostname")
        #expect(
            configuration.resolve == [
                ResolveOverride(host: "assoc.test", port: 8443, address: "127.0.0.1"),
                ResolveOverride(host: "other.test", port: 443, address: "::1"),
            ])
        #expect(configuration.allowPrivate)
        #expect(configuration.timeoutMilliseconds == 120_000)
        #expect(configuration.connectTimeoutMilliseconds == 1)
    }

    @Test(arguments: [("1", true), ("true", true), ("TRUE", true), ("0", false), ("false", false), ("", false)])
    func booleanIsOnForOneOrTrue(text: String, expected: Bool) throws {
        #expect(try OutboundConfiguration.fromEnvironment(["ZEVAUTH_OUTBOUND_ALLOW_PRIVATE": text]).allowPrivate == expected)
    }

    @Test(arguments: [
        ("ZEVAUTH_OUTBOUND_ALLOW_PRIVATE", "yes"), ("ZEVAUTH_OUTBOUND_TIMEOUT_MS", "0"), ("ZEVAUTH_OUTBOUND_TIMEOUT_MS", "120001"),
        ("ZEVAUTH_OUTBOUND_TIMEOUT_MS", "5s"), ("ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS", "-5"), ("ZEVAUTH_OUTBOUND_CONNECT_TIMEOUT_MS", ""),
        ("ZEVAUTH_OUTBOUND_CA_FILE", ""), ("ZEVAUTH_OUTBOUND_CA_FILE", "/nonexistent/ca.pem"),
        ("ZEVAUTH_OUTBOUND_RESOLVE", "assoc.test:443"),
    ])
    func refusesABadValueNamingTheVariable(key: String, value: String) {
        #expect(throws: OutboundConfigurationError.self) { try OutboundConfiguration.fromEnvironment([key: value]) }
        do {
            _ = try OutboundConfiguration.fromEnvironment([key: value])
        } catch let error as OutboundConfigurationError {
            #expect(error.key == key)
            #expect(error.description.hasPrefix(key))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(arguments: [
        ("assoc.test:443:127.0.0.1;bad", "bad"), ("assoc.test:0:127.0.0.1", "port"), ("assoc.test:65536:127.0.0.1", "port"),
        ("assoc.test:x:127.0.0.1", "port"), ("assoc.test:443:not-an-ip", "IP address"), ("assoc.test:443:127.0.0.1,::1", "IP address"),
        ("assoc_test:443:127.0.0.1", "host name"), (":443:127.0.0.1", "host name"), ("assoc.test:443:", "IP address"),
    ])
    func resolveErrorQuotesTheBadEntry(text: String, mentions: String) throws {
        do {
            _ = try OutboundConfiguration.parseResolve(text)
            Issue.record("accepted \(text)")
        } catch let error as OutboundConfigurationError {
            #expect(error.key == "ZEVAUTH_OUTBOUND_RESOLVE")
            #expect(error.message.contains(mentions), "\(error)")
            #expect(error.message.hasPrefix("entry \""))
        }
    }

    @Test func resolveParsesIPv6InOrOutOfBrackets() throws {
        let overrides = try OutboundConfiguration.parseResolve("a.test:443:[2001:DB8::1];b.test:443:fe80::1")
        #expect(overrides.map(\.address) == ["2001:db8::1", "fe80::1"])
        #expect(try OutboundConfiguration.parseResolve(" ; ").isEmpty)
    }
}
