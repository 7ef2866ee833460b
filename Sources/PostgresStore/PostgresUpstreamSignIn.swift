import Authorize
import Foundation
import Postgres

/// The hosted upstream sign-in in PostgreSQL (sql/023 and sql/025; docs/federation.md, "Hosted sign-in"):
/// flows, link confirmations, links, and the accounts an upstream sign-in makes. Single use is one
/// `UPDATE … RETURNING` each; every statement runs through `PostgresEdge.run`.
public struct PostgresUpstreamSignIn: Sendable, UpstreamFlowStore, UpstreamIdentityStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool.
    public init(pool: PostgresPool) { self.pool = pool }

    // MARK: Providers

    public func provider(slug: String) throws -> UpstreamProviderRecord? {
        try PostgresEdge.run {
            try pool.query("SELECT \(PostgresProviders.columns) FROM upstream_providers p WHERE p.slug = $1", [slug]).first.map(
                PostgresProviders.record)
        }
    }

    public func shownProviders(projectID: String) throws -> [UpstreamProviderRecord] {
        guard UUID(uuidString: projectID) != nil else { return [] }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(PostgresProviders.columns) FROM project_upstream_providers c JOIN upstream_providers p ON p.id = c.provider_id
                WHERE c.project_id = $1 ORDER BY c.position, p.created_at
                """, [projectID]
            ).rows.map(PostgresProviders.record)
        }
    }

    public func allProviders() throws -> [UpstreamProviderRecord] {
        try PostgresEdge.run {
            try pool.query("SELECT \(PostgresProviders.columns) FROM upstream_providers p ORDER BY p.created_at, p.id LIMIT 100").rows.map(
                PostgresProviders.record)
        }
    }

    // MARK: Flows

    static let flowColumns = """
        id, provider_id, browser_binding_hash, sealed_nonce, sealed_code_verifier, authorization_request_id, expires_at,
        posted_code_sealed, posted_name, used_at IS NOT NULL AS used
        """

    static func flow(_ row: PostgresRow) throws -> UpstreamFlowRecord {
        UpstreamFlowRecord(
            id: try row.string("id"), providerID: try row.string("provider_id"), browserBindingHash: try row.string("browser_binding_hash"),
            sealedNonce: try row.string("sealed_nonce"), sealedCodeVerifier: try row.string("sealed_code_verifier"),
            authorizationRequestID: row["authorization_request_id"], expiresAt: try row.date("expires_at"),
            postedCodeSealed: row["posted_code_sealed"], postedName: row["posted_name"], used: try row.bool("used"))
    }

    public func createUpstreamFlow(_ flow: UpstreamFlowRecord, stateHash: String, now: Date) throws {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO upstream_flows (id, state_hash, browser_binding_hash, provider_id, sealed_nonce, sealed_code_verifier,
                                            authorization_request_id, created_at, expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, to_timestamp($8::float8), to_timestamp($9::float8))
                """,
                [
                    flow.id, stateHash, flow.browserBindingHash, flow.providerID, flow.sealedNonce, flow.sealedCodeVerifier,
                    flow.authorizationRequestID, SQLTime.parameter(now), SQLTime.parameter(flow.expiresAt),
                ])
        }
    }

    public func parkPostedCode(stateHash: String, sealedCode: String, name: String?, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE upstream_flows SET posted_code_sealed = $2, posted_name = $3, posted_at = to_timestamp($4::float8)
                WHERE state_hash = $1 AND used_at IS NULL AND posted_at IS NULL AND expires_at > to_timestamp($4::float8)
                """, [stateHash, sealedCode, name, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }

    public func consumeUpstreamFlow(stateHash: String, bindingHash: String, now: Date) throws -> UpstreamFlowRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE upstream_flows SET used_at = to_timestamp($3::float8)
                WHERE state_hash = $1 AND browser_binding_hash = $2 AND used_at IS NULL AND expires_at > to_timestamp($3::float8)
                RETURNING \(Self.flowColumns)
                """, [stateHash, bindingHash, SQLTime.parameter(now)]
            ).first.map(Self.flow)
        }
    }

    public func upstreamFlow(stateHash: String) throws -> UpstreamFlowRecord? {
        try PostgresEdge.run {
            try pool.query("SELECT \(Self.flowColumns) FROM upstream_flows WHERE state_hash = $1", [stateHash]).first.map(Self.flow)
        }
    }

    public func endUpstreamFlow(stateHash: String, now: Date) throws {
        try PostgresEdge.run {
            try pool.query(
                "UPDATE upstream_flows SET used_at = to_timestamp($2::float8) WHERE state_hash = $1 AND used_at IS NULL",
                [stateHash, SQLTime.parameter(now)])
        }
    }

    // MARK: Link confirmations

    static let confirmationColumns = """
        id, provider_id, issuer, subject, email, user_id, authorization_request_id, created_at, expires_at, used_at IS NOT NULL AS used
        """

    public func createLinkConfirmation(_ confirmation: LinkConfirmationRecord, tokenHash: String) throws {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO upstream_link_confirmations (id, token_hash, provider_id, issuer, subject, email, user_id,
                                                         authorization_request_id, created_at, expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9::float8), to_timestamp($10::float8))
                """,
                [
                    confirmation.id, tokenHash, confirmation.providerID, confirmation.issuer, confirmation.subject, confirmation.email,
                    confirmation.userID, confirmation.authorizationRequestID, SQLTime.parameter(confirmation.createdAt),
                    SQLTime.parameter(confirmation.expiresAt),
                ])
        }
    }

    public func linkConfirmation(tokenHash: String) throws -> LinkConfirmationRecord? {
        try PostgresEdge.run {
            try pool.query(
                "SELECT \(Self.confirmationColumns) FROM upstream_link_confirmations WHERE token_hash = $1", [tokenHash]
            ).first.map { row in
                LinkConfirmationRecord(
                    id: try row.string("id"), providerID: try row.string("provider_id"), issuer: try row.string("issuer"),
                    subject: try row.string("subject"), email: row["email"], userID: try row.string("user_id"),
                    authorizationRequestID: row["authorization_request_id"], createdAt: try row.date("created_at"),
                    expiresAt: try row.date("expires_at"), used: try row.bool("used"))
            }
        }
    }

    public func useLinkConfirmation(id: String, now: Date) throws -> Bool {
        guard UUID(uuidString: id) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query(
                """
                UPDATE upstream_link_confirmations SET used_at = to_timestamp($2::float8)
                WHERE id = $1 AND used_at IS NULL AND expires_at > to_timestamp($2::float8)
                """, [id, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }

    // MARK: Signing in

    public func detachBrowserSession(requestID: String) throws {
        guard UUID(uuidString: requestID) != nil else { return }
        try PostgresEdge.run {
            try pool.query(
                "UPDATE authorization_requests SET browser_session_id = NULL WHERE id = $1 AND completed_at IS NULL", [requestID])
        }
    }

    public func createFederatedMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO mfa_challenges (user_id, browser_binding_hash, authorization_request_id, created_at, expires_at, first_factor)
                VALUES ($1, $2, $3, to_timestamp($4::float8), to_timestamp($5::float8), 'fed') RETURNING id
                """,
                [
                    userID, browserBindingHash, authorizationRequestID, SQLTime.parameter(now),
                    SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds)),
                ]
            ).rows[0].string("id")
        }
    }

    public func createFederatedBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
        try PostgresEdge.run {
            try pool.withConnection {
                try PostgresBrowserSessions.insert($0, tokenHash: tokenHash, userID: userID, now: now, methods: .federated)
            }
        }
    }

    // MARK: Links and accounts

    public func linkedAccount(_ identity: UpstreamIdentity, now: Date) throws -> UserRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                WITH link AS (
                    UPDATE upstream_identities SET last_used_at = to_timestamp($4::float8), email = COALESCE($5, email)
                    WHERE provider_id = $1 AND issuer = $2 AND subject = $3 RETURNING user_id)
                SELECT \(PostgresAccounts.userColumns) FROM users WHERE id = (SELECT user_id FROM link)
                """, [identity.providerID, identity.issuer, identity.subject, SQLTime.parameter(now), identity.email]
            ).first.map(PostgresAccounts.user(from:))
        }
    }

    public func user(emailKey: String) throws -> UserRecord? {
        try PostgresAccounts(pool: pool).user(emailKey: emailKey)
    }

    static let linkSQL = """
        INSERT INTO upstream_identities (id, provider_id, issuer, subject, user_id, email, created_at, last_used_at)
        VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, to_timestamp($6::float8), to_timestamp($6::float8))
        ON CONFLICT ON CONSTRAINT upstream_identities_subject_unique DO NOTHING
        RETURNING id
        """

    static func linkAudit(_ action: String, userID: String, target: String?, clientAddress: String?, now: Date) -> AuditEntry {
        AuditEntry(
            actor: .account(userID: userID), action: action, target: target, subjectUserID: userID, clientAddress: clientAddress, at: now)
    }

    public func createLinkedAccount(
        email: EmailAddress, name: DisplayName, verified: Bool, identity: UpstreamIdentity, now: Date, clientAddress: String?
    ) throws -> UserRecord {
        let created = try PostgresEdge.run {
            try pool.transaction { connection -> PostgresRow? in
                guard
                    let row = try connection.query(
                        """
                        INSERT INTO users (email, email_normalized, email_key_rule, name, password_hash, password_changed_at, created_at,
                                           email_verified_at)
                        VALUES ($1, $2, $6::smallint, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8),
                                CASE WHEN $7 THEN to_timestamp($5::float8) END)
                        ON CONFLICT ON CONSTRAINT users_email_unique DO NOTHING
                        RETURNING \(PostgresAccounts.userColumns)
                        """,
                        [
                            email.typed, email.key, name.text, UserRecord.noPassword, SQLTime.parameter(now),
                            String(PostgresStore.emailKeyRule), verified ? "true" : "false",
                        ]
                    ).first
                else { return nil }
                let userID = try row.string("id")
                guard
                    let link = try connection.query(
                        Self.linkSQL,
                        [identity.providerID, identity.issuer, identity.subject, userID, identity.email, SQLTime.parameter(now)]
                    ).first
                else {
                    // The identity was linked meanwhile: roll the account back (the caller looks again).
                    throw StoreError.duplicate(constraint: "upstream_identities_subject_unique")
                }
                try AuditRows.insert(
                    Self.linkAudit("account.create", userID: userID, target: userID, clientAddress: clientAddress, now: now), on: connection
                )
                try AuditRows.insert(
                    Self.linkAudit(
                        "upstream.link", userID: userID, target: try link.string("id"), clientAddress: clientAddress, now: now),
                    on: connection)
                return row
            }
        }
        guard let created else { throw StoreError.duplicate(constraint: "users_email_unique") }
        return try PostgresEdge.run { try PostgresAccounts.user(from: created) }
    }

    public func linkIdentity(
        providerID: String, issuer: String, subject: String, email: String?, userID: String, now: Date, clientAddress: String?
    ) throws -> Bool {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    let link = try connection.query(Self.linkSQL, [providerID, issuer, subject, userID, email, SQLTime.parameter(now)])
                        .first
                else { return false }
                try AuditRows.insert(
                    Self.linkAudit("upstream.link", userID: userID, target: try link.string("id"), clientAddress: clientAddress, now: now),
                    on: connection)
                return true
            }
        }
    }

    public func linkedIdentities(userID: String) throws -> [LinkedIdentity] {
        guard UUID(uuidString: userID) != nil else { return [] }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT i.id, i.provider_id, p.display_name, i.email, i.created_at, i.last_used_at
                FROM upstream_identities i JOIN upstream_providers p ON p.id = i.provider_id
                WHERE i.user_id = $1 ORDER BY i.created_at, i.id
                """, [userID]
            ).rows.map { row in
                LinkedIdentity(
                    id: try row.string("id"), providerID: try row.string("provider_id"), providerName: try row.string("display_name"),
                    email: row["email"], createdAt: try row.date("created_at"), lastUsedAt: try row.date("last_used_at"))
            }
        }
    }

    public func unlinkIdentity(
        id: String, userID: String, now: Date, clientAddress: String?, allowed: (Bool, Int, Int) -> Bool
    ) throws -> UnlinkOutcome {
        guard UUID(uuidString: id) != nil, UUID(uuidString: userID) != nil else { return .notFound }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                // The account's row lock serialises every unlink (and passkey removal's count) of this account.
                guard
                    let counts = try connection.query(
                        """
                        SELECT u.password_hash <> $2 AS has_password,
                               (SELECT count(*) FROM passkey_credentials c WHERE c.user_id = u.id) AS passkeys,
                               (SELECT count(*) FROM upstream_identities i WHERE i.user_id = u.id) AS identities,
                               EXISTS (SELECT 1 FROM upstream_identities i WHERE i.id = $3 AND i.user_id = u.id) AS found
                        FROM users u WHERE u.id = $1 FOR UPDATE
                        """, [userID, UserRecord.noPassword, id]
                    ).first, try counts.bool("found")
                else { return .notFound }
                guard
                    allowed(
                        try counts.bool("has_password"), Int(counts["passkeys"] ?? "0") ?? 0, Int(counts["identities"] ?? "0") ?? 0)
                else { return .lastWayToSignIn }
                try connection.query("DELETE FROM upstream_identities WHERE id = $1 AND user_id = $2", [id, userID])
                try AuditRows.insert(
                    Self.linkAudit("upstream.unlink", userID: userID, target: id, clientAddress: clientAddress, now: now), on: connection)
                return .unlinked
            }
        }
    }
}

extension PostgresStore {
    /// The hosted upstream sign-in (docs/architecture.md, "PostgresStore").
    public var upstreamSignIn: PostgresUpstreamSignIn { PostgresUpstreamSignIn(pool: pool) }
}
