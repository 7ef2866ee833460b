import Foundation
import Postgres

/// An environment the person is connected to (live app sessions or remembered consent), for the
/// account page's "Connected apps".
public struct ConnectedApp: Sendable, Equatable {
    public let environmentID: String
    public let projectName: String
    /// `development` or `production`.
    public let environmentKind: String
    /// Unrevoked app sessions the person has in this environment.
    public let liveSessions: Int
}

/// A person's TOTP factor as stored: the sealed secret and its state.
public struct TOTPFactorRecord: Sendable, Equatable {
    /// Base64 of AES-256-GCM `nonce ‖ ciphertext ‖ tag`.
    public let secretSealed: String
    public let confirmed: Bool
    public let lastUsedStep: Int64?
}

/// A sign-in waiting for its second factor.
public struct MFAChallengeRecord: Sendable, Equatable {
    public let id: String
    public let userID: String
    public let browserBindingHash: String
    /// The pending app sign-in it belongs to, or nil for the account area's own sign-in.
    public let authorizationRequestID: String?
    public let expiresAt: Date
    public let completed: Bool
}

/// Accounts, the events that end sessions, TOTP, and rate-limit counters
/// (docs/protocol.md#session-ends, docs/protocol.md#rate-limits).
extension PostgresStore {
    // MARK: - Ending sessions (docs/protocol.md#session-ends)

    /// Removes an app from the person's account: revokes their sessions in that environment and forgets
    /// the remembered consent, in one transaction.
    /// - Returns: the number of sessions revoked.
    public func removeApp(userID: String, environmentID: String, now: Date) throws -> Int {
        guard UUID(uuidString: environmentID) != nil else { return 0 }
        return try pool.transaction { connection in
            let revoked = try connection.query(
                """
                UPDATE sessions SET revoked_at = to_timestamp($3::float8), revoked_reason = 'app_removed'
                WHERE user_id = $1 AND environment_id = $2 AND revoked_at IS NULL
                """, [userID, environmentID, SQLTime.parameter(now)]
            ).rowsAffected
            try connection.query("DELETE FROM consents WHERE user_id = $1 AND environment_id = $2", [userID, environmentID])
            return revoked
        }
    }

    /// Signs out of one ZevID browser session: ends it and revokes only the app sessions made from it.
    /// - Returns: the number of app sessions revoked.
    public func endBrowserSession(id: String, now: Date) throws -> Int {
        guard UUID(uuidString: id) != nil else { return 0 }
        return try pool.transaction { connection in
            try connection.query(
                "UPDATE browser_sessions SET ended_at = to_timestamp($2::float8) WHERE id = $1 AND ended_at IS NULL",
                [id, SQLTime.parameter(now)])
            return try connection.query(
                """
                UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = 'browser_sign_out'
                WHERE browser_session_id = $1 AND revoked_at IS NULL
                """, [id, SQLTime.parameter(now)]
            ).rowsAffected
        }
    }

    /// Ends every browser session and every app session of the person, and abandons their pending MFA
    /// challenges. Runs on the connection given, so callers compose it into their transaction.
    static func endEverything(_ connection: PostgresConnection, userID: String, now: Date, reason: String) throws {
        let time = SQLTime.parameter(now)
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
        try pool.transaction { connection in
            try Self.endEverything(connection, userID: userID, now: now, reason: "signed_out_everywhere")
        }
    }

    /// Changes the password and ends everything, then starts a fresh browser session for the browser that
    /// made the change, in one transaction.
    /// - Parameters:
    ///   - passwordHash: the new Argon2id PHC string.
    ///   - newBrowserSessionTokenHash: SHA-256 hex of the new `zbs_…` cookie.
    /// - Returns: the new browser session's id.
    public func changePassword(userID: String, passwordHash: String, newBrowserSessionTokenHash: String, now: Date) throws -> String {
        try pool.transaction { connection in
            try connection.query(
                "UPDATE users SET password_hash = $2, password_changed_at = to_timestamp($3::float8) WHERE id = $1",
                [userID, passwordHash, SQLTime.parameter(now)])
            try Self.endEverything(connection, userID: userID, now: now, reason: "password_changed")
            return try connection.query(
                """
                INSERT INTO browser_sessions (token_hash, user_id, auth_time, created_at)
                VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8)) RETURNING id
                """, [newBrowserSessionTokenHash, userID, SQLTime.parameter(now)]
            ).rows[0].string("id")
        }
    }

    /// Closes an account (the operator's `POST /v1/admin/users/{id}/close`): sets `closed_at` once and
    /// ends every session. Idempotent: closing a closed account changes nothing and answers its first
    /// closing time.
    /// - Returns: the account and when it was closed, or nil when no account has this id.
    public func closeUser(id: String, now: Date) throws -> (UserRecord, Date)? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.transaction { connection in
            guard
                let row = try connection.query(
                    """
                    UPDATE users SET closed_at = COALESCE(closed_at, to_timestamp($2::float8)) WHERE id = $1
                    RETURNING id, email, name, image_url, password_hash, closed_at
                    """, [id, SQLTime.parameter(now)]
                ).first
            else { return nil }
            try Self.endEverything(connection, userID: id, now: now, reason: "account_closed")
            let user = UserRecord(
                id: try row.string("id"), email: try row.string("email"), name: try row.string("name"),
                imageURL: row["image_url"], passwordHash: try row.string("password_hash"), closed: true)
            return (user, try row.date("closed_at"))
        }
    }

    /// The environments the person is connected to: live app sessions or remembered consent, by project name.
    public func connectedApps(userID: String) throws -> [ConnectedApp] {
        try pool.query(
            """
            SELECT e.id, p.name AS project_name, e.kind,
                   (SELECT count(*) FROM sessions s
                    WHERE s.user_id = $1 AND s.environment_id = e.id AND s.revoked_at IS NULL) AS live
            FROM environments e JOIN projects p ON p.id = e.project_id
            WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = $1 AND s.environment_id = e.id AND s.revoked_at IS NULL)
               OR EXISTS (SELECT 1 FROM consents c WHERE c.user_id = $1 AND c.environment_id = e.id)
            ORDER BY p.name, e.kind, e.id
            """, [userID]
        ).rows.map {
            ConnectedApp(
                environmentID: try $0.string("id"), projectName: try $0.string("project_name"),
                environmentKind: try $0.string("kind"), liveSessions: try $0.int("live"))
        }
    }

    // MARK: - TOTP

    /// The person's TOTP factor, confirmed or not.
    public func totpFactor(userID: String) throws -> TOTPFactorRecord? {
        try pool.query(
            "SELECT secret_sealed, confirmed_at IS NOT NULL AS confirmed, last_used_step FROM totp_factors WHERE user_id = $1",
            [userID]
        ).first.map {
            TOTPFactorRecord(
                secretSealed: try $0.string("secret_sealed"), confirmed: try $0.bool("confirmed"),
                lastUsedStep: $0["last_used_step"].flatMap { Int64($0) })
        }
    }

    /// Starts (or restarts) an enrolment with a new sealed secret. A confirmed factor is never replaced here.
    /// - Returns: false when the person already has a confirmed factor.
    public func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool {
        try pool.query(
            """
            INSERT INTO totp_factors (user_id, secret_sealed, created_at) VALUES ($1, $2, to_timestamp($3::float8))
            ON CONFLICT (user_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, created_at = EXCLUDED.created_at,
                last_used_step = NULL
            WHERE totp_factors.confirmed_at IS NULL
            """, [userID, secretSealed, SQLTime.parameter(now)]
        ).rowsAffected == 1
    }

    /// Confirms an enrolment after a correct code at `step`, and replaces the recovery codes, in one
    /// transaction.
    /// - Parameter recoveryCodeHashes: SHA-256 hex of each new recovery code.
    /// - Returns: false when there is no unconfirmed factor (confirmed meanwhile, or never started).
    public func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool {
        try pool.transaction { connection in
            let confirmed =
                try connection.query(
                    """
                    UPDATE totp_factors SET confirmed_at = to_timestamp($3::float8), last_used_step = $2::bigint
                    WHERE user_id = $1 AND confirmed_at IS NULL
                    """, [userID, String(step), SQLTime.parameter(now)]
                ).rowsAffected == 1
            guard confirmed else { return false }
            try connection.query("DELETE FROM recovery_codes WHERE user_id = $1", [userID])
            for hash in recoveryCodeHashes {
                try connection.query(
                    "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ($1, $2, to_timestamp($3::float8))",
                    [userID, hash, SQLTime.parameter(now)])
            }
            return true
        }
    }

    /// Records a TOTP step as used, only if it is later than the last used one: one atomic statement, so a
    /// code cannot be accepted twice even by two instances at once (RFC 6238 §5.2).
    /// - Returns: false when the step was already used (or an earlier-or-equal one was), or no confirmed factor.
    public func useTOTPStep(userID: String, step: Int64) throws -> Bool {
        try pool.query(
            """
            UPDATE totp_factors SET last_used_step = $2::bigint
            WHERE user_id = $1 AND confirmed_at IS NOT NULL AND (last_used_step IS NULL OR last_used_step < $2::bigint)
            """, [userID, String(step)]
        ).rowsAffected == 1
    }

    /// Consumes one unused recovery code (single use, atomically).
    /// - Returns: false when no unused code of the person has this hash.
    public func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool {
        try pool.query(
            """
            UPDATE recovery_codes SET used_at = to_timestamp($3::float8)
            WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
            """, [userID, codeHash, SQLTime.parameter(now)]
        ).rowsAffected == 1
    }

    /// Unused recovery codes the person has left.
    public func unusedRecoveryCodes(userID: String) throws -> Int {
        try pool.query("SELECT count(*) AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL", [userID]).rows[0].int("n")
    }

    // MARK: - MFA challenges

    /// Records a sign-in whose password was right and that now needs a second factor.
    /// - Returns: the challenge id (a UUID; the browser binding protects it).
    public func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String {
        try pool.query(
            """
            INSERT INTO mfa_challenges (user_id, browser_binding_hash, authorization_request_id, created_at, expires_at)
            VALUES ($1, $2, $3, to_timestamp($4::float8), to_timestamp($5::float8)) RETURNING id
            """,
            [
                userID, browserBindingHash, authorizationRequestID, SQLTime.parameter(now),
                SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds)),
            ]
        ).rows[0].string("id")
    }

    /// A challenge by id, whatever its state (the caller checks expiry, completion and binding).
    public func mfaChallenge(id: String) throws -> MFAChallengeRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try pool.query(
            """
            SELECT id, user_id, browser_binding_hash, authorization_request_id, expires_at, completed_at IS NOT NULL AS completed
            FROM mfa_challenges WHERE id = $1
            """, [id]
        ).first.map {
            MFAChallengeRecord(
                id: try $0.string("id"), userID: try $0.string("user_id"), browserBindingHash: try $0.string("browser_binding_hash"),
                authorizationRequestID: $0["authorization_request_id"], expiresAt: try $0.date("expires_at"),
                completed: try $0.bool("completed"))
        }
    }

    /// Completes a live challenge and starts the browser session it earned, in one transaction; the
    /// pending app sign-in, if any, is attached to the new browser session.
    /// - Returns: the browser session id, or nil when the challenge was completed, expired, or its account closed.
    public func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String? {
        try pool.transaction { connection in
            guard
                let challenge = try connection.query(
                    """
                    UPDATE mfa_challenges m SET completed_at = to_timestamp($2::float8)
                    FROM users u
                    WHERE m.id = $1 AND m.completed_at IS NULL AND m.expires_at > to_timestamp($2::float8)
                      AND u.id = m.user_id AND u.closed_at IS NULL
                    RETURNING m.user_id, m.authorization_request_id
                    """, [id, SQLTime.parameter(now)]
                ).first
            else { return nil }
            let browserSessionID = try connection.query(
                """
                INSERT INTO browser_sessions (token_hash, user_id, auth_time, created_at)
                VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8)) RETURNING id
                """, [browserSessionTokenHash, try challenge.string("user_id"), SQLTime.parameter(now)]
            ).rows[0].string("id")
            if let requestID = challenge["authorization_request_id"] {
                try connection.query(
                    "UPDATE authorization_requests SET browser_session_id = $2 WHERE id = $1 AND completed_at IS NULL",
                    [requestID, browserSessionID])
            }
            return browserSessionID
        }
    }
}
