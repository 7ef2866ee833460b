import Authorize
import Encoding
import HTTPServer

/// The console's HTML (docs/console.md, "Pages"): server-rendered, every interpolated value through
/// `HTML.escape`, every form a POST with a hidden `csrf` field, no inline script or style (the one
/// stylesheet and the one progressive-enhancement script are served from `/console/static/`), the hosted
/// pages' palette and label and error conventions (WCAG 2.2 AA), one column at 390 px and wider at 1280 px.
enum ConsolePages {
    static let stylesheetPath = "/console/static/console.css"
    static let scriptPath = "/console/static/console.js"

    /// The security headers of the hosted pages, with the console's one same-origin script allowed.
    static func headers() -> HTTPHeaders {
        var headers = Wire.pageHeaders()
        headers.set(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; "
                + "frame-ancestors 'none'")
        return headers
    }

    typealias Palette = Pages.Palette

    /// The console's stylesheet: the hosted pages' palette, a wider layout, and a single column below 40rem.
    static let stylesheet = """
        *{box-sizing:border-box}html{-webkit-text-size-adjust:100%}\
        body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;\
        background:\(Palette.background);color:\(Palette.text);overflow-wrap:anywhere}\
        header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.75rem 1rem;\
        background:\(Palette.surface);border-bottom:1px solid \(Palette.border)}\
        header.top .brand{font-weight:700;color:\(Palette.text);text-decoration:none;margin-right:auto}\
        nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .75rem}\
        nav a{color:\(Palette.accent);font-weight:600}nav a[aria-current=page]{color:\(Palette.text);text-decoration:none}\
        main{max-width:72rem;margin:0 auto;padding:1.5rem 1rem}\
        h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.75rem 0 .5rem}p{margin:.5rem 0 1rem}\
        a{color:\(Palette.accent)}label{display:block;font-weight:600;margin:.75rem 0 .25rem}\
        input[type=text],input[type=email],input[type=number],input[type=search],select,textarea{width:100%;max-width:32rem;\
        padding:.6rem;font-size:1rem;color:\(Palette.text);background:\(Palette.surface);border:1px solid \(Palette.border);\
        border-radius:.4rem;font-family:inherit}textarea{min-height:6rem;font-family:ui-monospace,monospace}\
        [aria-invalid=true]{border:2px solid \(Palette.invalidBorder)}\
        :focus-visible{outline:3px solid \(Palette.accent);outline-offset:2px}\
        button{margin-top:.75rem;padding:.55rem 1rem;font-size:1rem;font-weight:600;border:1px solid \(Palette.accent);\
        border-radius:.4rem;background:\(Palette.accent);color:\(Palette.onAccent);cursor:pointer}\
        button.secondary{background:\(Palette.secondary);color:\(Palette.text);border-color:\(Palette.border)}\
        form.inline{display:inline-block;margin-right:.5rem}\
        .card{background:\(Palette.surface);border-radius:.6rem;padding:1rem 1.25rem;margin:0 0 1rem;\
        box-shadow:0 1px 3px rgba(0,0,0,.08)}\
        .error{background:\(Palette.errorBackground);color:\(Palette.errorText);padding:.75rem;border-radius:.4rem}\
        .notice{background:\(Palette.secondary);padding:.75rem;border-radius:.4rem}\
        .muted,.hint{color:\(Palette.muted);font-size:.9rem}.hint{margin:.25rem 0 .5rem}\
        .secret,code{font-family:ui-monospace,monospace;word-break:break-all}.secret{user-select:all;font-size:1.05rem}\
        pre{background:\(Palette.background);border:1px solid \(Palette.border);border-radius:.4rem;padding:.75rem;\
        overflow:auto;max-height:24rem;font-size:.85rem;white-space:pre}\
        ul.items{list-style:none;padding:0;margin:0}ul.items>li{border-top:1px solid \(Palette.secondary);padding:.75rem 0}\
        .project{color:\(Palette.muted);margin:0}\
        .table{overflow-x:auto;margin:0 0 1rem}table{border-collapse:collapse;width:100%;font-size:.9rem}\
        caption{text-align:left;font-weight:600;padding:0 0 .5rem}th,td{text-align:left;vertical-align:top;padding:.5rem;\
        border-top:1px solid \(Palette.secondary)}\
        @media (min-width:64rem){.columns{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}}
        """

    /// Progressive enhancement only: reveals each "Copy" button and copies its target's text. Every page
    /// works without it (the text can be selected and copied by hand).
    static let script = """
        "use strict";
        document.addEventListener("DOMContentLoaded", function () {
          document.querySelectorAll("button[data-copy]").forEach(function (button) {
            var target = document.getElementById(button.getAttribute("data-copy"));
            if (!target || !navigator.clipboard) { return; }
            button.hidden = false;
            button.addEventListener("click", function () {
              navigator.clipboard.writeText(target.textContent).then(function () {
                button.textContent = "Copied";
                setTimeout(function () { button.textContent = "Copy"; }, 2000);
              });
            });
          });
        });

        """

    /// A static asset's answer (same origin, cached for an hour).
    static func asset(_ text: String, contentType: String) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: HTTPHeaders([("Content-Type", contentType), ("Cache-Control", "public, max-age=3600")]),
            body: Array(text.utf8))
    }

    /// Where a page sits, for the header's navigation.
    struct Chrome {
        let email: String
        let csrf: String
        let isOperator: Bool
        /// The top-level page this one belongs to: `projects`, `accounts`, `signing-keys` or `providers`.
        let section: String
    }

    /// A complete console page: the header (the account, Projects, the operator's pages, Sign out) and `body`.
    static func page(title: String, body: String, chrome: Chrome?, status: Int = 200, cookies: [String] = []) -> HTTPResponse {
        var header = "<header class=\"top\"><a class=\"brand\" href=\"/console\">ZevAuth console</a>"
        if let chrome {
            var links = [("projects", "/console/projects", "Projects")]
            if chrome.isOperator {
                links += [
                    ("accounts", "/console/accounts", "Accounts"), ("signing-keys", "/console/signing-keys", "Signing keys"),
                    ("providers", "/console/providers", "Providers"),
                ]
            }
            header += "<nav aria-label=\"Console\"><ul>"
            for (id, href, label) in links {
                let current = id == chrome.section ? " aria-current=\"page\"" : ""
                header += "<li><a href=\"\(href)\"\(current)>\(label)</a></li>"
            }
            header += "</ul></nav><span class=\"muted\">\(HTML.escape(chrome.email))</span>"
            header +=
                "<form class=\"inline\" method=\"post\" action=\"/console/signout\">\(csrfField(chrome.csrf))"
                + "<button class=\"secondary\" type=\"submit\">Sign out</button></form>"
        }
        header += "</header>"
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title)) · ZevAuth console</title>
            <link rel="stylesheet" href="\(stylesheetPath)">
            <script src="\(scriptPath)" defer></script>
            </head><body>\(header)
            <main>
            \(body)
            </main></body></html>
            """
        var headers = headers()
        for cookie in cookies { headers.add("Set-Cookie", cookie) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// A page with one heading and one sentence (signed out, refused, not found).
    static func message(
        title: String, heading: String, _ sentence: String, status: Int, chrome: Chrome? = nil, link: (String, String)? = nil
    ) -> HTTPResponse {
        var body = "<h1>\(HTML.escape(heading))</h1><p>\(HTML.escape(sentence))</p>"
        if let link { body += "<p><a href=\"\(HTML.escape(link.0))\">\(HTML.escape(link.1))</a></p>" }
        return page(title: title, body: body, chrome: chrome, status: status)
    }

    static func csrfField(_ csrf: String) -> String { "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf))\">" }

    /// A POST form with its CSRF field around `fields`, ending in a button.
    static func form(action: String, csrf: String, fields: String = "", button: String, secondary: Bool = false, inline: Bool = false)
        -> String
    {
        let formClass = inline ? " class=\"inline\"" : ""
        let buttonClass = secondary ? " class=\"secondary\"" : ""
        return "<form method=\"post\" action=\"\(HTML.escape(action))\"\(formClass)>\(csrfField(csrf))\(fields)"
            + "<button type=\"submit\"\(buttonClass)>\(HTML.escape(button))</button></form>"
    }

    /// A form's error (`role="alert"`, the id the invalid inputs name), or a notice, or nothing.
    static func banner(error: String?, notice: String?) -> String {
        if let error { return Pages.formError(error) }
        if let notice { return "<p class=\"notice\" role=\"status\">\(HTML.escape(notice))</p>" }
        return ""
    }

    // MARK: Project layout

    /// A project page's place: the project, the environment and which page.
    struct ProjectPlace {
        let projectID: String
        let projectName: String
        let kind: EnvironmentKind
        /// `domains`, `apps`, `sessions`, `keys`, `members` or `activity`.
        let page: String
        var base: String { "/console/projects/\(projectID)" }
        func path(_ page: String) -> String { page == "members" ? "\(base)/members" : "\(base)/\(kind.rawValue)/\(page)" }
    }

    static let projectPages: [(id: String, name: String)] = [
        ("domains", "Domains & callbacks"), ("apps", "Mobile apps"), ("sessions", "Sign in with ZevID sessions"), ("keys", "API keys"),
        ("clients", "Web clients"), ("members", "Members"), ("activity", "Activity"),
    ]

    /// The project's name, the environment switch and the project's pages, above the page's `<h1>`.
    static func projectNavigation(_ place: ProjectPlace) -> String {
        var html = "<p class=\"project\">Project: <strong>\(HTML.escape(place.projectName))</strong></p>"
        html += "<nav aria-label=\"Environment\"><ul>"
        for kind in [EnvironmentKind.development, .production] {
            let page = place.page == "members" ? "domains" : place.page
            let href = "\(place.base)/\(kind.rawValue)/\(page)"
            let current = kind == place.kind && place.page != "members" ? " aria-current=\"page\"" : ""
            html += "<li><a href=\"\(href)\"\(current)>\(kind == .development ? "Development" : "Production")</a></li>"
        }
        html += "</ul></nav><nav aria-label=\"Project\"><ul>"
        for (id, name) in projectPages {
            let current = id == place.page ? " aria-current=\"page\"" : ""
            html += "<li><a href=\"\(HTML.escape(place.path(id)))\"\(current)>\(HTML.escape(name))</a></li>"
        }
        return html + "</ul></nav>"
    }
}
