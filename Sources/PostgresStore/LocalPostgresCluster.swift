import Foundation
import Postgres

/// Why a local cluster could not be prepared, started or stopped.
public struct LocalClusterError: Error, Sendable, CustomStringConvertible {
    /// What failed, with the tail of the tool's output when a tool failed.
    public let message: String

    /// A one-line explanation.
    public var description: String { "local PostgreSQL cluster: \(message)" }
}

/// A throwaway or development PostgreSQL cluster run from the raw binaries (`initdb`, `pg_ctl`) and reached
/// over a unix socket only; `/etc/postgresql` and the system service are not touched.
///
/// Layout: `<base>/pgdata` (the cluster) and `<base>/run` (socket and `postgres.log`), where `<base>` is the
/// given directory. When running as root, the tools run as the `postgres` user through `runuser`
/// (`initdb` refuses root) and both directories are handed to `postgres`; if `postgres` cannot traverse the
/// given directory, the cluster lives in a `postgres`-owned directory under the system temp directory instead
/// and the file `<directory>/cluster-location` names it, so the next `start()` reuses it.
///
/// Authentication is `trust` for the local socket, which lives in a private directory. Non-durable clusters
/// run with `fsync`, `synchronous_commit` and `full_page_writes` off: fast, and lost on a crash. Never use
/// one for data you keep.
public final class LocalPostgresCluster: Sendable {
    /// The directory given at creation (or holding the pointer file).
    public let directory: String
    /// The port number, which for a unix socket only names the socket file (`.s.PGSQL.<port>`).
    public let port: Int
    /// Where `initdb` and `pg_ctl` live.
    public let binDirectory: String
    /// Whether the cluster keeps PostgreSQL's crash-safety settings.
    public let durable: Bool
    /// Whether the server also listens on 127.0.0.1 (TCP) besides the socket.
    public let listenOnLoopback: Bool

    /// Describes a cluster; nothing happens on disk until `start()`.
    /// - Parameters:
    ///   - directory: Where the cluster lives (created if missing).
    ///   - port: Socket number, and the TCP port when `listenOnLoopback` is set.
    ///   - binDirectory: The PostgreSQL server binaries.
    ///   - durable: `false` (default) turns off fsync and friends, for tests.
    ///   - listenOnLoopback: Also accept TCP connections on 127.0.0.1; default socket only.
    public init(
        directory: String, port: Int = 5433, binDirectory: String = "/usr/lib/postgresql/15/bin",
        durable: Bool = false, listenOnLoopback: Bool = false
    ) {
        self.directory = directory
        self.port = port
        self.binDirectory = binDirectory
        self.durable = durable
        self.listenOnLoopback = listenOnLoopback
    }

    /// Creates the cluster if the directory holds none, starts it if it is not running, and creates the
    /// `zevauth` database if missing. Blocks until the server accepts connections (about 1.5 s the first
    /// time, well under a second afterwards).
    /// - Returns: A libpq URL such as `postgresql:///zevauth?host=/tmp/x/run&port=5433&user=postgres`.
    /// - Throws: `LocalClusterError` when a tool fails (its output is included), `PostgresError` when the
    ///   database cannot be created.
    public func start() throws -> String {
        let layout = try prepareLayout()
        if !FileManager.default.fileExists(atPath: layout.data + "/PG_VERSION") {
            var arguments = ["-D", layout.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"]
            if !durable { arguments.append("--no-sync") }
            try run("initdb", arguments)
        }
        if try run("pg_ctl", ["-D", layout.data, "status"], allowFailure: true) != 0 {
            var options = "-p \(port) -k \(shellQuoted(layout.run))"
            options += listenOnLoopback ? " -c listen_addresses=127.0.0.1" : " -c listen_addresses=''"
            if !durable { options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off" }
            let log = layout.run + "/postgres.log"
            try run("pg_ctl", ["-D", layout.data, "-l", log, "-w", "-t", "60", "-o", options, "start"])
        }
        let admin = try PostgresConnection(url: url(socketDirectory: layout.run, database: "postgres"))
        if try admin.query("SELECT 1 FROM pg_database WHERE datname = 'zevauth'").rows.isEmpty {
            do {
                try admin.query("CREATE DATABASE zevauth")
            } catch let error as PostgresError where error.sqlState == .uniqueViolation {
                // Someone else created it at the same moment.
            }
        }
        return url(socketDirectory: layout.run, database: "zevauth")
    }

    /// Stops the server (`pg_ctl stop -m fast`, waiting until it is down); does nothing if it is not running.
    /// The data stays, so `start()` brings the same cluster back.
    /// - Throws: `LocalClusterError` when `pg_ctl` fails.
    public func stop() throws {
        guard let data = existingDataDirectory(),
            try run("pg_ctl", ["-D", data, "status"], allowFailure: true) == 0
        else { return }
        try run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    // MARK: Layout

    private struct Layout {
        let data: String
        let run: String
    }

    private var pointerFile: String { directory + "/cluster-location" }
    private var isRoot: Bool { geteuid() == 0 }

    private func existingDataDirectory() -> String? {
        if let base = try? String(contentsOfFile: pointerFile, encoding: .utf8) {
            let path = base.trimmingCharacters(in: .whitespacesAndNewlines) + "/pgdata"
            return FileManager.default.fileExists(atPath: path) ? path : nil
        }
        let path = directory + "/pgdata"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    private func prepareLayout() throws -> Layout {
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var base = directory
        if let pointed = try? String(contentsOfFile: pointerFile, encoding: .utf8) {
            base = pointed.trimmingCharacters(in: .whitespacesAndNewlines)
        } else if isRoot, try run("test", ["-x", directory, "-a", "-r", directory], allowFailure: true) != 0 {
            base = try makeTemporaryBase()
            try base.write(toFile: pointerFile, atomically: true, encoding: .utf8)
        }
        let layout = Layout(data: base + "/pgdata", run: base + "/run")
        // A unix socket path is limited to 107 bytes.
        guard (layout.run + "/.s.PGSQL.\(port)").utf8.count < 100 else {
            throw LocalClusterError(message: "socket path under \(base) is too long; choose a shorter directory")
        }
        for path in [base, layout.run, layout.data] where !files.fileExists(atPath: path) {
            try files.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: layout.data)
        if isRoot {
            for path in base == directory ? [layout.run, layout.data] : [base, layout.run, layout.data] {
                guard chown(path, postgresUser.uid, postgresUser.gid) == 0 else {
                    throw LocalClusterError(message: "cannot hand \(path) to the postgres user")
                }
            }
        }
        return layout
    }

    private func makeTemporaryBase() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/zevauth-pg-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw LocalClusterError(message: "cannot create a directory under \(NSTemporaryDirectory())")
        }
        return String(cString: made)
    }

    private var postgresUser: (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam("postgres") else { return (0, 0) }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    // MARK: Running the tools

    /// Runs a PostgreSQL tool (or `test`), as `postgres` through `runuser` when this process is root.
    /// Output goes to a temporary file, not a pipe: `pg_ctl start` leaves a server running that would
    /// otherwise hold the pipe open.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String], allowFailure: Bool = false) throws -> Int32 {
        let executable = tool == "test" ? "/usr/bin/test" : binDirectory + "/" + tool
        // Foundation's Process learns that a child exited when a socket it leaves open in the child reaches
        // EOF. `pg_ctl start` leaves a server running that would inherit that socket, and waitUntilExit would
        // then hang until the server stops. So bash closes every descriptor above 2 before running the tool
        // (dash cannot name descriptors above 9).
        let closeInheritedDescriptors =
            #"for fd in /proc/self/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null; "#
            + #"exec "$0" "$@""#
        let command = ["/bin/bash", "-c", closeInheritedDescriptors, executable] + arguments
        let process = Process()
        if isRoot {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--"] + command
        } else {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        }
        // The postgres user may not be able to enter our working directory.
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let outputPath = NSTemporaryDirectory() + "/zevauth-pg-\(UUID().uuidString).out"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else { throw LocalClusterError(message: "cannot create a temporary file") }
        defer {
            try? output.close()
            try? FileManager.default.removeItem(atPath: outputPath)
        }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw LocalClusterError(message: "cannot run \(tool): \(error)")
        }
        process.waitUntilExit()
        let status = process.terminationStatus
        if status != 0 && !allowFailure {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw LocalClusterError(message: "\(tool) exited with \(status): \(text.suffix(2000))")
        }
        return status
    }

    private func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private func url(socketDirectory: String, database: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~")
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: allowed) ?? socketDirectory
        return "postgresql:///\(database)?host=\(host)&port=\(port)&user=postgres"
    }
}
