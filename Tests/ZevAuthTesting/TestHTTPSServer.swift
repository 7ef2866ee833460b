import Fetch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A local HTTPS server for association-file tests: a throwaway CA and a certificate for `acme.test` and
/// `*.acme.test` (made once per test process with the `openssl` CLI), and a small Python `http.server`
/// over TLS on an ephemeral 127.0.0.1 port, whose answers a test changes per path at any time. It logs
/// every request so a test can count fetches.
public final class TestHTTPSServer: @unchecked Sendable {
    /// The CA bundle and the leaf certificate and key, shared by every server of the process.
    public struct Certificates: Sendable {
        public let caFile: String
        public let certificateFile: String
        public let keyFile: String
    }

    public static let certificates: Certificates = {
        let directory = NSTemporaryDirectory() + "zevauth-test-ca-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let extensions = directory + "/leaf.ext"
        _ = FileManager.default.createFile(
            atPath: extensions,
            contents: Data(
                "subjectAltName=DNS:acme.test,DNS:*.acme.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n".utf8))
        let commands = [
            "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 3"
                + " -subj /CN=ZevAuth-Test-CA -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
            "req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout leaf.key -out leaf.csr -subj /CN=acme.test",
            "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 -extfile leaf.ext",
        ]
        for command in commands {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = command.split(separator: " ").map(String.init)
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { fatalError("openssl could not run: \(error)") }
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { fatalError("openssl \(command) failed") }
        }
        return Certificates(caFile: directory + "/ca.pem", certificateFile: directory + "/leaf.pem", keyFile: directory + "/leaf.key")
    }()

    // It exits on SIGTERM or SIGINT (unblocked first: a child inherits the test process's blocked signals)
    // and once its parent is gone (a changed parent PID), so it never outlives the tests.
    static let script = """
        import http.server, json, os, signal, ssl, sys, threading, time, base64
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        signal.signal(signal.SIGINT, lambda *_: os._exit(0))
        parent = os.getppid()
        def exit_when_orphaned():
            while os.getppid() == parent: time.sleep(0.5)
            os._exit(0)
        threading.Thread(target=exit_when_orphaned, daemon=True).start()
        cert, key, routes_path, log_path = sys.argv[1:5]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                with open(log_path, "a") as log:
                    log.write((self.headers.get("Host") or "") + " " + self.path + "\\n")
                try:
                    with open(routes_path) as f: routes = json.load(f)
                except Exception:
                    routes = {}
                route = routes.get(self.path)
                if route is None:
                    route = {"status": 404, "body": base64.b64encode(b"not here").decode(), "contentType": "text/plain"}
                time.sleep(route.get("delay", 0))
                body = base64.b64decode(route.get("body", ""))
                self.send_response(route["status"])
                if route.get("contentType"): self.send_header("Content-Type", route["contentType"])
                if route.get("location"): self.send_header("Location", route["location"])
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    private let process: Process
    private let directory: String
    private let routesFile: String
    private let logFile: String
    private let lock = NSLock()
    private var routes: [String: [String: Any]] = [:]
    /// The port it listens on, on 127.0.0.1.
    public let port: Int

    /// Starts a server that answers 404 to everything until told otherwise.
    public init() throws {
        let certificates = Self.certificates
        directory = NSTemporaryDirectory() + "zevauth-https-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        routesFile = directory + "/routes.json"
        logFile = directory + "/requests.log"
        _ = FileManager.default.createFile(atPath: logFile, contents: Data())
        try Data(Self.script.utf8).write(to: URL(fileURLWithPath: directory + "/server.py"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: routesFile))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [directory + "/server.py", certificates.certificateFile, certificates.keyFile, routesFile, logFile]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        TestProcesses.started(process, "test HTTPS server (TestHTTPSServer)")
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            TestProcesses.ended(process)
            throw TestHTTPClient.Failure.malformed
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a child inherits the test process's blocked signals, so SIGTERM may never arrive.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        TestProcesses.ended(process)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Sets what `path` answers (for every host).
    /// - Parameters:
    ///   - delaySeconds: waits this long before answering (to exceed a fetch timeout).
    public func set(
        _ path: String, status: Int = 200, contentType: String? = "application/json", body: [UInt8], location: String? = nil,
        delaySeconds: Double = 0
    ) {
        lock.withLock {
            var route: [String: Any] = ["status": status, "body": Data(body).base64EncodedString(), "delay": delaySeconds]
            if let contentType { route["contentType"] = contentType }
            if let location { route["location"] = location }
            routes[path] = route
            let data = (try? JSONSerialization.data(withJSONObject: routes)) ?? Data("{}".utf8)
            let temporary = routesFile + ".tmp"
            try? data.write(to: URL(fileURLWithPath: temporary))
            _ = rename(temporary, routesFile)
        }
    }

    /// Makes `path` answer 404 again.
    public func remove(_ path: String) {
        set(path, status: 404, contentType: "text/plain", body: Array("gone".utf8))
    }

    /// How many requests for `path` arrived for `host`.
    public func requestCount(host: String, path: String) -> Int {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return false }
            let requestHost = parts[0].split(separator: ":").first.map(String.init) ?? ""
            return requestHost == host && parts[1] == path
        }.count
    }

    /// Outbound configuration that reaches this server for `domains` on loopback: the test CA, a resolve
    /// override per domain, private addresses allowed (127.0.0.1 is loopback), short timeouts.
    public func outbound(for domains: [String], allowPrivate: Bool = true, timeoutMilliseconds: Int = 3000) -> OutboundConfiguration {
        var configuration = OutboundConfiguration()
        configuration.caFile = Self.certificates.caFile
        configuration.resolve = domains.map { ResolveOverride(host: $0, port: port, address: "127.0.0.1") }
        configuration.allowPrivate = allowPrivate
        configuration.timeoutMilliseconds = timeoutMilliseconds
        configuration.connectTimeoutMilliseconds = min(2000, timeoutMilliseconds)
        return configuration
    }
}
