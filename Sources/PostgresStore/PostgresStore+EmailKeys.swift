import Authorize
import Foundation
import Postgres

extension PostgresStore {
    /// The number of the email-key rule that keys written now follow (`users.email_key_rule`); the rule
    /// itself is the server's `EmailAddress`. Rows with a smaller number are recomputed by `zevauth migrate`.
    public static let emailKeyRule = 1

    /// The Swift step completing migration 006 (docs/operations.md, "Accounts that share an address"):
    /// recomputes account email keys under the current rule. It reads the rows, lets `EmailKeyPlan`
    /// (Authorize) decide, writes the changes and reports account ids, never addresses.
    ///
    /// Where several accounts now share one key, nothing is merged or deleted: the earliest open account
    /// (else the earliest) keeps the key and the others have none, so they cannot sign in until an operator
    /// closes one of them. The step runs again on every `zevauth migrate`: once the key's holder is closed,
    /// the earliest open account without a key receives it.
    /// - Parameter key: the current address rule: an address's key, or nil when the rule refuses it (the
    ///   server passes `EmailAddress(_:)?.key`, libidn2 underneath).
    public static func emailKeyStep(key: @escaping @Sendable (String) -> String?) -> MigrationStep {
        MigrationStep(version: 6) { connection in
            guard try emailKeysNeedWork(connection) else { return [] }
            let rows = try emailKeyRows(connection)
            let plan = EmailKeyPlan.decide(rows: rows, rule: emailKeyRule, key: key)
            let changes = rows.compactMap { row in plan.changes[row.id].map { (id: row.id, key: $0) } }
            try writeEmailKeys(connection, changes: changes, recomputed: plan.recomputed)
            return plan.report
        }
    }

    /// Whether the recomputation has anything to look at: a key from an earlier rule, or an open account
    /// without a key.
    static func emailKeysNeedWork(_ connection: PostgresConnection) throws -> Bool {
        try connection.query(
            """
            SELECT EXISTS (
                SELECT 1 FROM users WHERE email_key_rule < $1::smallint OR (email_normalized IS NULL AND closed_at IS NULL)
            ) AS work
            """, [String(emailKeyRule)]
        ).rows[0].bool("work")
    }

    /// Every account, oldest first, locked against concurrent key changes until the transaction ends.
    static func emailKeyRows(_ connection: PostgresConnection) throws -> [EmailKeyRow] {
        try connection.query(
            """
            SELECT id, email, email_normalized, email_key_rule, closed_at IS NOT NULL AS closed, created_at
            FROM users ORDER BY created_at, id FOR UPDATE
            """
        ).rows.map { row in
            EmailKeyRow(
                id: try row.string("id"), email: try row.string("email"), key: row["email_normalized"], rule: try row.int("email_key_rule"),
                closed: try row.bool("closed"), createdAt: try row.date("created_at"))
        }
    }

    /// Writes recomputed keys: first clears every key that changes, then sets the new ones, so no statement
    /// ever meets a unique violation midway; then marks `recomputed` rows as computed by the current rule.
    /// - Parameters:
    ///   - changes: account ids and their new key (nil: no key).
    ///   - recomputed: ids of accounts whose key the current rule computed (changed or not).
    static func writeEmailKeys(_ connection: PostgresConnection, changes: [(id: String, key: String?)], recomputed: [String]) throws {
        for change in changes {
            try connection.query("UPDATE users SET email_normalized = NULL WHERE id = $1::uuid", [change.id])
        }
        for change in changes {
            guard let key = change.key else { continue }
            try connection.query("UPDATE users SET email_normalized = $2 WHERE id = $1::uuid", [change.id, key])
        }
        // UUIDs need no quoting inside an array literal.
        var start = 0
        while start < recomputed.count {
            let chunk = recomputed[start..<min(start + 500, recomputed.count)]
            try connection.query(
                "UPDATE users SET email_key_rule = $1::smallint WHERE id = ANY($2::uuid[])",
                [String(emailKeyRule), "{" + chunk.joined(separator: ",") + "}"])
            start += 500
        }
    }
}
