import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// An upstream provider as the admin API and the console show it (docs/federation.md, "Providers"): never
/// a secret or the private key, only whether one is stored.
/// `{"id","kind","slug","displayName","issuer","clientId","hasClientSecret","teamId","keyId","hasPrivateKey",
/// "createdAt","updatedAt"}` (`teamId` and `keyId` are `null` for `google` and `oidc`).
struct ProviderBody: JSONEncodable {
    let provider: UpstreamProviderRecord

    init(_ provider: UpstreamProviderRecord) { self.provider = provider }

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", provider.id)
            object.field("kind", provider.kind.rawValue)
            object.field("slug", provider.slug)
            object.field("displayName", provider.displayName)
            object.field("issuer", provider.issuer)
            object.field("clientId", provider.clientID)
            object.field("hasClientSecret", provider.sealedClientSecret != nil)
            object.field("teamId", provider.appleTeamID)
            object.field("keyId", provider.appleKeyID)
            object.field("hasPrivateKey", provider.sealedApplePrivateKey != nil)
            object.field("createdAt", Wire.timestamp(provider.createdAt))
            object.field("updatedAt", Wire.timestamp(provider.updatedAt))
        }
    }
}

/// `P256KeyLoading` over OpenSSL: the DER loads as `Crypto.SigningKey` of type `.p256` (the loader of the
/// ID-token signing keys, which refuses any other key type or curve).
struct OpenSSLP256Keys: P256KeyLoading {
    func isP256PrivateKey(_ der: [UInt8]) -> Bool { (try? Crypto.SigningKey.load(pkcs8: der, type: .p256)) != nil }
}

/// The admin API's upstream providers (docs/federation.md, "Providers"; docs/openapi.yaml): the operator
/// manages the deployment's providers; the operator or a secret key of the project chooses which of them
/// the project's sign-in page shows. Every change writes its audit row in its own transaction; a refused
/// change is recorded as the other admin calls' refusals are.
struct ProviderAdminHandlers: Sendable {
    let context: ServerContext

    private var admin: AdminHandlers { AdminHandlers(context: context) }

    /// The use case, or nil without `ZEVAUTH_ENCRYPTION_KEY` (secrets could not be sealed).
    var providers: UpstreamProviders? {
        context.configuration.encryptionKey.map {
            UpstreamProviders(store: context.tenancy.providers, sealer: AESGCMSealer(key: $0), keys: OpenSSLP256Keys())
        }
    }

    static let noProvider = Wire.error(.notFound, "There is no provider with this id.")
    static let slugTaken = Wire.error(.conflict, "Another provider has this slug.")
    static let noProject = Wire.error(.notFound, "There is no such project.")

    static func invalid(_ problem: ProviderFieldProblem) -> HTTPResponse { AdminHandlers.invalidField(problem.field, problem.rule) }

    /// The operator's answer to a read instead, or nil when the bearer is the operator token (reads are
    /// not audited).
    private func readRefusal(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch try admin.actor(request) {
        case .none: return AdminHandlers.invalidToken
        case .environment: return Wire.error(.forbidden, "Only the operator token may do this.")
        case .operator: return nil
        }
    }

    /// The body's members other than `skipping`, each a string; or the answer naming the first that is not.
    private static func strings(_ body: JSONObjectBody, skipping: Set<String> = []) -> Result<[String: String], AdminHandlers.Stop> {
        var fields: [String: String] = [:]
        for (name, value) in body.members where !skipping.contains(name) {
            guard let text = value.stringValue else {
                // A member the kinds take is named; any other is not (a description echoes no request input).
                let known = UpstreamProviderKind.allCases.flatMap(ProviderFields.fields(of:))
                return .failure(
                    AdminHandlers.Stop(
                        known.contains(name)
                            ? AdminHandlers.invalidField(name, "must be a string")
                            : Wire.error(.invalidRequest, "The body has a member that is not a provider field.")))
            }
            fields[name] = text
        }
        return .success(fields)
    }

    // MARK: The deployment's providers (operator)

    /// `GET /v1/admin/providers?cursor=&limit=` → `{"items": [ProviderBody…], "nextCursor"}` in creation order.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = try readRefusal(request) { return refusal }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        let items = try context.tenancy.providers.providers(after: paging.cursor, limit: paging.limit + 1)
        let page = Array(items.prefix(paging.limit))
        return Wire.json(
            status: 200, ListBody(items: page.map(ProviderBody.init), nextCursor: items.count > paging.limit ? page.last?.id : nil))
    }

    /// `GET /v1/admin/providers/{id}` → `ProviderBody`; 404 for an unknown id.
    func show(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        if let refusal = try readRefusal(request) { return refusal }
        guard let provider = try context.tenancy.providers.provider(id: id.lowercased()) else { return Self.noProvider }
        return Wire.json(status: 200, ProviderBody(provider))
    }

    /// `POST /v1/admin/providers {"kind", …the kind's fields}` → 201 `ProviderBody`. 400 `invalid_request`
    /// naming the field that fails its rule (`ProviderInput.parse`), 409 `conflict` for a taken slug, 503
    /// without `ZEVAUTH_ENCRYPTION_KEY`.
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let caller: AdminCaller
        switch try admin.requireOperator(request, action: "provider.create") {
        case .failure(let stop): return stop.response
        case .success(let value): caller = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        guard case .value(let rawKind) = body.string(ProviderFields.kind), let kind = UpstreamProviderKind(rawValue: rawKind) else {
            return AdminHandlers.invalidField(ProviderFields.kind, "must be one of apple, google or oidc")
        }
        let fields: [String: String]
        switch Self.strings(body, skipping: [ProviderFields.kind]) {
        case .failure(let stop): return stop.response
        case .success(let value): fields = value
        }
        let input: ProviderInput
        switch ProviderInput.parse(fields, rules: rules(kind), creating: true) {
        case .failure(let problem): return Self.invalid(problem)
        case .success(let value): input = value
        }
        guard let providers else { throw StoreUnavailable(reason: "no_encryption_key") }
        do {
            let created = try providers.create(
                id: UUID().uuidString.lowercased(), kind: kind, input, now: context.clock.now(),
                audit: try admin.audit.entry(caller, request, "provider.create"))
            return Wire.json(status: 201, ProviderBody(created))
        } catch let problem as ProviderFieldProblem {
            return Self.invalid(problem)
        } catch ProviderRefusal.slugTaken {
            return Self.slugTaken
        }
    }

    func rules(_ kind: UpstreamProviderKind) -> ProviderInput.Rules {
        ProviderInput.Rules(kind: kind, allowHTTPIssuer: context.configuration.outbound.allowPrivate)
    }

    /// `PATCH /v1/admin/providers/{id}` with any of the provider's kind's fields → 200 `ProviderBody`. A
    /// secret is replaced only when given; `kind` cannot change (delete and create instead). 400 for a
    /// field that fails its rule or a body that changes nothing, 404 for an unknown id, 409 for a taken slug.
    func update(_ request: HTTPRequest, id rawID: String) throws -> HTTPResponse {
        let id = rawID.lowercased()
        let caller: AdminCaller
        switch try admin.requireOperator(request, action: "provider.update", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): caller = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        guard let existing = try context.tenancy.providers.provider(id: id) else { return Self.noProvider }
        if body.contains(ProviderFields.kind) {
            return AdminHandlers.invalidField(ProviderFields.kind, "cannot change: delete the provider and create another")
        }
        let fields: [String: String]
        switch Self.strings(body) {
        case .failure(let stop): return stop.response
        case .success(let value): fields = value
        }
        let input: ProviderInput
        switch ProviderInput.parse(fields, rules: rules(existing.kind), creating: false) {
        case .failure(let problem): return Self.invalid(problem)
        case .success(let value): input = value
        }
        if input.isEmpty {
            return Wire.error(
                .invalidRequest,
                "The body changes nothing; a \(existing.kind.rawValue) provider takes "
                    + ProviderFields.fields(of: existing.kind).joined(separator: ", ") + ".")
        }
        guard let providers else { throw StoreUnavailable(reason: "no_encryption_key") }
        do {
            let updated = try providers.update(
                id: id, input, now: context.clock.now(), audit: try admin.audit.entry(caller, request, "provider.update"))
            return Wire.json(status: 200, ProviderBody(updated))
        } catch let problem as ProviderFieldProblem {
            return Self.invalid(problem)
        } catch ProviderRefusal.slugTaken {
            return Self.slugTaken
        } catch ProviderRefusal.noProvider {
            return Self.noProvider
        }
    }

    /// `DELETE /v1/admin/providers/{id}` → 204; 404 for an unknown id. Every project stops showing it and
    /// every identity linked through it is unlinked (the accounts stay).
    func delete(_ request: HTTPRequest, id rawID: String) throws -> HTTPResponse {
        let id = rawID.lowercased()
        let caller: AdminCaller
        switch try admin.requireOperator(request, action: "provider.delete", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): caller = value
        }
        do {
            try context.tenancy.providers.deleteProvider(
                id: id, audit: try admin.audit.entry(caller, request, "provider.delete", target: id))
            return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        } catch ProviderRefusal.noProvider {
            return Self.noProvider
        }
    }

    // MARK: A project's shown providers (operator or the project's secret key)

    /// The caller allowed to read or set `projectID`'s providers, or the answer to send: 401 for no caller,
    /// 403 for a secret key of another project (a refused change, `action` given, is recorded).
    private func projectCaller(_ request: HTTPRequest, projectID: String, action: String?) throws -> Result<
        AdminCaller, AdminHandlers.Stop
    > {
        let caller = try admin.caller(request)
        switch caller {
        case .none:
            if let action { try admin.audit.refused(nil, request, action) }
            return .failure(AdminHandlers.Stop(AdminHandlers.invalidToken))
        case .operator?: return .success(.operator)
        case .environment(let environment, _)?:
            guard environment.projectID == projectID else {
                if let action { try admin.audit.refused(caller, request, action) }
                return .failure(AdminHandlers.Stop(Wire.error(.forbidden, "A secret key manages only its own project's providers.")))
            }
            return .success(caller!)
        }
    }

    /// `GET /v1/admin/projects/{id}/providers` → `{"items": [ProviderBody…], "nextCursor": null}`: the
    /// providers the project's sign-in page shows, in order; 404 for an unknown project.
    func projectList(_ request: HTTPRequest, projectID rawID: String) throws -> HTTPResponse {
        let projectID = rawID.lowercased()
        if case .failure(let stop) = try projectCaller(request, projectID: projectID, action: nil) { return stop.response }
        do {
            let shown = try context.tenancy.providers.projectProviders(projectID: projectID)
            return Wire.json(status: 200, ListBody(items: shown.map(ProviderBody.init), nextCursor: nil))
        } catch ProviderRefusal.noProject {
            return Self.noProject
        }
    }

    /// `PUT /v1/admin/projects/{id}/providers {"providerIds": [id…]}` → 200, the list as `GET` answers it.
    /// The list replaces the project's choice (an empty list shows none). 400 naming `providerIds` for a
    /// list that breaks its rule or names an unknown provider; 404 for an unknown project.
    func projectSet(_ request: HTTPRequest, projectID rawID: String) throws -> HTTPResponse {
        let projectID = rawID.lowercased()
        let caller: AdminCaller
        switch try projectCaller(request, projectID: projectID, action: "project.providers.update") {
        case .failure(let stop): return stop.response
        case .success(let value): caller = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        guard body.names == [ProviderFields.providerIDs], case .value(let raw) = body.stringArray(ProviderFields.providerIDs) else {
            return AdminHandlers.invalidField(ProviderFields.providerIDs, "is required (a list of provider ids), and the only member")
        }
        let ids: [String]
        switch ProviderFields.providerIDs(raw) {
        case .failure(let problem): return Self.invalid(problem)
        case .success(let value): ids = value
        }
        do {
            // Project-level: the choice is the project's, shared by both environments.
            let entry = try admin.audit.entry(
                caller, request, "project.providers.update", target: projectID, projectID: projectID, projectLevel: true)
            let shown = try context.tenancy.providers.setProjectProviders(projectID: projectID, providerIDs: ids, audit: entry)
            return Wire.json(status: 200, ListBody(items: shown.map(ProviderBody.init), nextCursor: nil))
        } catch ProviderRefusal.noProject {
            return Self.noProject
        } catch ProviderRefusal.unknownProvider {
            return AdminHandlers.invalidField(ProviderFields.providerIDs, "names a provider that does not exist")
        }
    }
}

extension Routes {
    /// The upstream providers' calls.
    mutating func registerProviders() {
        let handlers = ProviderAdminHandlers(context: context)
        add("GET", "/v1/admin/providers") { request, _ in try handlers.list(request) }
        add("POST", "/v1/admin/providers") { request, _ in try handlers.create(request) }
        add("GET", "/v1/admin/providers/{id}") { request, p in try handlers.show(request, id: p["id"] ?? "") }
        add("PATCH", "/v1/admin/providers/{id}") { request, p in try handlers.update(request, id: p["id"] ?? "") }
        add("DELETE", "/v1/admin/providers/{id}") { request, p in try handlers.delete(request, id: p["id"] ?? "") }
        add("GET", "/v1/admin/projects/{id}/providers") { request, p in try handlers.projectList(request, projectID: p["id"] ?? "") }
        add("PUT", "/v1/admin/projects/{id}/providers") { request, p in try handlers.projectSet(request, projectID: p["id"] ?? "") }
    }
}
