import Association
import Authorize
import Encoding
import Foundation
import HTTPServer

/// The admin API for mobile apps, their association files and link checks, and domain verification by
/// token file (docs/protocol.md#admin-calls, docs/protocol.md#apps).
struct AppHandlers: Sendable {
    let context: ServerContext
    let admin: AdminHandlers
    let checker: AssociationChecker

    init(context: ServerContext) {
        self.context = context
        self.admin = AdminHandlers(context: context)
        self.checker = AssociationChecker(context: context)
    }

    private func environment(_ request: HTTPRequest) throws -> Answer<EnvironmentRecord> {
        switch try admin.actor(request) {
        case .none: return .failure(AdminHandlers.invalidToken)
        case .operator: return .failure(Wire.error(.forbidden, "Use the environment's secret key (sk_…) for this call."))
        case .environment(let environment): return .success(environment)
        }
    }

    /// The secret-key caller of the change `action` and its environment, or the answer to send (a refusal
    /// recorded as a `refused` row, `AdminHandlers.requireEnvironment(_:action:target:)`).
    private func changer(_ request: HTTPRequest, _ action: String, target: String? = nil) throws -> Answer<
        (environment: EnvironmentRecord, caller: AdminCaller)
    > {
        switch try admin.requireEnvironment(request, action: action, target: target) {
        case .failure(let stop): return .failure(stop.response)
        case .success(let value): return .success(value)
        }
    }

    static let notFound = Wire.error(.notFound, "No app with this id in this environment.")

    private var registration: AppRegistration { AppRegistration(store: context.tenancy.apps) }

    // MARK: Apps

    /// `POST /v1/admin/apps` `{"platform":"ios","bundleId","teamId"}` or
    /// `{"platform":"android","packageName","sha256CertFingerprints":[…]}` → 201 with the app and its
    /// `link` (checked at once when the environment has link callbacks). 400 `invalid_request` names the
    /// field; 400 `native_app_limit` / `native_app_team_mismatch`; 409 `conflict` for a duplicate.
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "app.create") {
        case .failure(let response): return response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        let identity: AppIdentity
        switch body.string("platform") {
        case .value(Platform.ios.rawValue):
            guard case .value(let rawBundle) = body.string("bundleId") else {
                return AdminHandlers.invalidField("bundleId", "is required (a string)")
            }
            guard case .value(let rawTeam) = body.string("teamId") else {
                return AdminHandlers.invalidField("teamId", "is required (a string)")
            }
            switch (BundleID.parse(rawBundle), TeamID.parse(rawTeam)) {
            case (.failure(let problem), _), (_, .failure(let problem)): return Self.invalid(problem)
            case (.success(let bundle), .success(let team)): identity = .ios(IOSApp(teamID: team, bundleID: bundle))
            }
        case .value(Platform.android.rawValue):
            guard case .value(let rawPackage) = body.string("packageName") else {
                return AdminHandlers.invalidField("packageName", "is required (a string)")
            }
            let package: PackageName
            switch PackageName.parse(rawPackage) {
            case .failure(let problem): return Self.invalid(problem)
            case .success(let value): package = value
            }
            switch Self.fingerprints(body) {
            case .failure(let response): return response
            case .success(let fingerprints): identity = .android(AndroidApp(packageName: package, fingerprints: fingerprints))
            }
        case .missing, .wrongType, .value:
            return AdminHandlers.invalidField("platform", "must be \"ios\" or \"android\"")
        }
        let app: AppRecord
        let entry = try admin.audit.entry(caller, request, "app.create")
        switch try registration.register(environmentID: environment.id, identity: identity, now: context.clock.now(), audit: entry) {
        case .failure(let refusal): return Self.refusalResponse(refusal)
        case .success(let value): app = value
        }
        try checkNow(environmentID: environment.id)
        return try appResponse(app, status: 201)
    }

    /// The `sha256CertFingerprints` field: a non-empty array of strings, parsed and de-duplicated as
    /// docs/protocol.md#admin-validation says (a duplicate is a 400).
    static func fingerprints(_ body: JSONObjectBody) -> Answer<[CertificateFingerprint]> {
        let strings: [String]
        switch body.stringArray("sha256CertFingerprints") {
        case .missing:
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "is required (an array of SHA-256 fingerprints)"))
        case .wrongType:
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "must be an array of strings"))
        case .value(let value): strings = value
        }
        guard !strings.isEmpty else {
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "needs at least one fingerprint"))
        }
        switch Fingerprints.parse(strings) {
        case .failure(let problem): return .failure(invalid(problem))
        case .success(let parsed): return .success(parsed)
        }
    }

    static func invalid(_ problem: IdentifierProblem) -> HTTPResponse {
        // The Association module's messages already name the field; do not say it twice.
        Wire.error(.invalidRequest, problem.message.hasPrefix(problem.field) ? problem.message : "\(problem.field) \(problem.message)")
    }

    static func refusalResponse(_ refusal: AppRegistration.Refusal) -> HTTPResponse {
        switch refusal {
        case .limit(.nativeAppLimit):
            return Wire.error(
                .nativeAppLimit,
                "An environment has at most 10 iOS apps and 10 Android apps, and an Android app at most 5 certificate fingerprints.")
        case .limit(.teamMismatch):
            return Wire.error(
                .nativeAppTeamMismatch, "Every iOS app of an environment belongs to one Apple team; teamId differs from its other apps.")
        case .duplicate:
            return Wire.error(.conflict, "This app is already registered in this environment.")
        case .notFound:
            return notFound
        case .notAndroid:
            return AdminHandlers.invalidField("sha256CertFingerprints", "applies to Android apps only")
        }
    }

    /// `GET /v1/admin/apps?cursor=&limit=` → `{"items": […], "nextCursor": …}`.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        let page = try registration.list(environmentID: environment.id, cursor: paging.cursor, limit: paging.limit)
        return Wire.json(status: 200, ListBody(items: page.items.map(AppBody.init), nextCursor: page.nextCursor))
    }

    /// `GET /v1/admin/apps/{id}` → the app with its `link`; 404 for another environment's app.
    func get(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard let app = try registration.app(environmentID: environment.id, id: id) else { return Self.notFound }
        return try appResponse(app, status: 200)
    }

    /// `PATCH /v1/admin/apps/{id}`: with a secret key, `{"sha256CertFingerprints":[…]}` replaces an Android
    /// app's certificates (and checks again); with the operator token, `{"productionCustomScheme": "com.acme.app"}`
    /// (or null) sets the production custom-scheme exception.
    func patch(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        guard let caller = try admin.caller(request) else {
            try admin.audit.refused(nil, request, "app.update", target: id)
            return AdminHandlers.invalidToken
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        switch caller {
        case .operator:
            guard body.contains("productionCustomScheme"), body.names.count == 1 else {
                return AdminHandlers.invalidField("productionCustomScheme", "is the only field the operator sets on an app")
            }
            let scheme: String?
            switch body.string("productionCustomScheme") {
            case .missing: scheme = nil
            case .wrongType: return AdminHandlers.invalidField("productionCustomScheme", "must be a string or null")
            case .value(let value):
                guard RedirectURI.isPrivateUseScheme(value) else {
                    return AdminHandlers.invalidField(
                        "productionCustomScheme",
                        "must be a reverse-domain private-use scheme such as com.acme.app (RFC 8252 §7.1): lower case, with a dot")
                }
                scheme = value
            }
            let entry = try admin.audit.entry(caller, request, "app.production_scheme", target: id)
            guard let app = try registration.setProductionCustomScheme(id: id, scheme: scheme, audit: entry) else {
                return Wire.error(.notFound, "No app with this id.")
            }
            return try appResponse(app, status: 200)
        case .environment(let environment, _):
            if body.contains("productionCustomScheme") {
                try admin.audit.refused(caller, request, "app.production_scheme", target: id)
                return Wire.error(.forbidden, "Only the operator may set productionCustomScheme.")
            }
            guard let existing = try registration.app(environmentID: environment.id, id: id) else { return Self.notFound }
            guard body.contains("sha256CertFingerprints") else {
                return AdminHandlers.invalidField("sha256CertFingerprints", "is required (the only field a secret key changes)")
            }
            guard existing.platform == .android else { return Self.refusalResponse(.notAndroid) }
            let fingerprints: [CertificateFingerprint]
            switch Self.fingerprints(body) {
            case .failure(let response): return response
            case .success(let value): fingerprints = value
            }
            let updated: AppRecord
            let entry = try admin.audit.entry(caller, request, "app.update", target: id)
            switch try registration.replaceFingerprints(environmentID: environment.id, id: id, fingerprints: fingerprints, audit: entry) {
            case .failure(let refusal): return Self.refusalResponse(refusal)
            case .success(let value): updated = value
            }
            try checkNow(environmentID: environment.id)
            return try appResponse(updated, status: 200)
        }
    }

    /// `DELETE /v1/admin/apps/{id}` → 204, or 404.
    func delete(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "app.delete", target: id) {
        case .failure(let response): return response
        case .success(let value): (environment, caller) = value
        }
        let entry = try admin.audit.entry(caller, request, "app.delete", target: id)
        guard try registration.delete(environmentID: environment.id, id: id, audit: entry) else { return Self.notFound }
        return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// `POST /v1/admin/apps/{id}/check` ("Check again"): fetches the app's link domains now and answers
    /// the app with its fresh `link`.
    func checkAgain(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "app.check", target: id) {
        case .failure(let response): return response
        case .success(let value): (environment, caller) = value
        }
        guard let app = try registration.app(environmentID: environment.id, id: id) else { return Self.notFound }
        guard try checkNow(environmentID: environment.id) else { return Self.checkBusy }
        // A check writes one history row per link domain, each in its own transaction (shared with the
        // scheduler's checks); the person's request is recorded once, after it ran (docs/console.md, "Audit log").
        try context.tenancy.audit.record(try admin.audit.entry(caller, request, "app.check", target: id))
        return try appResponse(app, status: 200)
    }

    /// Checks every link domain of the environment now (each fetch serves every app on that domain), in
    /// one of the instance's outbound slots (`OutboundSlots`).
    /// - Returns: false when no slot was free; the scheduler then checks within its next round.
    @discardableResult
    func checkNow(environmentID: String) throws -> Bool {
        let ran: Bool? = try context.outboundSlots.withSlot(environmentID: environmentID) {
            try checker.checkEnvironment(environmentID)
            return true
        }
        return ran != nil
    }

    /// 429 when this environment already has a check running here, or the instance is at its bound.
    static let checkBusy = Wire.error(
        ErrorAnswer(
            .temporarilyUnavailable, "A check for this environment is already running. Try again in a few seconds.",
            condition: .tooManyRequests(retryAfterSeconds: 5)))

    private func appResponse(_ app: AppRecord, status: Int) throws -> HTTPResponse {
        Wire.json(status: status, AppBody(app: try registration.withLink(app)))
    }

    // MARK: Association files

    private var associationFiles: AssociationFiles { AssociationFiles(store: context.tenancy.associationFiles) }

    /// `GET /v1/admin/association-files?domain=` → `{"appleAppSiteAssociation": {…}, "assetlinks": […]}`:
    /// the files listing every app of either environment of the project with a link callback on the domain.
    func associationFiles(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        let query = (try? FormURLEncoding.decode(request.rawQuery ?? "")) ?? []
        guard let raw = query.first(where: { $0.name == "domain" })?.value, let domain = DomainName.normalize(raw) else {
            return AdminHandlers.invalidField("domain", "is required: a DNS host name such as acme.com")
        }
        let generated: GeneratedFiles?
        do {
            generated = try associationFiles.forProject(environment.projectID, domain: domain)
        } catch let error as GenerationError {
            return Wire.error(.invalidRequest, "The apple-app-site-association file cannot be generated: \(error.explanation).")
        }
        guard let generated else { return Wire.error(.notFound, "The project has no such domain.") }
        return Wire.json(status: 200, AssociationFilesBody(files: generated))
    }

    // MARK: Serving

    /// `GET /.well-known/apple-app-site-association` and `GET /.well-known/assetlinks.json` for a domain
    /// this server hosts, chosen by `Host` (port stripped, lower-cased): 200 `application/json` with an
    /// ETag (quoted SHA-256 of the bytes) and `Cache-Control: public, max-age=300`; 304 for a matching
    /// `If-None-Match`; 404 for an unknown host; never a redirect.
    func serve(_ request: HTTPRequest, appleFile: Bool) throws -> HTTPResponse {
        let notHosted = HTTPResponse(
            status: 404, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")]),
            body: Array("Not found\n".utf8))
        guard let host = Self.hostName(request.headers["Host"]) else { return notHosted }
        guard let generated = try associationFiles.hosted(domain: host) else { return notHosted }
        let body = appleFile ? generated.aasa : generated.assetLinks
        let etag = "\"\(context.secrets.sha256(body).map { String(format: "%02x", $0) }.joined())\""
        var headers = HTTPHeaders()
        headers.set("ETag", etag)
        headers.set("Cache-Control", "public, max-age=300")
        if let match = request.headers["If-None-Match"],
            match.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            })
        {
            return HTTPResponse(status: 304, headers: headers, body: [])
        }
        headers.set("Content-Type", "application/json")
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// The `Host` header's name: port stripped, lower-cased, a valid DNS name.
    static func hostName(_ header: String?) -> String? {
        guard var host = header?.trimmingCharacters(in: .whitespaces), !host.isEmpty, !host.hasPrefix("[") else { return nil }
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        if host.hasSuffix(".") { host.removeLast() }
        return DomainName.normalize(host)
    }

    // MARK: Domain verification by token file

    /// `POST /v1/admin/domains/{domain}/verify` with a secret key: fetches
    /// `https://DOMAIN/.well-known/zevauth-domain-verification` and compares its body (trimmed) with the
    /// domain's token in constant time. 200 `{"domain","verified":true}`; 400 `invalid_request` saying what
    /// the fetch found otherwise; 404 when the project has no such domain.
    /// `entry` builds the `domain.verify` audit row from the normalised domain (the admin API's caller or
    /// the console's account).
    func verifyDomain(_ environment: EnvironmentRecord, domain rawDomain: String, entry: (String) throws -> AuditEntry) throws
        -> HTTPResponse
    {
        guard let domain = DomainName.normalize(rawDomain) else { return AdminHandlers.invalidField("domain", "must be a DNS host name") }
        let verification = DomainVerification(store: context.tenancy.domainTokens)
        guard let token = try verification.token(projectID: environment.projectID, domain: domain) else {
            return Wire.error(.notFound, "The project has no such domain.")
        }
        guard
            let fetched = context.outboundSlots.withSlot(
                environmentID: environment.id,
                { checker.fetcher.get(host: domain, path: DomainVerification.path, maxBytes: DomainVerification.maximumBytes) })
        else { return Self.checkBusy }
        if let problem = DomainVerification.problem(fetched, token: token, domain: domain) {
            return Wire.error(.invalidRequest, "domain is not verified: \(problem).")
        }
        try verification.markVerified(
            projectID: environment.projectID, domain: domain, now: context.clock.now(), audit: try entry(domain))
        return Wire.json(status: 200, ["domain": .string(domain), "verified": true] as JSONValue)
    }
}

/// A value, or the response to answer instead.
enum Answer<Value> {
    case success(Value)
    case failure(HTTPResponse)
}
