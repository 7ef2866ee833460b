import Foundation

/// What the email-key recomputation decides, from the rows alone (docs/operations.md, "Accounts that share an
/// address"): where several accounts now share one key, nothing is merged or deleted; the earliest open account
/// (else the earliest) keeps it and the others have none.
public struct EmailKeyPlan: Sendable, Equatable {
    /// Accounts that now share one key: `kept` holds it, `keyless` (ids) have none.
    public struct SharedKey: Sendable, Equatable {
        public let kept: String
        public let keyless: [String]
    }
    /// Accounts whose stored key changes (nil: no key).
    public var changes: [String: String?] = [:]
    /// Accounts whose key the current rule computed (changed or not).
    public var recomputed: [String] = []
    /// Shared keys where an open account is left without a key.
    public var shared: [SharedKey] = []
    /// Accounts whose address the current rule refuses; they keep the key they had.
    public var refused: [String] = []

    /// Lines for the operator about this plan, naming account ids only, never an address.
    public var report: [String] {
        var lines: [String] = []
        if !recomputed.isEmpty {
            lines.append("email keys: recomputed \(recomputed.count) account(s) under the current address rule.")
        }
        for shared in shared {
            lines.append(
                "email keys: accounts \(([shared.kept] + shared.keyless).joined(separator: ", ")) share one address; "
                    + "\(shared.kept) keeps it and \(shared.keyless.joined(separator: ", ")) cannot sign in until resolved "
                    + "(docs/operations.md, \"Accounts that share an address\").")
        }
        for id in refused {
            lines.append("email keys: the address of account \(id) is refused by the current address rule; it keeps its previous key.")
        }
        return lines
    }

    /// Decides every account's key.
    /// - Parameters:
    ///   - rows: every account, oldest first.
    ///   - rule: the current rule's number.
    ///   - key: the current rule (`EmailAddress(_:)?.key`).
    public static func decide(rows: [EmailKeyRow], rule: Int, key: (String) -> String?) -> EmailKeyPlan {
        var plan = EmailKeyPlan()
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
}
