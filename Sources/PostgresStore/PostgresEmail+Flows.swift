import Authorize
import Foundation
import Postgres

extension PostgresEmail: EmailFlowStore {
    /// See `EmailFlowStore.signUpAccount`. The insert never raises a unique violation (PostgreSQL would log
    /// the address's key); an existing row is read instead.
    public func signUpAccount(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date) throws -> SignUpTarget {
        try PostgresEdge.run {
            try pool.transaction { connection in
                if let created = try connection.query(
                    """
                    INSERT INTO users (email, email_normalized, email_key_rule, name, password_hash, password_changed_at, created_at,
                                       self_signed_up)
                    VALUES ($1, $2, $6::smallint, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8), true)
                    ON CONFLICT ON CONSTRAINT users_email_unique DO NOTHING
                    RETURNING id
                    """, [email.typed, email.key, name.text, passwordHash, SQLTime.parameter(now), String(PostgresStore.emailKeyRule)]
                ).first {
                    return .created(userID: try created.string("id"))
                }
                guard
                    let row = try connection.query(
                        "SELECT id, self_signed_up, email_verified_at, closed_at FROM users WHERE email_normalized = $1", [email.key]
                    ).first
                else { throw StoreFault(kind: "sign_up_race", sqlState: nil, constraint: nil) }
                let id = try row.string("id")
                let unverified = row["self_signed_up"] == "t" && row["email_verified_at"] == nil && row["closed_at"] == nil
                return unverified ? .unverifiedSelfSignUp(userID: id) : .existing(userID: id)
            }
        }
    }

    /// Ends the flow `flowID` of `userID` as completed, once. - Returns: whether this call completed it.
    static func complete(_ connection: PostgresConnection, flowID: String, userID: String, now: Date) throws -> Bool {
        try connection.query(
            """
            UPDATE email_codes SET completed_at = to_timestamp($3::float8)
            WHERE id = $1 AND user_id = $2 AND end_reason = 'used' AND completed_at IS NULL AND expires_at > to_timestamp($3::float8)
            RETURNING id
            """, [flowID, userID, SQLTime.parameter(now)]
        ).first != nil
    }

    /// See `EmailFlowStore.completeSignUp`.
    public func completeSignUp(
        flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date
    ) throws -> String? {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard try Self.complete(connection, flowID: flowID, userID: userID, now: now) else { return nil }
                try connection.query(
                    """
                    UPDATE users SET email_verified_at = COALESCE(email_verified_at, to_timestamp($3::float8)), password_hash = $2,
                        password_changed_at = to_timestamp($3::float8)
                    WHERE id = $1
                    """, [userID, passwordHash, SQLTime.parameter(now)])
                return try PostgresBrowserSessions.insert(connection, tokenHash: browserSessionTokenHash, userID: userID, now: now)
            }
        }
    }

    /// See `EmailFlowStore.completeVerification`.
    public func completeVerification(flowID: String, userID: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard try Self.complete(connection, flowID: flowID, userID: userID, now: now) else { return false }
                try connection.query(
                    "UPDATE users SET email_verified_at = COALESCE(email_verified_at, to_timestamp($2::float8)) WHERE id = $1",
                    [userID, SQLTime.parameter(now)])
                return true
            }
        }
    }

    /// See `EmailFlowStore.recordSecondFactor`.
    public func recordSecondFactor(flowID: String, now: Date) throws {
        try PostgresEdge.run {
            try pool.query(
                "UPDATE email_codes SET second_factor_at = to_timestamp($2::float8) WHERE id = $1 AND end_reason = 'used'",
                [flowID, SQLTime.parameter(now)])
        }
    }

    /// See `EmailFlowStore.completeReset`: the same ending as a password change (every app session and
    /// every ZevID browser session), and a reset also proves the address.
    public func completeReset(
        flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date
    ) throws -> String? {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard try Self.complete(connection, flowID: flowID, userID: userID, now: now) else { return nil }
                try connection.query(
                    """
                    UPDATE users SET password_hash = $2, password_changed_at = to_timestamp($3::float8),
                        email_verified_at = COALESCE(email_verified_at, to_timestamp($3::float8))
                    WHERE id = $1
                    """, [userID, passwordHash, SQLTime.parameter(now)])
                try PostgresAccounts.endEverything(connection, userID: userID, now: now, reason: "password_reset")
                try Self.enqueue(
                    connection, userID: userID, kind: SecurityNotice.passwordReset.rawValue, codeID: nil, codeSealed: nil, scope: scope,
                    now: now)
                return try PostgresBrowserSessions.insert(connection, tokenHash: browserSessionTokenHash, userID: userID, now: now)
            }
        }
    }

    /// See `EmailFlowStore.completeEmailChange`. The new key is checked inside the transaction, so a taken
    /// address never raises a unique violation.
    public func completeEmailChange(flowID: String, userID: String, now: Date) throws -> EmailChangeResult {
        try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    let flow = try connection.query(
                        "SELECT new_email, new_email_key FROM email_codes WHERE id = $1 AND user_id = $2 AND purpose = 'change_email'",
                        [flowID, userID]
                    ).first, let newEmail = flow["new_email"], let newKey = flow["new_email_key"]
                else { return .over }
                guard try Self.complete(connection, flowID: flowID, userID: userID, now: now) else { return .over }
                if try connection.query("SELECT 1 FROM users WHERE email_normalized = $1 AND id <> $2", [newKey, userID]).first != nil {
                    return .taken
                }
                guard
                    let old = try connection.query(
                        """
                        UPDATE users u SET email = $2, email_normalized = $3, email_verified_at = to_timestamp($4::float8)
                        FROM (SELECT id, email FROM users WHERE id = $1 FOR UPDATE) o WHERE u.id = o.id
                        RETURNING o.email
                        """, [userID, newEmail, newKey, SQLTime.parameter(now)]
                    ).first
                else { return .over }
                return .changed(oldEmail: try old.string("email"))
            }
        }
    }
}
