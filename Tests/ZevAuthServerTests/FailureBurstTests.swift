import Dispatch
import Foundation
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Failure-counted limits hold exactly under a burst (docs/protocol.md#rate-limits; docs/decisions.md,
/// "Failure limits decide on the atomic count"): of 100 concurrent failed refreshes at a limit of 60, 60
/// get their own error and 40 get 429, at `/v1/auth/session/refresh` and at `/oauth2/token`.
@Suite struct FailureBurstTests {
    /// Sends `count` requests at once from as many threads and returns their statuses.
    static func burst(_ count: Int, _ send: @escaping @Sendable () throws -> TestResponse) -> [Int] {
        let statuses = Mutex<[Int]>([])
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            group.enter()
            let thread = Thread {
                start.wait()
                let status = (try? send().status) ?? 0
                statuses.withLock { $0.append(status) }
                group.leave()
            }
            thread.start()
        }
        for _ in 0..<count { start.signal() }
        group.wait()
        return statuses.withLock { $0 }
    }

    @Test(arguments: ["/v1/auth/session/refresh", "/oauth2/token"])
    func concurrentFailedRefreshesLetExactlyTheLimitThrough(path: String) throws {
        let server = try TestServer(
            live: true,
            configure: {
                $0.rateLimits.refreshFailuresPerAddress = 60
                $0.trustedProxies = ["127.0.0.1"]
            })
        let fixture = try Fixture.make(store: server.store)
        // This test's own client address (the documentation prefix, RFC 3849), so no other test's failures count.
        let suffix = (0..<2).map { _ in String(UInt16.random(in: 1...UInt16.max), radix: 16) }.joined(separator: ":")
        let address = "2001:db8::" + suffix
        let client = server.client
        let key = fixture.developmentKey
        let statuses = Self.burst(100) {
            if path == "/oauth2/token" {
                return try client.send(
                    "POST", path,
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", address)],
                    body: Array("grant_type=refresh_token&refresh_token=zrt_not_a_token&client_id=\(key)".utf8))
            }
            return try client.send(
                "POST", path,
                headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json"), ("X-Forwarded-For", address)],
                body: Array(#"{"refreshToken":"zrt_not_a_token"}"#.utf8))
        }
        #expect(statuses.count == 100)
        #expect(statuses.filter { $0 == 400 }.count == 60)
        #expect(statuses.filter { $0 == 429 }.count == 40)
    }
}
