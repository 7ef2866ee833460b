import HTTPServer
import Postgres

/// The route table under construction. Every handler goes through `ZevAuthApp.funnel`, so a thrown error
/// becomes a clean 500/503 and a log line with no inputs in it.
struct Routes {
    let context: ServerContext
    private(set) var router = Router()

    init(context: ServerContext) {
        self.context = context
    }

    /// Adds a route whose handler may throw; it runs where `Routes.placement(_:_:)` says.
    mutating func add(
        _ method: String, _ pattern: String, _ body: @escaping @Sendable (HTTPRequest, [String: String]) throws -> HTTPResponse
    ) {
        let log = context.log
        let page = Self.isPage(pattern)
        router.add(method, pattern, placement: placement(method, pattern)) { request, parameters in
            // A person in the browser sees the hosted error page, unless the client asked for JSON.
            let place: ErrorPlace = page && !Wire.wantsJSON(request) ? .page : .api
            return ZevAuthApp.funnel(log, at: place) { try body(request, parameters) }
        }
    }

    /// Whether `pattern` is a route a person opens in the browser (the hosted sign-in, consent, second
    /// factor and account pages, and the starts that lead to them), whose unexpected errors are pages.
    static func isPage(_ pattern: String) -> Bool {
        pattern == "/oauth2/authorize" || pattern == "/account" || pattern.hasPrefix("/account/")
            || pattern.hasPrefix("/v1/auth/zevid/") || pattern == LogoutHandler.path || pattern == "/console"
            || pattern.hasPrefix("/console/") || pattern.hasPrefix("/oauth2/upstream/")
    }

    // MARK: Where slow handlers run (docs/decisions.md, "Slow work leaves the HTTP workers")

    /// The routes that hash or verify a password with Argon2id (about 50 ms and 19 MiB each): they run on
    /// `WorkQueues.passwordHashing`, whose thread count bounds the hashes computed at once.
    static let passwordHashingRoutes: Set<String> = [
        "POST /v1/auth/zevid/signin",
        "POST /account/signin",
        "POST /account/signup",
        "POST /account/password",
        "POST /v1/admin/users",
        // The email flows: a new password is hashed, an address change confirms the password.
        "POST /account/reset/password",
        "POST /account/email",
        // Removing a passkey confirms the password when the sign-in is older than 10 minutes.
        "POST /account/passkeys/remove",
    ]

    /// The routes that fetch from the outside over HTTPS while the request waits (association files, the
    /// domain-verification file): they run on `WorkQueues.outboundFetch`.
    static let outboundFetchRoutes: Set<String> = [
        "POST /v1/admin/apps",
        "PATCH /v1/admin/apps/{id}",
        "POST /v1/admin/apps/{id}/check",
        "POST /v1/admin/domains/{domain}/verify",
        // The console's buttons that run the same fetches.
        "POST /console/projects/{id}/{env}/apps",
        "POST /console/projects/{id}/{env}/apps/{app}/check",
        "POST /console/projects/{id}/{env}/domains/{domain}/verify",
        // "Continue with NAME": discovery, then the upstream's token endpoint and key set (docs/federation.md).
        "POST /oauth2/upstream/start",
        "GET /oauth2/upstream/callback",
    ]

    /// The routes that never wait on PostgreSQL (or anything else): they run on the HTTP worker that read
    /// the request. Every other route runs on `WorkQueues.database`, so a database that stops answering
    /// holds up queue threads, never the HTTP workers, and `/healthz` still answers at once
    /// (docs/decisions.md, "The database never holds an HTTP worker").
    static let inlineRoutes: Set<String> = [
        "GET /healthz",
        // The RFC 8414 / OpenID discovery document: bytes encoded once at start (`ConstantDocuments`).
        "GET /.well-known/oauth-authorization-server",
        "GET /.well-known/openid-configuration",
        "GET " + Pages.stylesheetPath,
        "GET " + ConsolePages.stylesheetPath,
        "GET " + ConsolePages.scriptPath,
        "GET " + UpstreamPages.appleLogoPath,
        "GET " + FormPostResponse.scriptPath,
    ]

    /// The hot path's database routes: one short statement each, never an outbound fetch (so not the token
    /// endpoint, which may fetch a web client's key set) (docs/performance.md). They run on the HTTP
    /// worker that read the request while fewer than `ServerConfiguration.inlineDatabaseRequests` do, and
    /// on the database queue otherwise (`Placement.inlineWithin`), so the common case skips the hand-over
    /// to a queue thread and back, and a stalled database still holds at most half the workers.
    static let hotDatabaseRoutes: Set<String> = [
        "POST /v1/auth/handoff/exchange",
        "POST /v1/auth/session/refresh",
        "GET /v1/auth/zevid/start",
    ]

    /// Where the handler of `method` `pattern` runs: the tables above; every other route on the database
    /// queue.
    func placement(_ method: String, _ pattern: String) -> Placement {
        let route = method + " " + pattern
        if Self.passwordHashingRoutes.contains(route) { return .queue(context.workQueues.passwordHashing) }
        if Self.outboundFetchRoutes.contains(route) { return .queue(context.workQueues.outboundFetch) }
        if Self.inlineRoutes.contains(route) { return .inline }
        if Self.hotDatabaseRoutes.contains(route) {
            return .inlineWithin(context.workQueues.inlineDatabase, otherwise: context.workQueues.database)
        }
        return .queue(context.workQueues.database)
    }
}

/// The bounded work queues of one server context, where slow handlers run off the HTTP workers.
public struct WorkQueues: Sendable {
    /// Argon2id hashing: `ServerConfiguration.passwordHashConcurrency` threads, so at most that many hashes
    /// (each holding 19 MiB) run at once; up to 64 more requests wait, then 503 with `Retry-After: 1`.
    public let passwordHashing: WorkQueue
    /// Outbound HTTPS fetches inside a request: `ServerConfiguration.outboundFetchThreads` threads, 16 waiting.
    public let outboundFetch: WorkQueue
    /// Every route that may wait on PostgreSQL: `ServerConfiguration.httpThreads` threads (each with a pooled
    /// connection of its own), `databaseQueueCapacity` waiting, then 503 with `Retry-After: 1`.
    public let database: WorkQueue
    /// Requests that may wait for a database-queue thread.
    public static let databaseQueueCapacity = 512
    /// The hot path's database requests running on the HTTP workers (`Routes.hotDatabaseRoutes`): at most
    /// `ServerConfiguration.inlineDatabaseRequests` at once, each on a shared connection of `pool`.
    public let inlineDatabase: InlineBudget

    /// The queues for `configuration`; their threads live as long as the queues.
    /// - Parameters:
    ///   - configuration: sizes the queues and the inline budget.
    ///   - pool: the pool whose shared connections the inline database requests use.
    public init(configuration: ServerConfiguration, pool: PostgresPool) {
        inlineDatabase = InlineBudget(limit: configuration.inlineDatabaseRequests) { handler in
            pool.sharedConnectionsOnly(handler)
        }
        passwordHashing = WorkQueue(
            name: "password", threads: configuration.passwordHashConcurrency, capacity: 64)
        outboundFetch = WorkQueue(
            name: "outbound", threads: ServerConfiguration.outboundFetchThreads, capacity: 16)
        database = WorkQueue(name: "database", threads: configuration.httpThreads, capacity: Self.databaseQueueCapacity)
    }
}
