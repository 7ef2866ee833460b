import Fetch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The upstream OpenID provider of the federation tests: `Tests/Federation/upstream_op.py` (authlib under
/// Flask, in `.build/pyvenv`) on loopback HTTPS, serving `https://appleid.apple.com`,
/// `https://accounts.google.com` and `https://op.test`. One runs per test process (`shared`), killed at the
/// process's exit if it still runs (`TestProcesses`); it also exits on its own once the test process is gone.
/// A server reaches it through `outbound` (its CA, the resolve overrides, private addresses allowed).
public final class UpstreamOP: Sendable {
    public static let apple = "https://appleid.apple.com"
    public static let google = "https://accounts.google.com"
    public static let plain = "https://op.test"

    /// The running provider. - Throws: when Python, authlib or flask is missing, or it does not start.
    public static func shared() throws -> UpstreamOP {
        switch started {
        case .success(let op): return op
        case .failure(let error): throw error
        }
    }

    private static let started: Result<UpstreamOP, UpstreamOPUnavailable> = {
        do { return .success(try UpstreamOP()) } catch let error as UpstreamOPUnavailable { return .failure(error) } catch {
            return .failure(UpstreamOPUnavailable(reason: "\(error)"))
        }
    }()

    /// The CA bundle that signed the provider's certificate.
    public let caFile: String
    /// `ZEVAUTH_OUTBOUND_RESOLVE`'s value sending the three hosts to the provider.
    public let resolve: String
    /// The test-only control endpoint, `http://127.0.0.1:PORT`.
    public let control: String
    private let client = HTTPClient()

    private init() throws {
        let directory = NSTemporaryDirectory() + "zevauth-upstream-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ready = directory + "/ready.json"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestDatabase.repositoryRoot + "/.build/pyvenv/bin/python")
        process.arguments = [TestDatabase.repositoryRoot + "/Tests/Federation/upstream_op.py", "--dir", directory, "--ready-file", ready]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        TestProcesses.started(process, "upstream OpenID provider (Tests/Federation/upstream_op.py)")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: ready) {
            guard Date() < deadline, process.isRunning else { throw UpstreamOPUnavailable(reason: "upstream_op.py did not start") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let data = FileManager.default.contents(atPath: ready),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let caFile = object["caFile"] as? String,
            let resolve = object["resolve"] as? String, let control = object["control"] as? String
        else { throw UpstreamOPUnavailable(reason: "upstream_op.py wrote no readable ready file") }
        self.caFile = caFile
        self.resolve = resolve
        self.control = control
    }

    /// The outbound configuration that reaches this provider.
    public var outbound: OutboundConfiguration {
        var configuration = OutboundConfiguration()
        configuration.caFile = caFile
        configuration.resolve = (try? OutboundConfiguration.parseResolve(resolve)) ?? []
        configuration.allowPrivate = true
        return configuration
    }

    /// POSTs `body` to the control endpoint's `path` and returns its JSON object.
    @discardableResult
    public func call(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let response = try client.send(
            HTTPClientRequest(
                .post, control + path, headers: [("Content-Type", "application/json")],
                body: Array(try JSONSerialization.data(withJSONObject: body))))
        guard response.status == 200, let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw UpstreamOPUnavailable(reason: "control \(path) answered \(response.status)")
        }
        return object
    }

    /// An ID token of `issuer` with exactly `claims`; `options` adds `alg`, `kid`, `key` (`rsa`/`ec`), `tamper`.
    public func mint(_ issuer: String, _ claims: [String: Any], _ options: [String: Any] = [:]) throws -> String {
        var body = options
        body["issuer"] = issuer
        body["claims"] = claims
        return try call("/mint", body)["token"] as? String ?? ""
    }

    /// How many times each issuer's key set was fetched.
    public func jwksFetches(_ issuer: String) throws -> Int {
        let response = try client.send(HTTPClientRequest(.get, control + "/stats"))
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (object?["jwks_fetches"] as? [String: Any])?[issuer] as? Int ?? -1
    }
}

/// The upstream provider could not be started or answered unexpectedly.
public struct UpstreamOPUnavailable: Error, CustomStringConvertible {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}
