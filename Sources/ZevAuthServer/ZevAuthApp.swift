import Authorize
import Crypto
import Foundation
import HTTPServer
import PasswordHashing
import Postgres
import PostgresStore

/// Everything a handler needs, shared read-only by all request threads.
public struct ServerContext: Sendable {
    public let configuration: ServerConfiguration
    public let store: PostgresStore
    public let clock: any Clock
    public let passwordHasher: PasswordHasher
    public let log: any LogSink
    /// Bounds request-triggered outbound fetches (shared by every copy of this context).
    public let outboundSlots: OutboundSlots
    /// Fresh tokens and their digests (OpenSSL in production).
    public let secrets: any Secrets
    /// The round trip's and the sessions' store ports.
    public let roundTrip: RoundTripPorts
    /// Tenancy's, the mobile apps' and the association files' store ports.
    public let tenancy: TenancyPorts
    /// ZevID accounts' store ports.
    public let accounts: AccountsPorts

    /// - Parameters:
    ///   - configuration: validated configuration.
    ///   - store: the PostgreSQL store (shared by any number of instances).
    ///   - clock: the source of "now" (tests inject a `ManualClock`).
    ///   - passwordHasher: Argon2id parameters (tests may use cheaper ones).
    ///   - log: where log lines go.
    public init(
        configuration: ServerConfiguration, store: PostgresStore, clock: any Clock = SystemClock(),
        passwordHasher: PasswordHasher = PasswordHasher(), log: any LogSink = StandardErrorLog()
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.passwordHasher = passwordHasher
        self.log = log
        self.outboundSlots = OutboundSlots()
        self.secrets = OpenSSLSecrets()
        self.roundTrip = RoundTripPorts(store)
        self.tenancy = TenancyPorts(store)
        self.accounts = AccountsPorts(store)
    }

    /// A context over explicit ports, e.g. fakes in tests; `store` remains for handlers not yet moved to ports.
    public init(
        configuration: ServerConfiguration, store: PostgresStore, roundTrip: RoundTripPorts, tenancy: TenancyPorts,
        accounts: AccountsPorts, secrets: any Secrets = OpenSSLSecrets(), clock: any Clock = SystemClock(),
        passwordHasher: PasswordHasher = PasswordHasher(), log: any LogSink = StandardErrorLog()
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.passwordHasher = passwordHasher
        self.log = log
        self.outboundSlots = OutboundSlots()
        self.secrets = secrets
        self.roundTrip = roundTrip
        self.tenancy = tenancy
        self.accounts = accounts
    }
}

/// The ZevAuth HTTP application: every route, behind one error funnel and the access log. Usable
/// in-process (`handle(_:)`) or behind `HTTPServer`.
public struct ZevAuthApp: HTTPHandler {
    public let context: ServerContext
    private let router: Router

    /// Builds the routes: each area registers its own (`Routes+*.swift`).
    public init(context: ServerContext) {
        self.context = context
        var routes = Routes(context: context)
        routes.registerRoundTrip()
        routes.registerAssociation()
        routes.registerSessions()
        routes.registerAccounts()
        routes.registerOperator()
        self.router = routes.router
    }

    /// The registered routes (method, pattern), for the OpenAPI consistency test.
    public var routes: [(method: String, pattern: String)] { router.routes }

    /// Answers one request and writes one access-log line: method, path (never the query: it carries
    /// codes), status, duration in milliseconds.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let response = router.handle(request)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        context.log.write("\(request.method) \(Self.loggablePath(request.path)) \(response.status) \(String(format: "%.1f", elapsed))ms")
        return response
    }

    /// The path with anything that is not a plain path character replaced, so a log line cannot be forged
    /// or carry an arbitrary payload.
    static func loggablePath(_ path: String) -> String {
        String(
            path.prefix(200).unicodeScalars.map { scalar -> Character in
                scalar.isASCII && scalar.value >= 0x21 && scalar.value < 0x7F ? Character(scalar) : "?"
            })
    }

    /// The one error funnel: a thrown error becomes 503 `temporarily_unavailable` when PostgreSQL is out of
    /// reach, else 500 `server_error`; the log names the error's kind and SQLSTATE, never its inputs.
    ///
    /// A value PostgreSQL's `text` cannot hold (SQLSTATE 22021) is the request's fault, not the server's:
    /// 400 `invalid_request`. Request values are checked where they are decoded (`StorableText`), so this
    /// is a second line for any edge that misses one, logged apart from database errors.
    static func funnel(_ log: any LogSink, _ body: () throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try body()
        } catch let error as StoreUnavailable {
            log.write("error store unavailable reason=\(error.reason)")
            var response = Wire.error(.temporarilyUnavailable, "The service is briefly unavailable. Try again.", status: 503)
            response.headers.set("Retry-After", "1")
            return response
        } catch StoreError.unstorableInput {
            log.write("refused input sqlstate=22021")
            return Wire.error(.invalidRequest, "The request holds a character no field accepts.", status: 400)
        } catch let error as PostgresError where error.sqlState == .characterNotInRepertoire {
            log.write("refused input sqlstate=\(error.sqlState?.rawValue ?? "-")")
            return Wire.error(.invalidRequest, "The request holds a character no field accepts.", status: 400)
        } catch let error as PostgresError {
            log.write("error postgres kind=\(error.kind) sqlstate=\(error.sqlState?.rawValue ?? "-") constraint=\(error.constraint ?? "-")")
            if error.kind == .connection || error.kind == .poolTimeout {
                var response = Wire.error(.temporarilyUnavailable, "The service is briefly unavailable. Try again.", status: 503)
                response.headers.set("Retry-After", "1")
                return response
            }
            return Wire.error(.serverError, "Something went wrong on our side.", status: 500)
        } catch {
            log.write("error \(String(describing: type(of: error)))")
            return Wire.error(.serverError, "Something went wrong on our side.", status: 500)
        }
    }
}

/// `GET /v1/auth/session` (docs/protocol.md#current-session): the session and the safe user fields for a bearer
/// access token; 401 otherwise.
struct SessionHandlers: Sendable {
    let context: ServerContext

    func current(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let token = Wire.bearer(request),
            let session = try CurrentSession(store: context.roundTrip.currentSession, secrets: context.secrets)(
                accessToken: token, now: context.clock.now())
        else {
            var response = Wire.error(.invalidToken, "The access token is invalid or expired.", status: 401)
            response.headers.set("WWW-Authenticate", "Bearer error=\"invalid_token\"")
            return response
        }
        return Wire.json(status: 200, CurrentSessionBody(session: session))
    }
}
