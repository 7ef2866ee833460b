import Association
import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's per-project pages (docs/console.md, "Pages"), each calling the admin API's use cases.
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    // MARK: Domains & callbacks

    /// `GET /console/projects/{id}/{env}/domains`.
    func domainsPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "domains") { project in
            ("Domains & callbacks", try domainsBody(project, notice: Self.notice(request), error: nil, invalid: nil))
        }
    }

    private func domainsBody(_ project: ProjectContext, notice: String?, error: String?, invalid: String?) throws -> String {
        let csrf = project.caller.session.csrf
        let base = project.place.path("domains")
        let canChange = project.may(.configure)
        let domains = try ProjectDomains(store: context.tenancy.domains, secrets: context.secrets).list(
            projectID: project.environment.projectID)
        let callbacks = try context.roundTrip.callbacks.callbacks(environmentID: project.environment.id, after: nil, limit: 100)
        var html = "<h1>Domains &amp; callbacks</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<h2>Domains</h2>"
        html += domains.isEmpty ? "<p>No domain yet.</p>" : "<ul class=\"items\">"
        for domain in domains {
            let verified = domain.verifiedAt != nil
            html += "<li><strong>\(Self.e(domain.domain))</strong> — \(verified ? "Domain verified" : "Not verified")"
            if domain.hosted { html += " (hosted by this server)" }
            if !verified {
                html += "<p>Publish this text at <code>https://\(Self.e(domain.domain))\(DomainVerification.path)</code>:</p>"
                html += "<pre>\(Self.e(domain.verificationToken))</pre>"
                if canChange {
                    html += ConsolePages.form(
                        action: "\(base)/\(domain.domain)/verify", csrf: csrf, button: "Verify", secondary: true, inline: true)
                }
            }
            html += "</li>"
        }
        if !domains.isEmpty { html += "</ul>" }
        if canChange {
            let field = Pages.input(
                id: "domain", name: "domain", label: "Domain", type: "text", autocomplete: "off",
                hint: "A host name such as acme.com: no scheme, port or path.", invalid: invalid == "domain")
            html += ConsolePages.form(action: base, csrf: csrf, fields: field, button: "Add domain")
        }
        html += "<h2>Callbacks</h2>"
        html += callbacks.isEmpty ? "<p>No callback yet.</p>" : "<ul class=\"items\">"
        for callback in callbacks {
            html += "<li><code>\(Self.e(callback.uri))</code> — \(Self.kindWords(callback.kind))"
            if project.environment.kind == .production, let warning = Self.productionWarning(callback.kind) {
                html += "<p class=\"hint\">\(warning)</p>"
            }
            if canChange {
                html += ConsolePages.form(
                    action: project.place.base + "/\(project.place.kind.rawValue)/callbacks/\(callback.id)/delete", csrf: csrf,
                    button: "Delete", secondary: true)
            }
            html += "</li>"
        }
        if !callbacks.isEmpty { html += "</ul>" }
        if canChange {
            let hint =
                project.environment.kind == .production
                ? "A universal or app link on a verified domain. Custom-scheme and loopback callbacks are refused at sign-in in production."
                : "A universal or app link on a verified domain, a custom scheme such as com.acme.app:/callback, or a loopback address."
            let field = Pages.input(
                id: "uri", name: "uri", label: "Callback URI", type: "text", autocomplete: "off", hint: hint, invalid: invalid == "uri")
            html += ConsolePages.form(
                action: project.place.base + "/\(project.place.kind.rawValue)/callbacks", csrf: csrf, fields: field, button: "Add callback")
        }
        return html
    }

    static func kindWords(_ kind: RedirectKind) -> String {
        switch kind {
        case .link: "universal link / app link"
        case .customScheme: "custom scheme"
        case .loopback: "loopback"
        }
    }

    /// What production will do with a callback of this kind, said before it bites.
    static func productionWarning(_ kind: RedirectKind) -> String? {
        switch kind {
        case .link: nil
        case .customScheme: "Production sign-ins refuse this callback unless the operator enables its scheme for one of the apps."
        case .loopback: "Production sign-ins refuse loopback callbacks."
        }
    }

    private func domainsError(_ project: ProjectContext, _ message: String, field: String?) throws -> HTTPResponse {
        ConsolePages.page(
            title: "Domains & callbacks",
            body: ConsolePages.projectNavigation(project.place) + (try domainsBody(project, notice: nil, error: message, invalid: field)),
            chrome: project.caller.chrome("projects"), status: 400)
    }

    /// `POST …/domains` (form `domain`): `ProjectDomains.add`.
    func addDomain(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "domains", action: .configure, audit: "domain.add") { project, form in
            guard let domain = DomainName.normalize(form["domain"] ?? "") else {
                return try domainsError(project, "Enter a DNS host name such as acme.com (no scheme, port or path).", field: "domain")
            }
            do {
                _ = try ProjectDomains(store: context.tenancy.domains, secrets: context.secrets).add(
                    projectID: project.environment.projectID, domain: domain, now: context.clock.now(),
                    audit: project.audit("domain.add", target: domain, projectLevel: true))
            } catch StoreError.duplicate {
                return try domainsError(project, "This domain is already added to the project.", field: "domain")
            }
            return Self.done(project.place.path("domains"), "domain")
        }
    }

    /// `POST …/domains/{domain}/verify`: the admin API's token-file check (`AppHandlers.verifyDomain`).
    func verifyDomain(_ request: HTTPRequest, id: String, env: String, domain: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "domains", action: .configure, audit: "domain.verify", target: domain) {
            project, _ in
            let answer = try AppHandlers(context: context).verifyDomain(project.environment, domain: domain) {
                project.audit("domain.verify", target: $0, projectLevel: true)
            }
            guard answer.status == 200 else { return try domainsError(project, Self.description(answer), field: nil) }
            return Self.done(project.place.path("domains"), "verified")
        }
    }

    /// The `error_description` of an admin API answer, as the sentence to show.
    static func description(_ answer: HTTPResponse) -> String {
        guard case .object(let members)? = try? JSONValue.parse(answer.body),
            case .string(let text)? = members.first(where: { $0.0 == "error_description" })?.1
        else { return "The request could not be completed." }
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// `POST …/callbacks` (form `uri`): `RegisterCallback`.
    func addCallback(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "domains", action: .configure, audit: "callback.add") { project, form in
            let uri: RedirectURI
            switch RedirectURI.parse(form["uri"] ?? "") {
            case .failure(let problem):
                return try domainsError(project, "This is not a redirect URI this server accepts: \(problem.explanation)", field: "uri")
            case .success(let value): uri = value
            }
            switch try RegisterCallback(store: context.roundTrip.callbacks)(
                uri, environment: project.environment, now: context.clock.now(), audit: project.audit("callback.add"))
            {
            case .registered: return Self.done(project.place.path("domains"), "callback")
            case .domainNotVerified:
                return try domainsError(project, "This link uses a domain that is not a verified domain of this project.", field: "uri")
            case .duplicate: return try domainsError(project, "This redirect URI is already registered.", field: "uri")
            }
        }
    }

    /// `POST …/callbacks/{callbackID}/delete`.
    func deleteCallback(_ request: HTTPRequest, id: String, env: String, callbackID: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "domains", action: .configure, audit: "callback.delete", target: callbackID) {
            project, _ in
            guard
                try context.roundTrip.callbacks.deleteCallback(
                    environmentID: project.environment.id, id: callbackID, audit: project.audit("callback.delete", target: callbackID))
            else {
                return try domainsError(project, "No callback with this id in this environment.", field: nil)
            }
            return Self.done(project.place.path("domains"), "callback_deleted")
        }
    }

    // MARK: Sign in with ZevID sessions

    static let settingLabels: [SessionSetting: String] = [
        .sessionMaxAgeDays: "Session maximum age (days)", .sessionIdleDays: "Session idle timeout (days)",
        .accessTokenTtlMinutes: "Access token lifetime (minutes)", .refreshReuseGraceSeconds: "Refresh token reuse grace (seconds)",
    ]

    /// `GET …/sessions`.
    func sessionsPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "sessions") { project in
            (
                "Sign in with ZevID sessions",
                sessionsBody(project, values: nil, notice: Self.notice(request), error: nil, invalid: nil)
                    + (try shownProvidersSection(project))
            )
        }
    }

    private func sessionsBody(_ project: ProjectContext, values: [String: String]?, notice: String?, error: String?, invalid: String?)
        -> String
    {
        var html = "<h1>Sign in with ZevID sessions</h1>" + ConsolePages.banner(error: error, notice: notice)
        html +=
            "<p>Sessions last at most 90 days from the sign-in and end after 30 days without a refresh. "
            + "This environment may shorten both, never lengthen them.</p>"
        var fields = ""
        for setting in SessionSetting.allCases {
            let value = values?[setting.field] ?? String(setting.value(in: project.environment))
            fields += Pages.input(
                id: setting.field, name: setting.field, label: Self.settingLabels[setting] ?? setting.field, type: "number",
                autocomplete: "off", value: value, hint: "From \(setting.range.lowerBound) to \(setting.range.upperBound).",
                attributes: "required min=\"\(setting.range.lowerBound)\" max=\"\(setting.range.upperBound)\" inputmode=\"numeric\"",
                invalid: invalid == setting.field)
        }
        let algorithm = values?["idTokenSigningAlg"] ?? project.environment.idTokenSigningAlg.rawValue
        fields +=
            "<label for=\"idTokenSigningAlg\">ID token signing algorithm</label><select id=\"idTokenSigningAlg\" name=\"idTokenSigningAlg\">"
        for option in ["RS256", "ES256"] {
            fields += "<option value=\"\(option)\"\(option == algorithm ? " selected" : "")>\(option)</option>"
        }
        fields += "</select>"
        if project.may(.configure) {
            html += ConsolePages.form(
                action: project.place.path("sessions"), csrf: project.caller.session.csrf, fields: fields, button: "Save")
        } else {
            for setting in SessionSetting.allCases {
                html += "<p>\(Self.settingLabels[setting] ?? setting.field): \(setting.value(in: project.environment))</p>"
            }
            html += "<p>ID token signing algorithm: \(project.environment.idTokenSigningAlg.rawValue)</p>"
        }
        return html
    }

    /// `POST …/sessions` (the four settings and `idTokenSigningAlg`): `UpdateSessionSettings`; a value
    /// outside its bounds (a longer window included) is refused with the reason, and nothing changes.
    func saveSessions(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "sessions", action: .configure, audit: "settings.update") { project, form in
            func refuse(_ message: String, _ field: String) -> HTTPResponse {
                ConsolePages.page(
                    title: "Sign in with ZevID sessions",
                    body: ConsolePages.projectNavigation(project.place)
                        + sessionsBody(project, values: form, notice: nil, error: message, invalid: field),
                    chrome: project.caller.chrome("projects"), status: 400)
            }
            var values: [SessionSetting: Int] = [:]
            for setting in SessionSetting.allCases {
                let label = Self.settingLabels[setting] ?? setting.field
                guard let value = Int((form[setting.field] ?? "").trimmingCharacters(in: .whitespaces)), setting.range.contains(value)
                else {
                    return refuse("\(label) \(setting.rule).", setting.field)
                }
                values[setting] = value
            }
            guard let algorithm = SigningAlgorithm(rawValue: form["idTokenSigningAlg"] ?? "") else {
                return refuse("The ID token signing algorithm must be RS256 or ES256.", "idTokenSigningAlg")
            }
            switch try UpdateSessionSettings(store: context.tenancy.sessionSettings)(
                environmentID: project.environment.id, values: values, idTokenSigningAlg: algorithm, requireVerifiedEmail: nil,
                now: context.clock.now(), audit: project.audit("settings.update"))
            {
            case .outOfBounds(let setting): return refuse("\(Self.settingLabels[setting] ?? setting.field) \(setting.rule).", setting.field)
            case .environmentGone: return refuse("The environment no longer exists.", "")
            case .updated: return Self.done(project.place.path("sessions"), "saved")
            }
        }
    }

    // MARK: API keys

    /// `GET …/keys`.
    func keysPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "keys") { project in
            ("API keys", try keysBody(project, notice: Self.notice(request), error: nil))
        }
    }

    private func keysBody(_ project: ProjectContext, notice: String?, error: String?) throws -> String {
        let csrf = project.caller.session.csrf
        let keys = SecretKeys(store: context.tenancy.secretKeys, secrets: context.secrets)
        let page = try keys.list(environmentID: project.environment.id, callingKeyHash: "", cursor: nil, limit: 100)
        var html = "<h1>API keys</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<h2>Publishable key</h2><p>The OAuth client_id of this environment's apps; it ships inside them, so it is no secret.</p>"
        html += "<p class=\"secret\">\(Self.e(project.environment.publishableKey))</p>"
        html += "<h2>Secret keys</h2><ul class=\"items\">"
        for listed in page.items {
            let key = listed.key
            html +=
                "<li><code>…\(Self.e(key.suffix))</code> <span class=\"muted\">id \(Self.e(key.id)), created \(Wire.timestamp(key.createdAt))</span>"
            if let revoked = key.revokedAt {
                html += " — revoked \(Wire.timestamp(revoked))"
            } else if project.may(.manageSecretKeys) {
                html += ConsolePages.form(
                    action: project.place.base + "/\(project.place.kind.rawValue)/keys/\(key.id)/revoke", csrf: csrf, button: "Revoke",
                    secondary: true)
            }
            html += "</li>"
        }
        html += "</ul>"
        if project.may(.manageSecretKeys) {
            html += ConsolePages.form(action: project.place.path("keys"), csrf: csrf, button: "Create secret key")
        }
        return html
    }

    /// `POST …/keys`: `SecretKeys.create`; the secret is shown on this answer only.
    func createKey(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: env, page: "keys", action: .manageSecretKeys, audit: "secret_key.create", sensitive: true
        ) { project, _ in
            let created = try SecretKeys(store: context.tenancy.secretKeys, secrets: context.secrets).create(
                for: project.environment, now: context.clock.now(), audit: project.audit("secret_key.create"))
            let body = """
                <h1>API keys</h1>
                <h2>New secret key</h2>
                <p>Copy it now: it is shown only once and stored only as a hash. It works at once.</p>
                <p class="secret" id="new-secret">\(Self.e(created.secret))</p>
                <button type="button" data-copy="new-secret" hidden>Copy</button>
                <p><a href="\(Self.e(project.place.path("keys")))">Back to API keys</a></p>
                """
            return ConsolePages.page(
                title: "API keys", body: ConsolePages.projectNavigation(project.place) + body, chrome: project.caller.chrome("projects"))
        }
    }

    /// `POST …/keys/{keyID}/revoke`: `SecretKeys.revoke` (never the last live key).
    func revokeKey(_ request: HTTPRequest, id: String, env: String, keyID: String) throws -> HTTPResponse {
        try projectAction(
            request, id: id, env: env, page: "keys", action: .manageSecretKeys, audit: "secret_key.revoke", target: keyID, sensitive: true
        ) { project, _ in
            let message: String
            switch try SecretKeys(store: context.tenancy.secretKeys, secrets: context.secrets).revoke(
                environmentID: project.environment.id, id: keyID, now: context.clock.now(),
                audit: project.audit("secret_key.revoke", target: keyID))
            {
            case .revoked: return Self.done(project.place.path("keys"), "revoked")
            case .notFound: message = "No secret key with this id in this environment."
            case .lastKey: message = "This is the environment's last live secret key; create another first."
            }
            return ConsolePages.page(
                title: "API keys",
                body: ConsolePages.projectNavigation(project.place) + (try keysBody(project, notice: nil, error: message)),
                chrome: project.caller.chrome("projects"), status: 400)
        }
    }
}
