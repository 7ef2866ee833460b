import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's Projects page and the operators' Accounts and Signing keys pages (docs/console.md,
/// "Pages"), over the admin API's use cases (`CreateProject`, `FindUser`, `CloseUser`,
/// `RotateSigningKeys`).
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    // MARK: Projects

    /// `GET /console` and `GET /console/projects` (`?q=` for operators): the caller's projects; an operator
    /// sees every project, a search and "Create project".
    func projectsPage(_ request: HTTPRequest) throws -> HTTPResponse {
        try run {
            let caller = try caller(request, returnTo: request.path == "/console" ? "/console" : "/console/projects")
            return try projectsResponse(caller, query: AccountForms.query(request, "q") ?? "", error: nil, created: nil)
        }
    }

    private func projectsResponse(
        _ caller: Caller, query: String, error: String?, created: CreatedProject?, status: Int = 200, invalid: String? = nil,
        values: [String: String] = [:], ownerEmail: String? = nil
    ) throws -> HTTPResponse {
        var html = "<h1>Projects</h1>" + ConsolePages.banner(error: error, notice: nil)
        if let created {
            html += """
                <div class="card"><h2>Project created: \(Self.e(created.name))</h2>
                <p>Copy the secret keys now: they are shown only once and stored only as a hash.</p>
                <p>Development secret key: <span class="secret">\(Self.e(created.development.secretKey))</span></p>
                <p>Production secret key: <span class="secret">\(Self.e(created.production.secretKey))</span></p>
                \(ownerEmail.map { "<p>First owner: \(Self.e($0))</p>" } ?? "")
                <p><a href="/console/projects/\(Self.e(created.id))/development/domains">Open \(Self.e(created.name))</a></p></div>
                """
        }
        let projects: [(id: String, name: String)]
        if caller.isOperator {
            html +=
                "<form method=\"get\" action=\"/console/projects\" role=\"search\">"
                + Pages.input(
                    id: "q", name: "q", label: "Search projects by name", type: "search", autocomplete: "off", value: query,
                    attributes: "")
                + "<button type=\"submit\" class=\"secondary\">Search</button></form>"
            projects = try context.store.console.searchProjects(query)
        } else {
            projects = caller.memberships.map { (id: $0.projectID, name: $0.projectName) }
        }
        html += projects.isEmpty ? "<p>No project yet.</p>" : "<ul class=\"items\">"
        for project in projects {
            html += "<li><a href=\"/console/projects/\(Self.e(project.id))/development/domains\">\(Self.e(project.name))</a></li>"
        }
        if !projects.isEmpty { html += "</ul>" }
        if caller.isOperator {
            let fields =
                Pages.input(
                    id: "name", name: "name", label: "Project name", type: "text", autocomplete: "off", value: values["name"],
                    invalid: invalid == "name")
                + Pages.input(
                    id: "ownerEmail", name: "ownerEmail", label: "First owner's email (optional)", type: "email", autocomplete: "off",
                    value: values["ownerEmail"], hint: "The address of an existing account, which becomes the project's first owner.",
                    attributes: "", invalid: invalid == "ownerEmail")
            html +=
                "<h2>Create project</h2>"
                + ConsolePages.form(action: "/console/projects", csrf: caller.session.csrf, fields: fields, button: "Create project")
        }
        return ConsolePages.page(title: "Projects", body: html, chrome: caller.chrome("projects"), status: status)
    }

    /// `POST /console/projects` (form `name`, `ownerEmail` optional): the operator's `CreateProject`, the
    /// admin API's path; with `ownerEmail`, that open account becomes the first owner in the creating
    /// transaction (its `member.add` row names the console account); an address with no open account
    /// creates nothing and the page says so.
    func createProject(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorAction(request, page: "/console/projects", action: .createProject, audit: "project.create") { caller, form in
            let values = ["name": form["name"] ?? "", "ownerEmail": form["ownerEmail"] ?? ""]
            func refuse(_ message: String, _ field: String, status: Int) throws -> HTTPResponse {
                try projectsResponse(caller, query: "", error: message, created: nil, status: status, invalid: field, values: values)
            }
            guard let name = DisplayName((form["name"] ?? "").trimmingCharacters(in: .whitespaces))?.text else {
                return try refuse("The project name \(DisplayName.rule).", "name", status: 400)
            }
            let rawOwner = (form["ownerEmail"] ?? "").trimmingCharacters(in: .whitespaces)
            var owner: NewProjectOwner?
            if !rawOwner.isEmpty {
                guard case .success(let email) = EmailAddress.parse(rawOwner) else {
                    return try refuse("Enter a valid email address for the first owner, or leave it empty.", "ownerEmail", status: 400)
                }
                guard let userID = try context.tenancy.members.openAccountID(emailKey: email.key) else {
                    return try refuse(Self.noOwnerAccount, "ownerEmail", status: 404)
                }
                let origin = ChangeOrigin(
                    actor: .account(userID: caller.session.userID), clientAddress: caller.clientAddress, at: caller.at)
                owner = NewProjectOwner(userID: userID, origin: origin)
            }
            do {
                let created = try CreateProject(store: context.tenancy.projectCreation, secrets: context.secrets)(
                    name: name, owner: owner, now: context.clock.now(), audit: caller.audit("project.create"))
                return try projectsResponse(
                    caller, query: "", error: nil, created: created, status: 201, ownerEmail: owner == nil ? nil : rawOwner)
            } catch MemberRefusal.noAccount {
                return try refuse(Self.noOwnerAccount, "ownerEmail", status: 404)
            }
        }
    }

    static let noOwnerAccount = "No open account has this email address, so no project was created."

    // MARK: Accounts

    /// `GET /console/accounts`: the search form (the address travels in a POST body, never a URL).
    func accountsPage(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorPage(request, section: "accounts") { caller in
            ("Accounts", accountsBody(caller, email: nil, found: nil, notice: Self.notice(request), error: nil))
        }
    }

    /// - Parameter passkeys: how many passkeys the found account holds.
    private func accountsBody(
        _ caller: Caller, email: String?, found: UserRecord??, notice: String?, error: String?, passkeys: Int? = nil
    ) -> String {
        var html = "<h1>Accounts</h1>" + ConsolePages.banner(error: error, notice: notice)
        let field = Pages.input(
            id: "q", name: "q", label: "Email address", type: "email", autocomplete: "off", value: email, invalid: error != nil)
        html += ConsolePages.form(action: "/console/accounts", csrf: caller.session.csrf, fields: field, button: "Search")
        if let found {
            if let user = found {
                html += "<ul class=\"items\"><li><strong>\(Self.e(user.email))</strong> — \(Self.e(user.name))"
                if let passkeys { html += " <span class=\"muted\">(\(passkeys == 1 ? "1 passkey" : "\(passkeys) passkeys"))</span>" }
                if user.closed {
                    html += " <span class=\"muted\">(closed)</span>"
                } else {
                    html += ConsolePages.form(
                        action: "/console/accounts/\(user.id)/close", csrf: caller.session.csrf, button: "Close account", secondary: true)
                }
                html += "</li></ul>"
            } else {
                html += "<p>No account has this address.</p>"
            }
        }
        return html
    }

    /// `POST /console/accounts` (form `q`): the operator's account search (`FindUser`).
    func searchAccounts(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorAction(request, page: "/console/accounts", action: .manageAccounts, audit: nil) { caller, form in
            let raw = (form["q"] ?? "").trimmingCharacters(in: .whitespaces)
            guard let email = EmailAddress(raw) else {
                return ConsolePages.page(
                    title: "Accounts",
                    body: accountsBody(caller, email: raw, found: nil, notice: nil, error: "Enter a valid email address."),
                    chrome: caller.chrome("accounts"), status: 400)
            }
            let user = try FindUser(store: context.accounts.findUser)(email: email)
            let passkeys = try user.map { try context.accounts.passkeys.passkeyCount(userID: $0.id) }
            return ConsolePages.page(
                title: "Accounts", body: accountsBody(caller, email: raw, found: .some(user), notice: nil, error: nil, passkeys: passkeys),
                chrome: caller.chrome("accounts"))
        }
    }

    /// `POST /console/accounts/{userID}/close`: the operator's `CloseUser` (every session ends).
    func closeAccount(_ request: HTTPRequest, userID: String) throws -> HTTPResponse {
        try operatorAction(request, page: "/console/accounts", action: .manageAccounts, audit: "account.close", target: userID) {
            caller, _ in
            guard
                try CloseUser(store: context.accounts.closeUser)(
                    id: userID, now: context.clock.now(), audit: caller.audit("account.close", target: userID, subjectUserID: userID))
                    != nil
            else {
                return ConsolePages.page(
                    title: "Accounts", body: accountsBody(caller, email: nil, found: nil, notice: nil, error: "No account has this id."),
                    chrome: caller.chrome("accounts"), status: 404)
            }
            return Self.done("/console/accounts", "closed")
        }
    }

    // MARK: Signing keys

    /// `GET /console/signing-keys`: the JWKS state, read afresh.
    func signingKeysPage(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorPage(request, section: "signing-keys") { caller in
            ("Signing keys", try signingKeysBody(caller, notice: Self.notice(request), error: nil))
        }
    }

    private func signingKeysBody(_ caller: Caller, notice: String?, error: String?) throws -> String {
        var html = "<h1>Signing keys</h1>" + ConsolePages.banner(error: error, notice: notice)
        guard let ring = context.roundTrip.signingKeys else {
            return html + "<p>This server has no ZEVAUTH_ENCRYPTION_KEY, so it has no signing keys.</p>"
        }
        ring.invalidate()
        html += "<ul class=\"items\">"
        for key in try ring.published() {
            html += "<li><code>\(Self.e(key.kid))</code> \(key.algorithm.rawValue) — \(key.state.rawValue)"
            html += " <span class=\"muted\">created \(Wire.timestamp(key.createdAt))"
            if let activates = key.activatesAt { html += ", signs from \(Wire.timestamp(activates))" }
            if let retires = key.retiresAt { html += ", retires \(Wire.timestamp(retires))" }
            html += "</span></li>"
        }
        html += "</ul>"
        return html + ConsolePages.form(action: "/console/signing-keys/rotate", csrf: caller.session.csrf, button: "Rotate")
    }

    /// `POST /console/signing-keys/rotate`: `RotateSigningKeys` for every algorithm at once.
    func rotateSigningKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorAction(
            request, page: "/console/signing-keys", action: .manageSigningKeys, audit: "signing_key.rotate", sensitive: true
        ) { caller, _ in
            guard let ring = context.roundTrip.signingKeys, let maker = ring.maker else {
                return ConsolePages.page(
                    title: "Signing keys", body: try signingKeysBody(caller, notice: nil, error: "This server has no signing keys."),
                    chrome: caller.chrome("signing-keys"), status: 503)
            }
            let outcome = try RotateSigningKeys(store: ring.store, maker: maker)(
                now: context.clock.now(), audit: caller.audit("signing_key.rotate"))
            ring.invalidate()
            switch outcome {
            case .rotated:
                context.log.write("signing keys rotated")
                return Self.done("/console/signing-keys", "rotated")
            case .tooEarly(let possibleAt):
                let message =
                    "The next signing keys have been published for less than \(Int(SigningKeyPolicy.jwksCacheSeconds)) seconds "
                    + "(the JWKS cache time); rotation is possible from \(Wire.timestamp(possibleAt))."
                return ConsolePages.page(
                    title: "Signing keys", body: try signingKeysBody(caller, notice: nil, error: message),
                    chrome: caller.chrome("signing-keys"),
                    status: 409)
            }
        }
    }
}
