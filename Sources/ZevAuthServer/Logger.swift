import Foundation
import Synchronization

/// Where the server's log lines go. Lines never carry a code, token, verifier, password or key
/// (DEVELOPERS.md, "Security rules"): the access log names the method, the path without its query, the
/// status and the duration; errors name their kind, never their inputs.
public protocol LogSink: Sendable {
    /// Writes one line (no trailing newline).
    func write(_ line: String)
}

/// Writes to standard error, one line at a time.
public struct StandardErrorLog: LogSink {
    public init() {}
    public func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Keeps every line in memory, for tests that search the log for leaked secrets.
public final class MemoryLog: LogSink {
    private let lines = Mutex<[String]>([])
    public init() {}
    public func write(_ line: String) { lines.withLock { $0.append(line) } }
    /// Every line written so far.
    public var all: [String] { lines.withLock { $0 } }
}
