import Encoding
import HTTPServer

/// The hosted pages, rendered by the server: every interpolated value goes through `HTML.escape`, forms
/// carry a CSRF token, and the one stylesheet is served by this server (no third-party assets).
enum Pages {
    static let stylesheetPath = "/assets/zevauth.css"

    static let stylesheet = """
        *{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;\
        background:#f4f5f7;color:#1b1d21}main{max-width:26rem;margin:0 auto;padding:2rem 1.25rem}\
        h1{font-size:1.4rem;margin:0 0 1rem}p{margin:.5rem 0 1rem}label{display:block;font-weight:600;margin:.75rem 0 .25rem}\
        input[type=email],input[type=password],input[type=text]{width:100%;padding:.7rem;font-size:1rem;border:1px solid #b8bcc4;border-radius:.5rem}\
        button,.button{display:block;width:100%;margin-top:1.25rem;padding:.8rem;font-size:1rem;font-weight:600;border:0;\
        border-radius:.5rem;background:#2251d1;color:#fff;text-align:center;text-decoration:none;cursor:pointer}\
        button.secondary{background:#e3e6ec;color:#1b1d21}.error{background:#fde8e8;color:#8a1c1c;padding:.75rem;border-radius:.5rem}\
        .card{background:#fff;border-radius:.75rem;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}.muted{color:#5b616b;font-size:.9rem}\
        h2{font-size:1.1rem;margin:1.75rem 0 .5rem}.secret{user-select:all;-webkit-user-select:all;word-break:break-all;font-size:1.1rem}\
        .codes{padding-left:1.25rem;font-family:ui-monospace,monospace}
        """

    /// A complete page around `body` (already escaped HTML).
    static func page(title: String, body: String, status: Int = 200, cookies: [String] = []) -> HTTPResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title))</title>
            <link rel="stylesheet" href="\(stylesheetPath)">
            </head><body><main><div class="card">
            \(body)
            </div></main></body></html>
            """
        var headers = Wire.pageHeaders()
        for cookie in cookies { headers.add("Set-Cookie", cookie) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    /// The sign-in form (email and password), posting to `/v1/auth/zevid/signin`.
    static func signIn(
        requestID: String, csrf: String, appName: String, email: String?, error: String?, status: Int = 200, cookies: [String] = []
    ) -> HTTPResponse {
        let problem = error.map { "<p class=\"error\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        return page(
            title: "Sign in with ZevID",
            body: """
                <h1>Sign in with ZevID</h1>
                <p class="muted">to continue to \(HTML.escape(appName))</p>
                \(problem)
                <form method="post" action="/v1/auth/zevid/signin">
                <input type="hidden" name="request" value="\(HTML.escape(requestID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required value="\(HTML.escape(email ?? ""))">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button type="submit">Sign in</button>
                </form>
                <p class="muted"><a href="/account/reset?request=\(HTML.escape(requestID))">Forgot password?</a></p>
                <p class="muted">No ZevID account? <a href="/account/signup?request=\(HTML.escape(requestID))">Create one</a>.</p>
                """, status: status, cookies: cookies)
    }

    /// The consent page: names the app (and the signed-in account), Allow or Deny.
    static func consent(requestID: String, csrf: String, appName: String, email: String) -> HTTPResponse {
        page(
            title: "Continue to \(appName)",
            body: """
                <h1>Continue to \(HTML.escape(appName))?</h1>
                <p>\(HTML.escape(appName)) will be able to sign you in as <strong>\(HTML.escape(email))</strong>.</p>
                <form method="post" action="/v1/auth/zevid/consent">
                <input type="hidden" name="request" value="\(HTML.escape(requestID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <button type="submit" name="decision" value="allow">Continue</button>
                <button type="submit" name="decision" value="deny" class="secondary">Cancel</button>
                </form>
                """)
    }

    /// "Return to the app": one button to a redirect that would open an app, for when the current page has
    /// no user gesture (Chrome Custom Tabs refuse to open an app without one; docs/protocol.md#redirected-error,
    /// docs/protocol.md#remembered-consent).
    static func returnToApp(location: String, appName: String, isError: Bool) -> HTTPResponse {
        page(
            title: "Return to the app",
            body: """
                <h1>\(isError ? "Something went wrong" : "You're signed in")</h1>
                <p>\(isError ? "Return to \(HTML.escape(appName)) to try again." : "Return to \(HTML.escape(appName)) to continue.")</p>
                <a class="button" href="\(HTML.escape(location))">Return to the app</a>
                """)
    }

    /// An error shown to the person (never redirected): what happened and what to do.
    static func error(status: Int, code: String, message: String) -> HTTPResponse {
        page(
            title: "Sign-in problem",
            body: """
                <h1>This sign-in can't continue</h1>
                <p class="error" role="alert">\(HTML.escape(message))</p>
                <p class="muted">Error code: <code>\(HTML.escape(code))</code>. Return to the app and start again.</p>
                """, status: status)
    }
}
