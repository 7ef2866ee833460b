import Authorize
import Encoding
import Foundation
import HTTPServer

/// The operators' Providers page and a project's choice of shown providers (docs/console.md, "Pages";
/// docs/federation.md, "Providers"), over the admin API's use case (`UpstreamProviders`). Secrets are
/// write-only: a form never shows one, and an empty secret field keeps the stored one.
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    /// A field's label on the console.
    static let providerLabels: [String: String] = [
        ProviderFields.slug: "Slug (a-z, 0-9 and -)", ProviderFields.displayName: "Name on the button (Continue with NAME)",
        ProviderFields.issuer: "Issuer URL", ProviderFields.clientID: "Client ID", ProviderFields.clientSecret: "Client secret",
        ProviderFields.teamID: "Team ID", ProviderFields.keyID: "Key ID", ProviderFields.privateKey: "Private key (.p8 file)",
    ]

    static let kindNames: [UpstreamProviderKind: String] = [.apple: "Apple", .google: "Google", .oidc: "OpenID provider"]

    private static func isSecret(_ field: String) -> Bool { field == ProviderFields.clientSecret || field == ProviderFields.privateKey }

    /// The inputs of `kind`'s fields: plain ones with `values`, secrets always empty (with a hint to keep
    /// the stored one when `editing`).
    private func providerFields(_ kind: UpstreamProviderKind, values: [String: String], invalid: String?, editing: Bool, prefix: String)
        -> String
    {
        var html = ""
        for field in ProviderFields.fields(of: kind) {
            let id = prefix + field
            let label = (kind == .apple && field == ProviderFields.clientID) ? "Services ID" : Self.providerLabels[field] ?? field
            let required = !editing && !(field == ProviderFields.slug && kind != .oidc)
            if field == ProviderFields.privateKey {
                var describedBy = "\(id)-hint"
                if invalid == field { describedBy += " \(Pages.formErrorID)" }
                html += "<label for=\"\(id)\">\(Self.e(label))</label>"
                html +=
                    "<textarea id=\"\(id)\" name=\"\(field)\" autocomplete=\"off\" spellcheck=\"false\" aria-describedby=\"\(describedBy)\""
                    + (invalid == field ? " aria-invalid=\"true\"" : "") + (required ? " required" : "") + "></textarea>"
                let hint = editing ? "Leave empty to keep the stored key. " : ""
                html += "<p class=\"hint\" id=\"\(id)-hint\">\(hint)Paste the whole file, with its BEGIN and END lines.</p>"
                continue
            }
            let hint: String? =
                Self.isSecret(field) && editing
                ? "Leave empty to keep the stored secret; it is never shown."
                : field == ProviderFields.slug && kind != .oidc && !editing ? "Optional: \(kind.rawValue) when empty." : nil
            html += Pages.input(
                id: id, name: field, label: label, type: Self.isSecret(field) ? "password" : "text", autocomplete: "off",
                value: Self.isSecret(field) ? nil : values[field], hint: hint, attributes: required ? "required" : "",
                invalid: invalid == field)
        }
        return html
    }

    // MARK: Providers (operators)

    /// `GET /console/providers`: the deployment's providers and a form to add each kind.
    func providersPage(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorPage(request, section: "providers") { caller in
            ("Providers", try providersBody(caller, notice: Self.notice(request), error: nil))
        }
    }

    private func providersBody(
        _ caller: Caller, notice: String?, error: String?, kind: UpstreamProviderKind? = nil, values: [String: String] = [:],
        invalid: String? = nil
    ) throws -> String {
        var html = "<h1>Providers</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<p>Sign in with Apple, Google or another OpenID provider, for every project that chooses to show it.</p>"
        let providers = try context.tenancy.providers.providers(after: nil, limit: 100)
        html += providers.isEmpty ? "<p>No provider yet.</p>" : "<ul class=\"items\">"
        for provider in providers {
            html +=
                "<li><a href=\"/console/providers/\(Self.e(provider.id))\">\(Self.e(provider.displayName))</a> "
                + "<span class=\"muted\">\(provider.kind.rawValue), \(Self.e(provider.slug)), client ID \(Self.e(provider.clientID))</span></li>"
        }
        if !providers.isEmpty { html += "</ul>" }
        guard context.configuration.encryptionKey != nil else {
            return html + "<p>This server has no ZEVAUTH_ENCRYPTION_KEY, so it cannot store a provider's secrets.</p>"
        }
        for each in UpstreamProviderKind.allCases {
            let fields =
                "<input type=\"hidden\" name=\"kind\" value=\"\(each.rawValue)\">"
                + providerFields(
                    each, values: each == kind ? values : [:], invalid: each == kind ? invalid : nil, editing: false,
                    prefix: each.rawValue + "-")
            html +=
                "<h2>Add \(Self.kindNames[each] ?? each.rawValue)</h2>"
                + ConsolePages.form(action: "/console/providers", csrf: caller.session.csrf, fields: fields, button: "Add provider")
        }
        return html
    }

    /// The form's fields a provider of `kind` takes; on an update, empty secrets are left out (kept).
    private static func providerInput(_ form: [String: String], kind: UpstreamProviderKind, creating: Bool) -> [String: String] {
        var fields: [String: String] = [:]
        for field in ProviderFields.fields(of: kind) {
            guard let value = form[field] else { continue }
            if value.isEmpty && (isSecret(field) || (creating && field == ProviderFields.slug)) { continue }
            fields[field] = value
        }
        return fields
    }

    private func providerSentence(_ problem: ProviderFieldProblem) -> String {
        let label = Self.providerLabels[problem.field] ?? problem.field
        return "\(label) \(problem.rule)."
    }

    /// `POST /console/providers` (form `kind` and the kind's fields): the operator's `UpstreamProviders.create`.
    func createProvider(_ request: HTTPRequest) throws -> HTTPResponse {
        try operatorAction(request, page: "/console/providers", action: .manageProviders, audit: "provider.create", sensitive: true) {
            caller, form in
            let handlers = ProviderAdminHandlers(context: context)
            guard let kind = UpstreamProviderKind(rawValue: form["kind"] ?? "") else {
                return ConsolePages.page(
                    title: "Providers", body: try providersBody(caller, notice: nil, error: "Choose Apple, Google or an OpenID provider."),
                    chrome: caller.chrome("providers"), status: 400)
            }
            let values = Self.providerInput(form, kind: kind, creating: true)
            func refuse(_ message: String, _ field: String?, status: Int) throws -> HTTPResponse {
                ConsolePages.page(
                    title: "Providers",
                    body: try providersBody(caller, notice: nil, error: message, kind: kind, values: values, invalid: field),
                    chrome: caller.chrome("providers"), status: status)
            }
            guard let providers = handlers.providers else { return try refuse("This server cannot store secrets.", nil, status: 503) }
            do {
                let input = try ProviderInput.parse(values, rules: handlers.rules(kind), creating: true).get()
                _ = try providers.create(
                    id: UUID().uuidString.lowercased(), kind: kind, input, now: context.clock.now(), audit: caller.audit("provider.create"))
                return Self.done("/console/providers", "provider_added")
            } catch let problem as ProviderFieldProblem {
                return try refuse(providerSentence(problem), problem.field, status: 400)
            } catch ProviderRefusal.slugTaken {
                return try refuse("Another provider has this slug.", ProviderFields.slug, status: 409)
            }
        }
    }

    /// `GET /console/providers/{id}`: the provider's fields to edit (secrets write-only) and "Delete".
    func providerPage(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        try operatorPage(request, section: "providers") { caller in
            guard let provider = try context.tenancy.providers.provider(id: id.lowercased()) else {
                return ("Providers", "<h1>No such provider</h1><p><a href=\"/console/providers\">Back to the providers</a></p>")
            }
            return ("Providers", providerBody(caller, provider, notice: Self.notice(request), error: nil, values: nil, invalid: nil))
        }
    }

    private func providerBody(
        _ caller: Caller, _ provider: UpstreamProviderRecord, notice: String?, error: String?, values: [String: String]?, invalid: String?
    ) -> String {
        var html = "<h1>\(Self.e(provider.displayName))</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<p>\(Self.e(Self.kindNames[provider.kind] ?? "")) · issuer <code>\(Self.e(provider.issuer))</code>"
        html += " · updated \(Wire.timestamp(provider.updatedAt))</p>"
        html += "<p>Stored: " + (provider.sealedClientSecret != nil ? "a client secret" : "the .p8 private key") + " (never shown).</p>"
        let current: [String: String] = [
            ProviderFields.slug: provider.slug, ProviderFields.displayName: provider.displayName, ProviderFields.issuer: provider.issuer,
            ProviderFields.clientID: provider.clientID, ProviderFields.teamID: provider.appleTeamID ?? "",
            ProviderFields.keyID: provider.appleKeyID ?? "",
        ]
        let fields = providerFields(provider.kind, values: values ?? current, invalid: invalid, editing: true, prefix: "")
        html += ConsolePages.form(action: "/console/providers/\(provider.id)", csrf: caller.session.csrf, fields: fields, button: "Save")
        html += "<h2>Delete</h2><p>Every project stops showing it, and every account linked through it is unlinked.</p>"
        html += ConsolePages.form(
            action: "/console/providers/\(provider.id)/delete", csrf: caller.session.csrf, button: "Delete provider", secondary: true)
        return html
    }

    /// `POST /console/providers/{id}` (the kind's fields; an empty secret keeps the stored one).
    func saveProvider(_ request: HTTPRequest, id rawID: String) throws -> HTTPResponse {
        let id = rawID.lowercased()
        return try operatorAction(
            request, page: "/console/providers/\(id)", action: .manageProviders, audit: "provider.update", target: id, sensitive: true
        ) { caller, form in
            let handlers = ProviderAdminHandlers(context: context)
            guard let provider = try context.tenancy.providers.provider(id: id) else {
                return ConsolePages.message(
                    title: "Not found", heading: "No such provider", "This provider does not exist.", status: 404,
                    chrome: caller.chrome("providers"), link: ("/console/providers", "Back to the providers"))
            }
            let values = Self.providerInput(form, kind: provider.kind, creating: false)
            func refuse(_ message: String, _ field: String?, status: Int) -> HTTPResponse {
                ConsolePages.page(
                    title: "Providers",
                    body: providerBody(caller, provider, notice: nil, error: message, values: values, invalid: field),
                    chrome: caller.chrome("providers"), status: status)
            }
            guard let providers = handlers.providers else { return refuse("This server cannot store secrets.", nil, status: 503) }
            do {
                let input = try ProviderInput.parse(values, rules: handlers.rules(provider.kind), creating: false).get()
                _ = try providers.update(id: id, input, now: context.clock.now(), audit: caller.audit("provider.update"))
                return Self.done("/console/providers/\(id)", "provider_saved")
            } catch let problem as ProviderFieldProblem {
                return refuse(providerSentence(problem), problem.field, status: 400)
            } catch ProviderRefusal.slugTaken {
                return refuse("Another provider has this slug.", ProviderFields.slug, status: 409)
            } catch ProviderRefusal.noProvider {
                return refuse("This provider no longer exists.", nil, status: 404)
            }
        }
    }

    /// `POST /console/providers/{id}/delete`.
    func deleteProvider(_ request: HTTPRequest, id rawID: String) throws -> HTTPResponse {
        let id = rawID.lowercased()
        return try operatorAction(
            request, page: "/console/providers", action: .manageProviders, audit: "provider.delete", target: id, sensitive: true
        ) { caller, _ in
            do {
                try context.tenancy.providers.deleteProvider(id: id, audit: caller.audit("provider.delete", target: id))
                return Self.done("/console/providers", "provider_deleted")
            } catch ProviderRefusal.noProvider {
                return ConsolePages.message(
                    title: "Not found", heading: "No such provider", "This provider does not exist.", status: 404,
                    chrome: caller.chrome("providers"), link: ("/console/providers", "Back to the providers"))
            }
        }
    }

    // MARK: A project's shown providers

    /// The "Sign-in providers" section of the sessions page: a checkbox per provider, the project's choice
    /// checked (both environments share it).
    func shownProvidersSection(_ project: ProjectContext) throws -> String {
        let all = try context.tenancy.providers.providers(after: nil, limit: 100)
        let shown = Set(try context.tenancy.providers.projectProviders(projectID: project.environment.projectID).map(\.id))
        var html = "<h2>Sign-in providers</h2>"
        html += "<p>The buttons this project's sign-in page shows above the email form (both environments).</p>"
        guard !all.isEmpty else { return html + "<p>The deployment has no provider yet; operators add them on the Providers page.</p>" }
        guard project.may(.configure) else {
            let names = all.filter { shown.contains($0.id) }.map { Self.e($0.displayName) }
            return html + "<p>Shown: \(names.isEmpty ? "none" : names.joined(separator: ", ")).</p>"
        }
        var fields = "<fieldset><legend>Shown providers</legend>"
        for provider in all {
            let id = "provider-\(provider.id)"
            fields +=
                "<div><input type=\"checkbox\" id=\"\(id)\" name=\"\(id)\" value=\"on\"\(shown.contains(provider.id) ? " checked" : "")>"
                + "<label for=\"\(id)\">\(Self.e(provider.displayName)) <span class=\"muted\">(\(Self.e(provider.slug)))</span></label></div>"
        }
        fields += "</fieldset>"
        return html
            + ConsolePages.form(
                action: project.place.path("providers"), csrf: project.caller.session.csrf, fields: fields, button: "Save providers")
    }

    /// `POST /console/projects/{id}/{env}/providers` (a `provider-ID` checkbox per shown provider): the
    /// project's choice, in the providers' order.
    func saveShownProviders(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "sessions", action: .configure, audit: "project.providers.update") {
            project, form in
            let all = try context.tenancy.providers.providers(after: nil, limit: 100)
            let chosen = all.filter { form["provider-\($0.id)"] == "on" }.map(\.id)
            do {
                let entry = project.audit("project.providers.update", target: project.environment.projectID, projectLevel: true)
                _ = try context.tenancy.providers.setProjectProviders(
                    projectID: project.environment.projectID, providerIDs: Array(chosen.prefix(ProviderFields.projectMaximum)),
                    audit: entry)
            } catch ProviderRefusal.unknownProvider {
                // A provider deleted between the page and the save: show the page again as it now stands.
            }
            return Self.done(project.place.path("sessions"), "providers_saved")
        }
    }
}
