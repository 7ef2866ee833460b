import Authorize
import Encoding
import Foundation
import HTTPServer

/// One of a web client's secrets as the admin API shows it: never the secret, only its last 4 characters.
/// `{"id","suffix","createdAt","revokedAt","expiresAt"}`, plus `clientSecret` in the one answer that mints it.
struct WebClientSecretBody: JSONEncodable {
    let secret: WebClientSecretRecord
    var clientSecret: String? = nil

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", secret.id)
            object.field("suffix", secret.suffix)
            object.field("createdAt", Wire.timestamp(secret.createdAt))
            object.field("revokedAt", secret.revokedAt.map(Wire.timestamp))
            object.field("expiresAt", secret.expiresAt.map(Wire.timestamp))
            object.fieldIfPresent("clientSecret", clientSecret)
        }
    }
}

/// A web client as the admin API and the console show it (docs/protocol.md, "Web clients"):
/// `{"clientId","name","redirectUris","postLogoutRedirectUris","tokenEndpointAuthMethod","jwks","jwksUri",
/// "requirePkce","requirePushedAuthorizationRequests","secrets","createdAt","updatedAt"}` (`jwks` the key set
/// as registered or `null`), plus `clientSecret` in the creation's answer only.
struct WebClientBody: JSONEncodable {
    let listed: ListedWebClient
    var clientSecret: String? = nil

    func encode(to writer: inout JSONWriter) {
        let client = listed.client
        writer.object { object in
            object.field("clientId", client.clientID)
            object.field("name", client.name)
            object.field("redirectUris", JSONValue.array(client.redirectURIs.map { .string($0) }))
            object.field("postLogoutRedirectUris", JSONValue.array(client.postLogoutRedirectURIs.map { .string($0) }))
            object.field("tokenEndpointAuthMethod", client.authMethod.rawValue)
            object.field("jwks", client.jwks.flatMap { try? JSONValue.parse(Array($0.utf8)) } ?? .null)
            object.field("jwksUri", client.jwksURI)
            object.field("requirePkce", client.requirePKCE)
            object.field("requirePushedAuthorizationRequests", client.requirePushedRequests)
            object.field("secrets") { writer in writer.array(listed.secrets.map { WebClientSecretBody(secret: $0) }) }
            object.field("createdAt", Wire.timestamp(client.createdAt))
            object.field("updatedAt", Wire.timestamp(client.updatedAt))
            object.fieldIfPresent("clientSecret", clientSecret)
        }
    }
}

/// The admin API's web clients (docs/protocol.md, "Web clients"; docs/openapi.yaml), authorised by the
/// environment's secret key as apps are: a client belongs to the key's environment, and another
/// environment's client is 404. Every change writes its audit row in its own transaction; a refused change
/// is recorded as the other admin calls' refusals are.
struct WebClientAdminHandlers: Sendable {
    let context: ServerContext

    private var admin: AdminHandlers { AdminHandlers(context: context) }
    private var registry: WebClients { WebClients(store: context.tenancy.webClients, secrets: context.secrets) }

    static let noClient = Wire.error(.notFound, "No web client with this id in this environment.")
    static let noSecret = Wire.error(.notFound, "The web client has no secret with this id.")
    static let lastSecret = Wire.error(
        .conflict, "This is the client's last live secret: rotate first, then revoke the old one.")

    static func invalid(_ problem: WebClientFieldProblem) -> HTTPResponse { AdminHandlers.invalidField(problem.field, problem.rule) }

    /// The body's members as `WebClientFields`, each of its JSON type; or the answer naming the first
    /// member of the wrong type, or a member that is not a client field (a description echoes no input).
    static func fields(_ body: JSONObjectBody) -> Result<WebClientFields, AdminHandlers.Stop> {
        typealias Member = WebClientFields.Member
        var fields = WebClientFields()
        func wrong(_ name: String, _ rule: String) -> Result<WebClientFields, AdminHandlers.Stop> {
            .failure(AdminHandlers.Stop(AdminHandlers.invalidField(name, rule)))
        }
        func strings(_ value: JSONValue) -> [String]? {
            guard case .array(let values) = value else { return nil }
            let strings = values.compactMap(\.stringValue)
            return strings.count == values.count ? strings : nil
        }
        for (name, value) in body.members {
            switch name {
            case Member.name:
                guard let text = value.stringValue else { return wrong(name, "must be a string") }
                fields.name = text
            case Member.redirectURIs:
                guard let list = strings(value) else { return wrong(name, "must be an array of strings") }
                fields.redirectURIs = list
            case Member.postLogoutRedirectURIs:
                guard let list = strings(value) else { return wrong(name, "must be an array of strings") }
                fields.postLogoutRedirectURIs = list
            case Member.authMethod:
                guard let text = value.stringValue else { return wrong(name, "must be a string") }
                fields.authMethod = text
            case Member.jwks:
                if case .null = value {
                    fields.jwks = .some(nil)
                } else {
                    guard value.isObject else { return wrong(name, "must be a JSON Web Key Set object or null") }
                    fields.jwks = .some(value)
                }
            case Member.jwksURI:
                if case .null = value {
                    fields.jwksURI = .some(nil)
                } else {
                    guard let text = value.stringValue else { return wrong(name, "must be a string or null") }
                    fields.jwksURI = .some(text)
                }
            case Member.requirePKCE:
                guard let flag = value.boolValue else { return wrong(name, "must be true or false") }
                fields.requirePKCE = flag
            case Member.requirePushedRequests:
                guard let flag = value.boolValue else { return wrong(name, "must be true or false") }
                fields.requirePushedRequests = flag
            default:
                return .failure(AdminHandlers.Stop(Wire.error(.invalidRequest, "The body has a member that is not a web client field.")))
            }
        }
        return .success(fields)
    }

    /// Whether a loopback `http` `jwksUri` may be registered: development with private outbound addresses
    /// allowed (the demo server; docs/protocol.md, "Web clients").
    private func allowHTTPKeySetURI(_ environment: EnvironmentRecord) -> Bool {
        environment.kind == .development && context.configuration.outbound.allowPrivate
    }

    /// The client `rawID` of `environment`, or nil (another environment's client is not found).
    private func client(_ rawID: String, of environment: EnvironmentRecord) throws -> ListedWebClient? {
        guard let listed = try context.tenancy.webClients.webClient(clientID: rawID), listed.client.environmentID == environment.id else {
            return nil
        }
        return listed
    }

    /// `GET /v1/admin/clients?cursor=&limit=` → `{"items": [WebClientBody…], "nextCursor"}` in creation order.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try admin.requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        let items = try context.tenancy.webClients.webClients(environmentID: environment.id, after: paging.cursor, limit: paging.limit + 1)
        let page = Array(items.prefix(paging.limit))
        return Wire.json(
            status: 200,
            ListBody(
                items: page.map { WebClientBody(listed: $0) }, nextCursor: items.count > paging.limit ? page.last?.client.clientID : nil))
    }

    /// `GET /v1/admin/clients/{id}` → `WebClientBody`; 404 for an unknown id or another environment's client.
    func show(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try admin.requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        guard let listed = try client(id, of: environment) else { return Self.noClient }
        return Wire.json(status: 200, WebClientBody(listed: listed))
    }

    /// `POST /v1/admin/clients {"name","redirectUris", …}` → 201 `WebClientBody` with `clientSecret`, the
    /// only time it is shown (none for `private_key_jwt`). 400 `invalid_request` naming the field that fails
    /// its rule (`WebClientColumns.parse`).
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try admin.requireEnvironment(request, action: "client.create") {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        let fields: WebClientFields
        switch Self.fields(body) {
        case .failure(let stop): return stop.response
        case .success(let value): fields = value
        }
        let columns: WebClientColumns
        switch WebClientColumns.parse(fields, over: nil, kind: environment.kind, allowHTTPKeySetURI: allowHTTPKeySetURI(environment)) {
        case .failure(let problem): return Self.invalid(problem)
        case .success(let value): columns = value
        }
        let created = try registry.create(environmentID: environment.id, columns, now: context.clock.now()) { clientID in
            try admin.audit.entry(caller, request, "client.create", target: clientID)
        }
        return Wire.json(status: 201, WebClientBody(listed: created.client, clientSecret: created.secret))
    }

    /// `PATCH /v1/admin/clients/{id}` with any of the client's fields → 200 `WebClientBody` (never a
    /// secret). 400 for a field that fails its rule or an empty body, 404 for an unknown id.
    func update(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try admin.requireEnvironment(request, action: "client.update", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        guard let existing = try client(id, of: environment) else { return Self.noClient }
        let fields: WebClientFields
        switch Self.fields(body) {
        case .failure(let stop): return stop.response
        case .success(let value): fields = value
        }
        if fields == WebClientFields() {
            return Wire.error(
                .invalidRequest,
                "The body changes nothing; a web client takes " + WebClientFields.Member.all.sorted().joined(separator: ", ") + ".")
        }
        let columns: WebClientColumns
        switch WebClientColumns.parse(
            fields, over: existing.client, kind: environment.kind, allowHTTPKeySetURI: allowHTTPKeySetURI(environment))
        {
        case .failure(let problem): return Self.invalid(problem)
        case .success(let value): columns = value
        }
        do {
            let updated = try context.tenancy.webClients.updateWebClient(
                clientID: existing.client.clientID, environmentID: environment.id, columns, now: context.clock.now(),
                audit: try admin.audit.entry(caller, request, "client.update", target: existing.client.clientID))
            return Wire.json(status: 200, WebClientBody(listed: updated))
        } catch WebClientRefusal.noClient {
            return Self.noClient
        }
    }

    /// `DELETE /v1/admin/clients/{id}` → 204; 404 for an unknown id. Its secrets, sign-ins in flight,
    /// codes and sessions go with it (sql/026).
    func delete(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try admin.requireEnvironment(request, action: "client.delete", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let existing = try client(id, of: environment) else { return Self.noClient }
        do {
            try context.tenancy.webClients.deleteWebClient(
                clientID: existing.client.clientID, environmentID: environment.id,
                audit: try admin.audit.entry(caller, request, "client.delete", target: existing.client.clientID))
            return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        } catch WebClientRefusal.noClient {
            return Self.noClient
        }
    }

    /// `POST /v1/admin/clients/{id}/secrets` (rotation) → 201 `WebClientSecretBody` with `clientSecret`,
    /// shown once; the client's other secrets keep working until revoked. 404 for an unknown id.
    func rotate(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try admin.requireEnvironment(request, action: "client.secret.rotate", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let existing = try client(id, of: environment) else { return Self.noClient }
        do {
            let rotated = try registry.rotate(
                clientID: existing.client.clientID, environmentID: environment.id, now: context.clock.now(),
                audit: try admin.audit.entry(caller, request, "client.secret.rotate", target: existing.client.clientID))
            return Wire.json(status: 201, WebClientSecretBody(secret: rotated.record, clientSecret: rotated.secret))
        } catch WebClientRefusal.noClient {
            return Self.noClient
        }
    }

    /// `DELETE /v1/admin/clients/{id}/secrets/{secretId}` → 200 `WebClientSecretBody` (with `revokedAt`);
    /// the secret stops working at once. 404 for an unknown client or secret; 409 `conflict` for the last
    /// live secret of a client that authenticates with a secret.
    func revokeSecret(_ request: HTTPRequest, id: String, secretID: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try admin.requireEnvironment(request, action: "client.secret.revoke", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let existing = try client(id, of: environment) else { return Self.noClient }
        do {
            let revoked = try context.tenancy.webClients.revokeWebClientSecret(
                clientID: existing.client.clientID, environmentID: environment.id, secretID: secretID.lowercased(),
                now: context.clock.now(),
                audit: try admin.audit.entry(caller, request, "client.secret.revoke", target: existing.client.clientID))
            return Wire.json(status: 200, WebClientSecretBody(secret: revoked))
        } catch WebClientRefusal.noClient {
            return Self.noClient
        } catch WebClientRefusal.noSecret {
            return Self.noSecret
        } catch WebClientRefusal.lastSecret {
            return Self.lastSecret
        }
    }
}

extension Routes {
    /// The web clients' admin calls, and the authorization endpoint's POST form.
    mutating func registerWebClients() {
        let handlers = WebClientAdminHandlers(context: context)
        add("GET", "/v1/admin/clients") { request, _ in try handlers.list(request) }
        add("POST", "/v1/admin/clients") { request, _ in try handlers.create(request) }
        add("GET", "/v1/admin/clients/{id}") { request, p in try handlers.show(request, id: p["id"] ?? "") }
        add("PATCH", "/v1/admin/clients/{id}") { request, p in try handlers.update(request, id: p["id"] ?? "") }
        add("DELETE", "/v1/admin/clients/{id}") { request, p in try handlers.delete(request, id: p["id"] ?? "") }
        add("POST", "/v1/admin/clients/{id}/secrets") { request, p in try handlers.rotate(request, id: p["id"] ?? "") }
        add("DELETE", "/v1/admin/clients/{id}/secrets/{secretId}") { request, p in
            try handlers.revokeSecret(request, id: p["id"] ?? "", secretID: p["secretId"] ?? "")
        }
        let authorizePost = AuthorizePost(context: context)
        add("POST", "/oauth2/authorize") { request, _ in try authorizePost.start(request) }
        registerFormPost()
    }
}
