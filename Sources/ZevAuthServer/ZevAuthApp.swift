import Authorize
import Crypto
import Fetch
import Foundation
import HTTPServer
import PasswordHashing
import PostgresStore

/// Everything a handler needs, shared read-only by all request threads.
public struct ServerContext: Sendable {
    public let configuration: ServerConfiguration
    /// The database, for composition only: the start-up migration check, housekeeping and the pool gauge.
    /// No handler reads it; handlers reach storage only through the ports below.
    public let store: PostgresStore
    public let clock: any Clock
    public let passwordHasher: PasswordHasher
    public let log: any LogSink
    /// Bounds request-triggered outbound fetches (shared by every copy of this context).
    public let outboundSlots: OutboundSlots
    /// Where slow handlers run off the HTTP workers (`Routes.placement(_:_:)`).
    public let workQueues: WorkQueues
    /// Fresh tokens and their digests (OpenSSL in production).
    public let secrets: any Secrets
    /// The round trip's and the sessions' store ports.
    public let roundTrip: RoundTripPorts
    /// Tenancy's, the mobile apps' and the association files' store ports.
    public let tenancy: TenancyPorts
    /// ZevID accounts' store ports.
    public let accounts: AccountsPorts
    /// The server's metrics, served on the metrics listener (docs/operations.md, "Metrics").
    public let metrics: Metrics
    /// The email outbox's drainer (docs/operations.md, "Outbound email"): pages queue and kick it.
    public let mail: MailDrainer
    /// Upstream OpenID providers (docs/federation.md): discovery, keys, the token endpoint, ID tokens.
    public let upstream: any UpstreamAuthority

    /// - Parameters:
    ///   - configuration: validated configuration.
    ///   - store: the PostgreSQL store (shared by any number of instances).
    ///   - clock: the source of "now" (tests inject a `ManualClock`).
    ///   - passwordHasher: Argon2id parameters (tests may use cheaper ones).
    ///   - log: where log lines go (wrapped in a `StructuredLog` of the configured format).
    public init(
        configuration: ServerConfiguration, store: PostgresStore, clock: any Clock = SystemClock(),
        passwordHasher: PasswordHasher = PasswordHasher(), log: any LogSink = StandardErrorLog()
    ) {
        self.init(
            configuration: configuration, store: store,
            roundTrip: RoundTripPorts(store, issuer: configuration.issuer, encryptionKey: configuration.encryptionKey, clock: clock),
            tenancy: TenancyPorts(store),
            accounts: AccountsPorts(store, mailScope: configuration.mail.scope), clock: clock, passwordHasher: passwordHasher, log: log)
    }

    /// A context over explicit ports, e.g. fakes in tests (`store` then only feeds the pool gauge).
    public init(
        configuration: ServerConfiguration, store: PostgresStore, roundTrip: RoundTripPorts, tenancy: TenancyPorts,
        accounts: AccountsPorts, secrets: any Secrets = OpenSSLSecrets(), clock: any Clock = SystemClock(),
        passwordHasher: PasswordHasher = PasswordHasher(), log: any LogSink = StandardErrorLog(), upstream: (any UpstreamAuthority)? = nil
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.passwordHasher = passwordHasher
        self.log = StructuredLog(log, format: configuration.logFormat)
        self.metrics = Metrics.over(store)
        self.outboundSlots = OutboundSlots()
        self.workQueues = WorkQueues(configuration: configuration, pool: store.pool)
        self.secrets = secrets
        self.roundTrip = roundTrip
        self.tenancy = tenancy
        let delivery: MailDelivery =
            configuration.mail.smtp.map { .smtp(SMTPSender(configuration: $0)) }
            ?? configuration.mail.outboxDirectory.map { .directory($0, printCodes: configuration.mail.printCodes) } ?? .none
        let mail = MailDrainer(
            store: store.email.scoped(configuration.mail.scope), delivery: delivery, settings: configuration.mail,
            sealer: Self.mailSealer(configuration),
            clock: clock, log: self.log, metrics: metrics)
        self.mail = mail
        var accounts = accounts
        accounts.notices = KickingNotices(inner: accounts.notices, drainer: mail)
        self.accounts = accounts
        self.upstream = upstream ?? Self.liveUpstream(configuration, providers: tenancy.providers, clock: clock)
    }

    /// The upstream providers over the outbound fetcher, secrets opened under `ZEVAUTH_ENCRYPTION_KEY` (without
    /// it no sealed secret opens, and every provider is unavailable).
    static func liveUpstream(_ configuration: ServerConfiguration, providers store: any UpstreamProviderStore, clock: any Clock)
        -> UpstreamAuthorityLive
    {
        let providers = UpstreamProviders(
            store: store, sealer: AESGCMSealer(key: configuration.encryptionKey ?? processMailKey), keys: OpenSSLP256Keys())
        return UpstreamAuthorityLive(
            fetcher: HTTPSFetcher(configuration: configuration.outbound), providers: providers,
            minter: AppleClientSecretMinter(providers: providers), clock: clock)
    }

    /// A key for codes in the outbox when the server has no `ZEVAUTH_ENCRYPTION_KEY`: random per process,
    /// so only this process can send them (docs/operations.md, "Outbound email").
    static let processMailKey: [UInt8] = (try? Crypto.randomBytes(32)) ?? Array(repeating: 0, count: 32)

    /// AES-256-GCM for codes in the outbox: under the deployment's key, else the process's own.
    static func mailSealer(_ configuration: ServerConfiguration) -> any SecretSealing {
        AESGCMSealer(key: configuration.encryptionKey ?? processMailKey)
    }

    /// The sealer of codes in the outbox.
    var codeSealer: any SecretSealing { Self.mailSealer(configuration) }
}

/// The ZevAuth HTTP application: every route, behind one error funnel and the access log. Usable
/// in-process (`handle(_:)`) or behind `HTTPServer`.
public struct ZevAuthApp: HTTPHandler {
    public let context: ServerContext
    private let router: Router
    /// This router's HTTP metrics (preallocated per route template; recorded without a lock).
    private let httpMetrics: HTTPMetrics

    /// Builds the routes: each area registers its own (`Routes+*.swift`).
    public init(context: ServerContext) {
        self.context = context
        var routes = Routes(context: context)
        routes.registerRoundTrip()
        routes.registerConsole()
        routes.registerAssociation()
        routes.registerSessions()
        routes.registerAccounts()
        routes.registerOperator()
        routes.registerMembers()
        routes.registerAudit()
        routes.registerSigningKeys()
        routes.registerProviders()
        routes.registerWebClients()
        routes.registerConsoleWebClients()
        self.router = routes.router
        self.httpMetrics = context.metrics.httpTable(templates: routes.router.templates)
    }

    /// Where `handle(_:)` runs for `request` behind `HTTPServer`: the route's placement (`Routes`).
    public func placement(for request: HTTPRequest) -> Placement { router.placement(for: request) }

    /// The registered routes (method, pattern), for the OpenAPI consistency test.
    public var routes: [(method: String, pattern: String)] { router.routes }

    /// Answers one request (docs/operations.md, "Logs" and "Request ids"): resolves its request id, runs the
    /// matched route with that id as the thread's current request (so every line logged meanwhile carries
    /// it), echoes it in `X-Request-Id` on every answer (404 and 405 included), writes one access line
    /// (route template, never the raw target or query) and counts the request in the metrics.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let requestID = RequestID.of(request, configuration: context.configuration)
        let match = router.match(request)
        var response = CurrentRequest.with(requestID) { match.respond() }
        let elapsed = Int(clamping: DispatchTime.now().uptimeNanoseconds &- started)
        response.headers.set(RequestID.header, requestID)
        let method = HTTPMethodLabel.index(request.method)
        httpMetrics.record(route: httpMetrics.routeSlot(match.templateIndex), method: method, status: response.status, nanoseconds: elapsed)
        context.log.access(
            AccessRecord(
                requestID: requestID, method: HTTPMethodLabel.all[method], route: match.template ?? AccessRecord.unmatchedRoute,
                status: response.status, durationMilliseconds: Double(elapsed) / 1_000_000,
                client: ClientAddress.of(request, configuration: context.configuration)))
        return response
    }

    /// The one error funnel: a thrown error becomes an `ErrorAnswer` rendered by `ErrorRenderer` — 503
    /// `temporarily_unavailable` with `Retry-After: 1` when the database is out of reach, else 500
    /// `server_error`. What happened is the answer's debug detail: written to the log (the error's kind and
    /// SQLSTATE, never its inputs), never sent.
    ///
    /// A value PostgreSQL's `text` cannot hold (SQLSTATE 22021) is the request's fault, not the server's:
    /// 400 `invalid_request`. Request values are checked where they are decoded (`StorableText`), so this
    /// is a second line for any edge that misses one, logged apart from database errors.
    ///
    /// A thrown `ErrorAnswer` is rendered as it is (a handler may throw one instead of returning it).
    /// - Parameter place: where the answer is rendered: JSON by default, the hosted error page for a route
    ///   a person sees in the browser.
    static func funnel(_ log: any LogSink, at place: ErrorPlace = .api, _ body: () throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try body()
        } catch {
            return Wire.error(answer(for: error), at: place, log: log)
        }
    }

    /// The answer for an error a handler threw (see `funnel`).
    static func answer(for error: any Error) -> ErrorAnswer {
        let unstorable = ErrorAnswer(
            .invalidRequest, "The request holds a character no field accepts.", debugDetail: "refused input sqlstate=22021")
        // The stores map their errors at their edge (`PostgresEdge`); `domain` is the same mapping for a
        // statement of `ServerContext.store` not yet run through it.
        switch PostgresEdge.domain(error) {
        case let answer as ErrorAnswer:
            return answer
        case let error as StoreUnavailable:
            return .unavailable(debugDetail: "store unavailable reason=\(error.reason)")
        case StoreError.unstorableInput:
            return unstorable
        case let fault as StoreFault:
            return .serverError(debugDetail: fault.logDetail)
        default:
            return .serverError(debugDetail: "kind=\(String(describing: type(of: error)))")
        }
    }
}

/// `GET /v1/auth/session` (docs/protocol.md#current-session): the session and the safe user fields for a bearer
/// access token; 401 otherwise.
struct SessionHandlers: Sendable {
    let context: ServerContext

    func current(_ request: HTTPRequest) throws -> HTTPResponse {
        // `Authorization: DPoP` with a proof for a DPoP-bound token (docs/dpop.md, "Resources").
        var presented: PresentedAccessToken?
        switch PresentedAccessToken.dpop(request, context: context) {
        case .refused(let refusal): return refusal
        case .presented(let dpop): presented = dpop
        case .none: presented = Wire.bearer(request).map { PresentedAccessToken(token: $0, proof: nil) }
        }
        guard let presented,
            let session = try CurrentSession(store: context.roundTrip.currentSession, secrets: context.secrets)(
                accessToken: presented.token, now: context.clock.now())
        else {
            if presented?.proof != nil {
                return PresentedAccessToken.refusal(OAuthError(.invalidToken, "The access token is invalid or expired."), context: context)
            }
            var response = Wire.error(.invalidToken, "The access token is invalid or expired.")
            response.headers.set("WWW-Authenticate", "Bearer error=\"invalid_token\"")
            return response
        }
        if let refusal = try presented.bindingRefusal(session, context: context) { return refusal }
        let answer = Wire.json(status: 200, CurrentSessionBody(session: session))
        return presented.proof == nil ? answer : DPoPProofs.withNonce(answer, context: context)
    }
}
