import Authorize
import Encoding
import HTTPServer

/// The hosted account pages (docs/protocol.md#accounts), rendered like `Pages`: every value escaped, every form with
/// a CSRF token, the same headers and stylesheet.
enum AccountPages {
    static func problem(_ text: String?) -> String {
        text.map { "<p class=\"error\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
    }

    static func notice(_ text: String?) -> String {
        text.map { "<p class=\"muted\" role=\"status\">\(HTML.escape($0))</p>" } ?? ""
    }

    /// Sign in to the account area.
    static func signIn(csrf: String, email: String?, error: String?, notice text: String? = nil, status: Int = 200, cookies: [String] = [])
        -> HTTPResponse
    {
        Pages.page(
            title: "Sign in to your ZevID account",
            body: """
                <h1>Your ZevID account</h1>
                \(notice(text))\(problem(error))
                <form method="post" action="/account/signin">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required value="\(HTML.escape(email ?? ""))">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <button type="submit">Sign in</button>
                </form>
                <p class="muted"><a href="/account/reset">Forgot password?</a></p>
                <p class="muted">No ZevID account? <a href="/account/signup">Create one</a>.</p>
                """, status: status, cookies: cookies)
    }

    /// The sign-up form. `requestID` carries a pending app sign-in to return to.
    static func signUp(
        csrf: String, requestID: String?, email: String?, name: String?, error: String?, status: Int = 200, cookies: [String] = []
    )
        -> HTTPResponse
    {
        let request = requestID.map { "<input type=\"hidden\" name=\"request\" value=\"\(HTML.escape($0))\">" } ?? ""
        return Pages.page(
            title: "Create your ZevID account",
            body: """
                <h1>Create your ZevID account</h1>
                \(problem(error))
                <form method="post" action="/account/signup">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(request)
                <label for="name">Name</label>
                <input id="name" name="name" type="text" autocomplete="name" required value="\(HTML.escape(name ?? ""))">
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required value="\(HTML.escape(email ?? ""))">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" required minlength="10">
                <p class="muted">At least 10 characters. A long phrase is easiest to remember.</p>
                <button type="submit">Create account</button>
                </form>
                """, status: status, cookies: cookies)
    }

    /// The account page: connected apps (Remove), sign out, sign out everywhere, change password, TOTP.
    static func account(
        user: UserRecord, csrf: String, apps: [ConnectedApp], totpEnabled: Bool, recoveryCodesLeft: Int, notice text: String?,
        error: String?, status: Int = 200, cookies: [String] = []
    ) -> HTTPResponse {
        let hidden = "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf))\">"
        let appList =
            apps.isEmpty
            ? "<p class=\"muted\">No apps are connected to your account.</p>"
            : apps.map { app in
                """
                <form method="post" action="/account/apps/remove">\(hidden)
                <input type="hidden" name="environment" value="\(HTML.escape(app.environmentID))">
                <p><strong>\(HTML.escape(app.projectName))</strong>\
                \(app.environmentKind == .development ? " <span class=\"muted\">(development)</span>" : "")<br>
                <span class="muted">\(app.liveSessions == 1 ? "1 active session" : "\(app.liveSessions) active sessions")</span></p>
                <button type="submit" class="secondary">Remove \(HTML.escape(app.projectName))</button>
                </form>
                """
            }.joined(separator: "\n")
        let twoStep =
            totpEnabled
            ? "<p>Two-step verification is <strong>on</strong>. Recovery codes left: \(recoveryCodesLeft).</p>"
            : """
            <p>Two-step verification is off. Turn it on to ask for a code from an authenticator app when you sign in.</p>
            <form method="post" action="/account/totp/start">\(hidden)<button type="submit">Set up two-step verification</button></form>
            """
        return Pages.page(
            title: "Your ZevID account",
            body: """
                <h1>Your ZevID account</h1>
                <p>\(HTML.escape(user.name))<br><span class="muted">\(HTML.escape(user.email))</span></p>
                \(notice(text))\(problem(error))
                <h2>Connected apps</h2>
                \(appList)
                <h2>Two-step verification</h2>
                \(twoStep)
                <h2>Change password</h2>
                <form method="post" action="/account/password">\(hidden)
                <label for="current">Current password</label>
                <input id="current" name="current_password" type="password" autocomplete="current-password" required>
                <label for="new">New password</label>
                <input id="new" name="new_password" type="password" autocomplete="new-password" required minlength="10">
                <p class="muted">Changing it signs you out of every app and browser, except this browser.</p>
                <button type="submit">Change password</button>
                </form>
                \(EmailCodePages.changeEmailSection(hidden: hidden))
                <h2>Sign out</h2>
                <form method="post" action="/account/signout">\(hidden)
                <button type="submit" class="secondary">Sign out of this browser</button></form>
                <p class="muted">Apps you signed in to from this browser are signed out too.</p>
                <form method="post" action="/account/signout-everywhere">\(hidden)
                <button type="submit" class="secondary">Sign out everywhere</button></form>
                """, status: status, cookies: cookies)
    }

    /// TOTP enrolment: the `otpauth://` URI as a link, the secret as selectable text, and the code form.
    static func enrolTOTP(csrf: String, uri: String, secretBase32: String, error: String?, status: Int = 200) -> HTTPResponse {
        let grouped = stride(from: 0, to: secretBase32.count, by: 4).map { offset -> String in
            let start = secretBase32.index(secretBase32.startIndex, offsetBy: offset)
            let end = secretBase32.index(start, offsetBy: min(4, secretBase32.count - offset))
            return String(secretBase32[start..<end])
        }.joined(separator: " ")
        return Pages.page(
            title: "Set up two-step verification",
            body: """
                <h1>Set up two-step verification</h1>
                \(problem(error))
                <p>On this phone, <a href="\(HTML.escape(uri))">open your authenticator app</a>. Or add an account
                in the app by hand with this key:</p>
                <p><code class="secret">\(HTML.escape(grouped))</code></p>
                <p class="muted">Time-based, 6 digits, every 30 seconds.</p>
                <form method="post" action="/account/totp/confirm">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="code">Enter the 6-digit code the app shows</label>
                <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required pattern="[0-9 ]{6,7}">
                <button type="submit">Turn on</button>
                </form>
                """, status: status)
    }

    /// The recovery codes, shown once.
    static func recoveryCodes(_ codes: [String]) -> HTTPResponse {
        let items = codes.map { "<li><code>\(HTML.escape($0))</code></li>" }.joined()
        return Pages.page(
            title: "Your recovery codes",
            body: """
                <h1>Two-step verification is on</h1>
                <p>Keep these recovery codes somewhere safe. Each works once, in place of a code from your app.
                They are shown only now.</p>
                <ul class="codes">\(items)</ul>
                <a class="button" href="/account">Done</a>
                """)
    }

    /// The second-factor form of a sign-in.
    static func mfa(challengeID: String, csrf: String, error: String?, status: Int = 200) -> HTTPResponse {
        Pages.page(
            title: "Two-step verification",
            body: """
                <h1>Two-step verification</h1>
                \(problem(error))
                <form method="post" action="\(MFAFlow.path)">
                <input type="hidden" name="challenge" value="\(HTML.escape(challengeID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="code">Code from your authenticator app</label>
                <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required>
                <p class="muted">Lost your phone? Enter one of your recovery codes instead.</p>
                <button type="submit">Verify</button>
                </form>
                """, status: status)
    }

    /// A problem on an account page (not a sign-in).
    static func error(status: Int, message: String) -> HTTPResponse {
        Pages.page(
            title: "Account problem",
            body: """
                <h1>That didn't work</h1>
                <p class="error" role="alert">\(HTML.escape(message))</p>
                <a class="button" href="/account">Back to your account</a>
                """, status: status)
    }
}
