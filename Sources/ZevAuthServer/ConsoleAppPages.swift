import Association
import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's "Mobile apps" page with its "Association files" panel (docs/console.md, "Pages"), over
/// the admin API's use cases (`AppRegistration`, `AssociationFiles`, the link check of `AppHandlers`).
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    /// `GET …/apps`.
    func appsPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "apps") { project in
            ("Mobile apps", try appsBody(project, form: nil, notice: Self.notice(request), error: nil, invalid: []))
        }
    }

    private func appsBody(_ project: ProjectContext, form: [String: String]?, notice: String?, error: String?, invalid: Set<String>)
        throws -> String
    {
        let csrf = project.caller.session.csrf
        let canChange = project.may(.configure)
        let apps = try AppRegistration(store: context.tenancy.apps).list(environmentID: project.environment.id, cursor: nil, limit: 100)
            .items
        let iosCount = apps.filter { $0.app.platform == .ios }.count
        let androidCount = apps.count - iosCount
        var html = "<h1>Mobile apps</h1>" + ConsolePages.banner(error: error, notice: notice)
        html += "<p>\(iosCount) of 10 iOS apps · \(androidCount) of 10 Android apps</p>"
        html += apps.isEmpty ? "<p>No app yet.</p>" : "<ul class=\"items\">"
        for entry in apps {
            let app = entry.app
            switch app.identity {
            case .ios(let ios):
                html +=
                    "<li><strong>iOS: \(Self.e(ios.bundleID.value))</strong> <span class=\"muted\">team \(Self.e(ios.teamID.value))</span>"
            case .android(let android):
                html += "<li><strong>Android: \(Self.e(android.packageName.value))</strong>"
                html += "<ul>" + android.fingerprints.map { "<li><code>\(Self.e($0.canonical))</code></li>" }.joined() + "</ul>"
            }
            html += "<p>" + Self.statusWords(entry.link.status)
            if !entry.link.problems.isEmpty {
                html += ":</p><ul>"
                for item in entry.link.problems { html += "<li>\(Self.e(item.domain)): \(Self.e(item.problem.message))</li>" }
                html += "</ul>"
            } else {
                html += "</p>"
            }
            if let checked = entry.link.checkedAt { html += "<p class=\"muted\">Checked \(Wire.timestamp(checked))</p>" }
            if let next = entry.link.nextCheckAt { html += "<p class=\"muted\">Next check \(Wire.timestamp(next))</p>" }
            html += "<p>Shown in Sign in with ZevID: \(entry.link.status == .verified ? "yes" : "no")</p>"
            if canChange {
                let base = project.place.base + "/\(project.place.kind.rawValue)/apps/\(app.id)"
                html += ConsolePages.form(action: base + "/check", csrf: csrf, button: "Check again", secondary: true, inline: true)
                html += ConsolePages.form(action: base + "/remove", csrf: csrf, button: "Remove", secondary: true, inline: true)
            }
            html += "</li>"
        }
        if !apps.isEmpty { html += "</ul>" }
        if canChange { html += addAppForm(project, form: form, invalid: invalid) }
        html += try associationPanel(project, apps: apps)
        return html
    }

    static func statusWords(_ status: LinkStatus) -> String {
        switch status {
        case .verified: "Link verified"
        case .notVerified: "Not verified"
        case .pending: "Not checked yet"
        }
    }

    private func addAppForm(_ project: ProjectContext, form: [String: String]?, invalid: Set<String>) -> String {
        let platform = form?["platform"] ?? "ios"
        var fields = "<label for=\"platform\">Platform</label><select id=\"platform\" name=\"platform\">"
        for (value, label) in [("ios", "iOS"), ("android", "Android")] {
            fields += "<option value=\"\(value)\"\(value == platform ? " selected" : "")>\(label)</option>"
        }
        fields += "</select>"
        fields += Pages.input(
            id: "bundleId", name: "bundleId", label: "Bundle ID (iOS)", type: "text", autocomplete: "off", value: form?["bundleId"],
            attributes: "", invalid: invalid.contains("bundleId"))
        fields += Pages.input(
            id: "teamId", name: "teamId", label: "Apple team ID (iOS)", type: "text", autocomplete: "off", value: form?["teamId"],
            attributes: "", invalid: invalid.contains("teamId"))
        fields += Pages.input(
            id: "packageName", name: "packageName", label: "Package name (Android)", type: "text", autocomplete: "off",
            value: form?["packageName"], attributes: "", invalid: invalid.contains("packageName"))
        var describedBy = "fingerprints-hint"
        if invalid.contains("fingerprints") { describedBy += " \(Pages.formErrorID)" }
        fields += "<label for=\"fingerprints\">SHA-256 certificate fingerprints (Android)</label>"
        fields +=
            "<textarea id=\"fingerprints\" name=\"fingerprints\" aria-describedby=\"\(describedBy)\""
            + (invalid.contains("fingerprints") ? " aria-invalid=\"true\"" : "") + ">\(Self.e(form?["fingerprints"] ?? ""))</textarea>"
        fields += "<p class=\"hint\" id=\"fingerprints-hint\">One per line, in any format: with or without colons, any case.</p>"
        return "<h2>Add app</h2>"
            + ConsolePages.form(action: project.place.path("apps"), csrf: project.caller.session.csrf, fields: fields, button: "Add app")
    }

    /// Both generated files per link domain, exactly as served, with where to publish them.
    private func associationPanel(_ project: ProjectContext, apps: [AppWithLink]) throws -> String {
        var html = "<section aria-labelledby=\"association-files\"><h2 id=\"association-files\">Association files</h2>"
        // The environment's link domains now (its link callbacks on verified domains), not the domains of
        // the apps' last checks: a file is ready to publish before its first check.
        let domains = apps.isEmpty ? [] : try context.tenancy.linkChecks.linkDomains(environmentID: project.environment.id).sorted()
        guard !domains.isEmpty else {
            return html
                + "<p>The files appear here once an app is registered and a link callback uses a verified domain.</p></section>"
        }
        html += "<p>Publish both files on each link domain with status 200 and Content-Type application/json, without a redirect.</p>"
        let files = AssociationFiles(store: context.tenancy.associationFiles)
        for domain in domains {
            html += "<h3>\(Self.e(domain))</h3>"
            let generated: GeneratedFiles?
            do {
                generated = try files.forProject(project.environment.projectID, domain: domain)
            } catch let error as GenerationError {
                html += "<p class=\"error\">The apple-app-site-association file cannot be generated: \(Self.e(error.explanation)).</p>"
                continue
            }
            guard let generated else { continue }
            html += "<div class=\"columns\">"
            for (id, path, bytes) in [
                ("aasa-\(domain)", "/.well-known/apple-app-site-association", generated.aasa),
                ("assetlinks-\(domain)", "/.well-known/assetlinks.json", generated.assetLinks),
            ] {
                html += "<div><p>Publish at <code>https://\(Self.e(domain))\(path)</code></p>"
                html += "<pre id=\"\(Self.e(id))\">\(Self.e(String(decoding: bytes, as: UTF8.self)))</pre>"
                html += "<button type=\"button\" class=\"secondary\" data-copy=\"\(Self.e(id))\" hidden>Copy</button></div>"
            }
            html += "</div>"
        }
        return html + "</section>"
    }

    private func appsError(_ project: ProjectContext, form: [String: String]?, _ message: String, invalid: Set<String>) throws
        -> HTTPResponse
    {
        ConsolePages.page(
            title: "Mobile apps",
            body: ConsolePages.projectNavigation(project.place)
                + (try appsBody(project, form: form, notice: nil, error: message, invalid: invalid)),
            chrome: project.caller.chrome("projects"), status: 400)
    }

    /// `POST …/apps` (form `platform`, `bundleId` + `teamId`, or `packageName` + `fingerprints`, one per
    /// line in any format): `AppRegistration.register`, then the link check, as the admin API does.
    func addApp(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "apps", action: .configure, audit: "app.create") { project, form in
            func refuse(_ problem: IdentifierProblem) throws -> HTTPResponse {
                let field = problem.field == "sha256CertFingerprints" ? "fingerprints" : problem.field
                let message = problem.message.hasPrefix(problem.field) ? problem.message : "\(problem.field) \(problem.message)"
                return try appsError(project, form: form, message.prefix(1).uppercased() + message.dropFirst(), invalid: [field])
            }
            let identity: AppIdentity
            switch form["platform"] {
            case "ios":
                switch (BundleID.parse(form["bundleId"] ?? ""), TeamID.parse(form["teamId"] ?? "")) {
                case (.failure(let problem), _), (_, .failure(let problem)): return try refuse(problem)
                case (.success(let bundle), .success(let team)): identity = .ios(IOSApp(teamID: team, bundleID: bundle))
                }
            case "android":
                let package: PackageName
                switch PackageName.parse(form["packageName"] ?? "") {
                case .failure(let problem): return try refuse(problem)
                case .success(let value): package = value
                }
                let lines = (form["fingerprints"] ?? "").split(whereSeparator: \.isNewline).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }.filter { !$0.isEmpty }
                guard !lines.isEmpty else {
                    return try appsError(
                        project, form: form, "Paste at least one SHA-256 certificate fingerprint.", invalid: ["fingerprints"])
                }
                switch Fingerprints.parse(lines) {
                case .failure(let problem): return try refuse(problem)
                case .success(let fingerprints): identity = .android(AndroidApp(packageName: package, fingerprints: fingerprints))
                }
            default:
                return try appsError(project, form: form, "Choose iOS or Android.", invalid: ["platform"])
            }
            switch try AppRegistration(store: context.tenancy.apps).register(
                environmentID: project.environment.id, identity: identity, now: context.clock.now(), audit: project.audit("app.create"))
            {
            case .failure(let refusal):
                return try appsError(project, form: form, Self.description(AppHandlers.refusalResponse(refusal)), invalid: [])
            case .success: break
            }
            try AppHandlers(context: context).checkNow(environmentID: project.environment.id)
            return Self.done(project.place.path("apps"), "app")
        }
    }

    /// `POST …/apps/{appID}/check` ("Check again").
    func checkApp(_ request: HTTPRequest, id: String, env: String, appID: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "apps", action: .configure, audit: "app.check", target: appID) { project, _ in
            guard try AppRegistration(store: context.tenancy.apps).app(environmentID: project.environment.id, id: appID) != nil else {
                return try appsError(project, form: nil, "No app with this id in this environment.", invalid: [])
            }
            guard try AppHandlers(context: context).checkNow(environmentID: project.environment.id) else {
                return try appsError(
                    project, form: nil, "A check for this environment is already running. Try again in a few seconds.", invalid: [])
            }
            // Recorded once, after the check ran, as the admin API's "Check again" is (docs/console.md, "Audit log").
            try context.tenancy.audit.record(project.audit("app.check", target: appID))
            return Self.done(project.place.path("apps"), "checked")
        }
    }

    /// `POST …/apps/{appID}/remove`.
    func removeApp(_ request: HTTPRequest, id: String, env: String, appID: String) throws -> HTTPResponse {
        try projectAction(request, id: id, env: env, page: "apps", action: .configure, audit: "app.delete", target: appID) { project, _ in
            guard
                try AppRegistration(store: context.tenancy.apps).delete(
                    environmentID: project.environment.id, id: appID, audit: project.audit("app.delete", target: appID))
            else {
                return try appsError(project, form: nil, "No app with this id in this environment.", invalid: [])
            }
            return Self.done(project.place.path("apps"), "removed")
        }
    }
}
