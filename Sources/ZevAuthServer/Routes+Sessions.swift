import HTTPServer

extension Routes {
    /// Refresh, revoke, introspection, the standard OAuth surface, session settings and secret-key
    /// rotation.
    mutating func registerSessions() {
        let context = self.context
        let grants = SessionGrants(context: context)
        let standard = StandardOAuthHandlers(context: context)
        let admin = SessionAdminHandlers(context: context)
        add("POST", "/v1/auth/session/refresh") { request, _ in try grants.handleRefresh(request) }
        add("POST", "/v1/auth/session/revoke") { request, _ in try grants.handleRevoke(request) }
        let documents = ConstantDocuments(configuration: context.configuration)
        add("GET", "/.well-known/oauth-authorization-server") { _, _ in StandardOAuthHandlers.metadata(documents) }
        add("GET", "/.well-known/openid-configuration") { _, _ in StandardOAuthHandlers.metadata(documents) }
        let userInfo = UserInfoHandler(context: context)
        add("GET", "/oauth2/userinfo") { request, _ in try userInfo.handle(request) }
        add("POST", "/oauth2/userinfo") { request, _ in try userInfo.handle(request) }
        add("POST", "/oauth2/token") { request, _ in try standard.token(request) }
        add("POST", "/oauth2/revoke") { request, _ in try standard.revoke(request) }
        add("POST", "/oauth2/par") { request, _ in try standard.pushAuthorizationRequest(request) }
        add("POST", "/oauth2/introspect") { request, _ in try standard.introspect(request) }
        add("GET", "/v1/admin/settings") { request, _ in try admin.getSettings(request) }
        add("PATCH", "/v1/admin/settings") { request, _ in try admin.patchSettings(request) }
        add("POST", "/v1/admin/keys") { request, _ in try admin.createKey(request) }
        add("GET", "/v1/admin/keys") { request, _ in try admin.listKeys(request) }
        add("DELETE", "/v1/admin/keys/{id}") { request, parameters in try admin.revokeKey(request, id: parameters["id"] ?? "") }
    }
}
