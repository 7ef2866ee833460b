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

    /// The code page: the same for every flow of a purpose, whether or not anything was sent. The code
    /// input names the page's explanation and, on a wrong, expired or locked code, the error message
    /// (`aria-describedby`, `aria-invalid`; docs/protocol.md#page-accessibility).
    /// - Parameter codeError: whether `error` is about the typed code (a rate limit's message is not).
    /// - Parameter passkeys: for a code that finishes a sign-up or a sign-in: the passkey script is loaded and
    ///   the code form carries the hidden `passkey_capable` field it sets, so the sign-in may offer to create a
    ///   passkey next (docs/passkeys.md, "The offer"); nil for the other purposes.
    static func code(
        flowID: String, csrf: String, purpose: EmailCodePurpose, error: String?, codeError: Bool = true, notice: String? = nil,
        status: Int = 200, cookies: [String] = [], passkeys: PasskeyPageContext? = nil
    ) -> HTTPResponse {
        let sent =
            purpose == .changeEmail
            ? "We sent a 6-digit code to the new address. Enter it here to move your account to it."
            : "If the address can receive a code, we sent a 6-digit code to it. Enter it here. It is valid for 10 minutes."
        let codeInput = Pages.input(
            id: "code", name: "code", label: "6-digit code", type: "text", autocomplete: "one-time-code",
            hint: "It is in the email from ZevID. Didn't get it? Check your spam folder, or send a new code.",
            attributes: "inputmode=\"numeric\" pattern=\"[0-9 ]*\" maxlength=\"12\" required", invalid: error != nil && codeError)
        return Pages.page(
            title: heading(purpose),
            body: """
                <h1>\(HTML.escape(heading(purpose)))</h1>
                \(AccountPages.notice(notice))
                <p>\(HTML.escape(sent))</p>
                \(Pages.formError(error))
                <form method="post" action="/account/code">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(passkeys == nil ? "" : Pages.passkeyCapableField)
                \(codeInput)
                <button type="submit">Continue</button>
                </form>
                <form method="post" action="/account/code/resend">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <button type="submit" class="secondary">Send a new code</button>
                </form>
                """, status: status, cookies: cookies, passkeys: passkeys)
    }

    /// "Forgot password?": the address form.
    /// - Parameter invalidEmail: whether `error` is about the typed address (it is marked `aria-invalid`);
    ///   a rate limit's message concerns no field.
    static func forgot(
        csrf: String, requestID: String?, email: String?, error: String?, invalidEmail: Bool = false, status: Int = 200,
        cookies: [String] = []
    ) -> HTTPResponse {
        let request = requestID.map { "<input type=\"hidden\" name=\"request\" value=\"\(HTML.escape($0))\">" } ?? ""
        let emailInput = Pages.input(
            id: "email", name: "email", label: "Email", type: "email", autocomplete: "username", value: email ?? "",
            invalid: invalidEmail)
        let back = requestID.map { "/v1/auth/zevid/signin?request=\(HTML.escape($0))" } ?? "/account/signin"
        return Pages.page(
            title: "Reset your password",
            body: """
                <h1>Reset your password</h1>
                <p>Enter the email address of your ZevID account. We will send a code to it.</p>
                \(Pages.formError(error))
                <form method="post" action="/account/reset">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(request)
                \(emailInput)
                <button type="submit">Send a code</button>
                </form>
                <p class="muted">Remembered it? <a href="\(back)">Back to sign-in</a>.</p>
                """, status: status, cookies: cookies)
    }

    /// The reset's second factor, for an account with MFA.
    /// - Parameter invalid: whether `error` is about the typed code (not a rate limit or an outage).
    static func resetSecondFactor(flowID: String, csrf: String, error: String?, invalid: Bool = false, status: Int = 200)
        -> HTTPResponse
    {
        let codeInput = Pages.input(
            id: "code", name: "code", label: "Code from your authenticator app", type: "text", autocomplete: "one-time-code",
            hint: "Lost your phone? Enter one of your recovery codes instead.", invalid: invalid)
        return Pages.page(
            title: "Two-step verification",
            body: """
                <h1>Two-step verification</h1>
                <p>Your account uses an authenticator app. Enter its current code, or one of your recovery codes.</p>
                \(Pages.formError(error))
                <form method="post" action="/account/reset/second-factor">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(codeInput)
                <button type="submit">Continue</button>
                </form>
                """, status: status)
    }

    /// The reset's new password; an error (too short, too common…) marks the input.
    static func newPassword(flowID: String, csrf: String, error: String?, status: Int = 200) -> HTTPResponse {
        let passwordInput = Pages.input(
            id: "new_password", name: "new_password", label: "New password", type: "password", autocomplete: "new-password",
            hint:
                "At least 10 characters. A long phrase is easiest to remember. Every browser and app signed in to your account will be signed out.",
            attributes: "required minlength=\"10\"", invalid: error != nil)
        return Pages.page(
            title: "Choose a new password",
            body: """
                <h1>Choose a new password</h1>
                \(Pages.formError(error))
                <form method="post" action="/account/reset/password">
                <input type="hidden" name="flow" value="\(HTML.escape(flowID))">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                \(passwordInput)
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

    /// A flow that cannot continue (expired, completed, another browser) or a code request over its limit,
    /// as an error page (docs/protocol.md#error-pages): `message` says what to do, with a way back to sign-in.
    static func over(_ message: String, status: Int = 400) -> HTTPResponse {
        let headline = status == 429 ? "Too many codes were asked for." : "This page has expired."
        return Pages.error(
            status: status, PersonFacingError(headline: headline, advice: message),
            code: status == 429 ? "temporarily_unavailable" : "invalid_request", back: ("/account/signin", "Go to sign-in"))
    }
}
