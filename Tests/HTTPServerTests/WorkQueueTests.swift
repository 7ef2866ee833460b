import Foundation
import Glibc
import Synchronization
import Testing

@testable import HTTPServer

/// A one-shot gate a handler waits on, opened by the test.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Atomic<Int>(0)
    /// Handlers that reached `pass()`.
    var arrivals: Int { entered.load(ordering: .sequentiallyConsistent) }
    func pass() {
        entered.add(1, ordering: .sequentiallyConsistent)
        semaphore.wait()
    }
    func open(_ count: Int = 1) { for _ in 0..<count { semaphore.signal() } }
}

/// Slow handlers on a `WorkQueue` leave the HTTP worker free (docs/decisions.md, "Slow work leaves the HTTP
/// workers").
@Suite(.serialized)
struct WorkQueueTests {
    /// One worker thread: a GET /slow on a queue, a GET /fast inline.
    func router(queue: WorkQueue, gate: Gate) -> Router {
        var router = Router()
        router.add("GET", "/slow", placement: .queue(queue)) { _, _ in
            gate.pass()
            return HTTPResponse(status: 200, body: Array("slow".utf8))
        }
        router.add("GET", "/fast") { _, _ in HTTPResponse(status: 200, body: Array("fast".utf8)) }
        return router
    }

    @Test func routerReportsTheMatchedRoutesPlacement() {
        let queue = WorkQueue(name: "test", threads: 1, capacity: 0)
        let router = router(queue: queue, gate: Gate())
        guard case .queue(let found) = router.placement(for: HTTPRequest(method: "GET", path: "/slow")) else {
            Issue.record("GET /slow is not queued")
            return
        }
        #expect(found === queue)
        // An earlier inline route that matches wins over a later queued one, as in `handle(_:)`.
        var shadowed = Router()
        shadowed.add("GET", "/items/me") { _, _ in HTTPResponse(status: 200) }
        shadowed.add("GET", "/items/{id}", placement: .queue(queue)) { _, _ in HTTPResponse(status: 200) }
        guard case .inline = shadowed.placement(for: HTTPRequest(method: "GET", path: "/items/me")) else {
            Issue.record("GET /items/me should run inline")
            return
        }
        guard case .queue = shadowed.placement(for: HTTPRequest(method: "GET", path: "/items/42")) else {
            Issue.record("GET /items/42 should be queued")
            return
        }
        for (method, path) in [("GET", "/fast"), ("POST", "/slow"), ("GET", "/nowhere")] {
            guard case .inline = router.placement(for: HTTPRequest(method: method, path: path)) else {
                Issue.record("\(method) \(path) should run inline")
                continue
            }
        }
    }

    @Test func slowQueuedRouteDoesNotDelayFastInlineRouteOnTheSameWorker() throws {
        let gate = Gate()
        let queue = WorkQueue(name: "test", threads: 1, capacity: 4)
        let server = try startServer(handler: router(queue: queue, gate: gate)) { $0.threadPoolSize = 1 }
        defer { server.shutdown(gracePeriodSeconds: 5) }
        let port = server.port
        let slow = Background { (try? RawClient.get("/slow", port: port))?.bodyText ?? "failed" }
        #expect(eventually { gate.arrivals == 1 })
        // The only worker thread is free while /slow's handler waits on its queue's thread.
        let started = ContinuousClock.now
        let fast = try RawClient.get("/fast", port: port)
        #expect(fast.bodyText == "fast")
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(slow.wait(seconds: 0.2) == nil)
        gate.open()
        #expect(slow.wait() == "slow")
    }

    @Test func fullQueueAnswers503WithRetryAfterAtOnce() throws {
        let gate = Gate()
        let queue = WorkQueue(name: "test", threads: 1, capacity: 1)
        let server = try startServer(handler: router(queue: queue, gate: gate))
        defer { server.shutdown(gracePeriodSeconds: 5) }
        let port = server.port
        let running = Background { (try? RawClient.get("/slow", port: port))?.status ?? 0 }
        #expect(eventually { gate.arrivals == 1 })
        let waiting = Background { (try? RawClient.get("/slow", port: port))?.status ?? 0 }
        #expect(eventually { queue.pending == 2 })
        let refused = try RawClient.get("/slow", port: port)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        #expect(jsonError(refused) == "temporarily_unavailable")
        gate.open(2)
        #expect(running.wait() == 200)
        #expect(waiting.wait() == 200)
        #expect(try RawClient.get("/fast", port: port).status == 200)
    }

    @Test func shutdownWaitsForQueuedWorkAndCountsItInFlight() throws {
        let gate = Gate()
        let queue = WorkQueue(name: "test", threads: 1, capacity: 4)
        let server = try startServer(handler: router(queue: queue, gate: gate))
        let port = server.port
        let slow = Background { (try? RawClient.get("/slow", port: port))?.bodyText ?? "failed" }
        #expect(eventually { gate.arrivals == 1 })
        #expect(server.inFlightRequests == 1)
        let stopped = Background {
            server.shutdown(gracePeriodSeconds: 5); return true
        }
        #expect(eventually { server.isDraining })
        #expect(stopped.wait(seconds: 0.3) == nil)
        gate.open()
        #expect(slow.wait() == "slow")
        #expect(stopped.wait() == true)
        #expect(server.inFlightRequests == 0)
    }

    @Test func workQueueRunsAtMostItsThreadsAtOnce() {
        let queue = WorkQueue(name: "test", threads: 2, capacity: 8)
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            #expect(
                queue.submit {
                    let now = running.add(1, ordering: .sequentiallyConsistent).newValue
                    _ = most.max(now, ordering: .sequentiallyConsistent)
                    usleep(20_000)
                    running.subtract(1, ordering: .sequentiallyConsistent)
                    done.leave()
                })
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(most.load(ordering: .sequentiallyConsistent) == 2)
    }
}
