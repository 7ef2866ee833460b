import HTTPServer
import Postgres
import PostgresStore
import Testing

@testable import ZevAuthServer

/// Which routes leave the HTTP workers (docs/operations.md, "Work queues"), and the pool size that follows
/// the thread count (docs/operations.md, "Database connections").
@Suite struct WorkPlacementTests {
    static func app(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> ZevAuthApp {
        var configuration = ServerConfiguration(
            databaseURL: "postgresql://unused.invalid/zevauth", issuer: "https://auth.example.com",
            operatorToken: "zop_work_placement_test_operator_token_0123")
        configure(&configuration)
        let context = ServerContext(
            configuration: configuration, store: PostgresStore(pool: PostgresPool(url: configuration.databaseURL, size: 1)))
        return ZevAuthApp(context: context)
    }

    /// The table names only registered routes, so a renamed route cannot silently fall back to inline.
    @Test func everyQueuedRouteIsRegistered() {
        let registered = Set(Self.app().routes.map { "\($0.method) \($0.pattern)" })
        #expect(Routes.passwordHashingRoutes.subtracting(registered).isEmpty)
        #expect(Routes.outboundFetchRoutes.subtracting(registered).isEmpty)
        #expect(Routes.inlineRoutes.subtracting(registered).isEmpty)
        #expect(Routes.hotDatabaseRoutes.subtracting(registered).isEmpty)
        #expect(Routes.passwordHashingRoutes.isDisjoint(with: Routes.outboundFetchRoutes))
        #expect(Routes.hotDatabaseRoutes.isDisjoint(with: Routes.inlineRoutes.union(Routes.passwordHashingRoutes)))
    }

    @Test(arguments: [
        ("POST", "/v1/auth/zevid/signin", "password"), ("POST", "/account/signin", "password"),
        ("POST", "/account/signup", "password"), ("POST", "/account/password", "password"),
        ("POST", "/v1/admin/users", "password"), ("POST", "/v1/admin/apps/app_1/check", "outbound"),
        ("POST", "/v1/admin/domains/example.com/verify", "outbound"), ("POST", "/v1/admin/apps", "outbound"),
        ("POST", "/v1/auth/handoff/exchange", "budget"), ("POST", "/v1/auth/session/refresh", "budget"),
        ("POST", "/oauth2/token", "database"), ("GET", "/v1/auth/zevid/start", "budget"),
        ("GET", "/oauth2/authorize", "database"), ("GET", "/v1/auth/zevid/signin", "database"),
        ("GET", "/.well-known/oauth-authorization-server", "inline"),
        ("GET", "/.well-known/openid-configuration", "inline"), ("GET", "/.well-known/jwks.json", "database"),
        ("GET", "/readyz", "database"),
        ("GET", "/healthz", "inline"), ("GET", "/nowhere", "inline"),
    ])
    func requestsRunWhereTheTableSays(method: String, path: String, expected: String) {
        let app = Self.app()
        let placement = app.placement(for: HTTPRequest(method: method, path: path))
        switch placement {
        case .inline: #expect(expected == "inline")
        case .inlineWithin(let budget, let otherwise):
            #expect(expected == "budget")
            #expect(budget === app.context.workQueues.inlineDatabase)
            #expect(otherwise === app.context.workQueues.database)
        case .queue(let queue):
            #expect(queue.name == expected)
            let queues = app.context.workQueues
            let named = ["password": queues.passwordHashing, "outbound": queues.outboundFetch, "database": queues.database]
            #expect(queue === named[expected])
        }
    }

    @Test func passwordQueueHasOneThreadPerConcurrentHash() {
        #expect(Self.app().context.workQueues.passwordHashing.threads == 2)
        #expect(Self.app { $0.passwordHashConcurrency = 3 }.context.workQueues.passwordHashing.threads == 3)
    }

    /// Half the HTTP workers may run the hot path's database requests at once; one shared connection each.
    @Test func theInlineBudgetIsHalfTheWorkers() {
        #expect(Self.app().context.workQueues.inlineDatabase.limit == 8)
        #expect(Self.app { $0.httpThreads = 5 }.context.workQueues.inlineDatabase.limit == 2)
        #expect(Self.app { $0.httpThreads = 1 }.context.workQueues.inlineDatabase.limit == 1)
    }

    @Test func poolSizeFollowsTheThreadsUnlessSet() throws {
        let base = [
            "ZEVAUTH_DATABASE_URL": "postgresql://db.invalid/zevauth", "ZEVAUTH_ISSUER": "https://auth.example.com",
            "ZEVAUTH_OPERATOR_TOKEN": "zop_work_placement_test_operator_token_0123",
        ]
        #expect(try ConfigurationLoader.load(environment: base, arguments: []).effectiveDatabasePoolSize == 16 + 2 + 4 + 4 + 8)
        var threads = base
        threads["ZEVAUTH_HTTP_THREADS"] = "8"
        threads["ZEVAUTH_PASSWORD_HASH_CONCURRENCY"] = "4"
        #expect(try ConfigurationLoader.load(environment: threads, arguments: []).effectiveDatabasePoolSize == 8 + 4 + 4 + 4 + 4)
        threads["ZEVAUTH_DATABASE_POOL_SIZE"] = "12"
        #expect(try ConfigurationLoader.load(environment: threads, arguments: []).effectiveDatabasePoolSize == 12)
    }
}
