import HTTPServer

extension Routes {
    /// Mobile apps, association files (generated, served, checked) and domain verification (docs/protocol.md#apps).
    mutating func registerAssociation() {
        let apps = AppHandlers(context: context)
        add("POST", "/v1/admin/apps") { request, _ in try apps.create(request) }
        add("GET", "/v1/admin/apps") { request, _ in try apps.list(request) }
        add("GET", "/v1/admin/apps/{id}") { request, parameters in try apps.get(request, id: parameters["id"] ?? "") }
        add("PATCH", "/v1/admin/apps/{id}") { request, parameters in try apps.patch(request, id: parameters["id"] ?? "") }
        add("DELETE", "/v1/admin/apps/{id}") { request, parameters in try apps.delete(request, id: parameters["id"] ?? "") }
        add("POST", "/v1/admin/apps/{id}/check") { request, parameters in try apps.checkAgain(request, id: parameters["id"] ?? "") }
        add("GET", "/v1/admin/association-files") { request, _ in try apps.associationFiles(request) }
        add("GET", "/.well-known/apple-app-site-association") { request, _ in try apps.serve(request, appleFile: true) }
        add("GET", "/.well-known/assetlinks.json") { request, _ in try apps.serve(request, appleFile: false) }
    }
}
