import HTTPServer

extension Routes {
    /// Refresh, revoke, introspection and the standard OAuth surface (issue 4).
    mutating func registerSessions() {
    }
}
