import Encoding
import Foundation
import Synchronization

/// Where the server's log lines go. Lines never carry a code, token, verifier, password, key, cookie,
/// email, hint or query string (docs/operations.md, "Logs"): the access line names the route's template,
/// never the raw target; errors name their kind, never their inputs.
///
/// A raw sink (`StandardErrorLog`, `MemoryLog`) only implements `write(_:)`. `ServerContext` wraps it in a
/// `StructuredLog`, which adds the time, the level and the current request's id, and formats the line as
/// JSON or text (`ZEVAUTH_LOG_FORMAT`).
public protocol LogSink: Sendable {
    /// Writes one line (no trailing newline). On a `StructuredLog`, `line` is the message, logged at the
    /// level its first word implies (`error …` is an error, `refused …` a warning, anything else info).
    func write(_ line: String)
    /// Writes one message at `level`. A raw sink writes the message as it is.
    func write(_ message: String, level: LogLevel)
    /// Writes the one access line of a request. A raw sink writes its text form.
    func access(_ record: AccessRecord)
}

extension LogSink {
    /// A raw sink ignores the level: `message` as it is.
    public func write(_ message: String, level: LogLevel) { write(message) }
    /// A raw sink writes the record's `text`.
    public func access(_ record: AccessRecord) { write(record.text) }
}

/// How severe a log line is (the `level` field of a JSON line).
public enum LogLevel: String, Sendable {
    case debug, info, warn, error

    /// The level a message implies by its first word: `error …` → error, `refused …` → warn, else info.
    static func implied(by message: String) -> LogLevel {
        if message.hasPrefix("error") { return .error }
        if message.hasPrefix("refused") { return .warn }
        return .info
    }
}

/// The log line format (`ZEVAUTH_LOG_FORMAT`, docs/operations.md, "Logs").
public enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line: `ts`, `level`, `msg`, and `request_id` (plus the access fields) within a
    /// request. The default of `zevauth serve`.
    case json
    /// A human line: the message, then ` request_id=…` within a request. The default of `zevauth dev`.
    case text
}

/// The facts of one answered request, as the access line carries them. Every field is safe to log: the
/// route is a template (never the raw target, which may carry a code), the method one of a fixed set.
public struct AccessRecord: Sendable {
    /// The request's id (`X-Request-Id`, kept from a trusted proxy or generated).
    public var requestID: String
    /// `GET`, `POST`, … or `OTHER` (see `HTTPMethodLabel`).
    public var method: String
    /// The matched route's template, e.g. `/v1/admin/apps/{id}`, or `AccessRecord.unmatchedRoute`.
    public var route: String
    /// The response's status code.
    public var status: Int
    /// Time spent in the handler, in milliseconds.
    public var durationMilliseconds: Double
    /// The client address rate limits use (`ClientAddress`).
    public var client: String

    /// The `route` of a request no route's path matched (a 404).
    public static let unmatchedRoute = "unmatched"

    /// `GET /v1/admin/apps/{id} 200 1.2ms client=… request_id=…`.
    public var text: String {
        "\(method) \(route) \(status) \(String(format: "%.1f", durationMilliseconds))ms client=\(client) request_id=\(requestID)"
    }
}

/// Formats every line (JSON or text), stamps it with the time, its level and the id of the request the
/// current thread is handling (`CurrentRequest`), and hands it to a raw sink.
public struct StructuredLog: LogSink {
    /// Where finished lines go.
    public let sink: any LogSink
    /// JSON objects or text lines.
    public let format: LogFormat

    /// - Parameters:
    ///   - sink: a raw sink; a `StructuredLog` given here is unwrapped, so lines are never formatted twice.
    ///   - format: JSON or text.
    public init(_ sink: any LogSink, format: LogFormat) {
        self.sink = (sink as? StructuredLog)?.sink ?? sink
        self.format = format
    }

    public func write(_ line: String) { write(line, level: LogLevel.implied(by: line)) }

    public func write(_ message: String, level: LogLevel) {
        let requestID = CurrentRequest.id
        switch format {
        case .text:
            sink.write(requestID.map { "\(message) request_id=\($0)" } ?? message)
        case .json:
            var writer = JSONWriter(capacity: 128 + message.utf8.count)
            writer.object { object in
                object.field("ts", Self.timestamp())
                object.field("level", level.rawValue)
                object.field("msg", message)
                object.fieldIfPresent("request_id", requestID)
            }
            sink.write(String(decoding: writer.bytes, as: UTF8.self))
        }
    }

    public func access(_ record: AccessRecord) {
        switch format {
        case .text:
            sink.write(record.text)
        case .json:
            var writer = JSONWriter(capacity: 256)
            writer.object { object in
                object.field("ts", Self.timestamp())
                object.field("level", LogLevel.info.rawValue)
                object.field("msg", "request")
                object.field("request_id", record.requestID)
                object.field("method", record.method)
                object.field("route", record.route)
                object.field("status", record.status)
                object.field("duration_ms", (record.durationMilliseconds * 1000).rounded() / 1000)
                object.field("client", record.client)
            }
            sink.write(String(decoding: writer.bytes, as: UTF8.self))
        }
    }

    /// Now, RFC 3339 in UTC with milliseconds: `2026-12-01T23:45:02.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return timestamp(seconds: Int64(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000))
    }

    /// `seconds` since the epoch plus `milliseconds` (0–999) in the form of `timestamp()`.
    static func timestamp(seconds: Int64, milliseconds: Int) -> String {
        // `…:SS` from the whole-second form without its `Z`, then `.mmm` and `Z`, written as bytes.
        var out = Array(Timestamp.rfc3339(secondsSinceEpoch: seconds).utf8.dropLast())
        let millis = min(max(milliseconds, 0), 999)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(millis / 100) + 0x30)
        out.append(UInt8(millis / 10 % 10) + 0x30)
        out.append(UInt8(millis % 10) + 0x30)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }
}

/// Writes to standard error, one line at a time.
public struct StandardErrorLog: LogSink {
    public init() {}
    /// Writes `line` and a newline to file descriptor 2 in one `write(2)` where the kernel takes it whole (a
    /// pipe takes up to `PIPE_BUF`, 4,096 bytes, atomically, so such lines of concurrent requests never
    /// interleave), continuing after a partial write and retrying on `EINTR`. A failing stderr loses the
    /// line, or the rest of it with its newline (the next line then continues it), rather than stopping the
    /// server.
    public func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
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

/// The request the current thread is handling, so every log line written while it is handled carries its
/// id without handlers passing it along. `ZevAuthApp.handle` sets it around the router call on whichever
/// thread runs the request (an HTTP worker, or a work-queue thread that calls `handle` itself).
public enum CurrentRequest {
    /// The request id held while `body` runs.
    final class Scope: Sendable {
        let requestID: String
        init(_ requestID: String) { self.requestID = requestID }
    }

    /// One thread-local slot, created once per process.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-local slot for the request id")
        return key
    }()

    /// The id of the request this thread is handling, nil outside a request.
    public static var id: String? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Scope>.fromOpaque(pointer).takeUnretainedValue().requestID
    }

    /// Runs `body` with `requestID` as this thread's current request, then restores the previous one.
    public static func with<T>(_ requestID: String, _ body: () throws -> T) rethrows -> T {
        let scope = Scope(requestID)
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(scope).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return try withExtendedLifetime(scope) { try body() }
    }
}
