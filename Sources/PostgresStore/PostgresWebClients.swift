import Authorize
import Encoding
import Foundation
import Postgres

/// The environments' web clients and their secrets (sql/026_web_clients.sql; docs/protocol.md, "Web
/// clients"). Secrets arrive as digests and never leave; every write inserts its audit row in its own
/// transaction.
public struct PostgresWebClients: WebClientStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    static let columns = """
        c.client_id, c.environment_id, c.name, array_to_json(c.redirect_uris)::text AS redirect_uris,
        array_to_json(c.post_logout_redirect_uris)::text AS post_logout_redirect_uris, c.token_endpoint_auth_method, c.jwks,
        c.jwks_uri, c.require_pkce, c.require_pushed_authorization_requests, c.created_at, c.updated_at
        """

    static let secretColumns = "s.id, s.client_id, s.suffix, s.created_at, s.revoked_at, s.expires_at"

    /// A list of strings as the JSON text `jsonb_array_elements_text` reads (a `text[]` parameter).
    static func jsonArray(_ strings: [String]) -> String {
        String(decoding: JSONWriter.encode(JSONValue.array(strings.map { .string($0) })), as: UTF8.self)
    }

    static func strings(_ json: String?) -> [String] {
        guard let json, case .array(let values)? = try? JSONValue.parse(Array(json.utf8)) else { return [] }
        return values.compactMap(\.stringValue)
    }

    static func record(_ row: PostgresRow) throws -> WebClientRecord {
        guard let method = TokenEndpointAuthMethod(rawValue: try row.string("token_endpoint_auth_method")) else {
            throw PostgresError(kind: .query, message: "column \"token_endpoint_auth_method\" holds an unknown method")
        }
        return WebClientRecord(
            clientID: try row.string("client_id"), environmentID: try row.string("environment_id"), name: try row.string("name"),
            redirectURIs: strings(row["redirect_uris"]), postLogoutRedirectURIs: strings(row["post_logout_redirect_uris"]),
            authMethod: method, jwks: row["jwks"], jwksURI: row["jwks_uri"], requirePKCE: try row.bool("require_pkce"),
            requirePushedRequests: try row.bool("require_pushed_authorization_requests"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"))
    }

    static func secret(_ row: PostgresRow) throws -> WebClientSecretRecord {
        WebClientSecretRecord(
            id: try row.string("id"), suffix: try row.string("suffix"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"), expiresAt: try row.optionalDate("expires_at"))
    }

    /// The clients of `rows` with their secrets (one more statement for all of them).
    private func listed(_ rows: [PostgresRow], on connection: PostgresConnection? = nil) throws -> [ListedWebClient] {
        let clients = try rows.map(Self.record)
        guard !clients.isEmpty else { return [] }
        let sql =
            "SELECT \(Self.secretColumns) FROM web_client_secrets s WHERE s.client_id = ANY (ARRAY(SELECT jsonb_array_elements_text($1::jsonb))) ORDER BY s.created_at, s.id"
        let parameters = [Self.jsonArray(clients.map(\.clientID))]
        let secretRows = try connection.map { try $0.query(sql, parameters) } ?? pool.query(sql, parameters)
        var byClient: [String: [WebClientSecretRecord]] = [:]
        for row in secretRows.rows { byClient[try row.string("client_id"), default: []].append(try Self.secret(row)) }
        return clients.map { ListedWebClient(client: $0, secrets: byClient[$0.clientID] ?? []) }
    }

    /// - Throws: `StoreUnavailable`.
    public func webClients(environmentID: String, after: String?, limit: Int) throws -> [ListedWebClient] {
        try PostgresEdge.run {
            let rows = try pool.query(
                """
                SELECT \(Self.columns) FROM web_clients c
                WHERE c.environment_id = $1::uuid
                  AND ($2::text IS NULL OR (c.created_at, c.client_id) > (SELECT created_at, client_id FROM web_clients WHERE client_id = $2))
                ORDER BY c.created_at, c.client_id LIMIT $3
                """, [environmentID, after, String(limit)]
            ).rows
            return try listed(rows)
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func webClient(clientID: String) throws -> ListedWebClient? {
        guard clientID.hasPrefix(WebClients.clientIDPrefix), clientID.utf8.count <= 100 else { return nil }
        return try PostgresEdge.run {
            try listed(try pool.query("SELECT \(Self.columns) FROM web_clients c WHERE c.client_id = $1", [clientID]).rows).first
        }
    }

    /// - Throws: `StoreUnavailable`.
    public func createWebClient(
        clientID: String, environmentID: String, _ columns: WebClientColumns, secret: NewWebClientSecret?, now: Date, audit: AuditEntry
    ) throws -> ListedWebClient {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let rows = try connection.query(
                    """
                    WITH c AS (
                        INSERT INTO web_clients (client_id, environment_id, name, redirect_uris, post_logout_redirect_uris,
                            token_endpoint_auth_method, jwks, jwks_uri, require_pkce, require_pushed_authorization_requests,
                            created_at, updated_at)
                        VALUES ($1, $2::uuid, $3, ARRAY(SELECT jsonb_array_elements_text($4::jsonb)),
                            ARRAY(SELECT jsonb_array_elements_text($5::jsonb)), $6, $7, $8, $9::boolean, $11::boolean,
                            to_timestamp($10::float8), to_timestamp($10::float8))
                        RETURNING *
                    )
                    SELECT \(Self.columns) FROM c
                    """,
                    [
                        clientID, environmentID, columns.name, Self.jsonArray(columns.redirectURIs),
                        Self.jsonArray(columns.postLogoutRedirectURIs), columns.authMethod.rawValue, columns.jwks, columns.jwksURI,
                        columns.requirePKCE ? "true" : "false", SQLTime.parameter(now),
                        columns.requirePushedRequests ? "true" : "false",
                    ]
                ).rows
                if let secret {
                    try Self.insert(secret, clientID: clientID, now: now, on: connection)
                }
                try AuditRows.insert(audit, on: connection)
                return try listed(rows, on: connection)[0]
            }
        }
    }

    @discardableResult
    static func insert(_ secret: NewWebClientSecret, clientID: String, now: Date, on connection: PostgresConnection) throws
        -> WebClientSecretRecord
    {
        let row = try connection.query(
            """
            INSERT INTO web_client_secrets AS s (id, client_id, secret_hash, suffix, created_at)
            VALUES ($1::uuid, $2, $3, $4, to_timestamp($5::float8))
            RETURNING \(secretColumns)
            """, [secret.id, clientID, secret.hash, secret.suffix, SQLTime.parameter(now)]
        ).rows[0]
        return try Self.secret(row)
    }

    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    public func updateWebClient(clientID: String, environmentID: String, _ columns: WebClientColumns, now: Date, audit: AuditEntry) throws
        -> ListedWebClient
    {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let rows = try connection.query(
                    """
                    WITH c AS (
                        UPDATE web_clients SET name = $3, redirect_uris = ARRAY(SELECT jsonb_array_elements_text($4::jsonb)),
                            post_logout_redirect_uris = ARRAY(SELECT jsonb_array_elements_text($5::jsonb)),
                            token_endpoint_auth_method = $6, jwks = $7, jwks_uri = $8, require_pkce = $9::boolean,
                            require_pushed_authorization_requests = $11::boolean, updated_at = to_timestamp($10::float8)
                        WHERE client_id = $1 AND environment_id = $2::uuid
                        RETURNING *
                    )
                    SELECT \(Self.columns) FROM c
                    """,
                    [
                        clientID, environmentID, columns.name, Self.jsonArray(columns.redirectURIs),
                        Self.jsonArray(columns.postLogoutRedirectURIs), columns.authMethod.rawValue, columns.jwks, columns.jwksURI,
                        columns.requirePKCE ? "true" : "false", SQLTime.parameter(now),
                        columns.requirePushedRequests ? "true" : "false",
                    ]
                ).rows
                guard !rows.isEmpty else { throw WebClientRefusal.noClient }
                try AuditRows.insert(audit, on: connection)
                return try listed(rows, on: connection)[0]
            }
        }
    }

    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    public func deleteWebClient(clientID: String, environmentID: String, audit: AuditEntry) throws {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let deleted = try connection.query(
                    "DELETE FROM web_clients WHERE client_id = $1 AND environment_id = $2::uuid", [clientID, environmentID]
                ).rowsAffected
                guard deleted == 1 else { throw WebClientRefusal.noClient }
                try AuditRows.insert(audit, on: connection)
            }
        }
    }

    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    public func addWebClientSecret(clientID: String, environmentID: String, _ secret: NewWebClientSecret, now: Date, audit: AuditEntry)
        throws -> WebClientSecretRecord
    {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    try connection.query(
                        "SELECT 1 FROM web_clients WHERE client_id = $1 AND environment_id = $2::uuid FOR UPDATE",
                        [clientID, environmentID]
                    ).first != nil
                else { throw WebClientRefusal.noClient }
                let record = try Self.insert(secret, clientID: clientID, now: now, on: connection)
                try AuditRows.insert(audit, on: connection)
                return record
            }
        }
    }

    /// The client's row is locked first, so two revocations of a client's last two secrets run one after
    /// the other and the second sees the first.
    /// - Throws: `WebClientRefusal.noClient`, `.noSecret`, `.lastSecret`; `StoreUnavailable`.
    public func revokeWebClientSecret(clientID: String, environmentID: String, secretID: String, now: Date, audit: AuditEntry) throws
        -> WebClientSecretRecord
    {
        guard UUID(uuidString: secretID) != nil else {
            guard try webClient(clientID: clientID)?.client.environmentID == environmentID else { throw WebClientRefusal.noClient }
            throw WebClientRefusal.noSecret
        }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    let client = try connection.query(
                        "SELECT token_endpoint_auth_method FROM web_clients WHERE client_id = $1 AND environment_id = $2::uuid FOR UPDATE",
                        [clientID, environmentID]
                    ).first
                else { throw WebClientRefusal.noClient }
                guard
                    let existing = try connection.query(
                        "SELECT \(Self.secretColumns) FROM web_client_secrets s WHERE s.id = $1::uuid AND s.client_id = $2",
                        [secretID, clientID]
                    ).first
                else { throw WebClientRefusal.noSecret }
                let record = try Self.secret(existing)
                if record.revokedAt != nil { return record }
                let usesSecret = TokenEndpointAuthMethod(rawValue: try client.string("token_endpoint_auth_method"))?.usesSecret ?? true
                if usesSecret {
                    let others = try connection.query(
                        """
                        SELECT count(*) AS live FROM web_client_secrets
                        WHERE client_id = $1 AND id <> $2::uuid AND revoked_at IS NULL
                          AND (expires_at IS NULL OR expires_at > to_timestamp($3::float8))
                        """, [clientID, secretID, SQLTime.parameter(now)]
                    ).first
                    guard try others?.int("live") ?? 0 > 0 else { throw WebClientRefusal.lastSecret }
                }
                let revoked = try connection.query(
                    """
                    UPDATE web_client_secrets s SET revoked_at = to_timestamp($2::float8) WHERE s.id = $1::uuid
                    RETURNING \(Self.secretColumns)
                    """, [secretID, SQLTime.parameter(now)]
                ).rows[0]
                try AuditRows.insert(audit, on: connection)
                return try Self.secret(revoked)
            }
        }
    }
}

extension PostgresWebClients {
    /// The scope sets `userID` consented to for `clientID` (sql/026 `web_client_consents`).
    /// - Throws: `StoreUnavailable`.
    public func webClientConsents(userID: String, clientID: String) throws -> [String] {
        guard UUID(uuidString: userID) != nil else { return [] }
        return try PostgresEdge.run {
            try pool.query("SELECT scope FROM web_client_consents WHERE user_id = $1::uuid AND client_id = $2", [userID, clientID])
                .rows.map { try $0.string("scope") }
        }
    }
}

extension PostgresWebClients {
    /// One `UPDATE`, as the public revocation's, limited to the client's own sessions.
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    public func revokeWebClientSession(clientID: String, tokenHash: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE sessions s SET revoked_at = to_timestamp($3::float8), revoked_reason = 'signed_out'
                WHERE s.web_client_id = $1 AND s.revoked_at IS NULL
                  AND s.id IN (SELECT session_id FROM issued_access_tokens WHERE token_hash = $2
                               UNION ALL SELECT session_id FROM issued_refresh_tokens WHERE token_hash = $2)
                """, [clientID, tokenHash, SQLTime.parameter(now)]
            ).rowsAffected > 0
        }
    }
}

extension PostgresWebClients: ClientAuthenticationStore {
    /// The client with its environment's publishable key and its live secrets' digests, in one statement.
    /// - Throws: `StoreUnavailable`.
    public func authenticatingClient(clientID: String, now: Date) throws -> AuthenticatingClient? {
        guard clientID.hasPrefix(WebClients.clientIDPrefix), clientID.utf8.count <= 100 else { return nil }
        return try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT \(Self.columns), e.publishable_key,
                           array_to_json(ARRAY(
                               SELECT s.secret_hash FROM web_client_secrets s
                               WHERE s.client_id = c.client_id AND s.revoked_at IS NULL
                                 AND (s.expires_at IS NULL OR s.expires_at > to_timestamp($2::float8))))::text AS live_secrets
                    FROM web_clients c JOIN environments e ON e.id = c.environment_id
                    WHERE c.client_id = $1
                    """, [clientID, SQLTime.parameter(now)]
                ).first
            else { return nil }
            return AuthenticatingClient(
                client: try Self.record(row), publishableKey: try row.string("publishable_key"),
                liveSecretHashes: Self.strings(row["live_secrets"]))
        }
    }

    /// `INSERT … ON CONFLICT DO NOTHING` (RFC 7523 §3: single use), which also forgets the client's
    /// expired ids in the same statement (an expired assertion is refused on its `exp` anyway).
    /// - Throws: `StoreUnavailable`.
    public func useAssertionID(clientID: String, jti: String, expiresAt: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                WITH forgotten AS (
                    DELETE FROM web_client_assertion_ids WHERE client_id = $1 AND expires_at < now() - interval '1 minute'
                )
                INSERT INTO web_client_assertion_ids (client_id, jti, expires_at)
                VALUES ($1, $2, to_timestamp($3::float8))
                ON CONFLICT (client_id, jti) DO NOTHING
                """, [clientID, jti, SQLTime.parameter(expiresAt)]
            ).rowsAffected == 1
        }
    }
}

extension PostgresStore {
    /// The environments' web clients (`PostgresWebClients`).
    public var webClients: PostgresWebClients { PostgresWebClients(pool: pool) }
}
