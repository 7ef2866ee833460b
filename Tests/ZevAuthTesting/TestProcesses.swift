import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The helper processes the tests start and leave running for a while (the SMTP sink, HTTPS servers, the
/// fault proxy, throwaway PostgreSQL clusters). A test run leaves none behind (docs/architecture.md, "Tests",
/// "No process left behind"):
/// - each one is appended to the file named by `ZEVAUTH_TEST_PIDS_FILE` (set by `scripts/test`) as a line
///   `PID START_TICKS DESCRIPTION`, START_TICKS being field 22 of `/proc/PID/stat`, so a reused PID is not
///   taken for the same process; `scripts/test` checks at its end that none of them is alive;
/// - the ones started with ``started(_:_:)`` are killed when the test process exits (`atexit`) if they still
///   run, and the Python helpers also exit on their own once their parent is gone (they poll their parent
///   PID), so even a test process that is killed leaves nothing behind.
public enum TestProcesses {
    private static let running = Mutex<[pid_t: String]>([:])
    private static let exitHandler: Void = { atexit { TestProcesses.killRunning() } }()

    /// Records `process` (already running) and kills it at exit unless ``ended(_:)`` is called first.
    public static func started(_ process: Process, _ description: String) {
        _ = exitHandler
        let pid = process.processIdentifier
        running.withLock { $0[pid] = description }
        record(pid: pid, description)
    }

    /// Forgets `process` once it has been stopped and waited for.
    public static func ended(_ process: Process) {
        _ = running.withLock { $0.removeValue(forKey: process.processIdentifier) }
    }

    /// Appends `pid` to `ZEVAUTH_TEST_PIDS_FILE` (nothing when it is not set): for a process this one did
    /// not start itself (a PostgreSQL server that `pg_ctl` started).
    public static func record(pid: pid_t, _ description: String) {
        guard let path = ProcessInfo.processInfo.environment["ZEVAUTH_TEST_PIDS_FILE"], !path.isEmpty else { return }
        let line = "\(pid) \(startTicks(of: pid) ?? "-") \(description)\n"
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // One write with O_APPEND: lines of concurrent writers never interleave.
        _ = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
    }

    /// Records the server of the throwaway cluster in `directory` (a `LocalPostgresCluster`'s), from the
    /// first line of its `postmaster.pid`.
    public static func recordPostmaster(clusterDirectory directory: String) {
        let pointer = try? String(contentsOfFile: directory + "/cluster-location", encoding: .utf8)
        let base = pointer?.trimmingCharacters(in: .whitespacesAndNewlines) ?? directory
        guard let text = try? String(contentsOfFile: base + "/pgdata/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = pid_t(first)
        else { return }
        record(pid: pid, "postgres (cluster \(directory))")
    }

    /// Field 22 of `/proc/PID/stat` (the start time in clock ticks), read after the command name, which
    /// is in parentheses and may hold spaces.
    static func startTicks(of pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    private static func killRunning() {
        for pid in running.withLock({ Array($0.keys) }) { kill(pid, SIGKILL) }
    }
}
