import Foundation
import PasswordHashing
import Synchronization

// The server's metrics (docs/operations.md, "Metrics"): counters and histograms of atomics allocated
// up front for every label set they can take, so recording one is a few relaxed atomic adds and never a
// lock. Labels come from fixed sets (route templates, outcome names, status codes): never a credential,
// an email or a raw path.

/// A fixed number of atomic integers at stable addresses.
final class AtomicSlots: @unchecked Sendable {
    // @unchecked: the pointer is allocated once in init, never reassigned, freed in deinit; every access
    // to the memory goes through `Atomic`.
    private let slots: UnsafeMutablePointer<Atomic<Int>>
    let count: Int

    init(count: Int) {
        self.count = count
        slots = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: max(count, 1))
        for index in 0..<count { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    func add(_ index: Int, _ value: Int = 1) { slots[index].wrappingAdd(value, ordering: .relaxed) }
    func load(_ index: Int) -> Int { slots[index].load(ordering: .relaxed) }
}

/// Histograms of durations, one series per index, with the same buckets.
final class DurationHistograms: Sendable {
    /// Bucket upper bounds in seconds (the `le` labels; `+Inf` follows).
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    private static let boundsNanoseconds: [Int] = bounds.map { Int(($0 * 1e9).rounded()) }
    /// Per series: one slot per bucket, one for `+Inf`, one for the sum in nanoseconds.
    private static let stride = bounds.count + 2
    let series: Int
    private let slots: AtomicSlots

    init(series: Int) {
        self.series = series
        slots = AtomicSlots(count: series * Self.stride)
    }

    /// Records one duration of `nanoseconds` in series `index`.
    func observe(_ index: Int, nanoseconds: Int) {
        var bucket = Self.bounds.count
        for (position, bound) in Self.boundsNanoseconds.enumerated() where nanoseconds <= bound {
            bucket = position
            break
        }
        slots.add(index * Self.stride + bucket)
        slots.add(index * Self.stride + Self.stride - 1, max(0, nanoseconds))
    }

    /// Observations in series `index`.
    func count(_ index: Int) -> Int { (0...Self.bounds.count).reduce(0) { $0 + slots.load(index * Self.stride + $1) } }

    /// Appends series `index` in the exposition format: cumulative buckets, `_sum` (seconds), `_count`.
    func render(_ index: Int, name: String, labels: String, into out: inout String) {
        var cumulative = 0
        let prefix = labels.isEmpty ? "" : labels + ","
        for (position, bound) in Self.bounds.enumerated() {
            cumulative += slots.load(index * Self.stride + position)
            out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += slots.load(index * Self.stride + Self.bounds.count)
        let sum = Double(slots.load(index * Self.stride + Self.stride - 1)) / 1e9
        let braced = labels.isEmpty ? "" : "{\(labels)}"
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(cumulative)\n"
        out += "\(name)_sum\(braced) \(sum)\n"
        out += "\(name)_count\(braced) \(cumulative)\n"
    }
}

/// A counter family over a fixed grid of label values: one atomic per combination.
final class CounterFamily: Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    let labelValues: [[String]]
    private let slots: AtomicSlots

    init(_ name: String, help: String, labels: [(name: String, values: [String])]) {
        self.name = name
        self.help = help
        labelNames = labels.map(\.name)
        labelValues = labels.map(\.values)
        slots = AtomicSlots(count: labels.reduce(1) { $0 * $1.values.count })
    }

    /// Adds one to the combination of label positions `indices` (one per label, in order).
    func increment(_ indices: Int...) {
        var slot = 0
        for (dimension, index) in indices.enumerated() { slot = slot * labelValues[dimension].count + index }
        slots.add(slot)
    }

    /// The count of one combination (tests and the page's render).
    func value(_ indices: [Int]) -> Int {
        var slot = 0
        for (dimension, index) in indices.enumerated() { slot = slot * labelValues[dimension].count + index }
        return slots.load(slot)
    }

    /// Every combination, zeros included: the families are small and fixed.
    func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for slot in 0..<slots.count {
            var rest = slot
            var parts: [String] = []
            for dimension in labelValues.indices.reversed() {
                let values = labelValues[dimension]
                parts.insert("\(labelNames[dimension])=\"\(values[rest % values.count])\"", at: 0)
                rest /= values.count
            }
            out += "\(name){\(parts.joined(separator: ","))} \(slots.load(slot))\n"
        }
    }
}

/// The label of an HTTP method: the methods the server knows, else `OTHER`, so a client cannot mint
/// label values or log text.
enum HTTPMethodLabel {
    static let all = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"]

    static func index(_ method: String) -> Int { all.firstIndex(of: method) ?? all.count - 1 }
}

/// Per-route HTTP metrics for one router's templates: requests by (route, method, status) and the
/// duration histogram by route. The last route slot is `AccessRecord.unmatchedRoute`.
public final class HTTPMetrics: Sendable {
    /// The route templates, in the router's order, then `unmatched`.
    let routes: [String]
    /// Status codes counted under their own label; any other is counted under its class (`2xx`…).
    static let statuses = [
        200, 201, 202, 204, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 406, 409, 410, 411, 413, 414, 415, 422,
        429, 431, 500, 501, 502, 503, 504,
    ]
    static let statusLabels = statuses.map(String.init) + ["1xx", "2xx", "3xx", "4xx", "5xx"]
    /// Status code (0–599) → status slot.
    private static let statusSlot: [Int] = (0..<600).map { code in
        if let known = statuses.firstIndex(of: code) { return known }
        return statuses.count + min(max(code / 100, 1), 5) - 1
    }
    private let requests: AtomicSlots
    private let durations: DurationHistograms

    init(templates: [String]) {
        routes = templates + [AccessRecord.unmatchedRoute]
        requests = AtomicSlots(count: routes.count * HTTPMethodLabel.all.count * Self.statusLabels.count)
        durations = DurationHistograms(series: routes.count)
    }

    /// The route slot of a router match (`Router.Match.templateIndex`, nil for 404).
    func routeSlot(_ templateIndex: Int?) -> Int {
        guard let templateIndex, templateIndex < routes.count - 1 else { return routes.count - 1 }
        return templateIndex
    }

    /// Counts one answered request.
    func record(route: Int, method: Int, status: Int, nanoseconds: Int) {
        let statusSlot = Self.statusSlot[min(max(status, 0), 599)]
        requests.add((route * HTTPMethodLabel.all.count + method) * Self.statusLabels.count + statusSlot)
        durations.observe(route, nanoseconds: nanoseconds)
    }

    /// Requests counted for `route` (a template), `method` and `status` (tests).
    public func requests(route: String, method: String, status: Int) -> Int {
        guard let routeIndex = routes.firstIndex(of: route) else { return 0 }
        let statusSlot = Self.statusSlot[min(max(status, 0), 599)]
        return requests.load(
            (routeIndex * HTTPMethodLabel.all.count + HTTPMethodLabel.index(method)) * Self.statusLabels.count + statusSlot)
    }

    func render(into out: inout String) {
        out += "# HELP zevauth_http_requests_total Requests answered, by route template, method and status.\n"
        out += "# TYPE zevauth_http_requests_total counter\n"
        for route in routes.indices {
            for method in HTTPMethodLabel.all.indices {
                for status in Self.statusLabels.indices {
                    let value = requests.load((route * HTTPMethodLabel.all.count + method) * Self.statusLabels.count + status)
                    guard value > 0 else { continue }
                    out +=
                        "zevauth_http_requests_total{route=\"\(Metrics.escape(routes[route]))\",method=\"\(HTTPMethodLabel.all[method])\","
                    out += "status=\"\(Self.statusLabels[status])\"} \(value)\n"
                }
            }
        }
        out += "# HELP zevauth_http_request_duration_seconds Time from routing to the response, by route template.\n"
        out += "# TYPE zevauth_http_request_duration_seconds histogram\n"
        for route in routes.indices where durations.count(route) > 0 {
            durations.render(
                route, name: "zevauth_http_request_duration_seconds", labels: "route=\"\(Metrics.escape(routes[route]))\"", into: &out)
        }
    }
}

/// An exchange's outcome (`zevauth_exchanges_total{outcome}`), on either exchange surface.
public enum ExchangeMetric: Int, CaseIterable, Sendable {
    case ok, invalidRequest, invalidClient, invalidGrant, replayRevoked, redirectURIMismatch, pkceFailed, rateLimited
    static let labels = [
        "ok", "invalid_request", "invalid_client", "invalid_grant", "replay_revoked", "redirect_uri_mismatch", "pkce_failed",
        "rate_limited",
    ]
}

/// A refresh's outcome (`zevauth_refreshes_total{outcome}`).
public enum RefreshMetric: Int, CaseIterable, Sendable {
    case ok, invalidRequest, invalidClient, invalidGrant, reuseRevoked, ended, reauthenticationRequired, rateLimited
    static let labels = [
        "ok", "invalid_request", "invalid_client", "invalid_grant", "reuse_revoked", "ended", "reauthentication_required",
        "rate_limited",
    ]
}

/// How a person proved who they are (`zevauth_sign_ins_total{method}`): a password, or a second factor
/// (a TOTP code or a recovery code).
public enum SignInMethod: Int, CaseIterable, Sendable {
    case password, secondFactor, passkey, federated
    static let labels = ["password", "second_factor", "passkey", "federated"]
}

/// A sign-in step's outcome (`zevauth_sign_ins_total{outcome}`).
public enum SignInOutcome: Int, CaseIterable, Sendable {
    /// Signed in (a browser session started).
    case ok
    /// The password was right; a second factor is asked next.
    case mfaRequired
    /// A wrong password, unknown account or wrong code.
    case invalidCredentials
    /// The form's email (or another field) could not be used.
    case invalidRequest
    case rateLimited
    /// The step could not run now (e.g. TOTP without its key).
    case unavailable
    static let labels = ["ok", "mfa_required", "invalid_credentials", "invalid_request", "rate_limited", "unavailable"]
}

/// An outbound email attempt's result (`zevauth_emails_total{result}`): `sent`; `retry` (the relay failed,
/// tried again later); `failed` (the hour of retries is over); `dropped` (no recipient any more, or a code
/// that no longer opens); `capped` (over `ZEVAUTH_RATE_EMAILS_PER_HOUR`).
public enum EmailMetric: Int, CaseIterable, Sendable {
    case sent, retry, failed, dropped, capped
    static let labels = ["sent", "retry", "failed", "dropped", "capped"]
}

/// Every metric of one server (`ServerContext.metrics`), rendered at `GET /metrics` on the metrics listener.
public final class Metrics: Sendable {
    let exchanges = CounterFamily(
        "zevauth_exchanges_total", help: "Code exchanges, by outcome.", labels: [("outcome", ExchangeMetric.labels)])
    let refreshes = CounterFamily(
        "zevauth_refreshes_total", help: "Refresh-token grants, by outcome.", labels: [("outcome", RefreshMetric.labels)])
    let signIns = CounterFamily(
        "zevauth_sign_ins_total", help: "Sign-in steps, by method and outcome.",
        labels: [("method", SignInMethod.labels), ("outcome", SignInOutcome.labels)])
    let rateLimited = CounterFamily(
        "zevauth_rate_limited_total", help: "Requests refused by a rate limit, by limit.",
        labels: [("limit", RateLimitBucket.allCases.map(\.rawValue))])
    static let linkPlatforms = ["ios", "android", "other"]
    static let linkResults = ["verified", "not_verified", "pending", "other"]
    let linkChecks = CounterFamily(
        "zevauth_link_checks_total", help: "App link verdicts of association checks, by platform and result.",
        labels: [("platform", linkPlatforms), ("result", linkResults)])
    let emails = CounterFamily(
        "zevauth_emails_total", help: "Outbound email attempts, by result.", labels: [("result", EmailMetric.labels)])

    /// Set once by the first app built on this context (`httpTable(templates:)`).
    private let http = AtomicLazyReference<HTTPMetrics>()
    /// Gauges read at scrape time only (`Mutex` is fine there).
    private let openConnections = Mutex<[@Sendable () -> Int]>([])
    private let poolOccupancy: @Sendable () -> (idle: Int, inUse: Int, size: Int)

    /// - Parameter poolOccupancy: the database pool's state, read at each scrape.
    public init(poolOccupancy: @escaping @Sendable () -> (idle: Int, inUse: Int, size: Int) = { (0, 0, 0) }) {
        self.poolOccupancy = poolOccupancy
    }

    /// The HTTP table for a router's `templates`: the context's own when it has none yet or has the same
    /// templates; otherwise (another router on the same context) a private one that is not rendered.
    func httpTable(templates: [String]) -> HTTPMetrics {
        if let existing = http.load() { return existing.routes.dropLast() == templates[...] ? existing : HTTPMetrics(templates: templates) }
        let made = http.storeIfNil(HTTPMetrics(templates: templates))
        return made.routes.dropLast() == templates[...] ? made : HTTPMetrics(templates: templates)
    }

    /// The HTTP table rendered by `/metrics`, once an app exists (tests read counts from it).
    public var httpRequests: HTTPMetrics? { http.load() }

    /// Adds a source of `zevauth_http_connections_open` (each public `HTTPServer`'s open connections).
    public func addOpenConnections(_ source: @escaping @Sendable () -> Int) {
        openConnections.withLock { $0.append(source) }
    }

    // MARK: Recording (one line at the point the outcome is known)

    /// Counts one exchange's outcome (`zevauth_exchanges_total`).
    public func exchange(_ outcome: ExchangeMetric) { exchanges.increment(outcome.rawValue) }
    /// Counts one refresh's outcome (`zevauth_refreshes_total`).
    public func refresh(_ outcome: RefreshMetric) { refreshes.increment(outcome.rawValue) }
    /// Counts one sign-in step (`zevauth_sign_ins_total`).
    public func signIn(_ method: SignInMethod, _ outcome: SignInOutcome) { signIns.increment(method.rawValue, outcome.rawValue) }
    /// Counts one request refused by `limit` (`zevauth_rate_limited_total`).
    public func rateLimited(_ limit: RateLimitBucket) {
        rateLimited.increment(RateLimitBucket.allCases.firstIndex(of: limit) ?? 0)
    }
    /// One app's verdict of an association check: `platform` `ios`/`android`, `result` a link status.
    public func linkCheck(platform: String, result: String) {
        linkChecks.increment(
            Self.linkPlatforms.firstIndex(of: platform) ?? Self.linkPlatforms.count - 1,
            Self.linkResults.firstIndex(of: result) ?? Self.linkResults.count - 1)
    }

    /// Counts one outbound email attempt's result (`zevauth_emails_total`).
    public func email(_ result: EmailMetric) { emails.increment(result.rawValue) }
    /// The count of `result` so far (tests).
    public func count(_ result: EmailMetric) -> Int { emails.value([result.rawValue]) }

    /// The count of `outcome` so far (tests).
    public func count(_ outcome: ExchangeMetric) -> Int { exchanges.value([outcome.rawValue]) }

    // MARK: Exposition

    /// Every family in the Prometheus text exposition format 0.0.4, each with its `# HELP` and `# TYPE`.
    public func render() -> String {
        var out = ""
        out.reserveCapacity(16_384)
        (http.load() ?? HTTPMetrics(templates: [])).render(into: &out)
        let open = openConnections.withLock { $0 }.reduce(0) { $0 + $1() }
        gauge(&out, "zevauth_http_connections_open", "Connections the public HTTP server holds open.", open)
        for family in [exchanges, refreshes, signIns, rateLimited] { family.render(into: &out) }
        let pool = poolOccupancy()
        out += "# HELP zevauth_db_pool_connections Database pool connections, by state (max: the pool's size).\n"
        out += "# TYPE zevauth_db_pool_connections gauge\n"
        out += "zevauth_db_pool_connections{state=\"idle\"} \(pool.idle)\n"
        out += "zevauth_db_pool_connections{state=\"in_use\"} \(pool.inUse)\n"
        out += "zevauth_db_pool_connections{state=\"max\"} \(pool.size)\n"
        DatabaseMetrics.shared.render(into: &out)
        linkChecks.render(into: &out)
        gauge(&out, "zevauth_password_hashes_in_flight", "Argon2id computations running now.", HashesInFlight.count)
        emails.render(into: &out)
        ProcessMetrics.render(into: &out)
        return out
    }

    private func gauge(_ out: inout String, _ name: String, _ help: String, _ value: Int) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
    }

    /// A label value escaped for the exposition format (`\`, `"` and newline).
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
