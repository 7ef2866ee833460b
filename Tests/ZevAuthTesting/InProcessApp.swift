import Authorize
import Foundation
import HTTPServer
import Postgres
import PostgresStore
import ZevAuthServer

/// The router test helper: a `ZevAuthApp` over a `ServerContext` the test builds, usually with fakes of the
/// store protocols in its ports (`Fakes+<Area>.swift`), answered in process by `TestHTTPClient`'s
/// in-process transport (the server's own framing checks and response rules; no socket, no daemon).
///
///     let context = InProcessApp.context(roundTrip: RoundTripPorts(/* fakes */))
///     let answer = try InProcessApp(context: context).postJSON("/v1/auth/handoff/exchange", ["code": "c"], bearer: key)
///     #expect(answer.status == 400)
///
/// Ports left out are built over `unreachableStore`, so a handler that still reaches PostgreSQL answers
/// 503 rather than touching a database.
public struct InProcessApp: Sendable {
    public let context: ServerContext
    public let app: ZevAuthApp
    /// The client every request of this helper goes through.
    public let client: TestHTTPClient

    /// Routes of `ZevAuthApp(context:)`, called in process.
    public init(context: ServerContext) {
        self.context = context
        self.app = ZevAuthApp(context: context)
        self.client = TestHTTPClient(handler: app, port: TestServer.inProcessPort)
    }

    /// A store over a database that refuses every connection at once (loopback port 1): no test data,
    /// every statement `StoreUnavailable`/a connection error, which the funnel answers 503.
    public static let unreachableStore = PostgresStore(pool: PostgresPool(url: unreachableURL, size: 1, acquireTimeoutSeconds: 1))

    static let unreachableURL = "postgresql://zevauth@127.0.0.1:1/none?connect_timeout=1"

    /// A context as `TestServer` configures one (issuer `http://127.0.0.1:9`, the test operator token and
    /// encryption key, generous rate limits, cheap Argon2id), over the ports given.
    /// - Parameters:
    ///   - roundTrip, tenancy, accounts: the ports (fakes); nil builds that area's ports over `store`.
    ///   - store: the concrete store handlers not yet moved to ports still use.
    ///   - secrets: token minting and digests (a deterministic fake, or OpenSSL).
    ///   - clock: "now" (a `ManualClock` to move time).
    ///   - log: where the app's log lines go (a `CapturingLog` to read them).
    ///   - configure: changes to the configuration.
    public static func context(
        roundTrip: RoundTripPorts? = nil, tenancy: TenancyPorts? = nil, accounts: AccountsPorts? = nil,
        store: PostgresStore = unreachableStore, secrets: any Secrets = OpenSSLSecrets(), clock: any Clock = SystemClock(),
        log: any LogSink = CapturingLog(), configure: (inout ServerConfiguration) -> Void = { _ in }
    ) -> ServerContext {
        var configuration = TestServer.configuration(port: TestServer.inProcessPort, databaseURL: unreachableURL)
        configure(&configuration)
        return ServerContext(
            configuration: configuration, store: store, roundTrip: roundTrip ?? RoundTripPorts(store),
            tenancy: tenancy ?? TenancyPorts(store), accounts: accounts ?? AccountsPorts(store), secrets: secrets,
            clock: clock, passwordHasher: testPasswordHasher, log: log)
    }

    /// Sends one request (headers in order, after `Host` and `Connection`).
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws
        -> TestResponse
    {
        try client.send(method, target, headers: headers, body: body)
    }

    /// `GET target`, with an optional bearer credential.
    public func get(_ target: String, bearer: String? = nil, headers: [(String, String)] = []) throws -> TestResponse {
        try send("GET", target, headers: Self.authorization(bearer) + headers)
    }

    /// `POST target` with a raw body (say its `Content-Type` in `headers`).
    public func post(_ target: String, body: [UInt8], bearer: String? = nil, headers: [(String, String)] = []) throws
        -> TestResponse
    {
        try send("POST", target, headers: Self.authorization(bearer) + headers, body: body)
    }

    /// `POST target` with a JSON object body (`application/json`).
    public func postJSON(_ target: String, _ object: [String: Any], bearer: String? = nil) throws -> TestResponse {
        try post(
            target, body: Array(try JSONSerialization.data(withJSONObject: object)), bearer: bearer,
            headers: [("Content-Type", "application/json")])
    }

    /// `POST target` with an `application/x-www-form-urlencoded` body, fields in order.
    public func postForm(_ target: String, _ fields: [(String, String)], headers: [(String, String)] = []) throws -> TestResponse {
        let body = fields.map { "\(TestBrowser.formEncode($0.0))=\(TestBrowser.formEncode($0.1))" }.joined(separator: "&")
        return try post(
            target, body: Array(body.utf8), headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers)
    }

    /// A cookie-keeping browser on this app.
    public func browser() -> TestBrowser { TestBrowser(client: client) }

    private static func authorization(_ bearer: String?) -> [(String, String)] {
        bearer.map { [("Authorization", "Bearer \($0)")] } ?? []
    }
}
