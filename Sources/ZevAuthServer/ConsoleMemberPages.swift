import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's Members page (docs/console.md, "Members" and "Pages"): every member with their role; for
/// owners and operators (`ProjectAction.manageMembers`, after a sign-in from the last 10 minutes) "Add
/// member", and per member a role select with "Save", and "Remove". Every change goes through
/// `ProjectMembers`, the use case the admin API calls, with the console account as the audit actor.
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    /// The members pages read at most (100 each): a bound on one page's work.
    private static let memberPagesShown = 10

    private var members: ProjectMembers { ProjectMembers(store: context.tenancy.members) }

    /// `GET /console/projects/{id}/members`: readable by every member (`read`); the change forms only for
    /// the roles that may manage members.
    func membersPage(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: EnvironmentKind.development.rawValue, page: "members") { project in
            ("Members", try membersBody(project, notice: Self.notice(request), error: nil, invalid: nil, email: nil))
        }
    }

    /// The members, in the order they were added (at most `memberPagesShown` pages of 100).
    private func allMembers(_ projectID: String) throws -> [ProjectMember] {
        var rows: [ProjectMember] = []
        var cursor: String?
        for _ in 0..<Self.memberPagesShown {
            let page = try members.list(projectID: projectID, cursor: cursor, limit: 100)
            rows += page.items
            guard let next = page.nextCursor else { break }
            cursor = next
        }
        return rows
    }

    /// A role `<select>` named `role`, with `selected` chosen.
    private static func roleSelect(id: String, label: String, selected: ProjectRole) -> String {
        var html = "<label for=\"\(e(id))\">\(e(label))</label><select id=\"\(e(id))\" name=\"role\">"
        for role in [ProjectRole.owner, .admin, .viewer] {
            html += "<option value=\"\(role.rawValue)\"\(role == selected ? " selected" : "")>\(roleWords(role))</option>"
        }
        return html + "</select>"
    }

    static func roleWords(_ role: ProjectRole) -> String {
        switch role {
        case .owner: "Owner"
        case .admin: "Admin"
        case .viewer: "Viewer"
        }
    }

    private func membersBody(_ project: ProjectContext, notice: String?, error: String?, invalid: String?, email: String?) throws
        -> String
    {
        let csrf = project.caller.session.csrf
        let base = project.place.path("members")
        let canChange = project.may(.manageMembers)
        let rows = try allMembers(project.environment.projectID)
        var html = "<h1>Members</h1>" + ConsolePages.banner(error: error, notice: notice)
        if !canChange { html += "<p class=\"hint\">Only the project's owners and the deployment's operators may change its members.</p>" }
        html += rows.isEmpty ? "<p>No member yet.</p>" : "<ul class=\"items\">"
        for member in rows {
            html += "<li><strong>\(Self.e(member.email))</strong> — \(Self.e(member.name)) — \(Self.roleWords(member.role))"
            if canChange {
                let select = Self.roleSelect(
                    id: "role-\(member.userID)", label: "Role of \(member.email)", selected: member.role)
                html += ConsolePages.form(action: "\(base)/\(member.userID)", csrf: csrf, fields: select, button: "Save", inline: true)
                html += ConsolePages.form(
                    action: "\(base)/\(member.userID)/remove", csrf: csrf, button: "Remove", secondary: true, inline: true)
            }
            html += "</li>"
        }
        if !rows.isEmpty { html += "</ul>" }
        if canChange {
            let fields =
                Pages.input(
                    id: "email", name: "email", label: "Email address", type: "email", autocomplete: "off", value: email,
                    hint: "The address of an existing account of this deployment.", invalid: invalid == "email")
                + Self.roleSelect(id: "role", label: "Role", selected: .viewer)
            html += "<h2>Add member</h2>" + ConsolePages.form(action: base, csrf: csrf, fields: fields, button: "Add member")
        }
        return html
    }

    private func membersError(_ project: ProjectContext, _ message: String, status: Int, invalid: String? = nil, email: String? = nil)
        throws -> HTTPResponse
    {
        ConsolePages.page(
            title: "Members",
            body: ConsolePages.projectNavigation(project.place)
                + (try membersBody(project, notice: nil, error: message, invalid: invalid, email: email)),
            chrome: project.caller.chrome("projects"), status: status)
    }

    /// A refused member change in words, with its status (the admin API's, docs/console.md "Members").
    private func membersRefusal(_ project: ProjectContext, _ refusal: MemberRefusal, email: String? = nil) throws -> HTTPResponse {
        switch refusal {
        case .noProject: return try membersError(project, "This project no longer exists.", status: 404)
        case .noAccount:
            return try membersError(project, "No open account has this email address.", status: 404, invalid: "email", email: email)
        case .alreadyMember:
            return try membersError(
                project, "This account is already a member of the project.", status: 409, invalid: "email", email: email)
        case .notMember: return try membersError(project, "This account is no member of the project.", status: 404)
        case .lastOwner: return try membersError(project, MemberAdminHandlers.lastOwnerMessage, status: 409)
        }
    }

    private func origin(_ request: HTTPRequest, _ project: ProjectContext) -> ChangeOrigin {
        ChangeOrigin(
            actor: .account(userID: project.caller.session.userID),
            clientAddress: ClientAddress.of(request, configuration: context.configuration), at: context.clock.now())
    }

    /// `POST /console/projects/{id}/members` (form `email`, `role`): `ProjectMembers.add`.
    func addMember(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: EnvironmentKind.development.rawValue, page: "members", action: .manageMembers, audit: "member.add",
            sensitive: true
        ) { project, form in
            let raw = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
            guard case .success(let email) = EmailAddress.parse(raw) else {
                return try membersError(project, "Enter a valid email address.", status: 400, invalid: "email", email: raw)
            }
            guard let role = ProjectRole(wire: form["role"] ?? "") else {
                return try membersError(project, "Choose the role Owner, Admin or Viewer.", status: 400, email: raw)
            }
            do {
                _ = try members.add(projectID: project.environment.projectID, email: email, role: role, by: origin(request, project))
            } catch let refusal as MemberRefusal {
                return try membersRefusal(project, refusal, email: raw)
            }
            return Self.done(project.place.path("members"), "member_added")
        }
    }

    /// `POST /console/projects/{id}/members/{userID}` (form `role`): `ProjectMembers.changeRole`; refused
    /// with its sentence when the project would keep no owner.
    func saveMember(_ request: HTTPRequest, id: String, userID: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: EnvironmentKind.development.rawValue, page: "members", action: .manageMembers, audit: "member.update",
            target: userID, sensitive: true
        ) { project, form in
            guard let role = ProjectRole(wire: form["role"] ?? "") else {
                return try membersError(project, "Choose the role Owner, Admin or Viewer.", status: 400)
            }
            guard let userID = UUID(uuidString: userID)?.uuidString.lowercased() else {
                return try membersRefusal(project, .notMember)
            }
            do {
                _ = try members.changeRole(
                    projectID: project.environment.projectID, userID: userID, to: role, by: origin(request, project))
            } catch let refusal as MemberRefusal {
                return try membersRefusal(project, refusal)
            }
            return Self.done(project.place.path("members"), "member_saved")
        }
    }

    /// `POST /console/projects/{id}/members/{userID}/remove`: `ProjectMembers.remove`; refused with its
    /// sentence for the last owner. A member who removes themselves lands on their projects.
    func removeMember(_ request: HTTPRequest, id: String, userID: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: EnvironmentKind.development.rawValue, page: "members", action: .manageMembers, audit: "member.remove",
            target: userID, sensitive: true
        ) { project, _ in
            guard let userID = UUID(uuidString: userID)?.uuidString.lowercased() else {
                return try membersRefusal(project, .notMember)
            }
            do {
                try members.remove(projectID: project.environment.projectID, userID: userID, by: origin(request, project))
            } catch let refusal as MemberRefusal {
                return try membersRefusal(project, refusal)
            }
            if userID == project.caller.session.userID.lowercased() && !project.caller.isOperator {
                return Wire.seeOther("/console/projects")
            }
            return Self.done(project.place.path("members"), "member_removed")
        }
    }
}
