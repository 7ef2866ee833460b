import Encoding
import HTTPServer

extension Routes {
    /// Health, the hosted sign-in, the exchange, the session, and the round trip's admin calls.
    mutating func registerRoundTrip() {
        let context = self.context
        let signIn = SignInFlow(context: context)
        let exchange = ExchangeHandler(context: context)
        let admin = AdminHandlers(context: context)
        let sessions = SessionHandlers(context: context)
        add("GET", "/healthz") { _, _ in ConstantDocuments.health(status: 200, ConstantDocuments.healthy) }
        add("GET", "/readyz") { _, _ in
            context.roundTrip.readiness.isReady()
                ? ConstantDocuments.health(status: 200, ConstantDocuments.ready)
                : ConstantDocuments.health(status: 503, ConstantDocuments.notReady)
        }
        add("GET", Pages.stylesheetPath) { _, _ in
            HTTPResponse(
                status: 200,
                headers: HTTPHeaders([("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "public, max-age=3600")]),
                body: Array(Pages.stylesheet.utf8))
        }
        add("GET", "/v1/auth/zevid/start") { request, _ in try signIn.start(request, standardEndpoint: false) }
        add("GET", "/oauth2/authorize") { request, _ in try signIn.start(request, standardEndpoint: true) }
        // RP-initiated logout (docs/protocol.md, "RP-initiated logout").
        let logout = LogoutHandler(context: context)
        add("GET", LogoutHandler.path) { request, _ in try logout.get(request) }
        add("POST", LogoutHandler.path) { request, _ in try logout.post(request) }
        add("GET", "/v1/auth/zevid/signin") { request, _ in try signIn.signInPage(request) }
        add("POST", "/v1/auth/zevid/signin") { request, _ in try signIn.signIn(request) }
        add("GET", "/v1/auth/zevid/consent") { request, _ in try signIn.consentPage(request) }
        add("POST", "/v1/auth/zevid/consent") { request, _ in try signIn.consent(request) }
        add("POST", "/v1/auth/handoff/exchange") { request, _ in try exchange.handle(request) }
        add("GET", "/v1/auth/session") { request, _ in try sessions.current(request) }
        add("POST", "/v1/admin/projects") { request, _ in try admin.createProject(request) }
        add("POST", "/v1/admin/users") { request, _ in try admin.createUser(request) }
        add("POST", "/v1/admin/callbacks") { request, _ in try admin.addCallback(request) }
        add("GET", "/v1/admin/callbacks") { request, _ in try admin.listCallbacks(request) }
        add("DELETE", "/v1/admin/callbacks/{id}") { request, parameters in try admin.deleteCallback(request, id: parameters["id"] ?? "") }
        add("POST", "/v1/admin/domains") { request, _ in try admin.addDomain(request) }
        add("GET", "/v1/admin/domains") { request, _ in try admin.listDomains(request) }
        add("POST", "/v1/admin/domains/{domain}/verify") { request, parameters in
            try admin.verifyDomain(request, domain: parameters["domain"] ?? "")
        }
    }
}
