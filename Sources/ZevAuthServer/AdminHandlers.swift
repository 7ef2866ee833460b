import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PostgresStore

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
    /// unrevoked secret key of an environment.
    func actor(_ request: HTTPRequest) throws -> AdminActor? {
        guard let token = Wire.bearer(request) else { return nil }
        if Crypto.constantTimeEquals(Crypto.sha256(Array(token.utf8)), Crypto.sha256(Array(context.configuration.operatorToken.utf8))) {
            return .operator
        }
        guard token.hasPrefix("sk_test_") || token.hasPrefix("sk_live_"),
            let environment = try context.store.environment(secretKeyHash: Crypto.hexSHA256(token))
        else { return nil }
        return .environment(environment)
    }

    private func requireOperator(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch try actor(request) {
        case .none: return Self.invalidToken
        case .environment: return Wire.error(.forbidden, "Only the operator token may do this.")
        case .operator: return nil
        }
    }

    func requireEnvironment(_ request: HTTPRequest) throws -> Result<EnvironmentRecord, Stop> {
        switch try actor(request) {
        case .none: return .failure(Stop(Self.invalidToken))
        case .operator: return .failure(Stop(Wire.error(.forbidden, "Use the environment's secret key (sk_…) for this call.")))
        case .environment(let environment): return .success(environment)
        }
    }

    struct Stop: Error {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    static let invalidToken: HTTPResponse = {
        var response = Wire.error(.invalidToken, "Send the operator token or a secret key as Authorization: Bearer …", status: 401)
        response.headers.set("WWW-Authenticate", "Bearer")
        return response
    }()

    // MARK: Projects and accounts (operator)

    /// `POST /v1/admin/projects {"name"}` → 201 with both environments' keys; the secret keys are shown
    /// only in this answer (stored as SHA-256).
    func createProject(_ request: HTTPRequest) throws -> HTTPResponse {
        if let stop = try requireOperator(request) { return stop }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let rawName) = body.string("name") else { return Self.invalidField("name", "is required (a string)") }
        guard let name = DisplayName(rawName)?.text else { return Self.invalidField("name", DisplayName.rule) }
        let development = try Self.newKeys(publishablePrefix: "pk_test_", secretPrefix: "sk_test_")
        let production = try Self.newKeys(publishablePrefix: "pk_live_", secretPrefix: "sk_live_")
        let projectID = try context.store.createProject(
            name: name, development: development.stored, production: production.stored, now: context.clock.now())
        return Wire.anyJSON(
            status: 201,
            [
                "id": projectID, "name": name,
                "development": ["publishableKey": development.stored.publishableKey, "secretKey": development.secret],
                "production": ["publishableKey": production.stored.publishableKey, "secretKey": production.secret],
            ])
    }

    static func newKeys(publishablePrefix: String, secretPrefix: String) throws -> (
        stored: PostgresStore.NewEnvironmentKeys, secret: String
    ) {
        let secret = try Crypto.mintToken(prefix: secretPrefix)
        return (
            PostgresStore.NewEnvironmentKeys(
                publishableKey: try Crypto.mintToken(prefix: publishablePrefix), secretKeyHash: Crypto.hexSHA256(secret),
                secretKeySuffix: String(secret.suffix(4))), secret
        )
    }

    /// `POST /v1/admin/users {"email","password","name"}` → 201 `{"id","email","name"}`; 409 when the email
    /// has an account.
    func createUser(_ request: HTTPRequest) throws -> HTTPResponse {
        if let stop = try requireOperator(request) { return stop }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let rawEmail) = body.string("email") else { return Self.invalidField("email", "is required (a string)") }
        guard case .value(let password) = body.string("password") else { return Self.invalidField("password", "is required (a string)") }
        guard case .value(let rawName) = body.string("name") else { return Self.invalidField("name", "is required (a string)") }
        let email: EmailAddress
        switch EmailAddress.parse(rawEmail) {
        case .failure(let problem): return Self.invalidField("email", problem.explanation)
        case .success(let address): email = address
        }
        if let problem = AccountRules.passwordProblem(password) { return Self.invalidField("password", problem) }
        guard let name = DisplayName(rawName)?.text else { return Self.invalidField("name", DisplayName.rule) }
        let hash = try context.passwordHasher.hash(password)
        do {
            let user = try context.store.createUser(
                email: email.typed, emailNormalized: email.key, name: name, passwordHash: hash, now: context.clock.now())
            return Wire.anyJSON(status: 201, ["id": user.id, "email": user.email, "name": user.name])
        } catch StoreError.duplicate {
            return Wire.error(.conflict, "An account with this email already exists.", status: 409)
        }
    }

    // MARK: Domains

    /// `POST /v1/admin/domains {"domain"}` (secret key) → 201 with the token to publish at
    /// `https://DOMAIN/.well-known/zevauth-domain-verification`.
    func addDomain(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let raw) = body.string("domain") else { return Self.invalidField("domain", "is required (a string)") }
        guard let domain = DomainName.normalize(raw) else {
            return Self.invalidField("domain", "must be a DNS host name such as acme.com (no scheme, port or path)")
        }
        let token = try Crypto.mintToken(prefix: "zdv_")
        do {
            let record = try context.store.addDomain(
                projectID: environment.projectID, domain: domain, verificationToken: token, now: context.clock.now())
            return Wire.anyJSON(status: 201, Self.domainBody(record))
        } catch StoreError.duplicate {
            return Wire.error(.conflict, "This domain is already added to the project.", status: 409)
        }
    }

    /// `GET /v1/admin/domains` → the project's domains.
    func listDomains(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        let domains = try context.store.domains(projectID: environment.projectID)
        return Wire.anyJSON(status: 200, ["items": domains.map(Self.domainBody), "nextCursor": NSNull()] as [String: Any])
    }

    /// `POST /v1/admin/domains/{domain}/verify`: with a secret key, fetches the token file
    /// (`AppHandlers.verifyDomain`); with the operator token and `{"projectId"}` (optionally
    /// `"hosted": true`), marks the domain verified.
    func verifyDomain(_ request: HTTPRequest, domain rawDomain: String) throws -> HTTPResponse {
        switch try actor(request) {
        case .none: return Self.invalidToken
        case .environment(let environment):
            return try AppHandlers(context: context).verifyDomain(environment, domain: rawDomain)
        case .operator: break
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let projectID) = body.string("projectId") else { return Self.invalidField("projectId", "is required (a string)") }
        guard let domain = DomainName.normalize(rawDomain) else { return Self.invalidField("domain", "must be a DNS host name") }
        let hosted = body.fields["hosted"] as? Bool
        guard try context.store.markDomainVerified(projectID: projectID, domain: domain, hosted: hosted, now: context.clock.now()) else {
            return Wire.error(.notFound, "The project has no such domain.", status: 404)
        }
        // The answer shows the domain as it now stands, `hosted` included (docs/protocol.md#admin-calls).
        let hostedNow = try context.store.domains(projectID: projectID).first { $0.domain == domain }?.hosted ?? (hosted ?? false)
        return Wire.anyJSON(status: 200, ["domain": domain, "verified": true, "hosted": hostedNow])
    }

    static func domainBody(_ domain: DomainRecord) -> [String: Any] {
        [
            "domain": domain.domain, "verified": domain.verifiedAt != nil, "hosted": domain.hosted,
            "verificationToken": domain.verificationToken,
            "verificationUrl": "https://\(domain.domain)/.well-known/zevauth-domain-verification",
        ]
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

/// Rules for ZevID accounts.
enum AccountRules {
    /// The password policy (NIST SP 800-63B §5.1.1.2): at least 10 characters, at most 1024 bytes.
    /// - Returns: what is wrong, or nil.
    static func passwordProblem(_ password: String) -> String? {
        if password.count < 10 { return "must be at least 10 characters" }
        if password.utf8.count > 1024 { return "must be at most 1024 bytes" }
        return nil
    }
}

/// DNS host names for project domains.
enum DomainName {
    /// Lower-cases and checks a host name: labels of letters, digits and `-`, at least two labels, ≤ 253.
    /// - Returns: the normalized name, or nil.
    static func normalize(_ raw: String) -> String? {
        let name = raw.lowercased()
        guard (1...253).contains(name.utf8.count) else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return nil }
        for label in labels {
            guard (1...63).contains(label.utf8.count), !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
            else { return nil }
        }
        guard let last = labels.last, !last.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }  // not an IPv4 literal
        return name
    }
}
