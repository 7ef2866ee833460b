import Authorize
import Foundation
import Postgres

/// Second factors in PostgreSQL: TOTP factors (`totp_factors`, the secret sealed), recovery codes (their
/// SHA-256 only) and second-factor challenges (`mfa_challenges`). Every statement runs through
/// `PostgresEdge.run`.
public struct PostgresMFA: Sendable, TOTPEnrolmentStore, SecondFactorStore, MFAChallengeStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    // MARK: - TOTP

    /// The person's TOTP factor, confirmed or not.
    public func totpFactor(userID: String) throws -> TOTPFactorRecord? {
        try PostgresEdge.run {
            try pool.query(
                "SELECT secret_sealed, confirmed_at IS NOT NULL AS confirmed, last_used_step FROM totp_factors WHERE user_id = $1",
                [userID]
            ).first.map {
                TOTPFactorRecord(
                    secretSealed: try $0.string("secret_sealed"), confirmed: try $0.bool("confirmed"),
                    lastUsedStep: $0["last_used_step"].flatMap { Int64($0) })
            }
        }
    }

    /// Starts (or restarts) an enrolment with a new sealed secret. A confirmed factor is never replaced here.
    /// - Returns: false when the person already has a confirmed factor.
    public func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO totp_factors (user_id, secret_sealed, created_at) VALUES ($1, $2, to_timestamp($3::float8))
                ON CONFLICT (user_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, created_at = EXCLUDED.created_at,
                    last_used_step = NULL
                WHERE totp_factors.confirmed_at IS NULL
                """, [userID, secretSealed, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }

    /// Confirms an enrolment after a correct code at `step`, and replaces the recovery codes, in one
    /// transaction.
    /// - Parameter recoveryCodeHashes: SHA-256 hex of each new recovery code.
    /// - Returns: false when there is no unconfirmed factor (confirmed meanwhile, or never started).
    public func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.transaction { connection in
                let confirmed =
                    try connection.query(
                        """
                        UPDATE totp_factors SET confirmed_at = to_timestamp($3::float8), last_used_step = $2::bigint
                        WHERE user_id = $1 AND confirmed_at IS NULL
                        """, [userID, String(step), SQLTime.parameter(now)]
                    ).rowsAffected == 1
                guard confirmed else { return false }
                // A console session signed in without the factor ends: the next visit signs in with it
                // (docs/console.md, "Signing in").
                try connection.query("DELETE FROM console_sessions WHERE user_id = $1", [userID])
                try connection.query("DELETE FROM recovery_codes WHERE user_id = $1", [userID])
                for hash in recoveryCodeHashes {
                    try connection.query(
                        "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ($1, $2, to_timestamp($3::float8))",
                        [userID, hash, SQLTime.parameter(now)])
                }
                return true
            }
        }
    }

    /// Records a TOTP step as used, only if it is later than the last used one: one atomic statement, so a
    /// code cannot be accepted twice even by two instances at once (RFC 6238 §5.2).
    /// - Returns: false when the step was already used (or an earlier-or-equal one was), or no confirmed factor.
    public func useTOTPStep(userID: String, step: Int64) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE totp_factors SET last_used_step = $2::bigint
                WHERE user_id = $1 AND confirmed_at IS NOT NULL AND (last_used_step IS NULL OR last_used_step < $2::bigint)
                """, [userID, String(step)]
            ).rowsAffected == 1
        }
    }

    /// Consumes one unused recovery code (single use, atomically).
    /// - Returns: false when no unused code of the person has this hash.
    public func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE recovery_codes SET used_at = to_timestamp($3::float8)
                WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL
                """, [userID, codeHash, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }

    /// Unused recovery codes the person has left.
    public func unusedRecoveryCodes(userID: String) throws -> Int {
        try PostgresEdge.run {
            try pool.query("SELECT count(*) AS n FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL", [userID]).rows[0].int("n")
        }
    }

    // MARK: - MFA challenges

    /// Records a sign-in whose password was right and that now needs a second factor.
    /// - Returns: the challenge id (a UUID; the browser binding protects it).
    public func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String {
        try PostgresEdge.run {
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
    }

    /// A challenge by id, whatever its state (the caller checks expiry, completion and binding).
    public func mfaChallenge(id: String) throws -> MFAChallengeRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT id, user_id, browser_binding_hash, authorization_request_id, expires_at, completed_at IS NOT NULL AS completed,
                       first_factor
                FROM mfa_challenges WHERE id = $1
                """, [id]
            ).first.map {
                MFAChallengeRecord(
                    id: try $0.string("id"), userID: try $0.string("user_id"), browserBindingHash: try $0.string("browser_binding_hash"),
                    authorizationRequestID: $0["authorization_request_id"], expiresAt: try $0.date("expires_at"),
                    completed: try $0.bool("completed"), federated: $0["first_factor"] == "fed")
            }
        }
    }

    /// Completes a live challenge and starts the browser session it earned, in one transaction; the
    /// pending app sign-in, if any, is attached to the new browser session.
    /// - Returns: the browser session id, or nil when the challenge was completed, expired, or its account closed.
    public func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String? {
        try completeMFAChallenge(id: id, browserSessionTokenHash: browserSessionTokenHash, methods: .passwordAndTOTP, now: now)
    }

    /// Completes a live challenge and starts its browser session authenticated by `methods` (`amr`, sql/010),
    /// attaching its pending app sign-in, in one transaction.
    public func completeMFAChallenge(id: String, browserSessionTokenHash: String, methods: AuthenticationMethods, now: Date) throws
        -> String?
    {
        try PostgresEdge.run {
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
                let browserSessionID = try PostgresBrowserSessions.insert(
                    connection, tokenHash: browserSessionTokenHash, userID: try challenge.string("user_id"), now: now,
                    methods: methods)
                if let requestID = challenge["authorization_request_id"] {
                    try connection.query(
                        "UPDATE authorization_requests SET browser_session_id = $2 WHERE id = $1 AND completed_at IS NULL",
                        [requestID, browserSessionID])
                }
                return browserSessionID
            }
        }
    }
}

extension PostgresStore {
    /// TOTP factors, recovery codes and second-factor challenges (docs/architecture.md, "PostgresStore").
    public var mfa: PostgresMFA { PostgresMFA(pool: pool) }
}

/// One aggregate answering both halves of what recognising a browser and finishing a sign-in need
/// (`CurrentAccountStore`, `BrowserSignInStore`, `AccountOverviewStore`), over the three tables' aggregates.
public struct PostgresAccountSessions: Sendable, CurrentAccountStore, BrowserSignInStore, AccountOverviewStore {
    let accounts: PostgresAccounts
    let browserSessions: PostgresBrowserSessions
    let mfa: PostgresMFA

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) {
        accounts = PostgresAccounts(pool: pool)
        browserSessions = PostgresBrowserSessions(pool: pool)
        mfa = PostgresMFA(pool: pool)
    }

    /// `PostgresBrowserSessions.browserSession(tokenHash:)`.
    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
        try browserSessions.browserSession(tokenHash: tokenHash)
    }
    /// `PostgresAccounts.user(id:)`.
    public func user(id: String) throws -> UserRecord? { try accounts.user(id: id) }
    /// `PostgresMFA.totpFactor(userID:)`.
    public func totpFactor(userID: String) throws -> TOTPFactorRecord? { try mfa.totpFactor(userID: userID) }
    /// `PostgresMFA.createMFAChallenge`.
    public func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String {
        try mfa.createMFAChallenge(
            userID: userID, browserBindingHash: browserBindingHash, authorizationRequestID: authorizationRequestID, now: now,
            lifetimeSeconds: lifetimeSeconds)
    }
    /// `PostgresBrowserSessions.createBrowserSession`.
    public func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
        try browserSessions.createBrowserSession(tokenHash: tokenHash, userID: userID, now: now)
    }
    /// `PostgresAccounts.connectedApps(userID:)`.
    public func connectedApps(userID: String) throws -> [ConnectedApp] { try accounts.connectedApps(userID: userID) }
    /// `PostgresMFA.unusedRecoveryCodes(userID:)`.
    public func unusedRecoveryCodes(userID: String) throws -> Int { try mfa.unusedRecoveryCodes(userID: userID) }
}

extension PostgresStore {
    /// The cross-table reads of the account pages and of finishing a sign-in (docs/architecture.md).
    public var accountSessions: PostgresAccountSessions { PostgresAccountSessions(pool: pool) }
}
