import Association
import Authorize
import Crypto
import Encoding
import Fetch
import Foundation
import HTTPServer
import PostgresStore

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

    static let notFound = Wire.error(.notFound, "No app with this id in this environment.", status: 404)

    // MARK: Apps

    /// `POST /v1/admin/apps` `{"platform":"ios","bundleId","teamId"}` or
    /// `{"platform":"android","packageName","sha256CertFingerprints":[…]}` → 201 with the app and its
    /// `link` (checked at once when the environment has link callbacks). 400 `invalid_request` names the
    /// field; 400 `native_app_limit` / `native_app_team_mismatch`; 409 `conflict` for a duplicate.
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        let now = context.clock.now()
        let app: AppRecord
        do {
            switch body.string("platform") {
            case .value("ios"):
                guard case .value(let rawBundle) = body.string("bundleId") else {
                    return AdminHandlers.invalidField("bundleId", "is required (a string)")
                }
                guard case .value(let rawTeam) = body.string("teamId") else {
                    return AdminHandlers.invalidField("teamId", "is required (a string)")
                }
                let bundle: BundleID
                let team: TeamID
                switch (BundleID.parse(rawBundle), TeamID.parse(rawTeam)) {
                case (.failure(let problem), _), (_, .failure(let problem)): return Self.invalid(problem)
                case (.success(let parsedBundle), .success(let parsedTeam)): (bundle, team) = (parsedBundle, parsedTeam)
                }
                app = try context.store.createIOSApp(
                    environmentID: environment.id, teamID: team.value, bundleID: bundle.value, now: now)
            case .value("android"):
                guard case .value(let rawPackage) = body.string("packageName") else {
                    return AdminHandlers.invalidField("packageName", "is required (a string)")
                }
                let package: PackageName
                switch PackageName.parse(rawPackage) {
                case .failure(let problem): return Self.invalid(problem)
                case .success(let value): package = value
                }
                let fingerprints: [String]
                switch Self.fingerprints(body) {
                case .failure(let response): return response
                case .success(let value): fingerprints = value
                }
                app = try context.store.createAndroidApp(
                    environmentID: environment.id, packageName: package.value, fingerprints: fingerprints, now: now)
            case .missing, .wrongType, .value:
                return AdminHandlers.invalidField("platform", "must be \"ios\" or \"android\"")
            }
        } catch let limit as AppLimitError {
            return Self.limitResponse(limit)
        } catch StoreError.duplicate {
            return Wire.error(.conflict, "This app is already registered in this environment.", status: 409)
        }
        try checkNow(environmentID: environment.id)
        return try appResponse(app, status: 201)
    }

    /// The `sha256CertFingerprints` field: a non-empty array of strings, parsed and de-duplicated as
    /// docs/protocol.md#admin-validation says (a duplicate is a 400).
    static func fingerprints(_ body: JSONObjectBody) -> Answer<[String]> {
        guard let raw = body.fields["sha256CertFingerprints"], !(raw is NSNull) else {
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "is required (an array of SHA-256 fingerprints)"))
        }
        guard let strings = raw as? [String] else {
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "must be an array of strings"))
        }
        guard !strings.isEmpty else {
            return .failure(AdminHandlers.invalidField("sha256CertFingerprints", "needs at least one fingerprint"))
        }
        switch Fingerprints.parse(strings) {
        case .failure(let problem): return .failure(invalid(problem))
        case .success(let parsed): return .success(parsed.map(\.canonical))
        }
    }

    static func invalid(_ problem: IdentifierProblem) -> HTTPResponse {
        // The Association module's messages already name the field; do not say it twice.
        Wire.error(.invalidRequest, problem.message.hasPrefix(problem.field) ? problem.message : "\(problem.field) \(problem.message)")
    }

    static func limitResponse(_ limit: AppLimitError) -> HTTPResponse {
        switch limit {
        case .nativeAppLimit:
            return Wire.error(
                .nativeAppLimit,
                "An environment has at most 10 iOS apps and 10 Android apps, and an Android app at most 5 certificate fingerprints.",
                status: 400)
        case .teamMismatch:
            return Wire.error(
                .nativeAppTeamMismatch, "Every iOS app of an environment belongs to one Apple team; teamId differs from its other apps.",
                status: 400)
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
        let items = try context.store.apps(environmentID: environment.id, after: paging.cursor, limit: paging.limit + 1)
        let page = Array(items.prefix(paging.limit))
        let states = try context.store.linkStates(appIDs: page.map(\.id))
        return Wire.anyJSON(
            status: 200,
            [
                "items": page.map { Self.appBody($0, states: states[$0.id] ?? []) },
                "nextCursor": items.count > paging.limit ? (page.last?.id ?? "") : NSNull(),
            ] as [String: Any])
    }

    /// `GET /v1/admin/apps/{id}` → the app with its `link`; 404 for another environment's app.
    func get(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard let app = try context.store.app(environmentID: environment.id, id: id) else { return Self.notFound }
        return try appResponse(app, status: 200)
    }

    /// `PATCH /v1/admin/apps/{id}`: with a secret key, `{"sha256CertFingerprints":[…]}` replaces an Android
    /// app's certificates (and checks again); with the operator token, `{"productionCustomScheme": "com.acme.app"}`
    /// (or null) sets the production custom-scheme exception.
    func patch(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        guard let actor = try admin.actor(request) else { return AdminHandlers.invalidToken }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        switch actor {
        case .operator:
            guard body.fields.keys.contains("productionCustomScheme"), body.fields.count == 1 else {
                return AdminHandlers.invalidField("productionCustomScheme", "is the only field the operator sets on an app")
            }
            let scheme: String?
            switch body.string("productionCustomScheme") {
            case .missing: scheme = nil
            case .wrongType: return AdminHandlers.invalidField("productionCustomScheme", "must be a string or null")
            case .value(let value):
                guard Self.isReverseDomainScheme(value) else {
                    return AdminHandlers.invalidField(
                        "productionCustomScheme",
                        "must be a reverse-domain private-use scheme such as com.acme.app (RFC 8252 §7.1): lower case, with a dot")
                }
                scheme = value
            }
            guard let app = try context.store.setProductionCustomScheme(id: id, scheme: scheme) else {
                return Wire.error(.notFound, "No app with this id.", status: 404)
            }
            return try appResponse(app, status: 200)
        case .environment(let environment):
            if body.fields.keys.contains("productionCustomScheme") {
                return Wire.error(.forbidden, "Only the operator may set productionCustomScheme.")
            }
            guard let existing = try context.store.app(environmentID: environment.id, id: id) else { return Self.notFound }
            guard body.fields.keys.contains("sha256CertFingerprints") else {
                return AdminHandlers.invalidField("sha256CertFingerprints", "is required (the only field a secret key changes)")
            }
            guard existing.platform == "android" else {
                return AdminHandlers.invalidField("sha256CertFingerprints", "applies to Android apps only")
            }
            let fingerprints: [String]
            switch Self.fingerprints(body) {
            case .failure(let response): return response
            case .success(let value): fingerprints = value
            }
            let updated: AppRecord?
            do {
                updated = try context.store.replaceFingerprints(environmentID: environment.id, id: id, fingerprints: fingerprints)
            } catch let limit as AppLimitError {
                return Self.limitResponse(limit)
            }
            guard let updated else { return Self.notFound }
            try checkNow(environmentID: environment.id)
            return try appResponse(updated, status: 200)
        }
    }

    /// `DELETE /v1/admin/apps/{id}` → 204, or 404.
    func delete(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard try context.store.deleteApp(environmentID: environment.id, id: id) else { return Self.notFound }
        return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// `POST /v1/admin/apps/{id}/check` ("Check again"): fetches the app's link domains now and answers
    /// the app with its fresh `link`.
    func checkAgain(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let response): return response
        case .success(let value): environment = value
        }
        guard let app = try context.store.app(environmentID: environment.id, id: id) else { return Self.notFound }
        guard try checkNow(environmentID: environment.id) else { return Self.checkBusy }
        return try appResponse(app, status: 200)
    }

    /// Checks every link domain of the environment now (each fetch serves every app on that domain), in
    /// one of the instance's outbound slots (`OutboundSlots`).
    /// - Returns: false when no slot was free; the scheduler then checks within its next round.
    @discardableResult
    private func checkNow(environmentID: String) throws -> Bool {
        let ran: Bool? = try context.outboundSlots.withSlot(environmentID: environmentID) {
            for domain in try context.store.linkDomains(environmentID: environmentID) {
                try checker.check(domain: domain, leaseOwner: nil)
            }
            return true
        }
        return ran != nil
    }

    /// 429 when this environment already has a check running here, or the instance is at its bound.
    static let checkBusy: HTTPResponse = {
        var response = Wire.error(
            .temporarilyUnavailable, "A check for this environment is already running. Try again in a few seconds.", status: 429)
        response.headers.set("Retry-After", "5")
        return response
    }()

    private func appResponse(_ app: AppRecord, status: Int) throws -> HTTPResponse {
        let states = try context.store.linkStates(appIDs: [app.id])[app.id] ?? []
        return Wire.anyJSON(status: status, Self.appBody(app, states: states))
    }

    /// An app as the admin API shows it, with `link` summarising its states on every link domain:
    /// `pending` until every domain was checked, `not_verified` when one fails, else `verified`.
    static func appBody(_ app: AppRecord, states: [LinkStateRecord]) -> [String: Any] {
        var body: [String: Any] = [
            "id": app.id, "platform": app.platform, "createdAt": Wire.timestamp(app.createdAt),
            "productionCustomScheme": app.productionCustomScheme ?? NSNull(),
        ]
        if app.platform == "ios" {
            body["bundleId"] = app.bundleID ?? ""
            body["teamId"] = app.teamID ?? ""
            body["appId"] = "\(app.teamID ?? "").\(app.bundleID ?? "")"
        } else {
            body["packageName"] = app.packageName ?? ""
            body["sha256CertFingerprints"] = app.fingerprints
        }
        body["link"] = linkBody(states)
        return body
    }

    static func linkBody(_ states: [LinkStateRecord]) -> [String: Any] {
        let status: String
        if states.isEmpty || states.contains(where: { $0.status == "pending" }) {
            status = "pending"
        } else if states.contains(where: { $0.status == "not_verified" }) {
            status = "not_verified"
        } else {
            status = "verified"
        }
        let checked = states.compactMap(\.checkedAt).max()
        let next = states.compactMap(\.nextCheckAt).min()
        var problems: [[String: Any]] = []
        for state in states {
            for problem in state.problems {
                problems.append(["code": problem.code, "message": problem.message, "blocking": problem.blocking, "domain": state.domain])
            }
        }
        return [
            "status": status, "checkedAt": checked.map(Wire.timestamp) ?? NSNull(), "nextCheckAt": next.map(Wire.timestamp) ?? NSNull(),
            "domains": states.map(\.domain), "problems": problems,
        ]
    }

    /// A private-use URI scheme in reverse-domain form (RFC 8252 §7.1, with a `.` as §8.4 asks).
    static func isReverseDomainScheme(_ scheme: String) -> Bool {
        let labels = scheme.split(separator: ".", omittingEmptySubsequences: false)
        guard scheme.utf8.count <= 255, labels.count >= 2, let first = scheme.utf8.first, (0x61...0x7A).contains(first) else {
            return false
        }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2B }
        }
    }

    // MARK: Association files

    /// The two files for the apps of `projects` on `domain`.
    /// - Throws: `GenerationError` when the AASA would exceed 128 KB; `PostgresError`.
    func files(projects: [String], domain: String) throws -> (aasa: [UInt8], assetLinks: [UInt8]) {
        var ios: [(app: IOSApp, callbackPaths: [String])] = []
        var android: [AndroidApp] = []
        for project in projects {
            for subject in try context.store.associationApps(projectID: project, domain: domain) {
                if let app = AssociationChecker.iosApp(subject.app) {
                    ios.append((app, AssociationChecker.callbackPaths(subject.callbackURIs)))
                } else if let app = AssociationChecker.androidApp(subject.app) {
                    android.append(app)
                }
            }
        }
        return (try AssociationGenerator.appleAppSiteAssociation(ios), AssociationGenerator.assetLinks(android))
    }

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
        guard try context.store.hasDomain(projectID: environment.projectID, domain: domain) else {
            return Wire.error(.notFound, "The project has no such domain.", status: 404)
        }
        let generated: (aasa: [UInt8], assetLinks: [UInt8])
        do {
            generated = try files(projects: [environment.projectID], domain: domain)
        } catch let error as GenerationError {
            return Wire.error(.invalidRequest, "The apple-app-site-association file cannot be generated: \(error.explanation).")
        }
        let aasa = try JSONSerialization.jsonObject(with: Data(generated.aasa))
        let assetLinks = try JSONSerialization.jsonObject(with: Data(generated.assetLinks))
        return Wire.anyJSON(status: 200, ["appleAppSiteAssociation": aasa, "assetlinks": assetLinks])
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
        let projects = try context.store.hostingProjects(domain: host)
        guard !projects.isEmpty else { return notHosted }
        let generated = try files(projects: projects, domain: host)
        let body = appleFile ? generated.aasa : generated.assetLinks
        let etag = "\"\(Crypto.sha256(body).map { String(format: "%02x", $0) }.joined())\""
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
    func verifyDomain(_ environment: EnvironmentRecord, domain rawDomain: String) throws -> HTTPResponse {
        guard let domain = DomainName.normalize(rawDomain) else { return AdminHandlers.invalidField("domain", "must be a DNS host name") }
        guard let token = try context.store.domainVerificationToken(projectID: environment.projectID, domain: domain) else {
            return Wire.error(.notFound, "The project has no such domain.", status: 404)
        }
        let url = "https://\(domain)/.well-known/zevauth-domain-verification"
        let problem: String
        guard
            let fetched = context.outboundSlots.withSlot(
                environmentID: environment.id,
                { checker.fetcher.get(host: domain, port: checker.port, path: "/.well-known/zevauth-domain-verification", maxBytes: 4096) })
        else { return Self.checkBusy }
        switch fetched {
        case .success(let response) where response.status == 200:
            let published = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if Crypto.constantTimeEquals(Crypto.sha256(Array(published.utf8)), Crypto.sha256(Array(token.utf8))) {
                _ = try context.store.markDomainVerified(
                    projectID: environment.projectID, domain: domain, hosted: nil, now: context.clock.now())
                return Wire.anyJSON(status: 200, ["domain": domain, "verified": true])
            }
            problem = "\(url) does not contain this domain's verification token"
        case .success(let response):
            problem = "\(url) answered \(response.status) instead of 200"
        case .failure(let failure):
            problem = "\(url) could not be fetched: \(failure.explanation)"
        }
        return Wire.error(.invalidRequest, "domain is not verified: \(problem).")
    }
}

/// A value, or the response to answer instead.
enum Answer<Value> {
    case success(Value)
    case failure(HTTPResponse)
}
