import Authorize
import Foundation
import Postgres

/// Outbound email and its codes in PostgreSQL (`email_outbox`, `email_codes`, sql/011_email.sql;
/// docs/protocol.md, "Email codes"; docs/operations.md, "Outbound email"). Every statement runs through
/// `PostgresEdge.run`, so callers see `StoreUnavailable` and `StoreError`, never `PostgresError`.
public struct PostgresEmail: Sendable, EmailCodeStore, EmailOutboxStore, SecurityNotices {
    let pool: PostgresPool
    /// The scope stamped on queued messages (tests); nil in a deployment.
    public let scope: String?

    /// - Parameters:
    ///   - pool: the connection pool every statement goes through.
    ///   - scope: stamped on every message this value queues, so a test's drainer sends only its own.
    public init(pool: PostgresPool, scope: String? = nil) {
        self.pool = pool
        self.scope = scope
    }

    /// This aggregate queuing under `scope`.
    public func scoped(_ scope: String?) -> PostgresEmail { PostgresEmail(pool: pool, scope: scope) }

    // MARK: Queue

    static func enqueue(
        _ connection: PostgresConnection, userID: String, kind: String, codeID: String?, codeSealed: String?, scope: String?, now: Date
    ) throws {
        try connection.query(
            """
            INSERT INTO email_outbox (user_id, kind, code_id, code_sealed, created_at, next_attempt_at, give_up_at, scope)
            VALUES ($1, $2, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8), to_timestamp($6::float8), $7)
            """,
            [
                userID, kind, codeID, codeSealed, SQLTime.parameter(now),
                SQLTime.parameter(now.addingTimeInterval(EmailRetry.retrySeconds)), scope,
            ])
    }

    /// Queues a notice for the account's stored address (`SecurityNotices`). "Someone tried to sign up"
    /// goes at most once an hour per account, so repeated sign-ups cannot flood a mailbox.
    public func queue(_ notice: SecurityNotice, userID: String, now: Date) throws {
        guard UUID(uuidString: userID) != nil else { return }
        try PostgresEdge.run {
            try pool.transaction { connection in
                if notice == .signUpAttempted,
                    try connection.query(
                        "SELECT 1 FROM email_outbox WHERE user_id = $1 AND kind = $2 AND created_at > to_timestamp($3::float8) - interval '1 hour'",
                        [userID, notice.rawValue, SQLTime.parameter(now)]
                    ).first != nil
                {
                    return
                }
                try Self.enqueue(connection, userID: userID, kind: notice.rawValue, codeID: nil, codeSealed: nil, scope: scope, now: now)
            }
        }
    }

    // MARK: Codes

    static let flowColumns = """
        id, user_id, purpose, browser_binding_hash, authorization_request_id, attempts, expires_at, end_reason, password_hash,
        new_email, new_email_key, second_factor_at, completed_at, requested_user_id
        """

    static func flow(from row: PostgresRow) throws -> EmailCodeFlowRecord {
        guard let purpose = EmailCodePurpose(rawValue: try row.string("purpose")) else {
            throw StoreFault(kind: "email_code_purpose", sqlState: nil, constraint: nil)
        }
        return EmailCodeFlowRecord(
            id: try row.string("id"), userID: row["user_id"], purpose: purpose, browserBindingHash: try row.string("browser_binding_hash"),
            authorizationRequestID: row["authorization_request_id"], attempts: try row.int("attempts"),
            expiresAt: try row.date("expires_at"), endReason: row["end_reason"], passwordHash: row["password_hash"],
            newEmail: row["new_email"], newEmailKey: row["new_email_key"], secondFactorAt: try row.optionalDate("second_factor_at"),
            completed: row["completed_at"] != nil, requestedUserID: row["requested_user_id"])
    }

    /// See `EmailCodeStore.issueCode`. The account's row is locked for the count, so two requests at once
    /// cannot both pass a limit.
    public func issueCode(_ issue: CodeIssue, now: Date, perHour: Int, perDay: Int) throws -> CodeIssueResult {
        try PostgresEdge.run {
            try pool.transaction { connection in
                var send = false
                if let userID = issue.userID,
                    try connection.query("SELECT 1 FROM users WHERE id = $1 AND closed_at IS NULL FOR UPDATE", [userID]).first != nil
                {
                    let counts = try connection.query(
                        """
                        SELECT count(*) FILTER (WHERE created_at > to_timestamp($2::float8) - interval '1 hour') AS hour,
                               count(*) AS day
                        FROM email_codes WHERE user_id = $1 AND created_at > to_timestamp($2::float8) - interval '1 day'
                        """, [userID, SQLTime.parameter(now)]
                    ).rows[0]
                    send = try counts.int("hour") < perHour && counts.int("day") < perDay
                }
                let userID = send ? issue.userID : nil
                if let userID {
                    try connection.query(
                        """
                        UPDATE email_codes SET ended_at = to_timestamp($3::float8), end_reason = 'replaced'
                        WHERE user_id = $1 AND purpose = $2 AND ended_at IS NULL
                        """, [userID, issue.purpose.rawValue, SQLTime.parameter(now)])
                }
                try connection.query(
                    """
                    INSERT INTO email_codes (id, user_id, purpose, browser_binding_hash, authorization_request_id, code_hash,
                                             created_at, expires_at, password_hash, new_email, new_email_key, requested_user_id)
                    VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7::float8), to_timestamp($8::float8), $9, $10, $11, $12)
                    """,
                    [
                        issue.flowID, userID, issue.purpose.rawValue, issue.browserBindingHash, issue.authorizationRequestID,
                        issue.codeHash, SQLTime.parameter(now), SQLTime.parameter(issue.expiresAt), issue.passwordHash,
                        issue.newEmail, issue.newEmailKey, issue.userID,
                    ])
                guard let userID, let sealed = issue.codeSealed else { return issue.userID == nil ? .queued : .overLimit }
                try Self.enqueue(
                    connection, userID: userID, kind: EmailMessages.codeKind(issue.purpose), codeID: issue.flowID, codeSealed: sealed,
                    scope: scope, now: now)
                return .queued
            }
        }
    }

    /// See `EmailCodeStore.codeFlow`.
    public func codeFlow(id: String) throws -> EmailCodeFlowRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query("SELECT \(Self.flowColumns) FROM email_codes WHERE id = $1", [id]).first.map(Self.flow(from:))
        }
    }

    /// See `EmailCodeStore.attemptCode`. The attempt is one `UPDATE` of the live row: concurrent attempts
    /// wait for its row lock and re-check `ended_at`, so no burst counts past `maxAttempts`.
    public func attemptCode(
        id: String, codeHash: String, now: Date, maxAttempts: Int, lockAfter: Int, lockWindowSeconds: Double, lockSeconds: Double
    ) throws -> CodeAttemptFacts {
        guard UUID(uuidString: id) != nil else {
            return CodeAttemptFacts(
                found: false, locked: false, counted: false, matched: false, attempts: 0, endReason: nil, expired: false, lockedNow: false)
        }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                guard
                    let flow = try connection.query(
                        """
                        SELECT c.user_id, c.attempts, c.end_reason, c.expires_at <= to_timestamp($2::float8) AS expired,
                               COALESCE(u.code_entry_locked_until > to_timestamp($2::float8), false) AS locked
                        FROM email_codes c LEFT JOIN users u ON u.id = c.user_id WHERE c.id = $1
                        """, [id, SQLTime.parameter(now)]
                    ).first
                else {
                    return CodeAttemptFacts(
                        found: false, locked: false, counted: false, matched: false, attempts: 0, endReason: nil, expired: false,
                        lockedNow: false)
                }
                if try flow.bool("locked") {
                    return CodeAttemptFacts(
                        found: true, locked: true, counted: false, matched: false, attempts: try flow.int("attempts"),
                        endReason: flow["end_reason"], expired: false, lockedNow: false)
                }
                guard
                    let row = try connection.query(
                        """
                        UPDATE email_codes SET attempts = attempts + 1,
                            ended_at = CASE WHEN code_hash = $2 OR attempts + 1 >= $4 THEN to_timestamp($3::float8) END,
                            end_reason = CASE WHEN code_hash = $2 THEN 'used' WHEN attempts + 1 >= $4 THEN 'attempts' END
                        WHERE id = $1 AND ended_at IS NULL AND expires_at > to_timestamp($3::float8) AND attempts < $4
                        RETURNING attempts, end_reason, user_id
                        """, [id, codeHash, SQLTime.parameter(now), String(maxAttempts)]
                    ).first
                else {
                    let current = try connection.query(
                        "SELECT attempts, end_reason, expires_at <= to_timestamp($2::float8) AS expired FROM email_codes WHERE id = $1",
                        [id, SQLTime.parameter(now)]
                    ).rows[0]
                    return CodeAttemptFacts(
                        found: true, locked: false, counted: false, matched: false, attempts: try current.int("attempts"),
                        endReason: current["end_reason"], expired: try current.bool("expired") && current["end_reason"] == nil,
                        lockedNow: false)
                }
                let reason = row["end_reason"]
                var lockedNow = false
                if reason == "attempts", let userID = row["user_id"] {
                    let ended = try connection.query(
                        """
                        SELECT count(*) AS n FROM email_codes
                        WHERE user_id = $1 AND end_reason = 'attempts' AND ended_at > to_timestamp($2::float8)
                        """, [userID, SQLTime.parameter(now.addingTimeInterval(-lockWindowSeconds))]
                    ).rows[0]
                    if try ended.int("n") >= lockAfter {
                        lockedNow = true
                        try connection.query(
                            "UPDATE users SET code_entry_locked_until = to_timestamp($2::float8) WHERE id = $1",
                            [userID, SQLTime.parameter(now.addingTimeInterval(lockSeconds))])
                        try Self.enqueue(
                            connection, userID: userID, kind: SecurityNotice.codeEntryLocked.rawValue, codeID: nil, codeSealed: nil,
                            scope: scope, now: now)
                    }
                }
                return CodeAttemptFacts(
                    found: true, locked: false, counted: true, matched: reason == "used", attempts: try row.int("attempts"),
                    endReason: reason, expired: false, lockedNow: lockedNow)
            }
        }
    }

    // MARK: Outbox

    /// See `EmailOutboxStore.claimDueEmails`. The recipient is read now: an address change's new address for
    /// its code, else the account's stored one; a closed account's messages come back without a recipient.
    public func claimDueEmails(owner: String, scope: String?, now: Date, leaseSeconds: Double, limit: Int) throws -> [OutboxMessage] {
        try PostgresEdge.run {
            try pool.query(
                """
                WITH due AS (
                    SELECT id FROM email_outbox
                    WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= to_timestamp($2::float8)
                      AND (lease_expires_at IS NULL OR lease_expires_at <= to_timestamp($2::float8))
                      AND scope IS NOT DISTINCT FROM $5
                    ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
                UPDATE email_outbox o SET lease_owner = $1, lease_expires_at = to_timestamp($3::float8)
                FROM due WHERE o.id = due.id
                RETURNING o.id, o.kind, o.code_id, o.code_sealed, o.attempts, o.created_at, o.give_up_at,
                    (SELECT CASE WHEN u.closed_at IS NOT NULL THEN NULL
                                 ELSE COALESCE((SELECT c.new_email FROM email_codes c WHERE c.id = o.code_id), u.email) END
                     FROM users u WHERE u.id = o.user_id) AS recipient,
                    (SELECT u.name FROM users u WHERE u.id = o.user_id) AS name
                """,
                [owner, SQLTime.parameter(now), SQLTime.parameter(now.addingTimeInterval(leaseSeconds)), String(limit), scope]
            ).rows.map { row in
                OutboxMessage(
                    id: try row.string("id"), kind: try row.string("kind"), recipient: row["recipient"], name: row["name"] ?? "",
                    codeFlowID: row["code_id"], codeSealed: row["code_sealed"], attempts: try row.int("attempts"),
                    createdAt: try row.date("created_at"), giveUpAt: try row.date("give_up_at"))
            }
        }
    }

    /// See `EmailOutboxStore.markEmailSent`. The sealed code is dropped with the send.
    @discardableResult
    public func markEmailSent(id: String, owner: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE email_outbox SET sent_at = to_timestamp($3::float8), code_sealed = NULL, attempts = attempts + 1,
                    lease_owner = NULL, lease_expires_at = NULL
                WHERE id = $1 AND lease_owner = $2 AND sent_at IS NULL RETURNING id
                """, [id, owner, SQLTime.parameter(now)]
            ).first != nil
        }
    }

    /// See `EmailOutboxStore.markEmailRetry`.
    public func markEmailRetry(id: String, owner: String, nextAttemptAt: Date?, now: Date) throws {
        try PostgresEdge.run {
            if let nextAttemptAt {
                try pool.query(
                    """
                    UPDATE email_outbox SET attempts = attempts + 1, next_attempt_at = to_timestamp($3::float8),
                        lease_owner = NULL, lease_expires_at = NULL
                    WHERE id = $1 AND lease_owner = $2 AND sent_at IS NULL
                    """, [id, owner, SQLTime.parameter(nextAttemptAt)])
            } else {
                try pool.query(
                    """
                    UPDATE email_outbox SET attempts = attempts + 1, failed_at = to_timestamp($3::float8), code_sealed = NULL,
                        lease_owner = NULL, lease_expires_at = NULL
                    WHERE id = $1 AND lease_owner = $2 AND sent_at IS NULL
                    """, [id, owner, SQLTime.parameter(now)])
            }
        }
    }

    /// See `EmailOutboxStore.countDeploymentEmail`: one atomic upsert of the hour's counter (one for the
    /// deployment; a test scope counts apart).
    public func countDeploymentEmail(hourStart: Date) throws -> Int {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO rate_limit_counters (bucket, key, window_start, count) VALUES ('email_deployment', $2, to_timestamp($1::float8), 1)
                ON CONFLICT (bucket, key, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
                RETURNING count
                """, [SQLTime.parameter(hourStart), scope ?? "all"]
            ).rows[0].int("count")
        }
    }
}

extension PostgresStore {
    /// Outbound email and its codes (docs/architecture.md, "PostgresStore").
    public var email: PostgresEmail { PostgresEmail(pool: pool) }
}
