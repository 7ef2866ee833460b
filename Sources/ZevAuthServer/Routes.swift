import HTTPServer

/// The route table under construction. Every handler goes through `ZevAuthApp.funnel`, so a thrown error
/// becomes a clean 500/503 and a log line with no inputs in it.
struct Routes {
    let context: ServerContext
    private(set) var router = Router()

    init(context: ServerContext) {
        self.context = context
    }

    /// Adds a route whose handler may throw.
    mutating func add(
        _ method: String, _ pattern: String, _ body: @escaping @Sendable (HTTPRequest, [String: String]) throws -> HTTPResponse
    ) {
        let log = context.log
        router.add(method, pattern) { request, parameters in
            ZevAuthApp.funnel(log) { try body(request, parameters) }
        }
    }
}
