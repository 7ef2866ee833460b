import Authorize
import Encoding
import HTTPServer

/// The hosted pages, rendered by the server: every interpolated value goes through `HTML.escape`, forms
/// carry a CSRF token, and the one stylesheet is served by this server (no third-party assets).
/// Every page meets WCAG 2.2 AA (docs/protocol.md#page-accessibility): the palette's contrast ratios are
/// tested, every input has a label, and an error names the fields it concerns through `aria-invalid` and
/// `aria-describedby`.
enum Pages {
    static let stylesheetPath = "/assets/zevauth.css"

    /// The colours of the one stylesheet, in one place, so their contrast ratios can be tested
    /// (WCAG 2.2 SC 1.4.3: 4.5:1 for text; SC 1.4.11: 3:1 for input borders and the focus ring).
    enum Palette {
        /// The page behind the card.
        static let background = "#f4f5f7"
        /// The card, inputs and anything on it.
        static let surface = "#ffffff"
        /// Body text.
        static let text = "#1b1d21"
        /// Secondary text (hints, the account's address).
        static let muted = "#5b616b"
        /// Primary buttons' background, links, and the focus ring.
        static let accent = "#2251d1"
        /// Text on an accent background.
        static let onAccent = "#ffffff"
        /// A secondary button's background.
        static let secondary = "#e3e6ec"
        /// Input borders and a secondary button's border.
        static let border = "#6b717b"
        /// An error's background.
        static let errorBackground = "#fde8e8"
        /// An error's text.
        static let errorText = "#8a1c1c"
        /// The border of an input marked `aria-invalid`.
        static let invalidBorder = "#b3261e"
        /// "Continue with Apple": black with white text and logo (Apple's Human Interface Guidelines).
        static let apple = "#000000"
        static let onApple = "#ffffff"
    }

    /// The one stylesheet of the hosted pages. Reflows down to 320 CSS pixels wide without horizontal
    /// scrolling (WCAG 2.2 SC 1.4.10): one column, long words and keys wrap.
    static let stylesheet = """
        *{box-sizing:border-box}html{-webkit-text-size-adjust:100%}\
        body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;\
        background:\(Palette.background);color:\(Palette.text);overflow-wrap:anywhere}\
        main{max-width:26rem;margin:0 auto;padding:2rem 1rem}\
        h1{font-size:1.4rem;margin:0 0 1rem}p{margin:.5rem 0 1rem}\
        a{color:\(Palette.accent)}label{display:block;font-weight:600;margin:.75rem 0 .25rem}\
        input[type=email],input[type=password],input[type=text]{width:100%;max-width:100%;padding:.7rem;font-size:1rem;\
        color:\(Palette.text);background:\(Palette.surface);border:1px solid \(Palette.border);border-radius:.5rem}\
        input[aria-invalid=true]{border:2px solid \(Palette.invalidBorder)}\
        :focus-visible{outline:3px solid \(Palette.accent);outline-offset:2px}\
        input:focus{outline:3px solid \(Palette.accent);outline-offset:2px}\
        button,.button{display:block;width:100%;margin-top:1.25rem;padding:.8rem;font-size:1rem;font-weight:600;\
        border:1px solid \(Palette.accent);border-radius:.5rem;background:\(Palette.accent);color:\(Palette.onAccent);\
        text-align:center;text-decoration:none;cursor:pointer}\
        button.secondary{background:\(Palette.secondary);color:\(Palette.text);border-color:\(Palette.border)}\
        .error{background:\(Palette.errorBackground);color:\(Palette.errorText);padding:.75rem;border-radius:.5rem}\
        .card{background:\(Palette.surface);border-radius:.75rem;padding:1.5rem 1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}\
        .muted,.hint{color:\(Palette.muted);font-size:.9rem}.hint{margin:.25rem 0 .5rem}\
        h2{font-size:1.1rem;margin:1.75rem 0 .5rem}\
        .secret{user-select:all;-webkit-user-select:all;word-break:break-all;font-size:1.1rem;font-family:ui-monospace,monospace}\
        .codes{padding-left:1.25rem;font-family:ui-monospace,monospace}\
        .qr{display:block;width:100%;max-width:15rem;height:auto;margin:0 auto 1rem}\
        details{margin-top:1.5rem;border-top:1px solid \(Palette.border);padding-top:.75rem}\
        summary{cursor:pointer;color:\(Palette.accent);font-weight:600}details p{color:\(Palette.muted);font-size:.9rem}\
        button.upstream{display:flex;align-items:center;justify-content:center;gap:.5rem;margin-top:.75rem;\
        background:\(Palette.surface);color:\(Palette.text);border-color:\(Palette.border)}\
        button.upstream-apple{background:\(Palette.apple);color:\(Palette.onApple);border-color:\(Palette.apple)}\
        .upstream-logo{width:1.25rem;height:1.25rem}.upstream-or{text-align:center;margin:1rem 0 0}
        """

    /// The passkey script's path (`PasskeyScript.source`, docs/passkeys.md, "Pages and script").
    static let passkeyScriptPath = "/account/static/passkeys.js"

    /// A complete page around `body` (already escaped HTML), in English (`lang="en"`).
    /// - Parameter passkeys: for a page that offers passkeys: the script is loaded (deferred, same origin),
    ///   `<main id="passkey-context">` carries `data-csrf` and `data-request` for it, and the policy allows it.
    static func page(
        title: String, body: String, status: Int = 200, cookies: [String] = [], passkeys: PasskeyPageContext? = nil
    ) -> HTTPResponse {
        let script = passkeys == nil ? "" : "\n<script src=\"\(passkeyScriptPath)\" defer></script>"
        let main =
            passkeys.map { context in
                "<main id=\"passkey-context\" data-csrf=\"\(HTML.escape(context.csrf))\" data-request=\"\(HTML.escape(context.requestID ?? ""))\">"
            } ?? "<main>"
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title))</title>
            <link rel="stylesheet" href="\(stylesheetPath)">\(script)
            </head><body>\(main)<div class="card">
            \(body)
            </div></main></body></html>
            """
        var headers = Wire.pageHeaders(scripts: passkeys != nil)
        for cookie in cookies { headers.add("Set-Cookie", cookie) }
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    // MARK: Forms

    /// The id of a form's one error message, which the inputs it concerns name in `aria-describedby`.
    static let formErrorID = "form-error"

    /// A form's error message (`role="alert"`, id `formErrorID`), or nothing.
    static func formError(_ text: String?) -> String {
        text.map { "<p class=\"error\" id=\"\(formErrorID)\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
    }

    /// A labelled input (WCAG 2.2 SC 1.3.1, 3.3.2): `<label for>`, the input, and an optional hint
    /// tied to it by `aria-describedby`. When `invalid`, the input carries `aria-invalid="true"` and
    /// also names the form's error message (SC 3.3.1).
    /// - Parameters:
    ///   - attributes: further attributes, already HTML (`required`, `minlength="10"`…).
    static func input(
        id: String, name: String, label: String, type: String, autocomplete: String, value: String? = nil, hint: String? = nil,
        attributes: String = "required", invalid: Bool = false
    ) -> String {
        var describedBy: [String] = []
        if hint != nil { describedBy.append("\(id)-hint") }
        if invalid { describedBy.append(formErrorID) }
        var html = "<label for=\"\(id)\">\(HTML.escape(label))</label>\n"
        html += "<input id=\"\(id)\" name=\"\(name)\" type=\"\(type)\" autocomplete=\"\(autocomplete)\" \(attributes)"
        if let value { html += " value=\"\(HTML.escape(value))\"" }
        if !describedBy.isEmpty { html += " aria-describedby=\"\(describedBy.joined(separator: " "))\"" }
        if invalid { html += " aria-invalid=\"true\"" }
        html += ">"
        if let hint { html += "\n<p class=\"hint\" id=\"\(id)-hint\">\(HTML.escape(hint))</p>" }
        return html
    }

    // MARK: Sign-in round trip

    /// The sign-in form (email and password), posting to `/v1/auth/zevid/signin`.
    /// - Parameter invalid: the fields `error` concerns (`email`, `password`), marked `aria-invalid`.
    /// - Parameter passkeys: the passkey script's context (the binding's passkey csrf); nil leaves passkeys out.
    /// - Parameter upstream: the "Continue with NAME" buttons above the email form; nil shows none.
    /// - Parameter notice: a line above the form (a link waiting for this sign-in, docs/federation.md).
    static func signIn(
        requestID: String, csrf: String, appName: String, email: String?, error: String?, invalid: Set<String> = [],
        status: Int = 200, cookies: [String] = [], passkeys: PasskeyPageContext? = nil, upstream: UpstreamButtons? = nil,
        notice: String? = nil
    ) -> HTTPResponse {
        let emailInput = input(
            id: "email", name: "email", label: "Email", type: "email",
            autocomplete: passkeys == nil ? "username" : "username webauthn", value: email ?? "", invalid: invalid.contains("email"))
        let passwordInput = input(
            id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password",
            invalid: invalid.contains("password"))
        return page(
            title: "Sign in with ZevID",
            body: """
                <h1>Sign in with ZevID</h1>
                <p class="muted">to continue to \(HTML.escape(appName))</p>
                \(AccountPages.notice(notice))\(formError(error))
                \(upstream?.html ?? "")
                <form method="post" action="/v1/auth/zevid/signin">
                <input type="hidden" name="request" value="\(HTML.escape(requestID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(passkeys == nil ? "" : passkeyCapableField)
                \(emailInput)
                \(passwordInput)
                <button type="submit">Sign in</button>
                </form>
                \(passkeys == nil ? "" : passkeySignIn)
                <p class="muted"><a href="/account/reset?request=\(HTML.escape(requestID))">Forgot password?</a></p>
                <p class="muted">No ZevID account? <a href="/account/signup?request=\(HTML.escape(requestID))">Create one</a>.</p>
                """, status: status, cookies: cookies, passkeys: passkeys)
    }

    /// The passkey parts of a sign-in page (docs/passkeys.md, "Pages and script"): the button the script
    /// shows when the browser has WebAuthn (hidden without it), and the error area the script writes its
    /// sentence into.
    static let passkeySignIn = """
        <button type="button" id="passkey-signin" class="secondary" hidden>Sign in with a passkey</button>
        <p class="error" id="passkey-error" role="alert" hidden></p>
        """

    /// The hidden field a passkey-capable browser's script sets to `1`, so a password sign-in may offer to
    /// create a passkey next (`PasskeyHandlers.nextAfterPassword`); without the script it stays `0`.
    static let passkeyCapableField = "<input type=\"hidden\" name=\"passkey_capable\" id=\"passkey-capable\" value=\"0\">"

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
    /// docs/protocol.md#remembered-consent). For a redirected error, `errorCode` picks the person-facing
    /// words from `PersonFacingErrors`; the code itself travels in the redirect.
    static func returnToApp(location: String, appName: String, isError: Bool, errorCode: OAuthErrorCode? = nil) -> HTTPResponse {
        let heading: String
        let advice: String
        if isError {
            heading = errorCode.map { PersonFacingErrors.explanation(for: $0).headline } ?? "Something went wrong."
            advice = "Return to \(appName) to try again."
        } else {
            heading = "You're signed in"
            advice = "Return to \(appName) to continue."
        }
        return page(
            title: "Return to the app",
            body: """
                <h1>\(HTML.escape(heading))</h1>
                <p>\(HTML.escape(advice))</p>
                <a class="button" href="\(HTML.escape(location))">Return to the app</a>
                """)
    }

    // MARK: Error pages

    /// An error page (docs/protocol.md#error-pages): the heading says what happened, the first paragraph
    /// what to do, and a closed `<details>` "Details for the app's developer" holds the standard `error`
    /// code and the developer's description, which may name parameters; nothing outside it does.
    /// - Parameters:
    ///   - problem: the person-facing words.
    ///   - code: the `error` value as on the wire.
    ///   - detail: the developer's description (`error_description`), or nil.
    ///   - back: a link to offer (`href`, text), e.g. back to the account page.
    static func error(status: Int, _ problem: PersonFacingError, code: String, detail: String? = nil, back: (String, String)? = nil)
        -> HTTPResponse
    {
        let link = back.map { "<a class=\"button\" href=\"\(HTML.escape($0.0))\">\(HTML.escape($0.1))</a>" } ?? ""
        let description = detail.map { "\n<p>\(HTML.escape($0))</p>" } ?? ""
        return page(
            title: problem.headline,
            body: """
                <h1>\(HTML.escape(problem.headline))</h1>
                <p role="alert">\(HTML.escape(problem.advice))</p>
                \(link)
                <details><summary>Details for the app's developer</summary>
                <p>Error code: <code>\(HTML.escape(code))</code></p>\(description)
                </details>
                """, status: status)
    }

    /// An OAuth error shown to the person: the words come from `PersonFacingErrors`'s table by the product
    /// `code`; `wireCode` (the RFC spelling on `/oauth2`) and `description` go into the disclosure.
    static func error(status: Int, code: OAuthErrorCode, wireCode: String, description: String) -> HTTPResponse {
        error(status: status, PersonFacingErrors.explanation(for: code), code: wireCode, detail: description)
    }
}
