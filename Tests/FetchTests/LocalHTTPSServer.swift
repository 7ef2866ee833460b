import Foundation
import Glibc
import ZevAuthTesting

@testable import Fetch

/// The local HTTPS server of `https_server.py` (loopback only), started once for the whole suite. It
/// exits when this process does (it reads its stdin to EOF and watches its parent PID), and is killed at
/// exit if it still runs (`TestProcesses`).
final class LocalHTTPSServer: Sendable {
    /// TLS with a certificate for `assoc.test`, signed by the throwaway CA.
    let goodPort: Int
    /// TLS with a certificate for `other.test`, signed by the same CA.
    let wrongNamePort: Int
    /// Accepts TCP connections and never answers: a TLS handshake there hangs.
    let silentPort: Int
    /// The throwaway CA's PEM file.
    let caFile: String
    // Kept so the pipe's write end stays open: closing it ends the server.
    private let process: Process
    private let stdin: Pipe

    static let shared: Result<LocalHTTPSServer, StartError> = Result { () throws(StartError) in try LocalHTTPSServer() }

    struct StartError: Error { let message: String }

    private init() throws(StartError) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetchtests-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StartError(message: "cannot create \(directory)")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("https_server.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, directory]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        do { try process.run() } catch { throw StartError(message: "cannot run python3 \(script): \(error)") }
        TestProcesses.started(process, "FetchTests HTTPS server (Tests/FetchTests/https_server.py)")
        self.process = process
        self.stdin = stdin

        var line: [UInt8] = []
        var byte: UInt8 = 0
        let fd = stdout.fileHandleForReading.fileDescriptor
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        struct Ready: Decodable {
            let good: Int
            let wrongName: Int
            let silent: Int
            let ca: String
        }
        guard let ready = try? JSONDecoder().decode(Ready.self, from: Data(line)) else {
            throw StartError(message: "https_server.py did not start: \(String(decoding: line, as: UTF8.self))")
        }
        goodPort = ready.good
        wrongNamePort = ready.wrongName
        silentPort = ready.silent
        caFile = ready.ca
    }

    /// The suite's server, or a thrown error saying why it could not start.
    static func get() throws -> LocalHTTPSServer {
        switch shared {
        case .success(let server): return server
        case .failure(let error): throw error
        }
    }

    /// A configuration that reaches `assoc.test` on `port` at 127.0.0.1 and trusts the throwaway CA.
    func configuration(port: Int? = nil, timeoutMilliseconds: Int = 5_000) -> OutboundConfiguration {
        var configuration = OutboundConfiguration()
        configuration.caFile = caFile
        configuration.resolve = [ResolveOverride(host: "assoc.test", port: port ?? goodPort, address: "127.0.0.1")]
        configuration.allowPrivate = true
        configuration.timeoutMilliseconds = timeoutMilliseconds
        configuration.connectTimeoutMilliseconds = 2_000
        return configuration
    }

    /// Whether the server received a request for `path` (query excluded).
    func saw(_ path: String) throws -> Bool {
        let query = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
        let response = try HTTPSFetcher(configuration: configuration()).get(
            host: "assoc.test", port: goodPort, path: "/seen?path=\(query)", maxBytes: 16
        )
        .get()
        return response.body == Array("yes".utf8)
    }
}
