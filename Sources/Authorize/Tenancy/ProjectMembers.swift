import Foundation

/// A member of a project as the members list shows it (docs/console.md, "Members").
public struct ProjectMember: Sendable, Equatable {
    /// The account's id (a UUID, lower-case).
    public let userID: String
    /// The account's address as the person typed it.
    public let email: String
    /// The account's display name.
    public let name: String
    public let role: ProjectRole
    /// When the account became a member.
    public let addedAt: Date

    public init(userID: String, email: String, name: String, role: ProjectRole, addedAt: Date) {
        self.userID = userID
        self.email = email
        self.name = name
        self.role = role
        self.addedAt = addedAt
    }
}

/// An account marked an operator (docs/console.md, "Roles").
public struct OperatorRecord: Sendable, Equatable {
    public let userID: String
    public let email: String
    public let name: String
    /// When the operator token marked it.
    public let markedAt: Date

    public init(userID: String, email: String, name: String, markedAt: Date) {
        self.userID = userID
        self.email = email
        self.name = name
        self.markedAt = markedAt
    }
}

/// Why a change of a project's members did not happen (docs/console.md, "Members").
public enum MemberRefusal: Error, Sendable, Equatable {
    /// The project does not exist.
    case noProject
    /// No open account has the address (nothing was created).
    case noAccount
    /// The account is already a member of the project.
    case alreadyMember
    /// The account is no member of the project.
    case notMember
    /// The change would leave the project without an owner.
    case lastOwner
}

/// Why marking or unmarking an operator did not happen.
public enum OperatorRefusal: Error, Sendable, Equatable {
    /// No open account has the address, or no account the id.
    case noAccount
    /// The account is already an operator.
    case alreadyOperator
    /// The account is no operator.
    case notOperator
}

/// The rule a member change must keep, checked by the store while it holds the project's lock: given
/// every member's role after the change, whether the change may go ahead (`Permissions.keepsAnOwner`).
public typealias OwnerRule = @Sendable ([ProjectRole]) -> Bool

/// What managing a project's members and the deployment's operators needs from storage. Every write
/// also inserts its audit row (`audit`, with the target filled in) in its own transaction, so the row
/// exists exactly when the change does.
public protocol ProjectMemberStore: Sendable {
    /// Whether the project exists.
    /// - Throws: `StoreUnavailable`.
    func projectExists(projectID: String) throws -> Bool
    /// The id of the open account whose address key is `emailKey` (`EmailAddress.key`), or nil.
    /// - Throws: `StoreUnavailable`.
    func openAccountID(emailKey: String) throws -> String?
    /// Up to `limit` members of the project in the order they were added, after the member `after` (a
    /// cursor that is no member's id starts from the beginning).
    /// - Throws: `StoreUnavailable`.
    func members(projectID: String, after: String?, limit: Int) throws -> [ProjectMember]
    /// Adds an open account to the project.
    /// - Throws: `MemberRefusal.noProject`, `.noAccount`, `.alreadyMember`; `StoreUnavailable`.
    func addMember(projectID: String, userID: String, role: ProjectRole, audit: AuditEntry) throws -> ProjectMember
    /// Changes a member's role, or removes the member when `role` is nil. Serialised per project (its
    /// row is locked first), and refused unless `rule` accepts every member's role after the change.
    /// - Returns: the member as it now stands, or nil when removed.
    /// - Throws: `MemberRefusal.noProject`, `.notMember`, `.lastOwner`; `StoreUnavailable`.
    func changeMember(projectID: String, userID: String, role: ProjectRole?, rule: OwnerRule, audit: AuditEntry) throws
        -> ProjectMember?
    /// Marks an open account an operator.
    /// - Throws: `OperatorRefusal.noAccount`, `.alreadyOperator`; `StoreUnavailable`.
    func markOperator(userID: String, audit: AuditEntry) throws -> OperatorRecord
    /// Removes an account's operator mark.
    /// - Throws: `OperatorRefusal.notOperator`; `StoreUnavailable`.
    func unmarkOperator(userID: String, audit: AuditEntry) throws
}

/// Who makes a change, for its audit row: the actor and the client address the edge resolved.
public struct ChangeOrigin: Sendable, Equatable {
    public let actor: AuditActor
    public let clientAddress: String?
    public let at: Date

    public init(actor: AuditActor, clientAddress: String?, at: Date) {
        self.actor = actor
        self.clientAddress = clientAddress
        self.at = at
    }

    /// The audit entry of `action` on `target` (a user id) in `projectID`.
    public func entry(_ action: String, target: String, projectID: String? = nil) -> AuditEntry {
        AuditEntry(actor: actor, action: action, target: target, projectID: projectID, clientAddress: clientAddress, at: at)
    }
}

/// A project's members and the deployment's operators (docs/console.md, "Members"; docs/protocol.md,
/// admin calls): list, add by email, change a role, remove; a project always keeps at least one owner
/// (`Permissions.keepsAnOwner`, checked under the project's lock so two concurrent demotions of its two
/// owners leave one). Who may call is decided before (the admin API's bearer, or `Permissions` for a
/// console account); each write records `member.add`, `member.update`, `member.remove`, `operator.mark`
/// or `operator.unmark` with the account's id as the target.
public struct ProjectMembers: Sendable {
    let store: any ProjectMemberStore

    /// - Parameter store: where members and operators are kept.
    public init(store: any ProjectMemberStore) { self.store = store }

    /// One page of the project's members, in the order they were added.
    /// - Parameters:
    ///   - cursor: the previous page's `nextCursor`, or nil.
    ///   - limit: 1–100 items.
    /// - Throws: `MemberRefusal.noProject`; `StoreUnavailable`.
    public func list(projectID: String, cursor: String?, limit: Int) throws -> Page<ProjectMember> {
        guard try store.projectExists(projectID: projectID) else { throw MemberRefusal.noProject }
        return Page(rows: try store.members(projectID: projectID, after: cursor, limit: limit + 1), limit: limit, id: \.userID)
    }

    /// Adds the open account with this address as a member with `role`.
    /// - Throws: `MemberRefusal.noProject`, `.noAccount`, `.alreadyMember`; `StoreUnavailable`.
    public func add(projectID: String, email: EmailAddress, role: ProjectRole, by origin: ChangeOrigin) throws -> ProjectMember {
        guard try store.projectExists(projectID: projectID) else { throw MemberRefusal.noProject }
        guard let userID = try store.openAccountID(emailKey: email.key) else { throw MemberRefusal.noAccount }
        return try store.addMember(
            projectID: projectID, userID: userID, role: role, audit: origin.entry("member.add", target: userID, projectID: projectID))
    }

    /// Gives a member another role (refused when it would leave the project without an owner).
    /// - Throws: `MemberRefusal.noProject`, `.notMember`, `.lastOwner`; `StoreUnavailable`.
    public func changeRole(projectID: String, userID: String, to role: ProjectRole, by origin: ChangeOrigin) throws -> ProjectMember {
        let changed = try store.changeMember(
            projectID: projectID, userID: userID, role: role, rule: Permissions.keepsAnOwner(rolesAfterChange:),
            audit: origin.entry("member.update", target: userID, projectID: projectID))
        guard let changed else { throw MemberRefusal.notMember }
        return changed
    }

    /// Removes a member (refused when it would leave the project without an owner).
    /// - Throws: `MemberRefusal.noProject`, `.notMember`, `.lastOwner`; `StoreUnavailable`.
    public func remove(projectID: String, userID: String, by origin: ChangeOrigin) throws {
        _ = try store.changeMember(
            projectID: projectID, userID: userID, role: nil, rule: Permissions.keepsAnOwner(rolesAfterChange:),
            audit: origin.entry("member.remove", target: userID, projectID: projectID))
    }

    /// Marks the open account with this address an operator.
    /// - Throws: `OperatorRefusal.noAccount`, `.alreadyOperator`; `StoreUnavailable`.
    public func markOperator(email: EmailAddress, by origin: ChangeOrigin) throws -> OperatorRecord {
        guard let userID = try store.openAccountID(emailKey: email.key) else { throw OperatorRefusal.noAccount }
        return try store.markOperator(userID: userID, audit: origin.entry("operator.mark", target: userID))
    }

    /// Removes an operator's mark.
    /// - Throws: `OperatorRefusal.notOperator`; `StoreUnavailable`.
    public func unmarkOperator(userID: String, by origin: ChangeOrigin) throws {
        try store.unmarkOperator(userID: userID, audit: origin.entry("operator.unmark", target: userID))
    }
}
