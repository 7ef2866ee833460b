import Authorize
import Encoding
import HTTPServer

/// The pages of the email flows (docs/protocol.md, "Email codes"): the code page, the reset's second
/// factor and new password, "Forgot password?" and the address change, rendered with `Pages.page`.
enum EmailCodePages {
    /// What the code page says the code is for.
    static func heading(_ purpose: EmailCodePurpose) -> String {
        switch purpose {
        case .signUp: "Check your email"
        case .verifyEmail: "Verify your email address"
        case .passwordReset: "Check your email"
        case .changeEmail: "Confirm your new address"
        }
    }

    /// The code page: the same for every flow of a purpose, whether or not anything was sent.
    static func code(
        flowID: String, csrf: String, purpose: EmailCodePurpose, error: String?, notice: String? = nil, status: Int = 200,
        cookies: [String] = []
    ) -> HTTPResponse {
        let sent =
            purpose == .changeEmail
            ? "We sent a 6-digit code to the new address. Enter it here to move your account to it."
            : "If the address can receive a code, we sent a 6-digit code to it. Enter it here. It is valid for 10 minutes."
        let describedBy = error == nil ? "code-help" : "code-help code-error"
        let problem = error.map { "<p class=\"error\" id=\"code-error\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        return Pages.page(
            title: heading(purpose),
            body: """
                <h1>\(HTML.escape(heading(purpose)))</h1>
                \(AccountPages.notice(notice))
                <p id="code-help">\(HTML.escape(sent))</p>
                \(problem)
                <form method="post" action="/account/code">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="code">Code</label>
                <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" \
                maxlength="12" required aria-describedby="\(describedBy)"\(error == nil ? "" : " aria-invalid=\"true\"")>
                <button type="submit">Continue</button>
                </form>
                <form method="post" action="/account/code/resend">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <button type="submit" class="secondary">Send a new code</button>
                </form>
                """, status: status, cookies: cookies)
    }

    /// "Forgot password?": the address form.
    static func forgot(csrf: String, requestID: String?, email: String?, error: String?, status: Int = 200, cookies: [String] = [])
        -> HTTPResponse
    {
        let request = requestID.map { "<input type=\"hidden\" name=\"request\" value=\"\(HTML.escape($0))\">" } ?? ""
        return Pages.page(
            title: "Reset your password",
            body: """
                <h1>Reset your password</h1>
                <p>Enter the email address of your ZevID account. We will send it a code.</p>
                \(AccountPages.problem(error))
                <form method="post" action="/account/reset">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(request)
                <label for="email">Email</label>
                <input id="email" name="email" type="email" autocomplete="username" required value="\(HTML.escape(email ?? ""))">
                <button type="submit">Send a code</button>
                </form>
                """, status: status, cookies: cookies)
    }

    /// The reset's second factor, for an account with MFA.
    static func resetSecondFactor(flowID: String, csrf: String, error: String?, status: Int = 200) -> HTTPResponse {
        Pages.page(
            title: "Two-step verification",
            body: """
                <h1>Two-step verification</h1>
                <p>Your account uses an authenticator app. Enter its current code, or one of your recovery codes.</p>
                \(AccountPages.problem(error))
                <form method="post" action="/account/reset/second-factor">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="code">Code</label>
                <input id="code" name="code" type="text" autocomplete="one-time-code" required>
                <button type="submit">Continue</button>
                </form>
                """, status: status)
    }

    /// The reset's new password.
    static func newPassword(flowID: String, csrf: String, error: String?, status: Int = 200) -> HTTPResponse {
        Pages.page(
            title: "Choose a new password",
            body: """
                <h1>Choose a new password</h1>
                \(AccountPages.problem(error))
                <form method="post" action="/account/reset/password">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <label for="new_password">New password</label>
                <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="10">
                <p class="muted">At least 10 characters. Every browser and app signed in to your account will be signed out.</p>
                <button type="submit">Save the new password</button>
                </form>
                """, status: status)
    }

    /// The account page's "Change email" form (`hidden` is its CSRF field).
    static func changeEmailSection(hidden: String) -> String {
        """
        <h2>Change email</h2>
        <form method="post" action="/account/email">\(hidden)
        <label for="new_email">New email address</label>
        <input id="new_email" name="new_email" type="email" autocomplete="email" required>
        <label for="email_password">Current password</label>
        <input id="email_password" name="password" type="password" autocomplete="current-password" required>
        <p class="muted">We send a code to the new address; your address changes once you enter it.</p>
        <button type="submit">Send a code to the new address</button>
        </form>
        """
    }

    /// A flow that cannot continue (expired, completed, another browser).
    static func over(_ message: String, status: Int = 400) -> HTTPResponse {
        Pages.page(
            title: "This code page has expired",
            body: """
                <h1>This page has expired</h1>
                <p class="error" role="alert">\(HTML.escape(message))</p>
                <p><a href="/account/signin">Go to sign-in</a></p>
                """, status: status)
    }
}
