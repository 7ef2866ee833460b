import Authorize
import Foundation
import Postgres
import PostgresStore

/// Recomputing account email keys under the current rule (`EmailAddress`), the Swift step of migration 006
/// (docs/operations.md, "Accounts that share an address"): it reads the rows, lets `EmailKeyPlan` (Authorize)
/// decide, writes the changes and reports account ids.
///
/// Where several accounts now share one key, nothing is merged or deleted: the earliest open account (else
/// the earliest) keeps the key and the others have none, so they cannot sign in until an operator closes
/// one of them. The step runs again on every `zevauth migrate`: once the key's holder is closed, the
/// earliest open account without a key receives it.
public enum EmailKeyMigration {
    /// The step completing migration 006.
    public static let step = MigrationStep(version: 6) { connection in try run(connection) }

    /// Runs the recomputation on the migrator's connection.
    /// - Returns: lines for the operator naming account ids only, never an address.
    static func run(_ connection: PostgresConnection) throws -> [String] {
        guard try PostgresStore.emailKeysNeedWork(connection) else { return [] }
        let rows = try PostgresStore.emailKeyRows(connection)
        let plan = EmailKeyPlan.decide(rows: rows, rule: PostgresStore.emailKeyRule) { EmailAddress($0)?.key }
        let changes = rows.compactMap { row in plan.changes[row.id].map { (id: row.id, key: $0) } }
        try PostgresStore.writeEmailKeys(connection, changes: changes, recomputed: plan.recomputed)
        var lines: [String] = []
        if !plan.recomputed.isEmpty {
            lines.append("email keys: recomputed \(plan.recomputed.count) account(s) under the current address rule.")
        }
        for shared in plan.shared {
            lines.append(
                "email keys: accounts \(([shared.kept] + shared.keyless).joined(separator: ", ")) share one address; "
                    + "\(shared.kept) keeps it and \(shared.keyless.joined(separator: ", ")) cannot sign in until resolved "
                    + "(docs/operations.md, \"Accounts that share an address\").")
        }
        for id in plan.refused {
            lines.append("email keys: the address of account \(id) is refused by the current address rule; it keeps its previous key.")
        }
        return lines
    }
}
