/// A project member's role (docs/console.md, "Roles"): `owner` may do everything in the project, `admin`
/// everything but members and secret keys, `viewer` only read.
public enum ProjectRole: String, Sendable, Equatable, CaseIterable {
    case owner
    case admin
    case viewer

    /// The role for its wire spelling (`"owner"`, `"admin"`, `"viewer"`), or nil.
    public init?(wire: String) { self.init(rawValue: wire) }
}

/// What a caller asks to do within one project (docs/console.md, "Roles"). Deployment-wide actions
/// (creating projects, accounts, signing keys, marking domains hosted, the production custom-scheme
/// exception, marking operators) are `OperatorAction`s.
public enum ProjectAction: String, Sendable, Equatable, CaseIterable {
    /// Reading anything of the project: domains, callbacks, apps, association files, settings, the key
    /// list, members, the activity.
    case read
    /// Changing the project's configuration: domains, callbacks, apps ("Check again" included) and the
    /// session settings.
    case configure
    /// Creating and revoking secret keys.
    case manageSecretKeys
    /// Adding, re-roling and removing members.
    case manageMembers
}

/// Deployment-wide actions only an operator may take (docs/console.md, "Roles").
public enum OperatorAction: String, Sendable, Equatable, CaseIterable {
    case createProject
    case manageAccounts
    case manageSigningKeys
    case markDomainHosted
    case allowProductionCustomScheme
    case manageOperators
    /// Adding, changing and deleting the deployment's upstream OpenID providers (docs/federation.md).
    case manageProviders
}

/// Who is acting, as the permission rule sees it.
public struct ConsoleCaller: Sendable, Equatable {
    /// Whether the account is marked an operator (`POST /v1/admin/operators`).
    public let isOperator: Bool
    /// The account's role in the project the action concerns, or nil when it is no member.
    public let role: ProjectRole?

    public init(isOperator: Bool, role: ProjectRole?) {
        self.isOperator = isOperator
        self.role = role
    }
}

/// The one rule deciding what a signed-in account may do (docs/console.md, "Roles"); the console's pages
/// and the member-facing admin calls both ask it, and the server enforces it on every action (a hidden
/// button is never the only guard).
public enum Permissions {
    /// Whether `caller` may take `action` in a project. Operators may do everything in every project.
    public static func allows(_ caller: ConsoleCaller, _ action: ProjectAction) -> Bool {
        if caller.isOperator { return true }
        switch (caller.role, action) {
        case (.owner?, _): return true
        case (.admin?, .read), (.admin?, .configure): return true
        case (.viewer?, .read): return true
        default: return false
        }
    }

    /// Whether `caller` may take a deployment-wide action: operators only.
    public static func allows(_ caller: ConsoleCaller, _ action: OperatorAction) -> Bool { caller.isOperator }

    /// Whether a project may end up with this set of owners: a project always keeps at least one
    /// (docs/console.md, "Members").
    public static func keepsAnOwner(rolesAfterChange roles: [ProjectRole]) -> Bool { roles.contains(.owner) }
}

/// A project an account belongs to, with its role there.
public struct Membership: Sendable, Equatable {
    public let projectID: String
    public let projectName: String
    public let role: ProjectRole

    public init(projectID: String, projectName: String, role: ProjectRole) {
        self.projectID = projectID
        self.projectName = projectName
        self.role = role
    }
}

/// What deciding a signed-in account's permissions reads from storage (docs/console.md, "Roles").
public protocol MembershipLookup: Sendable {
    /// The account's role in the project, or nil when it is no member (or the project does not exist).
    /// - Throws: `StoreUnavailable`.
    func role(userID: String, projectID: String) throws -> ProjectRole?
    /// Whether the account is marked an operator.
    /// - Throws: `StoreUnavailable`.
    func isOperator(userID: String) throws -> Bool
    /// The projects the account is a member of, by project name.
    /// - Throws: `StoreUnavailable`.
    func memberships(userID: String) throws -> [Membership]
}

extension MembershipLookup {
    /// The caller as `Permissions` sees it for one project.
    /// - Throws: `StoreUnavailable`.
    public func caller(userID: String, projectID: String) throws -> ConsoleCaller {
        ConsoleCaller(isOperator: try isOperator(userID: userID), role: try role(userID: userID, projectID: projectID))
    }
}
