import Foundation
import Authorize
import Postgres
import PostgresStore

/// Recomputing account email keys under the current rule (`EmailAddress`), the Swift step of migration 006
/// (docs/operations.md, "Accounts that share an address").
///
/// Where several accounts now share one key, nothing is merged or deleted: the earliest open account (else
/// the earliest) keeps the key and the others have none, so they cannot sign in until an operator closes
/// one of them. The step runs again on every `zevauth migrate`: once the key's holder is closed, the
/// earliest open account without a key receives it.
public enum EmailKeyMigration {
    /// The step completing migration 006.
    public static let step = MigrationStep(version: 6) { connection in try run(connection) }

    /// What the recomputation decides, from the rows alone.
    struct Plan: Equatable {
        /// Accounts that now share one key: `kept` holds it, `keyless` (ids) have none.
        struct SharedKey: Equatable {
            let kept: String
            let keyless: [String]
        }
        /// Accounts whose stored key changes (nil: no key).
        var changes: [String: String?] = [:]
        /// Accounts whose key the current rule computed (changed or not).
        var recomputed: [String] = []
        /// Shared keys where an open account is left without a key.
        var shared: [SharedKey] = []
        /// Accounts whose address the current rule refuses; they keep the key they had.
        var refused: [String] = []
    }

    /// Decides every account's key.
    /// - Parameters:
    ///   - rows: every account, oldest first.
    ///   - rule: the current rule's number.
    ///   - key: the current rule (`EmailAddress(_:)?.key`).
    static func plan(rows: [EmailKeyRow], rule: Int, key: (String) -> String?) -> Plan {
        var plan = Plan()
        var wanted: [String: [EmailKeyRow]] = [:]
        var order: [String] = []
        for row in rows {
            let desired: String?
            if row.rule >= rule, let stored = row.key {
                desired = stored
            } else if row.rule >= rule, row.closed {
                desired = nil  // a closed account without a key stays so
            } else {
                if row.rule < rule { plan.recomputed.append(row.id) }
                if let computed = key(row.email) {
                    desired = computed
                } else {
                    if row.rule < rule { plan.refused.append(row.id) }
                    desired = row.key
                }
            }
            guard let desired else { continue }
            if wanted[desired] == nil { order.append(desired) }
            wanted[desired, default: []].append(row)
        }
        var final: [String: String] = [:]
        for desired in order {
            let holders = wanted[desired] ?? []
            let winner = holders.min { ($0.closed ? 1 : 0, $0.createdAt, $0.id) < ($1.closed ? 1 : 0, $1.createdAt, $1.id) }!
            final[winner.id] = desired
            let losers = holders.filter { $0.id != winner.id }
            if losers.contains(where: { !$0.closed }) {
                plan.shared.append(.init(kept: winner.id, keyless: losers.map(\.id)))
            }
        }
        for row in rows where final[row.id] != row.key {
            plan.changes[row.id] = .some(final[row.id])
        }
        return plan
    }

    /// Runs the recomputation on the migrator's connection.
    /// - Returns: lines for the operator naming account ids only, never an address.
    static func run(_ connection: PostgresConnection) throws -> [String] {
        guard try PostgresStore.emailKeysNeedWork(connection) else { return [] }
        let rows = try PostgresStore.emailKeyRows(connection)
        let plan = plan(rows: rows, rule: PostgresStore.emailKeyRule) { EmailAddress($0)?.key }
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
