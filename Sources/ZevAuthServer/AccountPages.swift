import Authorize
import Encoding
import HTTPServer
import QRCode

/// The hosted account pages (docs/protocol.md#accounts), rendered like `Pages`: every value escaped, every form with
/// a CSRF token, the same headers and stylesheet, and the same labelled inputs (`Pages.input`), whose
/// `invalid` sets name the fields a form's error concerns.
enum AccountPages {
    /// A form's error message, tied to the fields it concerns (`Pages.formError`).
    static func problem(_ text: String?) -> String { Pages.formError(text) }

    static func notice(_ text: String?) -> String {
        text.map { "<p class=\"muted\" role=\"status\">\(HTML.escape($0))</p>" } ?? ""
    }

    /// Sign in to the account area.
    /// - Parameter passkeys: the passkey script's context; nil leaves passkeys out.
    /// - Parameter upstream: the "Continue with NAME" buttons above the email form; nil shows none.
    static func signIn(
        csrf: String, email: String?, error: String?, invalid: Set<String> = [], notice text: String? = nil, status: Int = 200,
        cookies: [String] = [], passkeys: PasskeyPageContext? = nil, upstream: UpstreamButtons? = nil
    ) -> HTTPResponse {
        let emailInput = Pages.input(
            id: "email", name: "email", label: "Email", type: "email",
            autocomplete: passkeys == nil ? "username" : "username webauthn", value: email ?? "", invalid: invalid.contains("email"))
        let passwordInput = Pages.input(
            id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password",
            invalid: invalid.contains("password"))
        return Pages.page(
            title: "Sign in to your ZevID account",
            body: """
                <h1>Your ZevID account</h1>
                \(notice(text))\(problem(error))
                \(upstream?.html ?? "")
                <form method="post" action="/account/signin">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(passkeys == nil ? "" : Pages.passkeyCapableField)
                \(emailInput)
                \(passwordInput)
                <button type="submit">Sign in</button>
                </form>
                \(passkeys == nil ? "" : Pages.passkeySignIn)
                <p class="muted"><a href="/account/reset">Forgot password?</a></p>
                <p class="muted">No ZevID account? <a href="/account/signup">Create one</a>.</p>
                """, status: status, cookies: cookies, passkeys: passkeys)
    }

    /// The sign-up form. `requestID` carries a pending app sign-in to return to.
    static func signUp(
        csrf: String, requestID: String?, email: String?, name: String?, error: String?, invalid: Set<String> = [], status: Int = 200,
        cookies: [String] = []
    ) -> HTTPResponse {
        let nameInput = Pages.input(
            id: "name", name: "name", label: "Name", type: "text", autocomplete: "name", value: name ?? "",
            invalid: invalid.contains("name"))
        let emailInput = Pages.input(
            id: "email", name: "email", label: "Email", type: "email", autocomplete: "username", value: email ?? "",
            invalid: invalid.contains("email"))
        let passwordInput = Pages.input(
            id: "password", name: "password", label: "Password", type: "password", autocomplete: "new-password",
            hint: "At least 10 characters. A long phrase is easiest to remember.", attributes: "required minlength=\"10\"",
            invalid: invalid.contains("password"))
        let request = requestID.map { "<input type=\"hidden\" name=\"request\" value=\"\(HTML.escape($0))\">" } ?? ""
        return Pages.page(
            title: "Create your ZevID account",
            body: """
                <h1>Create your ZevID account</h1>
                \(problem(error))
                <form method="post" action="/account/signup">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(request)
                \(nameInput)
                \(emailInput)
                \(passwordInput)
                <button type="submit">Create account</button>
                </form>
                """, status: status, cookies: cookies)
    }

    /// The account page: connected apps (Remove), sign out, sign out everywhere, change password, TOTP.
    static func account(
        user: UserRecord, csrf: String, apps: [ConnectedApp], totpEnabled: Bool, recoveryCodesLeft: Int, notice text: String?,
        error: String?, invalid: Set<String> = [], status: Int = 200, cookies: [String] = [], activity: [AuditEntry] = [],
        passkeys: PasskeySection? = nil, linked: [LinkedIdentity]? = nil
    ) -> HTTPResponse {
        let hidden = "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf))\">"
        let appList =
            apps.isEmpty
            ? "<p class=\"muted\">No apps are connected to your account.</p>"
            : apps.map { app in
                // A web client is its own entry, named by its registered name (docs/protocol.md#connected-apps).
                let target =
                    app.webClient.map { "<input type=\"hidden\" name=\"client\" value=\"\(HTML.escape($0.clientID))\">" }
                    ?? "<input type=\"hidden\" name=\"environment\" value=\"\(HTML.escape(app.environmentID))\">"
                let sessions = app.liveSessions == 1 ? "1 active session" : "\(app.liveSessions) active sessions"
                let detail = app.webClient == nil ? sessions : "Website of \(HTML.escape(app.projectName)) · \(sessions)"
                return """
                    <form method="post" action="/account/apps/remove">\(hidden)
                    \(target)
                    <p><strong>\(HTML.escape(app.name))</strong>\
                    \(app.environmentKind == .development ? " <span class=\"muted\">(development)</span>" : "")<br>
                    <span class="muted">\(detail)</span></p>
                    <button type="submit" class="secondary">Remove \(HTML.escape(app.name))</button>
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
        let currentInput = Pages.input(
            id: "current", name: "current_password", label: "Current password", type: "password", autocomplete: "current-password",
            invalid: invalid.contains("current"))
        let newInput = Pages.input(
            id: "new", name: "new_password", label: "New password", type: "password", autocomplete: "new-password",
            hint: "At least 10 characters. Changing it signs you out of every app and browser, except this browser.",
            attributes: "required minlength=\"10\"", invalid: invalid.contains("new"))
        return Pages.page(
            title: "Your ZevID account",
            body: """
                <h1>Your ZevID account</h1>
                <p>\(HTML.escape(user.name))<br><span class="muted">\(HTML.escape(user.email))</span></p>
                \(notice(text))\(problem(error))
                <h2>Connected apps</h2>
                \(appList)
                \(passkeys.map { PasskeyPages.section($0, hidden: hidden) } ?? "")
                \(linked.map { UpstreamPages.linkedSection($0, hidden: hidden) } ?? "")
                <h2>Two-step verification</h2>
                \(twoStep)
                <h2>Change password</h2>
                <form method="post" action="/account/password">\(hidden)
                \(currentInput)
                \(newInput)
                <button type="submit">Change password</button>
                </form>
                \(EmailCodePages.changeEmailSection(hidden: hidden))
                \(recentActivity(activity))
                <h2>Sign out</h2>
                <form method="post" action="/account/signout">\(hidden)
                <button type="submit" class="secondary">Sign out of this browser</button></form>
                <p class="muted">Apps you signed in to from this browser are signed out too.</p>
                <form method="post" action="/account/signout-everywhere">\(hidden)
                <button type="submit" class="secondary">Sign out everywhere</button></form>
                \(closeAccount(hidden: hidden, totpEnabled: totpEnabled, invalid: invalid))
                """, status: status, cookies: cookies, passkeys: passkeys?.context)
    }

    /// "Recent activity": the person's last security events, newest first, each in words with its time
    /// (a `<time>` element, UTC) and the client address it came from (docs/console.md, "Audit log").
    static func recentActivity(_ entries: [AuditEntry]) -> String {
        guard !entries.isEmpty else {
            return "<h2 id=\"recent-activity\">Recent activity</h2>\n<p class=\"muted\">No recent activity.</p>"
        }
        let items = entries.map { entry in
            let at = Wire.timestamp(entry.at)
            let shown = at.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
            let from = entry.clientAddress.map { " from \(HTML.escape($0))" } ?? ""
            return "<li>\(HTML.escape(PersonalActivity.words(entry)))<br>"
                + "<span class=\"muted\"><time datetime=\"\(at)\">\(shown)</time>\(from)</span></li>"
        }
        return "<h2 id=\"recent-activity\">Recent activity</h2>\n<ul aria-labelledby=\"recent-activity\">\n"
            + items.joined(separator: "\n") + "\n</ul>"
    }

    /// The accessible name of the enrolment page's QR code.
    static let qrLabel = "QR code to scan with your authenticator app"

    /// TOTP enrolment (docs/protocol.md#totp-enrolment): the `otpauth://` URI as a QR code (an inline SVG
    /// drawn from libqrencode's matrix, so the page's CSP needs no image source), as a link that opens the
    /// authenticator on this phone, the key in groups of four as selectable text, and the code form.
    static func enrolTOTP(csrf: String, uri: String, secretBase32: String, error: String?, status: Int = 200) -> HTTPResponse {
        // The URI is ASCII and about 120 bytes: far below what a QR code holds, so there is always a symbol.
        let qr = QRCode(uri).map { $0.svg(label: qrLabel).replacingOccurrences(of: "<svg ", with: "<svg class=\"qr\" ") } ?? ""
        let codeInput = Pages.input(
            id: "code", name: "code", label: "Enter the 6-digit code the app shows", type: "text", autocomplete: "one-time-code",
            attributes: "required inputmode=\"numeric\" pattern=\"[0-9 ]{6,7}\"", invalid: error != nil)
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
                <p>Scan this QR code with your authenticator app.</p>
                \(qr)
                <p>On this phone? <a href="\(HTML.escape(uri))">Open your authenticator app</a>.</p>
                <p>Or add an account in the app by hand with this key:</p>
                <p><code class="secret">\(HTML.escape(grouped))</code></p>
                <p class="muted">Time-based, 6 digits, every 30 seconds.</p>
                <form method="post" action="/account/totp/confirm">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(codeInput)
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
    /// - Parameter invalid: whether `error` says the code was wrong (the input is marked `aria-invalid`).
    static func mfa(challengeID: String, csrf: String, error: String?, invalid: Bool = false, status: Int = 200) -> HTTPResponse {
        let codeInput = Pages.input(
            id: "code", name: "code", label: "Code from your authenticator app", type: "text", autocomplete: "one-time-code",
            hint: "Lost your phone? Enter one of your recovery codes instead.", attributes: "required inputmode=\"numeric\"",
            invalid: invalid)
        return Pages.page(
            title: "Two-step verification",
            body: """
                <h1>Two-step verification</h1>
                \(problem(error))
                <form method="post" action="\(MFAFlow.path)">
                <input type="hidden" name="challenge" value="\(HTML.escape(challengeID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(codeInput)
                <button type="submit">Verify</button>
                </form>
                """, status: status)
    }

    /// A problem on an account page (not a sign-in): `message` says what happened; the page offers the
    /// way back to the account page.
    static func error(status: Int, message: String, code: String = "invalid_request") -> HTTPResponse {
        Pages.error(
            status: status, PersonFacingError(headline: message, advice: "Go back to your account and try again."), code: code,
            back: ("/account", "Back to your account"))
    }

    /// The "Close your account" form of the account page (docs/protocol.md#closing-an-account): the
    /// password, and the TOTP or a recovery code when enrolled.
    static func closeAccount(hidden: String, totpEnabled: Bool, invalid: Set<String>) -> String {
        let password = Pages.input(
            id: "close-password", name: "password", label: "Your password", type: "password", autocomplete: "current-password",
            invalid: invalid.contains("close-password"))
        let code =
            totpEnabled
            ? "\n"
                + Pages.input(
                    id: "close-code", name: "code", label: "Code from your authenticator app", type: "text",
                    autocomplete: "one-time-code", hint: "Or one of your recovery codes.", attributes: "required inputmode=\"numeric\"",
                    invalid: invalid.contains("close-code"))
            : ""
        return """
            <h2>Close your account</h2>
            <p class="muted">Closing your ZevID account signs you out of every app and browser, and you can no longer sign in \
            with it. This cannot be undone.</p>
            <form method="post" action="/account/close">\(hidden)
            \(password)\(code)
            <button type="submit" class="secondary">Close my account</button>
            </form>
            """
    }

    /// What a closed account's browser sees after closing it.
    static func closed() -> HTTPResponse {
        Pages.page(
            title: "Your account is closed",
            body: """
                <h1>Your account is closed</h1>
                <p role="status">Your ZevID account is closed and every app and browser is signed out.</p>
                """)
    }
}
