import Foundation

/// Who made a change the audit log records (docs/console.md, "Audit log").
public enum AuditActor: Sendable, Equatable {
    /// The deployment's operator token.
    case operatorToken
    /// A secret key, by its id (never the key).
    case secretKey(id: String)
    /// A signed-in account (the console, or the person on the hosted pages), by its user id.
    case account(userID: String)
    /// The server itself (housekeeping, scheduled checks).
    case system
    /// Nobody this server knows: an admin bearer that names no caller (an unknown or revoked `sk_…` key),
    /// recorded with its refusal, never with the bearer (sql/017_audit_unknown_actor.sql).
    case unknown

    /// The stored kind: `operator_token`, `secret_key`, `account`, `system` or `unknown`.
    public var kind: String {
        switch self {
        case .operatorToken: return "operator_token"
        case .secretKey: return "secret_key"
        case .account: return "account"
        case .system: return "system"
        case .unknown: return "unknown"
        }
    }

    /// The stored id: the secret key's or the account's id; nil for the operator token and the server.
    public var id: String? {
        switch self {
        case .secretKey(let id), .account(let id): return id
        case .operatorToken, .system, .unknown: return nil
        }
    }
}

/// Whether the recorded action took effect or was refused (a role's forbidden change, an unknown key).
public enum AuditOutcome: String, Sendable, Equatable {
    case done
    case refused
}

/// One row of the audit log: who did what to which target, when and from where. Never carries a secret
/// (no key, token, code, password or email address in `target` or `detail`).
/// Source: docs/console.md, "Audit log".
public struct AuditEntry: Sendable, Equatable {
    public let actor: AuditActor
    /// What happened, as `noun.verb`: `domain.add`, `app.delete`, `member.add`, `password.reset`, ….
    public let action: String
    /// What it happened to: an id or a non-secret name (a domain, a callback's id, an app's id); nil for
    /// actions without one.
    public let target: String?
    /// The project concerned, or nil for deployment-wide actions.
    public let projectID: String?
    /// The environment concerned, or nil for project-level and deployment-wide actions (project-level
    /// events are listed under both environments).
    public let environmentID: String?
    /// The account the action concerns (for a person's own "Recent activity"), or nil.
    public let subjectUserID: String?
    /// The client address as the edge resolved it (docs/operations.md, trusted proxies), or nil.
    public let clientAddress: String?
    public let outcome: AuditOutcome
    public let at: Date

    public init(
        actor: AuditActor, action: String, target: String? = nil, projectID: String? = nil, environmentID: String? = nil,
        subjectUserID: String? = nil, clientAddress: String?, outcome: AuditOutcome = .done, at: Date
    ) {
        self.actor = actor
        self.action = action
        self.target = target
        self.projectID = projectID
        self.environmentID = environmentID
        self.subjectUserID = subjectUserID
        self.clientAddress = clientAddress
        self.outcome = outcome
        self.at = at
    }

    /// The same entry, refused.
    /// A refused call's target comes from the caller, not from a change the server made, so it is kept
    /// only when it has the shape of what targets name (`recordableTarget`): no caller can write an email
    /// address, a secret or markup into the log by putting it in a path.
    public var refused: AuditEntry {
        AuditEntry(
            actor: actor, action: action, target: Self.recordableTarget(target), projectID: projectID,
            environmentID: environmentID, subjectUserID: subjectUserID, clientAddress: clientAddress, outcome: .refused, at: at)
    }

    /// `raw` when it is an id (a UUID, lower-cased) or a domain name (`DomainName.normalize`), else nil.
    public static func recordableTarget(_ raw: String?) -> String? {
        guard let raw else { return nil }
        if let uuid = UUID(uuidString: raw) { return uuid.uuidString.lowercased() }
        return DomainName.normalize(raw)
    }
}

/// Records what no change accompanies: refused actions and events without a write of their own
/// (docs/console.md, "Audit log"). Changes record their row inside their own transaction instead, through
/// the store method that makes the change.
public protocol AuditRecorder: Sendable {
    /// - Throws: `StoreUnavailable`.
    func record(_ entry: AuditEntry) throws
}
