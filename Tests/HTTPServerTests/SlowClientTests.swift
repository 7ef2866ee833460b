import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// Slow and greedy clients (docs/decisions.md, "Slow and greedy clients"): one address cannot hold more
/// than its share of connections, and a request must arrive whole within its deadline however steadily
/// its bytes trickle in, so other clients are still served.
@Suite(.serialized)
struct SlowClientTests {
    /// Sends one byte of an endless header section every `interval` until the server closes the connection
    /// or `until` passes; returns how long the connection lasted, in seconds.
    static func trickle(_ fd: Int32, interval: Double, until: ContinuousClock.Instant) -> Double {
        let start = ContinuousClock.now
        RawClient.send(fd, Array("GET /slow HTTP/1.1\r\nHost: t\r\nX-Slow: ".utf8))
        var byte: UInt8 = 0
        var pollSet = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while ContinuousClock.now < until {
            // The server closing shows as readable with nothing to read.
            if poll(&pollSet, 1, Int32(interval * 1000)) > 0 {
                let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
                if count <= 0 { break }
            }
            if Glibc.send(fd, "a", 1, Int32(MSG_NOSIGNAL)) <= 0 { break }
        }
        let lasted = ContinuousClock.now - start
        return Double(lasted.components.seconds) + Double(lasted.components.attoseconds) / 1e18
    }

    @Test func tricklingClientsFromOneAddressLeaveOthersServed() throws {
        let server = try startServer {
            $0.connectionLimit = 24
            $0.perIPConnectionLimit = 8
            $0.requestDeadlineSeconds = 3
            $0.connectionTimeoutSeconds = 60
        }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let until = ContinuousClock.now + .seconds(8)
        // 40 trickling connections from 127.0.0.1, more than the whole connection limit.
        let trickled = (0..<40).map { _ in
            Background<Double> {
                guard let fd = try? RawClient.connect(port: server.port, timeoutSeconds: 10) else { return 0 }
                defer { close(fd) }
                return Self.trickle(fd, interval: 0.5, until: until)
            }
        }
        #expect(eventually { server.refusedConnections >= 32 })
        // Another address is served at once, again and again, while they trickle.
        var slowest = 0.0
        for _ in 0..<10 {
            let start = ContinuousClock.now
            let fd = try RawClient.connect(port: server.port, timeoutSeconds: 2, source: "127.0.0.2")
            RawClient.send(fd, Array("GET /fast HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8))
            let response = RawClient.parse(RawClient.readAll(fd))
            close(fd)
            #expect(response?.status == 200)
            let took = ContinuousClock.now - start
            slowest = max(slowest, Double(took.components.attoseconds) / 1e18 + Double(took.components.seconds))
            usleep(100_000)
        }
        #expect(slowest < 0.5, "the slowest request from another address took \(slowest) s")
        let lasted = trickled.map { $0.wait() ?? -1 }
        // The 8 admitted were cut at their 3 s deadline (not at the 8 s end of the trickle); the rest at once.
        #expect(lasted.filter { $0 > 2.5 && $0 < 5 }.count == 8, "\(lasted)")
        #expect(lasted.filter { $0 < 1 }.count == 32, "\(lasted)")
        #expect(server.expiredConnections == 8)
        #expect(eventually { server.openConnections == 0 && server.inFlightRequests == 0 })
        // Once they are gone, the address is served again.
        #expect(try RawClient.get("/again", port: server.port).status == 200)
    }

    /// What the limits prevent: without them, 40 trickling connections from one address fill the whole
    /// connection limit, and another address is not served at all until they go.
    @Test func withoutTheLimitsTricklersStarveOthers() throws {
        let server = try startServer {
            $0.connectionLimit = 24
            $0.perIPConnectionLimit = 0
            $0.requestDeadlineSeconds = 3_600
            $0.connectionTimeoutSeconds = 60
        }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let until = ContinuousClock.now + .seconds(4)
        let trickled = (0..<40).map { _ in
            Background<Double> {
                guard let fd = try? RawClient.connect(port: server.port, timeoutSeconds: 10) else { return 0 }
                defer { close(fd) }
                return Self.trickle(fd, interval: 0.5, until: until)
            }
        }
        #expect(eventually { server.openConnections == 24 })
        let fd = try RawClient.connect(port: server.port, timeoutSeconds: 2, source: "127.0.0.2")
        RawClient.send(fd, Array("GET /fast HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".utf8))
        let starved = RawClient.parse(RawClient.readAll(fd))
        close(fd)
        #expect(starved == nil, "another address was served although every connection was taken")
        _ = trickled.map { $0.wait() }
    }

    @Test func exemptAddressIsNotLimited() throws {
        let server = try startServer {
            $0.perIPConnectionLimit = 2
            $0.perIPLimitExemptAddresses = ["127.0.0.1"]
        }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let held = try (0..<6).map { _ in try RawClient.connect(port: server.port) }
        defer { held.forEach { close($0) } }
        #expect(eventually { server.openConnections == 6 })
        #expect(try RawClient.get("/proxied", port: server.port).status == 200)
        #expect(server.refusedConnections == 0)
        // Another address is limited.
        let others = try (0..<3).map { _ in try RawClient.connect(port: server.port, source: "127.0.0.3") }
        defer { others.forEach { close($0) } }
        #expect(eventually { server.refusedConnections == 1 })
    }

    /// A body trickled byte by byte is cut at the deadline too, and a complete request within it is answered.
    @Test func slowBodyIsCutAtTheDeadline() throws {
        let server = try startServer { $0.requestDeadlineSeconds = 2 }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port, timeoutSeconds: 10)
        defer { close(fd) }
        RawClient.send(fd, Array("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n".utf8))
        let lasted = Self.trickle(fd, interval: 0.3, until: .now + .seconds(6))
        #expect(lasted > 1.5 && lasted < 4, "lasted \(lasted) s")
        // Keep-alive: two requests on one connection, each within its own deadline, both answered.
        let kept = try RawClient.connect(port: server.port, timeoutSeconds: 5)
        defer { close(kept) }
        for _ in 0..<2 {
            RawClient.send(kept, Array("GET /one HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(kept, &buffer, buffer.count, 0)
            #expect(count > 0 && String(decoding: buffer[..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            sleep(1)
        }
    }

    /// On a kept-alive connection the next request's deadline starts when the previous response completes:
    /// not when the connection opened (the trickle would be cut after about 0.5 s) and not never (6 s).
    @Test func nextRequestsDeadlineStartsAtTheResponse() throws {
        let server = try startServer { $0.requestDeadlineSeconds = 2 }
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port, timeoutSeconds: 10)
        defer { close(fd) }
        usleep(1_500_000)
        RawClient.send(fd, Array("GET /one HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        #expect(count > 0 && String(decoding: buffer[..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        let lasted = Self.trickle(fd, interval: 0.2, until: .now + .seconds(6))
        #expect(lasted > 1.5 && lasted < 4, "lasted \(lasted) s")
    }
}
