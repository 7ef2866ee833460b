import Foundation
import Testing

/// One email a test server wrote or a test SMTP server received (`.eml`, first line `X-Envelope-To:`; the
/// SMTP sink adds `X-Envelope-From:` as the message's first header).
public struct ReceivedEmail: Sendable {
    public let path: String
    public let envelopeTo: String
    public let raw: String

    /// The header value `name` (first occurrence), or nil.
    public func header(_ name: String) -> String? {
        for line in raw.components(separatedBy: "\r\n") {
            if line.isEmpty { break }
            if line.lowercased().hasPrefix(name.lowercased() + ":") {
                return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The envelope sender (`MAIL FROM`) in angle brackets as the SMTP sink recorded it, or nil for a
    /// message a test server wrote to a folder.
    public var envelopeFrom: String? { header("X-Envelope-From") }

    /// The body after the header block.
    public var body: String { raw.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n") }

    /// The 6-digit code in the body (an indented line of six digits), registered as a secret of the run.
    public var code: String? {
        for line in body.components(separatedBy: "\r\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.count == 6, trimmed.allSatisfy(\.isNumber), line.hasPrefix("    ") {
                SuiteCapture.code(trimmed)
                return trimmed
            }
        }
        return nil
    }
}

/// The run's mailboxes: the folder every test server's outbox writes to (`Mailbox.directory`) and any
/// folder an `SMTPSink` fills. Tests find their messages by the envelope recipient, which is unique per test.
public enum Mailbox {
    /// The folder test servers write their messages to (one per test process).
    public static let directory: String = {
        let path = NSTemporaryDirectory() + "zevauth-mailbox-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Every message in `folder` for `recipient`, oldest first.
    public static func messages(to recipient: String, in folder: String = directory) -> [ReceivedEmail] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
        return names.compactMap { name -> ReceivedEmail? in
            let path = folder + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            let raw = String(decoding: data, as: UTF8.self)
            guard raw.hasPrefix("X-Envelope-To: "), let end = raw.range(of: "\r\n") else { return nil }
            let to = String(raw[raw.index(raw.startIndex, offsetBy: 15)..<end.lowerBound])
            guard to.lowercased() == recipient.lowercased() else { return nil }
            return ReceivedEmail(path: path, envelopeTo: to, raw: String(raw[end.upperBound...]))
        }
    }

    /// Waits up to `seconds` until `recipient` has at least `count` messages in `folder`.
    /// - Throws: when they do not arrive.
    @discardableResult
    public static func wait(for recipient: String, count: Int = 1, in folder: String = directory, seconds: Double = 8)
        throws -> [ReceivedEmail]
    {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let found = messages(to: recipient, in: folder)
            if found.count >= count { return found }
            if Date() > deadline { throw MailboxTimeout(count: found.count, wanted: count) }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The newest code sent to `recipient`, once `count` messages with a code have arrived (notices,
    /// which carry none, are skipped).
    public static func code(for recipient: String, count: Int = 1, in folder: String = directory, seconds: Double = 8) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let codes = messages(to: recipient, in: folder).compactMap(\.code)
            if codes.count >= count, let last = codes.last { return last }
            if Date() > deadline { throw MailboxTimeout(count: codes.count, wanted: count) }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}

/// Messages did not arrive in time.
public struct MailboxTimeout: Error, CustomStringConvertible {
    let count: Int
    let wanted: Int
    public var description: String { "only \(count) of \(wanted) expected messages arrived" }
}

/// A real SMTP server for tests: `Tests/Mail/smtp_sink.py` (aiosmtpd, in `.build/pyvenv`) on 127.0.0.1,
/// writing each message it accepts to its own folder. `stop()` and `start()` again on the same port model
/// a relay that is down and comes back. It is stopped in `deinit`, killed at the test process's exit if it
/// still runs (`TestProcesses`), and exits on its own once the test process is gone.
public final class SMTPSink: @unchecked Sendable {
    public let port: UInt16
    public let directory: String
    private var process: Process?

    /// Starts the sink on a free port. - Throws: when Python or aiosmtpd is missing or it does not start.
    public init() throws {
        directory = NSTemporaryDirectory() + "zevauth-smtp-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        try start()
    }

    deinit { stop() }

    /// The Python of the project's venv (`scripts/test` installs aiosmtpd there).
    static var python: String { TestDatabase.repositoryRoot + "/.build/pyvenv/bin/python" }

    /// Starts (or restarts) the sink and waits until it listens.
    public func start() throws {
        let ready = directory + "/ready-\(UUID().uuidString.prefix(6))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [
            TestDatabase.repositoryRoot + "/Tests/Mail/smtp_sink.py", "--port", String(port), "--dir", directory, "--ready-file", ready,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        TestProcesses.started(process, "SMTP sink (Tests/Mail/smtp_sink.py, port \(port))")
        self.process = process
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: ready) {
            if Date() > deadline || !process.isRunning {
                stop()
                throw MailboxTimeout(count: 0, wanted: 1)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Stops the sink (the port refuses connections until `start()`).
    public func stop() {
        guard let process, process.isRunning else { return }
        // SIGKILL: the port must refuse connections at once, as a relay that is down does.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        TestProcesses.ended(process)
        self.process = nil
    }

    /// `smtp://127.0.0.1:PORT`.
    public var url: String { "smtp://127.0.0.1:\(port)" }

    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw MailboxTimeout(count: 0, wanted: 1) }
        return UInt16(bigEndian: address.sin_port)
    }
}
