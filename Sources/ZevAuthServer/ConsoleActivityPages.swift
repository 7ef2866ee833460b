import Authorize
import Encoding
import Foundation
import HTTPServer

/// The console's Activity page (docs/console.md, "Pages"): the project's audit rows exactly as
/// `GET /v1/admin/audit` shows them to this environment's secret key (this environment's rows and the
/// project-level ones, `AuditScope.environment`), newest first, through the same `ListAudit` use case,
/// 50 to a page with an "Older" link carrying the cursor. Every member may read it (`ProjectAction.read`).
extension ConsoleHandlers {
    private static func e(_ text: String) -> String { HTML.escape(text) }

    /// Rows on one page of the Activity table.
    static let activityPageSize = 50

    /// `GET /console/projects/{id}/{env}/activity?cursor=`: one page of the environment's audit rows.
    func activityPage(_ request: HTTPRequest, id: String, env: String) throws -> HTTPResponse {
        try projectPage(request, id: id, env: env, page: "activity") { project in
            let cursor = AccountForms.query(request, "cursor")
            let page = try ListAudit(store: context.tenancy.auditLog)(
                .environment(projectID: project.environment.projectID, environmentID: project.environment.id), cursor: cursor,
                limit: Self.activityPageSize)
            return ("Activity", try activityBody(project, page: page, isFirstPage: cursor == nil))
        }
    }

    private func activityBody(_ project: ProjectContext, page: Page<AuditRecord>, isFirstPage: Bool) throws -> String {
        let environment = project.environment.kind == .development ? "Development" : "Production"
        var html = "<h1>Activity</h1>"
        html +=
            "<p>Every change to this project's \(environment) environment and to the project itself (its domains and "
            + "members), and every refused attempt, newest first. Rows are kept 400 days.</p>"
        guard !page.items.isEmpty else {
            html += "<p>No activity yet.</p>"
            if !isFirstPage { html += "<p><a href=\"\(Self.e(project.place.path("activity")))\">Newest</a></p>" }
            return html
        }
        var names: [String: String] = [:]
        html += "<div class=\"table\" role=\"region\" aria-labelledby=\"activity-caption\" tabindex=\"0\"><table>"
        html += "<caption id=\"activity-caption\">Activity of the \(environment) environment, newest first</caption>"
        html +=
            "<thead><tr><th scope=\"col\">When</th><th scope=\"col\">Who</th><th scope=\"col\">What</th>"
            + "<th scope=\"col\">Target</th><th scope=\"col\">From</th><th scope=\"col\">Outcome</th></tr></thead><tbody>"
        for record in page.items {
            let entry = record.entry
            let stamp = Wire.timestamp(entry.at)
            let shown = stamp.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
            html += "<tr><td><time datetime=\"\(Self.e(stamp))\">\(Self.e(shown))</time></td>"
            html += "<td>\(Self.e(try actorWords(entry.actor, names: &names)))</td>"
            html += "<td>\(Self.e(Self.activityWords(entry.action))) <code>\(Self.e(entry.action))</code></td>"
            html += "<td>\(entry.target.map { "<code>\(Self.e($0))</code>" } ?? "—")</td>"
            html += "<td>\(Self.e(entry.clientAddress ?? "—"))</td>"
            html += "<td>\(entry.outcome == .refused ? "<strong>Refused</strong>" : "Done")</td></tr>"
        }
        html += "</tbody></table></div>"
        var links: [String] = []
        if !isFirstPage { links.append("<a href=\"\(Self.e(project.place.path("activity")))\">Newest</a>") }
        if let next = page.nextCursor {
            let href =
                project.place.path("activity") + "?cursor=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            links.append("<a href=\"\(Self.e(href))\" rel=\"next\">Older</a>")
        }
        if !links.isEmpty { html += "<nav aria-label=\"Activity pages\"><ul>\(links.map { "<li>\($0)</li>" }.joined())</ul></nav>" }
        return html
    }

    /// Who acted, in words: the operator token, a secret key by its id, an account by its email and name
    /// (one lookup per distinct account on the page, remembered in `names`; its id when it is gone).
    private func actorWords(_ actor: AuditActor, names: inout [String: String]) throws -> String {
        switch actor {
        case .operatorToken: return "The operator token"
        case .secretKey(let id): return "Secret key \(id)"
        case .system: return "The server"
        case .unknown: return "An unknown caller"
        case .account(let userID):
            if let known = names[userID] { return known }
            let words = try context.store.user(id: userID).map { "\($0.email) (\($0.name))" } ?? "Account \(userID)"
            names[userID] = words
            return words
        }
    }

    /// An admin action in words, as the Activity page shows it (the stored `noun.verb` name follows in
    /// code; a person's own events are listed on `/account`, `PersonalActivity.words`).
    static func activityWords(_ action: String) -> String {
        switch action {
        case "project.create": return "Project created"
        case "callback.add": return "Callback added"
        case "callback.delete": return "Callback deleted"
        case "domain.add": return "Domain added"
        case "domain.verify": return "Domain verified"
        case "domain.mark_hosted": return "Domain marked as hosted"
        case "app.create": return "App added"
        case "app.update": return "App changed"
        case "app.delete": return "App removed"
        case "app.check": return "App's link domains checked"
        case "app.production_scheme": return "App's production callback scheme set"
        case "settings.update": return "Session settings saved"
        case "secret_key.create": return "Secret key created"
        case "secret_key.revoke": return "Secret key revoked"
        case "signing_key.rotate": return "Signing keys rotated"
        case "signing_key.revoke": return "Signing key revoked"
        case "member.add": return "Member added"
        case "member.update": return "Member's role changed"
        case "member.remove": return "Member removed"
        case "operator.mark": return "Operator marked"
        case "operator.unmark": return "Operator unmarked"
        case "provider.create": return "Sign-in provider added"
        case "provider.update": return "Sign-in provider changed"
        case "provider.delete": return "Sign-in provider deleted"
        case "project.providers.update": return "Shown sign-in providers chosen"
        default: return "Other change"
        }
    }
}
