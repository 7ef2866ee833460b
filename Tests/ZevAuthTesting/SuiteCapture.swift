import Foundation
import ZevAuthServer

/// Captures, across the whole test run, what every test server logged and every secret a test saw, in two
/// files named by `ZEVAUTH_TEST_LOG_FILE` and `ZEVAUTH_TEST_SECRETS_FILE`. `scripts/test` then searches the
/// log for each secret (docs/operations.md#logs: no code, token, verifier or password is ever logged).
public enum SuiteCapture {
    private static let lock = NSLock()

    private static func append(_ line: String, toFileIn variable: String) {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else { return }
        lock.withLock {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            handle.seekToEndOfFile()
            handle.write(Data((line + "\n").utf8))
            try? handle.close()
        }
    }

    /// Records a secret (code, verifier, token, password, cookie value) the suite must never find in a log.
    public static func secret(_ value: String?) {
        guard let value, value.count >= 8 else { return }
        append(value, toFileIn: "ZEVAUTH_TEST_SECRETS_FILE")
    }

    /// Records a 6-digit email code (too short for the secrets file, whose fixed-string search would find
    /// it inside longer numbers): `scripts/test` searches the log for it as a whole number.
    public static func code(_ value: String) {
        append(value, toFileIn: "ZEVAUTH_TEST_CODES_FILE")
    }

    /// Records one server log line.
    static func logLine(_ line: String) {
        append(line, toFileIn: "ZEVAUTH_TEST_LOG_FILE")
    }
}

/// A log sink that keeps lines in memory for the test and also hands them to `SuiteCapture`.
public final class CapturingLog: LogSink {
    public let memory = MemoryLog()
    public init() {}
    public func write(_ line: String) {
        memory.write(line)
        SuiteCapture.logLine(line)
    }
    public var all: [String] { memory.all }
}
