import Foundation
import HTTPServer

/// Statement metrics for the whole process (one pool of statements, whatever the contexts):
/// `zevauth_db_query_duration_seconds` and `zevauth_db_errors_total{kind}`, fed by the store's statement
/// observer (installed by `Metrics.over(_:)`).
final class DatabaseMetrics: Sendable {
    static let shared = DatabaseMetrics()
    /// The `kind` labels, in the order of the store's `StatementFailure` cases.
    static let errorKinds = ["connection", "pool_timeout", "unstorable_input", "constraint", "conflict", "query"]
    private let durations = DurationHistograms(series: 1)
    let errors = CounterFamily(
        "zevauth_db_errors_total", help: "Database statements that failed, by kind.", labels: [("kind", errorKinds)])

    /// Records one statement: its duration, and its failure's `kind` label when it failed.
    func statement(nanoseconds: Int, failureKind: String?) {
        durations.observe(0, nanoseconds: nanoseconds)
        if let failureKind { errors.increment(Self.errorKinds.firstIndex(of: failureKind) ?? Self.errorKinds.count - 1) }
    }

    func render(into out: inout String) {
        out += "# HELP zevauth_db_query_duration_seconds Time of each database statement, connection wait included.\n"
        out += "# TYPE zevauth_db_query_duration_seconds histogram\n"
        durations.render(0, name: "zevauth_db_query_duration_seconds", labels: "", into: &out)
        errors.render(into: &out)
    }
}

/// The process's own figures, read from `/proc/self` at each scrape (Linux).
enum ProcessMetrics {
    static func render(into out: inout String) {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        // statm: size resident shared … in pages.
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let resident = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * pageSize } ?? 0
        // stat: fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
        let stat = (try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last.map { $0.split(separator: " ") } ?? []
        let cpuTicks = fields.count > 12 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
        let fds = max(0, ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 1) - 1)
        out += "# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n"
        out += "process_resident_memory_bytes \(resident)\n"
        out += "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.\n"
        out += "# TYPE process_cpu_seconds_total counter\n"
        out += "process_cpu_seconds_total \(ticks > 0 ? cpuTicks / ticks : 0)\n"
        out += "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\n"
        out += "process_open_fds \(fds)\n"
    }
}

/// The metrics listener's only resource: `GET /metrics` (and `HEAD`), the Prometheus text exposition
/// format 0.0.4. Served by its own `HTTPServer` on `ZEVAUTH_METRICS_LISTEN`, never on the public port.
public struct MetricsEndpoint: HTTPHandler {
    /// The content type of the text exposition format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    let metrics: Metrics
    private let router: Router

    /// The endpoint over `metrics`, rendered afresh at each request.
    public init(metrics: Metrics) {
        self.metrics = metrics
        var router = Router()
        router.add("GET", "/metrics") { [metrics] _, _ in
            var response = HTTPResponse(status: 200, body: Array(metrics.render().utf8))
            response.headers.set("Content-Type", Self.contentType)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        self.router = router
    }

    /// `GET /metrics` → 200 with the exposition; another path 404, another method on it 405.
    public func handle(_ request: HTTPRequest) -> HTTPResponse { router.handle(request) }
}
