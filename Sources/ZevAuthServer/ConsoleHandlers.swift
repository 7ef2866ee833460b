import Association
import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PostgresStore

/// The console's pages and actions (docs/console.md, "Pages"). Every page needs a live console session
/// (else the sign-in starts and returns here); operators and owners without TOTP are sent to enrol first;
/// every action checks its form's CSRF token, asks `Permissions` with the caller from `store.members`,
/// records a refused action in the audit log and answers 403 without changing anything, and otherwise
/// calls the same use case the admin API calls. Creating secret keys, changing members and rotating signing
/// keys need a sign-in no older than 10 minutes (`max_age=600`).
struct ConsoleHandlers: Sendable {
    let context: ServerContext

    private var signIn: ConsoleSignIn { ConsoleSignIn(context: context) }
    private var console: PostgresConsole { context.store.console }
    private var now: Date { context.clock.now() }

    // MARK: The caller

    /// A signed-in caller allowed past the TOTP requirement.
    struct Caller {
        let session: ConsoleSession
        let isOperator: Bool
        let memberships: [Membership]
        /// The request's client address as the rate limits see it, and the time, for audit entries.
        let clientAddress: String?
        let at: Date
        func chrome(_ section: String) -> ConsolePages.Chrome {
            ConsolePages.Chrome(email: session.email, csrf: session.csrf, isOperator: isOperator, section: section)
        }

        /// The audit entry of an action this account takes (docs/console.md, "Audit log").
        func audit(
            _ action: String, target: String? = nil, projectID: String? = nil, environmentID: String? = nil,
            subjectUserID: String? = nil
        ) -> AuditEntry {
            AuditEntry(
                actor: .account(userID: session.userID), action: action, target: target, projectID: projectID,
                environmentID: environmentID, subjectUserID: subjectUserID, clientAddress: clientAddress, at: at)
        }
    }

    /// The answer to send instead of the page or action.
    struct Stop: Error {
        let response: HTTPResponse
    }

    /// The signed-in caller, or the sign-in (returning to `returnTo`), or the TOTP enrolment page.
    func caller(_ request: HTTPRequest, returnTo: String) throws -> Caller {
        guard let session = try signIn.current(request) else {
            throw Stop(response: try signIn.begin(returnTo: returnTo, recent: false))
        }
        let isOperator = try context.store.members.isOperator(userID: session.userID)
        let memberships = try context.store.members.memberships(userID: session.userID)
        let totp = try AccountOverview(store: context.accounts.overview)(userID: session.userID).totpEnabled
        let caller = Caller(
            session: session, isOperator: isOperator, memberships: memberships,
            clientAddress: ClientAddress.of(request, configuration: context.configuration), at: now)
        if ConsoleSessionPolicy.mustEnrolTOTP(isOperator: isOperator, memberships: memberships, totpEnabled: totp) {
            let body = """
                <h1>Set up two-step verification</h1>
                <p>Operators and project owners must use an authenticator app to sign in to the console. Set it up on \
                your account page, then come back to the console.</p>
                <p><a href="/account">Set up two-step verification on your account page</a></p>
                <p><a href="/console">Return to the console</a></p>
                """
            throw Stop(
                response: ConsolePages.page(
                    title: "Set up two-step verification", body: body, chrome: caller.chrome(""),
                    status: request.method == "POST" ? 403 : 200))
        }
        return caller
    }

    /// A posted console form: the caller and the fields, its CSRF token checked.
    private func posted(_ request: HTTPRequest, page: String) throws -> (Caller, [String: String]) {
        let caller = try caller(request, returnTo: page)
        guard let form = AccountForms.fields(request) else { throw Stop(response: AccountForms.unreadableForm) }
        guard AccountForms.csrfMatches(form["csrf"], caller.session.csrf) else { throw Stop(response: AccountForms.expiredForm) }
        return (caller, form)
    }

    /// Runs a page or action, turning a `Stop` into its answer.
    func run(_ body: () throws -> HTTPResponse) throws -> HTTPResponse {
        do { return try body() } catch let stop as Stop { return stop.response }
    }

    // MARK: Projects and their pages

    /// A project page's context: the caller, the environment and the caller's role as `Permissions` sees it.
    struct ProjectContext {
        let caller: Caller
        let environment: EnvironmentRecord
        let role: ConsoleCaller
        let place: ConsolePages.ProjectPlace
        func may(_ action: ProjectAction) -> Bool { Permissions.allows(role, action) }

        /// The audit entry of an action in this project: of this environment, or project-level.
        func audit(_ action: String, target: String? = nil, projectLevel: Bool = false) -> AuditEntry {
            caller.audit(
                action, target: target, projectID: environment.projectID, environmentID: projectLevel ? nil : environment.id)
        }
    }

    private func project(_ caller: Caller, id: String, env: String, page: String) throws -> ProjectContext {
        guard let kind = EnvironmentKind(rawValue: env), let environment = try console.environment(projectID: id, kind: kind) else {
            throw Stop(
                response: ConsolePages.message(
                    title: "Not found", heading: "No such project", "This project or environment does not exist.", status: 404,
                    chrome: caller.chrome("projects"), link: ("/console/projects", "Back to your projects")))
        }
        let role = try context.store.members.caller(userID: caller.session.userID, projectID: environment.projectID)
        let place = ConsolePages.ProjectPlace(
            projectID: environment.projectID, projectName: environment.projectName, kind: kind, page: page)
        return ProjectContext(caller: caller, environment: environment, role: role, place: place)
    }

    /// A project page (GET): the caller must be allowed to read the project.
    func projectPage(
        _ request: HTTPRequest, id: String, env: String, page: String,
        render: (ProjectContext) throws -> (title: String, body: String)
    ) throws -> HTTPResponse {
        try run {
            let caller = try caller(request, returnTo: request.path)
            let project = try project(caller, id: id, env: env, page: page)
            guard project.may(.read) else {
                return ConsolePages.message(
                    title: "Not allowed", heading: "Not allowed", "You are not a member of this project.", status: 403,
                    chrome: caller.chrome("projects"), link: ("/console/projects", "Back to your projects"))
            }
            let content = try render(project)
            return ConsolePages.page(
                title: content.title, body: ConsolePages.projectNavigation(project.place) + content.body,
                chrome: caller.chrome("projects"))
        }
    }

    /// A project action (POST): CSRF, `Permissions` (a refusal is audited and answered 403), the recent
    /// sign-in for a sensitive action, then `body`.
    func projectAction(
        _ request: HTTPRequest, id: String, env: String, page: String, action: ProjectAction, audit: String, target: String? = nil,
        sensitive: Bool = false, body: (ProjectContext, [String: String]) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        try run {
            let pagePath = "/console/projects/\(id)/\(page == "members" ? "" : env + "/")\(page)"
            let (caller, form) = try posted(request, page: ConsoleSignIn.safeReturn(pagePath))
            let project = try project(caller, id: id, env: env, page: page)
            guard project.may(action) else {
                try context.store.audit.record(project.audit(audit, target: target).refused)
                return ConsolePages.message(
                    title: "Not allowed", heading: "Not allowed", Self.refusal(project.role.role, action), status: 403,
                    chrome: caller.chrome("projects"), link: (project.place.path(page), "Back"))
            }
            if sensitive && !ConsoleSessionPolicy.isRecent(caller.session.record, now: now) {
                return try signIn.begin(returnTo: ConsoleSignIn.safeReturn(pagePath), recent: true)
            }
            return try body(project, form)
        }
    }

    /// What a role may not do, in a sentence (docs/console.md, "Roles").
    static func refusal(_ role: ProjectRole?, _ action: ProjectAction) -> String {
        guard let role else { return "You are not a member of this project." }
        switch action {
        case .read: return "You are not a member of this project."
        case .configure: return "A \(role.rawValue) of this project may read it but not change its configuration."
        case .manageSecretKeys: return "Only the project's owners may create or revoke secret keys."
        case .manageMembers: return "Only the project's owners and the deployment's operators may change its members."
        }
    }

    /// An operator's action (POST): CSRF, `Permissions` (a refusal is audited and answered 403), the
    /// recent sign-in for a sensitive action, then `body`.
    func operatorAction(
        _ request: HTTPRequest, page: String, action: OperatorAction, audit: String?, target: String? = nil, sensitive: Bool = false,
        body: (Caller, [String: String]) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        try run {
            let (caller, form) = try posted(request, page: page)
            guard Permissions.allows(ConsoleCaller(isOperator: caller.isOperator, role: nil), action) else {
                // A refused change is audited; a refused read (the account search) changes nothing to record.
                if let audit {
                    try context.store.audit.record(caller.audit(audit, target: target).refused)
                }
                return ConsolePages.message(
                    title: "Not allowed", heading: "Not allowed", "Only the deployment's operators may do this.", status: 403,
                    chrome: caller.chrome("projects"), link: ("/console/projects", "Back to your projects"))
            }
            if sensitive && !ConsoleSessionPolicy.isRecent(caller.session.record, now: now) {
                return try signIn.begin(returnTo: page, recent: true)
            }
            return try body(caller, form)
        }
    }

    /// An operator's page (GET).
    func operatorPage(_ request: HTTPRequest, section: String, render: (Caller) throws -> (title: String, body: String)) throws
        -> HTTPResponse
    {
        try run {
            let caller = try caller(request, returnTo: request.path)
            guard caller.isOperator else {
                return ConsolePages.message(
                    title: "Not allowed", heading: "Not allowed", "Only the deployment's operators may open this page.", status: 403,
                    chrome: caller.chrome("projects"), link: ("/console/projects", "Back to your projects"))
            }
            let content = try render(caller)
            return ConsolePages.page(title: content.title, body: content.body, chrome: caller.chrome(section))
        }
    }

    /// 303 back to a page with a notice key (`?done=`), after a change (post, redirect, get).
    static func done(_ path: String, _ key: String) -> HTTPResponse { Wire.seeOther("\(path)?done=\(key)") }

    static let notices: [String: String] = [
        "domain": "The domain was added. Publish its token file, then press Verify.",
        "verified": "The domain is verified.",
        "callback": "The callback was added.",
        "callback_deleted": "The callback was deleted.",
        "app": "The app was added and checked.",
        "checked": "The app's link domains were checked again.",
        "removed": "The app was removed.",
        "saved": "The settings were saved.",
        "revoked": "The secret key was revoked.",
        "closed": "The account was closed and every one of its sessions ended.",
        "rotated": "The signing keys were rotated.",
        "member_added": "The member was added.",
        "member_saved": "The member's role was saved.",
        "member_removed": "The member was removed.",
        "provider_added": "The provider was added.",
        "provider_saved": "The provider was saved.",
        "provider_deleted": "The provider was deleted.",
        "providers_saved": "The sign-in providers were saved.",
    ]

    static func notice(_ request: HTTPRequest) -> String? { AccountForms.query(request, "done").flatMap { notices[$0] } }
}
