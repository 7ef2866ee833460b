import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's Web clients page of an environment (docs/console.md, "Web clients"): list, register
/// (the secret shown once), rotate a secret, revoke an old one, delete. Client secrets are credentials, so
/// every change needs `manageSecretKeys` and a recent sign-in, as secret keys do.
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    static let webClientNotices: [String: String] = [
        "client_created": "The web client was added.",
        "client_deleted": "The web client was deleted.",
        "secret_revoked": "The client secret was revoked.",
    ]

    private var webClientRegistry: WebClients { WebClients(store: context.tenancy.webClients, secrets: context.secrets) }

    /// `GET /console/projects/{id}/{env}/clients`.
    func webClientsPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "clients") { project in
            let notice = AccountForms.query(request, "done").flatMap { Self.webClientNotices[$0] }
            return ("Web clients", try webClientsBody(project, form: nil, notice: notice, error: nil, invalid: nil))
        }
    }

    private func webClientsBody(_ project: ProjectContext, form: [String: String]?, notice: String?, error: String?, invalid: String?)
        throws -> String
    {
        let csrf = project.caller.session.csrf
        let base = project.place.path("clients")
        let canChange = project.may(.manageSecretKeys)
        let clients = try context.tenancy.webClients.webClients(environmentID: project.environment.id, after: nil, limit: 100)
        var html = "<h1>Web clients</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<p>Server-side sites that sign people in with ZevID as confidential OAuth clients.</p>"
        html += clients.isEmpty ? "<p>No web client yet.</p>" : "<ul class=\"items\">"
        for listed in clients {
            let client = listed.client
            html += "<li><strong>\(Self.e(client.name))</strong> — client ID <code>\(Self.e(client.clientID))</code>"
            let pkce = client.requirePKCE ? "" : ", PKCE optional with a nonce"
            html += "<p class=\"muted\">\(Self.e(client.authMethod.rawValue))\(pkce)</p>"
            html += "<p>Redirect URIs: " + client.redirectURIs.map { "<code>\(Self.e($0))</code>" }.joined(separator: " ") + "</p>"
            if client.authMethod.usesSecret {
                html += "<ul>"
                for secret in listed.secrets {
                    html += "<li>Secret <code>…\(Self.e(secret.suffix))</code>"
                    html += " <span class=\"muted\">created \(Wire.timestamp(secret.createdAt))</span>"
                    if let revoked = secret.revokedAt {
                        html += " — revoked \(Wire.timestamp(revoked))"
                    } else if canChange {
                        html += ConsolePages.form(
                            action: "\(base)/\(client.clientID)/secrets/\(secret.id)/revoke", csrf: csrf, button: "Revoke",
                            secondary: true, inline: true)
                    }
                    html += "</li>"
                }
                html += "</ul>"
            }
            if canChange {
                if client.authMethod.usesSecret {
                    html += ConsolePages.form(
                        action: "\(base)/\(client.clientID)/secrets", csrf: csrf, button: "Rotate secret", secondary: true, inline: true)
                }
                html += ConsolePages.form(
                    action: "\(base)/\(client.clientID)/delete", csrf: csrf, button: "Delete", secondary: true, inline: true)
            }
            html += "</li>"
        }
        if !clients.isEmpty { html += "</ul>" }
        if canChange { html += addWebClientForm(project, form: form, invalid: invalid) }
        return html
    }

    private func addWebClientForm(_ project: ProjectContext, form: [String: String]?, invalid: String?) -> String {
        var fields = Pages.input(
            id: "name", name: "name", label: "Name (shown on the consent page)", type: "text", autocomplete: "off", value: form?["name"],
            invalid: invalid == WebClientFields.Member.name)
        let redirectHint =
            project.environment.kind == .production
            ? "One per line, https only; matched exactly."
            : "One per line: https, or http://localhost and loopback addresses in development; matched exactly."
        fields += textarea(
            "redirectUris", label: "Redirect URIs", value: form?["redirectUris"], hint: redirectHint,
            invalid: invalid == WebClientFields.Member.redirectURIs)
        fields += textarea(
            "postLogoutRedirectUris", label: "Post-logout redirect URIs", value: form?["postLogoutRedirectUris"],
            hint: "Optional, one per line.", invalid: invalid == WebClientFields.Member.postLogoutRedirectURIs)
        let method = form?["tokenEndpointAuthMethod"] ?? TokenEndpointAuthMethod.clientSecretBasic.rawValue
        fields += "<label for=\"tokenEndpointAuthMethod\">Client authentication</label>"
        fields += "<select id=\"tokenEndpointAuthMethod\" name=\"tokenEndpointAuthMethod\">"
        for option in TokenEndpointAuthMethod.allCases {
            let selected = option.rawValue == method ? " selected" : ""
            fields += "<option value=\"\(option.rawValue)\"\(selected)>\(option.rawValue)</option>"
        }
        fields += "</select>"
        fields += textarea(
            "jwks", label: "JSON Web Key Set (private_key_jwt)", value: form?["jwks"], hint: "Either the key set or its URL.",
            invalid: invalid == WebClientFields.Member.jwks)
        fields += Pages.input(
            id: "jwksUri", name: "jwksUri", label: "Key set URL (private_key_jwt)", type: "url", autocomplete: "off",
            value: form?["jwksUri"],
            attributes: "", invalid: invalid == WebClientFields.Member.jwksURI)
        let checked = form == nil || form?["requirePkce"] == "on" ? " checked" : ""
        fields +=
            "<p><input type=\"checkbox\" id=\"requirePkce\" name=\"requirePkce\"\(checked)> <label for=\"requirePkce\">Require PKCE"
            + " (when off, an OpenID request with a nonce may go without it)</label></p>"
        return "<h2>Add web client</h2>"
            + ConsolePages.form(
                action: project.place.path("clients"), csrf: project.caller.session.csrf, fields: fields, button: "Add web client")
    }

    private func textarea(_ id: String, label: String, value: String?, hint: String, invalid: Bool) -> String {
        var describedBy = "\(id)-hint"
        if invalid { describedBy += " \(Pages.formErrorID)" }
        return "<label for=\"\(id)\">\(Self.e(label))</label>"
            + "<textarea id=\"\(id)\" name=\"\(id)\" aria-describedby=\"\(describedBy)\"" + (invalid ? " aria-invalid=\"true\"" : "")
            + ">\(Self.e(value ?? ""))</textarea><p class=\"hint\" id=\"\(id)-hint\">\(Self.e(hint))</p>"
    }

    /// The page again with the form as sent and `problem` named (400).
    private func webClientError(_ project: ProjectContext, form: [String: String]?, _ message: String, field: String?) throws
        -> HTTPResponse
    {
        ConsolePages.page(
            title: "Web clients",
            body: ConsolePages.projectNavigation(project.place)
                + (try webClientsBody(project, form: form, notice: nil, error: message, invalid: field)),
            chrome: project.caller.chrome("projects"), status: 400)
    }

    /// A new secret's page: shown once, with the client ID beside it.
    private func secretShownOnce(_ project: ProjectContext, clientID: String, secret: String, heading: String) -> HTTPResponse {
        let body = """
            <h1>Web clients</h1>
            <h2>\(Self.e(heading))</h2>
            <p>Client ID: <code>\(Self.e(clientID))</code></p>
            <p>Copy the client secret now: it is shown only once and stored only as a hash. It works at once.</p>
            <p class="secret" id="new-secret">\(Self.e(secret))</p>
            <button type="button" data-copy="new-secret" hidden>Copy</button>
            <p><a href="\(Self.e(project.place.path("clients")))">Back to web clients</a></p>
            """
        return ConsolePages.page(
            title: "Web clients", body: ConsolePages.projectNavigation(project.place) + body, chrome: project.caller.chrome("projects"))
    }

    /// `POST …/clients` (form `name`, `redirectUris` and `postLogoutRedirectUris` one per line,
    /// `tokenEndpointAuthMethod`, `jwks`, `jwksUri`, `requirePkce`): `WebClientColumns.parse`, then
    /// `WebClients.create`; the secret is shown on this answer only.
    func createWebClient(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: env, page: "clients", action: .manageSecretKeys, audit: "client.create", sensitive: true
        ) { project, form in
            typealias Member = WebClientFields.Member
            func lines(_ name: String) -> [String] {
                (form[name] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            var fields = WebClientFields()
            fields.name = form[Member.name] ?? ""
            fields.redirectURIs = lines(Member.redirectURIs)
            fields.postLogoutRedirectURIs = lines(Member.postLogoutRedirectURIs)
            fields.authMethod = form[Member.authMethod]
            fields.requirePKCE = form[Member.requirePKCE] == "on"
            if let text = form[Member.jwks]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
                guard let value = try? JSONValue.parse(Array(text.utf8)), value.isObject else {
                    return try webClientError(project, form: form, "The key set must be a JSON object.", field: Member.jwks)
                }
                fields.jwks = .some(value)
            }
            if let uri = form[Member.jwksURI], !uri.isEmpty { fields.jwksURI = .some(uri) }
            let columns: WebClientColumns
            switch WebClientColumns.parse(
                fields, over: nil, kind: project.environment.kind,
                allowHTTPKeySetURI: project.environment.kind == .development && context.configuration.outbound.allowPrivate)
            {
            case .failure(let problem):
                return try webClientError(project, form: form, "\(problem.field) \(problem.rule).", field: problem.field)
            case .success(let value): columns = value
            }
            let created = try webClientRegistry.create(environmentID: project.environment.id, columns, now: context.clock.now()) {
                project.audit("client.create", target: $0)
            }
            guard let secret = created.secret else { return Self.done(project.place.path("clients"), "client_created") }
            return secretShownOnce(project, clientID: created.client.client.clientID, secret: secret, heading: "New web client")
        }
    }

    /// `POST …/clients/{client}/secrets`: `WebClients.rotate`; the new secret is shown on this answer only.
    func rotateWebClientSecret(_ request: HTTPRequest, id: String, env: String, clientID: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: env, page: "clients", action: .manageSecretKeys, audit: "client.secret.rotate", target: clientID,
            sensitive: true
        ) { project, form in
            do {
                let rotated = try webClientRegistry.rotate(
                    clientID: clientID, environmentID: project.environment.id, now: context.clock.now(),
                    audit: project.audit("client.secret.rotate", target: clientID))
                return secretShownOnce(project, clientID: clientID, secret: rotated.secret, heading: "New client secret")
            } catch WebClientRefusal.noClient {
                return try webClientError(project, form: nil, "No web client with this id in this environment.", field: nil)
            }
        }
    }

    /// `POST …/clients/{client}/secrets/{secret}/revoke` (never the last live secret).
    func revokeWebClientSecret(_ request: HTTPRequest, id: String, env: String, clientID: String, secretID: String) throws
        -> HTTPResponse
    {
        try projectAction(
            request, id: id, env: env, page: "clients", action: .manageSecretKeys, audit: "client.secret.revoke", target: clientID,
            sensitive: true
        ) { project, _ in
            let message: String
            do {
                _ = try context.tenancy.webClients.revokeWebClientSecret(
                    clientID: clientID, environmentID: project.environment.id, secretID: secretID.lowercased(), now: context.clock.now(),
                    audit: project.audit("client.secret.revoke", target: clientID))
                return Self.done(project.place.path("clients"), "secret_revoked")
            } catch WebClientRefusal.noClient {
                message = "No web client with this id in this environment."
            } catch WebClientRefusal.noSecret {
                message = "The web client has no secret with this id."
            } catch WebClientRefusal.lastSecret {
                message = "This is the client's last live secret; rotate first, then revoke the old one."
            }
            return try webClientError(project, form: nil, message, field: nil)
        }
    }

    /// `POST …/clients/{client}/delete`.
    func deleteWebClient(_ request: HTTPRequest, id: String, env: String, clientID: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: env, page: "clients", action: .manageSecretKeys, audit: "client.delete", target: clientID, sensitive: true
        ) { project, _ in
            do {
                try context.tenancy.webClients.deleteWebClient(
                    clientID: clientID, environmentID: project.environment.id, audit: project.audit("client.delete", target: clientID))
                return Self.done(project.place.path("clients"), "client_deleted")
            } catch WebClientRefusal.noClient {
                return try webClientError(project, form: nil, "No web client with this id in this environment.", field: nil)
            }
        }
    }
}

extension Routes {
    /// The console's Web clients page of an environment.
    mutating func registerConsoleWebClients() {
        let console = ConsoleHandlers(context: context)
        let clients = "/console/projects/{id}/{env}/clients"
        add("GET", clients) { request, p in try console.webClientsPage(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", clients) { request, p in try console.createWebClient(request, id: p["id"] ?? "", env: p["env"] ?? "") }
        add("POST", clients + "/{client}/secrets") { request, p in
            try console.rotateWebClientSecret(request, id: p["id"] ?? "", env: p["env"] ?? "", clientID: p["client"] ?? "")
        }
        add("POST", clients + "/{client}/secrets/{secret}/revoke") { request, p in
            try console.revokeWebClientSecret(
                request, id: p["id"] ?? "", env: p["env"] ?? "", clientID: p["client"] ?? "", secretID: p["secret"] ?? "")
        }
        add("POST", clients + "/{client}/delete") { request, p in
            try console.deleteWebClient(request, id: p["id"] ?? "", env: p["env"] ?? "", clientID: p["client"] ?? "")
        }
    }
}
