import Association
import Authorize
import Foundation
import Postgres

/// Every SQL statement of the server, parameterized only (`$1…` through `PQexecParams`).
///
/// One instance is shared by all request threads; it holds no state beyond the pool, so any number of
/// server instances may share one database (docs/operations.md, several instances).
public final class PostgresStore: Sendable {
    public let pool: PostgresPool
    /// The start clients and exchange environments kept in memory, when this store has a listener
    /// (docs/operations.md, "Configuration in memory"); nil: every lookup reads PostgreSQL.
    public let configuration: ConfigurationSnapshot?

    /// - Parameters:
    ///   - pool: the connection pool every statement goes through.
    ///   - configuration: the configuration snapshot the start and the exchange read through, or nil (the
    ///     default) to read PostgreSQL on every request.
    public init(pool: PostgresPool, configuration: ConfigurationSnapshot? = nil) {
        self.pool = pool
        self.configuration = configuration
    }

    // Tenancy (projects, environments, keys, domains) is `PostgresTenancy` (PostgresStore+Projects.swift).

    // Callbacks are `PostgresCallbacks` (PostgresStore+Callbacks.swift).

    // MARK: - Start

    /// The client as the start's checks see it: the environment, its registered redirect URIs, and for
    /// each link whether its domain is verified and, in production, an app verified for it. One statement:
    /// the apps' facts come in the same row (`PostgresApps.appFactsColumn`, computed once per environment).
    /// - Returns: nil when no environment has this publishable key.
    public func clientEnvironment(publishableKey: String) throws -> (EnvironmentRecord, ClientEnvironment)? {
        // Prepared once per connection, as the exchange is: every start runs it (docs/performance.md).
        let result = try pool.query(
            prepared: """
                SELECT \(Self.environmentColumns), f.app_facts, c.uri, c.kind AS callback_kind, c.scheme, c.host, c.port,
                       c.path_and_query, d.verified_at IS NOT NULL AS link_verified
                FROM environments e JOIN projects p ON p.id = e.project_id
                CROSS JOIN LATERAL (SELECT \(PostgresApps.appFactsColumn)) f
                LEFT JOIN callbacks c ON c.environment_id = e.id AND c.scheme IS NOT NULL
                LEFT JOIN project_domains d ON c.kind = 'link' AND d.project_id = e.project_id AND d.domain = c.host
                WHERE e.publishable_key = $1
                ORDER BY c.created_at
                """, [publishableKey])
        guard let first = result.first else { return nil }
        let environment = try Self.environment(from: first)
        let facts = PostgresApps.appLinkFacts(json: first["app_facts"])
        var registered: [RegisteredRedirect] = []
        for row in result.rows {
            // Rebuilt from the parts stored at registration: never parsed again (sql/008).
            guard let raw = row["uri"], let kind = row["callback_kind"].flatMap(RedirectKind.init(rawValue:)) else { continue }
            let uri = RedirectURI(
                raw: raw, kind: kind, scheme: try row.string("scheme"), host: row["host"], port: row["port"].flatMap { Int($0) },
                pathAndQuery: try row.string("path_and_query"))
            let domainVerified = (row["link_verified"] ?? "f") == "t"
            registered.append(
                RegisteredRedirect(
                    uri: uri, productionCustomSchemeAllowed: facts.customSchemes.contains(uri.scheme),
                    linkVerified: facts.linkVerified(
                        host: uri.host ?? "", path: String(uri.pathAndQuery.prefix { $0 != "?" }), domainVerified: domainVerified,
                        production: environment.kind == .production)))
        }
        var client = ClientEnvironment(
            environmentID: environment.id, kind: environment.kind,
            appName: environment.projectName, registeredRedirects: registered)
        client.requiresPushedRequests = environment.requirePushedAuthorizationRequests
        return (environment, client)
    }

    /// A pending sign-in by id, whatever its state (the caller checks expiry, completion and binding).
    public func authorizationRequest(id: String) throws -> AuthorizationRequestRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run { try loadAuthorizationRequest(id: id) }
    }

    private func loadAuthorizationRequest(id: String) throws -> AuthorizationRequestRecord? {
        guard
            let row = try pool.query(
                """
                SELECT id, environment_id, redirect_uri, redirect_kind, redirect_scheme, redirect_host, redirect_port,
                       redirect_path_and_query, state, code_challenge, prompt_login, login_hint,
                       browser_binding_hash, browser_session_id, expires_at, completed_at, standard_endpoint,
                       prompt_consent, web_client_id, scope, form_post
                FROM authorization_requests WHERE id = $1
                """, [id]
            ).first
        else { return nil }
        // Rebuilt from the parts the start stored (sql/008), never parsed again; a row without them is
        // one the migration could not parse, and cannot continue.
        guard let kind = RedirectKind(rawValue: try row.string("redirect_kind")), let scheme = row["redirect_scheme"],
            let pathAndQuery = row["redirect_path_and_query"]
        else { return nil }
        let redirect = RedirectURI(
            raw: try row.string("redirect_uri"), kind: kind, scheme: scheme, host: row["redirect_host"],
            port: row["redirect_port"].flatMap { Int($0) }, pathAndQuery: pathAndQuery)
        var record = AuthorizationRequestRecord(
            id: try row.string("id"), environmentID: try row.string("environment_id"), redirect: redirect,
            state: try row.string("state"), codeChallenge: try row.string("code_challenge"),
            promptLogin: try row.bool("prompt_login"), loginHint: row["login_hint"],
            browserBindingHash: try row.string("browser_binding_hash"), browserSessionID: row["browser_session_id"],
            expiresAt: try row.date("expires_at"), completedAt: try row.optionalDate("completed_at"),
            standardEndpoint: try row.bool("standard_endpoint"))
        record.promptConsent = try row.bool("prompt_consent")
        record.webClientID = row["web_client_id"]
        record.scope = GrantedScope(requested: row["scope"])
        record.formPost = try row.bool("form_post")
        return record
    }

    // MARK: - Sessions

    /// Whether a session is revoked (tests and the conformance client's view of replay).
    public func isSessionRevoked(id: String) throws -> Bool? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query("SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1", [id]).first
            .map { try $0.bool("revoked") }
    }

    /// Answers whether PostgreSQL accepts writes (`/readyz`): reachable, not a standby, not read-only
    /// (`PostgresPool.acceptsWrites()`, at most one cheap statement per health-check interval); and, when
    /// the store has a configuration listener, whether it listens now (docs/operations.md, "Configuration
    /// in memory").
    public func isReady() -> Bool { (configuration?.isReady ?? true) && pool.acceptsWrites() }
}

/// The hosted pages read pending sign-ins here and the accounts, consents and environments through the
/// aggregates' forwarders; `/readyz` asks the pool.
extension PostgresStore: PendingSignInStore, ReadinessProbe {}
