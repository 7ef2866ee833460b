import Authorize
import Foundation
import Postgres

/// ZevID accounts in PostgreSQL (`users`, `consents`, and the events that end every session of a person:
/// docs/protocol.md#session-ends). Every statement runs through `PostgresEdge.run`, so callers see
/// `StoreUnavailable` and `StoreError`, never `PostgresError`.
public struct PostgresAccounts: Sendable, CreateUserStore, AccountSignInStore, ChangePasswordStore, SignOutEverywhereStore,
    RemoveConnectedAppStore, CloseUserStore, FindUserStore, ResetMFAStore
{
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    static let userColumns = "id, email, name, image_url, password_hash, closed_at, email_verified_at, self_signed_up"

    static func user(from row: PostgresRow) throws -> UserRecord {
        UserRecord(
            id: try row.string("id"), email: try row.string("email"), name: try row.string("name"),
            imageURL: row["image_url"], passwordHash: try row.string("password_hash"),
            closed: row["closed_at"] != nil, emailVerified: row["email_verified_at"] != nil,
            selfSignedUp: row["self_signed_up"] == "t")
    }

    /// Creates a ZevID account.
    ///
    /// The insert never raises a unique violation on the email (`ON CONFLICT … DO NOTHING`): PostgreSQL
    /// would write the violating key, the normalised address, into its own log.
    /// `audit` (the operator's `account.create`, named after the new account; nil for a person's sign-up)
    /// is written in the same transaction, so a taken address leaves no row.
    /// - Throws: `StoreError.duplicate("users_email_unique")` when the address's key is taken; `StoreUnavailable`.
    public func createUser(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date, audit: AuditEntry?) throws -> UserRecord
    {
        guard let audit else {
            return try createUser(email: email.typed, emailKey: email.key, name: name.text, passwordHash: passwordHash, now: now)
        }
        let row = try PostgresEdge.run {
            try pool.transaction { connection -> PostgresRow? in
                guard
                    let row = try Self.insertUser(
                        connection, email: email.typed, emailKey: email.key, name: name.text, passwordHash: passwordHash, now: now)
                else { return nil }
                try AuditRows.insert(audit.naming(try row.string("id")), on: connection)
                return row
            }
        }
        guard let row else { throw StoreError.duplicate(constraint: "users_email_unique") }
        return try PostgresEdge.run { try Self.user(from: row) }
    }

    private static func insertUser(
        _ connection: PostgresConnection, email: String, emailKey: String, name: String, passwordHash: String, now: Date
    ) throws -> PostgresRow? {
        try connection.query(
            """
            INSERT INTO users (email, email_normalized, email_key_rule, name, password_hash, password_changed_at, created_at)
            VALUES ($1, $2, $6::smallint, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8))
            ON CONFLICT ON CONSTRAINT users_email_unique DO NOTHING
            RETURNING \(Self.userColumns)
            """, [email, emailKey, name, passwordHash, SQLTime.parameter(now), String(PostgresStore.emailKeyRule)]
        ).first
    }

    /// `createUser(email:name:passwordHash:now:)` over raw values, for the development seed and the
    /// migration-era callers that hold an address's key already.
    public func createUser(email: String, emailKey: String, name: String, passwordHash: String, now: Date) throws -> UserRecord {
        let row = try PostgresEdge.run {
            try pool.transaction { connection in
                try Self.insertUser(connection, email: email, emailKey: emailKey, name: name, passwordHash: passwordHash, now: now)
            }
        }
        guard let row else { throw StoreError.duplicate(constraint: "users_email_unique") }
        return try PostgresEdge.run { try Self.user(from: row) }
    }

    /// The account with this address key, open or closed.
    public func user(emailKey: String) throws -> UserRecord? {
        try PostgresEdge.run {
            try pool.query("SELECT \(Self.userColumns) FROM users WHERE email_normalized = $1", [emailKey]).first.map(Self.user(from:))
        }
    }

    /// The account with this id, open or closed; nil for an id that is not a UUID.
    public func user(id: String) throws -> UserRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query("SELECT \(Self.userColumns) FROM users WHERE id = $1", [id]).first.map(Self.user(from:))
        }
    }

    /// Whether the person has consented to this environment's app before.
    public func hasConsent(userID: String, environmentID: String) throws -> Bool {
        try PostgresEdge.run {
            try pool.query("SELECT 1 FROM consents WHERE user_id = $1 AND environment_id = $2", [userID, environmentID]).first != nil
        }
    }

    /// Revokes the person's sessions with the app and forgets its remembered consent, in one transaction
    /// (docs/protocol.md#connected-apps): an environment's native apps (the sessions no web client is named
    /// on, and the environment's `consents` row), or one web client (its sessions, and every remembered scope
    /// set of `web_client_consents`, so its next sign-in asks again).
    /// - Returns: the number of sessions revoked.
    public func removeApp(userID: String, app: ConnectedAppID, now: Date) throws -> Int {
        guard UUID(uuidString: userID) != nil else { return 0 }
        switch app {
        case .environment(let environmentID):
            guard UUID(uuidString: environmentID) != nil else { return 0 }
            return try PostgresEdge.run {
                try pool.transaction { connection in
                    let revoked = try connection.query(
                        """
                        UPDATE sessions SET revoked_at = to_timestamp($3::float8), revoked_reason = 'app_removed'
                        WHERE user_id = $1 AND environment_id = $2 AND web_client_id IS NULL AND revoked_at IS NULL
                        """, [userID, environmentID, SQLTime.parameter(now)]
                    ).rowsAffected
                    try connection.query("DELETE FROM consents WHERE user_id = $1 AND environment_id = $2", [userID, environmentID])
                    return revoked
                }
            }
        case .webClient(let clientID):
            return try PostgresEdge.run {
                try pool.transaction { connection in
                    let revoked = try connection.query(
                        """
                        UPDATE sessions SET revoked_at = to_timestamp($3::float8), revoked_reason = 'app_removed'
                        WHERE user_id = $1 AND web_client_id = $2 AND revoked_at IS NULL
                        """, [userID, clientID, SQLTime.parameter(now)]
                    ).rowsAffected
                    try connection.query("DELETE FROM web_client_consents WHERE user_id = $1 AND client_id = $2", [userID, clientID])
                    return revoked
                }
            }
        }
    }

    /// Ends every browser session, every console session and every app session of the person, and
    /// abandons their pending MFA challenges. Runs on the connection given, so callers compose it into
    /// their transaction.
    static func endEverything(_ connection: PostgresConnection, userID: String, now: Date, reason: String) throws {
        let time = SQLTime.parameter(now)
        // A console session is a session of this account too (docs/console.md, "Signing in").
        try connection.query("DELETE FROM console_sessions WHERE user_id = $1", [userID])
        try connection.query(
            "UPDATE browser_sessions SET ended_at = to_timestamp($2::float8) WHERE user_id = $1 AND ended_at IS NULL", [userID, time])
        try connection.query(
            """
            UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = $3
            WHERE user_id = $1 AND revoked_at IS NULL
            """, [userID, time, reason])
        try connection.query(
            "UPDATE mfa_challenges SET completed_at = to_timestamp($2::float8) WHERE user_id = $1 AND completed_at IS NULL",
            [userID, time])
    }

    /// Signs the person out everywhere: every ZevID browser session and every app session, in every project.
    public func signOutEverywhere(userID: String, now: Date) throws {
        try PostgresEdge.run {
            try pool.transaction { connection in
                try Self.endEverything(connection, userID: userID, now: now, reason: "signed_out_everywhere")
            }
        }
    }

    /// Changes the password and ends everything, then starts a fresh browser session for the browser that
    /// made the change, in one transaction.
    /// - Parameters:
    ///   - passwordHash: the new Argon2id PHC string.
    ///   - newBrowserSessionTokenHash: SHA-256 hex of the new `zbs_…` cookie.
    /// - Returns: the new browser session's id.
    public func changePassword(userID: String, passwordHash: String, newBrowserSessionTokenHash: String, now: Date) throws -> String {
        try PostgresEdge.run {
            try pool.transaction { connection in
                try connection.query(
                    "UPDATE users SET password_hash = $2, password_changed_at = to_timestamp($3::float8) WHERE id = $1",
                    [userID, passwordHash, SQLTime.parameter(now)])
                try Self.endEverything(connection, userID: userID, now: now, reason: "password_changed")
                return try PostgresBrowserSessions.insert(connection, tokenHash: newBrowserSessionTokenHash, userID: userID, now: now)
            }
        }
    }

    /// Closes an account: sets `closed_at` once and ends every session. Idempotent: closing a closed
    /// account changes nothing and answers its first closing time.
    /// `audit` is written in the same transaction when the account exists.
    /// - Returns: the account and when it was closed, or nil when no account has this id.
    public func closeUser(id: String, now: Date, audit: AuditEntry) throws -> (UserRecord, Date)? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    let row = try connection.query(
                        """
                        UPDATE users SET closed_at = COALESCE(closed_at, to_timestamp($2::float8)) WHERE id = $1
                        RETURNING \(Self.userColumns)
                        """, [id, SQLTime.parameter(now)]
                    ).first
                else { return nil }
                try Self.endEverything(connection, userID: id, now: now, reason: "account_closed")
                // Closing deletes the account's passkeys (docs/passkeys.md, "Managing"); the rows cascade
                // away only when the account row itself is deleted.
                _ = try connection.query("DELETE FROM passkey_credentials WHERE user_id = $1", [id])
                try AuditRows.insert(audit, on: connection)
                return (try Self.user(from: row), try row.date("closed_at"))
            }
        }
    }

    /// Removes the TOTP factor and recovery codes and ends every session, in one transaction
    /// (docs/protocol.md#mfa-reset). - Returns: nil for an unknown id (or one that is not a UUID).
    /// `audit` is written in the same transaction when the account exists.
    public func resetMFA(userID: String, now: Date, audit: AuditEntry) throws -> (user: UserRecord, hadFactor: Bool)? {
        guard UUID(uuidString: userID) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.transaction { connection -> (user: UserRecord, hadFactor: Bool)? in
                guard
                    let row = try connection.query("SELECT \(Self.userColumns) FROM users WHERE id = $1 FOR UPDATE", [userID]).first
                else { return nil }
                let factors = try connection.query("DELETE FROM totp_factors WHERE user_id = $1", [userID]).rowsAffected
                let codes = try connection.query("DELETE FROM recovery_codes WHERE user_id = $1", [userID]).rowsAffected
                try Self.endEverything(connection, userID: userID, now: now, reason: "mfa_reset")
                try AuditRows.insert(audit, on: connection)
                return (try Self.user(from: row), factors + codes > 0)
            }
        }
    }

    /// The apps the person is connected to (docs/protocol.md#connected-apps): each environment whose native
    /// apps hold a live session or the remembered consent, by project name, then each web client with a live
    /// session or a remembered scope set, by its registered name; each with its own live sessions.
    public func connectedApps(userID: String) throws -> [ConnectedApp] {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT e.id, p.name AS project_name, e.kind, NULL::text AS client_id, NULL::text AS client_name,
                       (SELECT count(*) FROM sessions s
                        WHERE s.user_id = $1 AND s.environment_id = e.id AND s.web_client_id IS NULL
                          AND s.revoked_at IS NULL) AS live
                FROM environments e JOIN projects p ON p.id = e.project_id
                WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = $1 AND s.environment_id = e.id
                                AND s.web_client_id IS NULL AND s.revoked_at IS NULL)
                   OR EXISTS (SELECT 1 FROM consents c WHERE c.user_id = $1 AND c.environment_id = e.id)
                UNION ALL
                SELECT e.id, p.name, e.kind, w.client_id, w.name,
                       (SELECT count(*) FROM sessions s
                        WHERE s.user_id = $1 AND s.web_client_id = w.client_id AND s.revoked_at IS NULL)
                FROM web_clients w JOIN environments e ON e.id = w.environment_id JOIN projects p ON p.id = e.project_id
                WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = $1 AND s.web_client_id = w.client_id
                                AND s.revoked_at IS NULL)
                   OR EXISTS (SELECT 1 FROM web_client_consents c WHERE c.user_id = $1 AND c.client_id = w.client_id)
                ORDER BY project_name, kind, client_name NULLS FIRST, id, client_id
                """, [userID]
            ).rows.map { row in
                let clientID: String? = row["client_id"]
                return ConnectedApp(
                    environmentID: try row.string("id"), projectName: try row.string("project_name"),
                    environmentKind: try row.string("kind") == "production" ? .production : .development,
                    liveSessions: try row.int("live"),
                    webClient: try clientID.map { ConnectedWebClient(clientID: $0, name: try row.string("client_name")) })
            }
        }
    }
}

extension PostgresStore {
    /// ZevID accounts (docs/architecture.md, "PostgresStore").
    public var accounts: PostgresAccounts { PostgresAccounts(pool: pool) }
}
