import Authorize
import Encoding
import HTTPServer

/// OAuth 2.0 Form Post Response Mode for web clients (docs/protocol.md, "Web clients: form_post"): the
/// authorization response's parameters as hidden fields of a form that POSTs to the redirect URI, submitted
/// by this server's own script (`scriptPath`, allowed by the page's `script-src 'self'`; nothing inline),
/// with a button inside `<noscript>` for a browser without scripts. The page is never cached.
enum FormPostResponse {
    /// The same-origin script that submits the form.
    static let scriptPath = "/assets/form-post.js"

    /// Submits the page's one form at once (OAuth 2.0 Form Post Response Mode §2).
    static let script = "document.getElementById(\"form-post\").submit();\n"

    /// The page answering with `parameters` (`code`, `state`, `iss`, or the error's) to `base`'s URI
    /// exactly as registered (its own query, if any, stays in the action).
    static func page(to base: RedirectURI, parameters: [(String, String)]) -> HTTPResponse {
        let fields = parameters.map { "<input type=\"hidden\" name=\"\(HTML.escape($0.0))\" value=\"\(HTML.escape($0.1))\">" }
            .joined(separator: "\n")
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Continuing to the site</title>
            <link rel="stylesheet" href="\(Pages.stylesheetPath)">
            <script src="\(scriptPath)" defer></script>
            </head><body><main><div class="card">
            <form method="post" action="\(HTML.escape(base.raw))" id="form-post">
            \(fields)
            <noscript><p>Press Continue to return to the site.</p><button type="submit">Continue</button></noscript>
            </form>
            </div></main></body></html>
            """
        return HTTPResponse(status: 200, headers: Wire.pageHeaders(scripts: true), body: Array(html.utf8))
    }
}

extension Routes {
    /// The form_post page's script.
    mutating func registerFormPost() {
        let body = Array(FormPostResponse.script.utf8)
        add("GET", FormPostResponse.scriptPath) { _, _ in
            HTTPResponse(
                status: 200,
                headers: HTTPHeaders([
                    ("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "public, max-age=3600"),
                    ("X-Content-Type-Options", "nosniff"),
                ]),
                body: body)
        }
    }
}
