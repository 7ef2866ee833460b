import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// Who is calling the admin API: the operator (the deployment) or an environment's secret key.
/// Source: docs/protocol.md#admin-api.
enum AdminActor {
    case `operator`
    case environment(EnvironmentRecord)
}

/// The admin API of the round trip: projects and ZevID accounts (operator), callbacks and domains
/// (secret key), and the operator's mark that a domain is verified (replaced by association checks).
struct AdminHandlers: Sendable {
    let context: ServerContext

    // MARK: Authentication

    /// Resolves the bearer: the operator token (compared as SHA-256 digests in constant time) or an
    /// unrevoked secret key of an environment (`ResolveAdminCaller`).
    func actor(_ request: HTTPRequest) throws -> AdminActor? {
        switch try caller(request) {
        case .none: return nil
        case .operator: return .operator
        case .environment(let environment, _): return .environment(environment)
        }
    }

    /// The admin caller with the calling key's digest (`ResolveAdminCaller`).
    func caller(_ request: HTTPRequest) throws -> AdminCaller? {
        try ResolveAdminCaller(
            store: context.tenancy.secretKeyLookup, secrets: context.secrets, operatorToken: context.configuration.operatorToken
        )(bearer: Wire.bearer(request))
    }

    var audit: AdminAudit { AdminAudit(context: context) }

    /// The operator caller of the change `action`, or the answer to send: 401 for a bearer that names
    /// nobody, 403 for a secret key; either refusal is recorded as a `refused` row (docs/console.md, "Audit log").
    func requireOperator(
        _ request: HTTPRequest, action: String, target: String? = nil,
        message: String = "Only the operator token may do this."
    ) throws -> Result<AdminCaller, Stop> {
        let caller = try caller(request)
        switch caller {
        case .none:
            try audit.refused(nil, request, action, target: target)
            return .failure(Stop(Self.invalidToken))
        case .environment:
            try audit.refused(caller, request, action, target: target)
            return .failure(Stop(Wire.error(.forbidden, message)))
        case .operator?: return .success(.operator)
        }
    }

    /// The secret-key caller of the change `action` and its environment, or the answer to send (401 or 403,
    /// recorded as a `refused` row).
    func requireEnvironment(_ request: HTTPRequest, action: String, target: String? = nil) throws -> Result<
        (environment: EnvironmentRecord, caller: AdminCaller), Stop
    > {
        let caller = try caller(request)
        switch caller {
        case .none:
            try audit.refused(nil, request, action, target: target)
            return .failure(Stop(Self.invalidToken))
        case .operator?:
            try audit.refused(caller, request, action, target: target)
            return .failure(Stop(Self.useSecretKey))
        case .environment(let environment, _)?: return .success((environment, caller!))
        }
    }

    /// The environment of a secret-key caller of a read, or the answer to send (not recorded: reads are not
    /// audited).
    func requireEnvironment(_ request: HTTPRequest) throws -> Result<EnvironmentRecord, Stop> {
        switch try actor(request) {
        case .none: return .failure(Stop(Self.invalidToken))
        case .operator: return .failure(Stop(Self.useSecretKey))
        case .environment(let environment): return .success(environment)
        }
    }

    static let useSecretKey = Wire.error(.forbidden, "Use the environment's secret key (sk_…) for this call.")

    struct Stop: Error {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    static let invalidToken: HTTPResponse = {
        var response = Wire.error(.invalidToken, "Send the operator token or a secret key as Authorization: Bearer …")
        response.headers.set("WWW-Authenticate", "Bearer")
        return response
    }()

    // MARK: Projects and accounts (operator)

    /// `POST /v1/admin/projects {"name", "ownerEmail"?}` → 201 with both environments' keys; the secret
    /// keys are shown only in this answer (stored as SHA-256). With `ownerEmail`, that open account becomes
    /// the project's first owner in the creating transaction; an address with no open account is 404
    /// `not_found` and nothing is created (docs/console.md, "Members").
    func createProject(_ request: HTTPRequest) throws -> HTTPResponse {
        let caller: AdminCaller
        switch try requireOperator(request, action: "project.create") {
        case .failure(let stop): return stop.response
        case .success(let value): caller = value
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let rawName) = body.string("name") else { return Self.invalidField("name", "is required (a string)") }
        guard let name = DisplayName(rawName)?.text else { return Self.invalidField("name", DisplayName.rule) }
        var owner: NewProjectOwner?
        if body["ownerEmail"] != nil {
            let email: EmailAddress
            switch MemberAdminHandlers.email(body, field: "ownerEmail") {
            case .failure(let stop): return stop.response
            case .success(let value): email = value
            }
            guard let userID = try context.tenancy.members.openAccountID(emailKey: email.key) else {
                return MemberAdminHandlers.noAccount
            }
            let origin = ChangeOrigin(
                actor: .operatorToken, clientAddress: ClientAddress.of(request, configuration: context.configuration),
                at: context.clock.now())
            owner = NewProjectOwner(userID: userID, origin: origin)
        }
        do {
            let project = try CreateProject(store: context.tenancy.projectCreation, secrets: context.secrets)(
                name: name, owner: owner, now: context.clock.now(), audit: try audit.entry(caller, request, "project.create"))
            return Wire.json(status: 201, CreatedProjectBody(project: project))
        } catch MemberRefusal.noAccount {
            return MemberAdminHandlers.noAccount
        }
    }

    /// Fresh keys of one environment: the stored form and the secret key (shown once).
    static func newKeys(publishablePrefix: String, secretPrefix: String) throws -> (
        stored: NewEnvironmentKeys, secret: String
    ) {
        let secret = try Crypto.mintToken(prefix: secretPrefix)
        return (
            NewEnvironmentKeys(
                publishableKey: try Crypto.mintToken(prefix: publishablePrefix), secretKeyHash: Crypto.hexSHA256(secret),
                secretKeySuffix: String(secret.suffix(4))), secret
        )
    }

    // MARK: Domains

    private var domains: ProjectDomains { ProjectDomains(store: context.tenancy.domains, secrets: context.secrets) }

    /// `POST /v1/admin/domains {"domain"}` (secret key) → 201 with the token to publish at
    /// `https://DOMAIN/.well-known/zevauth-domain-verification`.
    func addDomain(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try requireEnvironment(request, action: "domain.add") {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let raw) = body.string("domain") else { return Self.invalidField("domain", "is required (a string)") }
        guard let domain = DomainName.normalize(raw) else {
            return Self.invalidField("domain", "must be a DNS host name such as acme.com (no scheme, port or path)")
        }
        do {
            // A domain is project-level: its row names no environment, so both environments list it.
            let entry = try audit.entry(caller, request, "domain.add", target: domain, projectLevel: true)
            let record = try domains.add(projectID: environment.projectID, domain: domain, now: context.clock.now(), audit: entry)
            return Wire.json(status: 201, DomainBody(domain: record))
        } catch StoreError.duplicate {
            return Wire.error(.conflict, "This domain is already added to the project.")
        }
    }

    /// `GET /v1/admin/domains` → the project's domains.
    func listDomains(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        let items = try domains.list(projectID: environment.projectID)
        return Wire.json(status: 200, ListBody(items: items.map(DomainBody.init), nextCursor: nil))
    }

    /// `POST /v1/admin/domains/{domain}/verify`: with a secret key, fetches the token file
    /// (`AppHandlers.verifyDomain`); with the operator token and `{"projectId"}` (optionally
    /// `"hosted": true`), marks the domain verified.
    func verifyDomain(_ request: HTTPRequest, domain rawDomain: String) throws -> HTTPResponse {
        let caller = try caller(request)
        switch caller {
        case .none:
            try audit.refused(nil, request, "domain.verify", target: DomainName.normalize(rawDomain))
            return Self.invalidToken
        case .environment(let environment, _)?:
            return try AppHandlers(context: context).verifyDomain(environment, domain: rawDomain) {
                try audit.entry(caller!, request, "domain.verify", target: $0, projectLevel: true)
            }
        case .operator?: break
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let projectID) = body.string("projectId") else { return Self.invalidField("projectId", "is required (a string)") }
        guard let domain = DomainName.normalize(rawDomain) else { return Self.invalidField("domain", "must be a DNS host name") }
        let hosted: Bool? = if case .value(let flag) = body.bool("hosted") { flag } else { nil }
        let entry = try audit.entry(
            .operator, request, hosted == nil ? "domain.verify" : "domain.mark_hosted", target: domain,
            projectID: UUID(uuidString: projectID) == nil ? nil : projectID)
        guard
            let marked = try domains.markVerified(
                projectID: projectID, domain: domain, hosted: hosted, now: context.clock.now(), audit: entry)
        else {
            return Wire.error(.notFound, "The project has no such domain.")
        }
        // The answer shows the domain as it now stands, `hosted` included (docs/protocol.md#admin-calls).
        return Wire.json(status: 200, ["domain": .string(domain), "verified": true, "hosted": .bool(marked.hosted)] as JSONValue)
    }

    // MARK: Shared answers

    static let badBody = Wire.error(.invalidRequest, "The body must be one strict JSON object.")

    static func invalidField(_ name: String, _ problem: String) -> HTTPResponse {
        Wire.error(.invalidRequest, "\(name) \(problem).")
    }
}

/// `?cursor=&limit=` of a list call (default limit 50, at most 100).
struct Paging {
    let cursor: String?
    let limit: Int

    init?(_ request: HTTPRequest) {
        let query = (try? FormURLEncoding.decode(request.rawQuery ?? "")) ?? []
        cursor = query.first { $0.name == "cursor" }?.value
        if let text = query.first(where: { $0.name == "limit" })?.value {
            guard let value = Int(text), (1...100).contains(value) else { return nil }
            limit = value
        } else {
            limit = 50
        }
    }
}
