import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The hosted account area under `/account` (docs/protocol.md#accounts, docs/protocol.md#session-ends):
/// sign-up without account enumeration, sign-in that reuses the ZevID browser session, and the account page
/// whose actions end sessions at once. Each handler parses the form into typed values, calls one use case
/// of Sources/Authorize/Accounts through `context.accounts`, and renders its answer.
struct AccountHandlers: Sendable {
    let context: ServerContext
    private var security: AccountSecurity { AccountSecurity(context: context) }
    private var ports: AccountsPorts { context.accounts }

    // MARK: Signed-out forms (CSRF under the browser binding cookie)

    /// The browser binding secret when the server minted it and has it on record, else a fresh one with
    /// its cookie.
    private func binding(_ request: HTTPRequest) throws -> (value: String, cookies: [String]) {
        let adopted = try BrowserBinding(context: context).adoptOrMint(request)
        return (adopted.value, adopted.setCookies)
    }

    private static func formCSRF(binding: String, form: String) -> String {
        AccountForms.csrf(secret: binding, label: "account-form:\(form)")
    }

    /// The CSRF check of a signed-out form: the token must be the HMAC under this browser's binding cookie.
    private func signedOutCSRFMatches(_ request: HTTPRequest, _ form: [String: String], name: String) throws -> Bool {
        guard let binding = try BrowserBinding(context: context).onRecord(request) else { return false }
        return AccountForms.csrfMatches(form["csrf"], Self.formCSRF(binding: binding, form: name))
    }

    /// A pending sign-in id worth linking back to (a UUID), or nil (for the email flows' forms).
    static func pendingRequestID(_ raw: String?) -> String? { requestID(raw) }

    /// A pending sign-in id worth linking back to (a UUID), or nil.
    private static func requestID(_ raw: String?) -> String? {
        guard let raw, UUID(uuidString: raw) != nil else { return nil }
        return raw.lowercased()
    }

    // MARK: Sign-up

    /// `GET /account/signup[?request=…]`: the form.
    func signUpPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let (binding, cookies) = try binding(request)
        return AccountPages.signUp(
            csrf: Self.formCSRF(binding: binding, form: "signup"), requestID: Self.requestID(AccountForms.query(request, "request")),
            email: nil, name: nil, error: nil, cookies: cookies)
    }

    /// `POST /account/signup` (form: `csrf`, `name`, `email`, `password`, optional `request`). A new
    /// address gets an account; an address that has one gets the very same page and status, after the same
    /// Argon2id work, and its account is left untouched (no account enumeration; see docs/decisions.md).
    func signUp(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard try signedOutCSRFMatches(request, form, name: "signup") else { return AccountForms.expiredForm }
        let requestID = Self.requestID(form["request"])
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let name = (form["name"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let password = form["password"] ?? ""
        let again = { (problem: String, status: Int, invalid: Set<String>) -> HTTPResponse in
            AccountPages.signUp(
                csrf: form["csrf"] ?? "", requestID: requestID, email: email, name: name, error: problem, invalid: invalid,
                status: status)
        }
        let client = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try RateLimiter(context: context).hit(.passwordPerAddress, key: client) {
            var response = again(RateLimiter.pageMessage(retryAfterSeconds: seconds), 429, [])
            response.headers.set("Retry-After", String(seconds))
            return response
        }
        guard let address = EmailAddress(email) else { return again("Enter a valid email address.", 400, ["email"]) }
        guard let displayName = DisplayName(name) else {
            return again("Enter your name: up to 200 characters, without control or text-direction characters.", 400, ["name"])
        }
        let newPassword: NewPassword
        switch NewPassword.parse(password) {
        case .failure(let problem): return again("The password \(problem.explanation).", 400, ["password"])
        case .success(let value): newPassword = value
        }
        // The address has an account or gets one, and a code page follows either way (docs/protocol.md, "Sign-up").
        guard let binding = try BrowserBinding(context: context).onRecord(request) else { return AccountForms.expiredForm }
        return try EmailCodeFlow(context: context).signUp(
            email: address, name: displayName, password: newPassword, binding: binding, requestID: requestID)
    }

    // MARK: Sign-in to the account area

    /// `GET /account/signin`: the form, or the account page when this browser is signed in.
    /// While a link waits for a sign-in (docs/federation.md, "Hosted sign-in"), the form shows even to a
    /// signed-in browser, with the address filled in and a notice saying why.
    func signInPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let link = try UpstreamHandlers(context: context).signInNotice(request)
        if link == nil, try current(request) != nil { return Wire.seeOther("/account") }
        let (binding, cookies) = try binding(request)
        let notice = link?.notice ?? (AccountForms.query(request, "signed_out") == "1" ? "You're signed out." : nil)
        return AccountPages.signIn(
            csrf: Self.formCSRF(binding: binding, form: "signin"), email: link?.email, error: nil, notice: notice, cookies: cookies,
            passkeys: PasskeyPageContext(csrf: PasskeyHandlers.csrf(binding: binding), requestID: nil),
            upstream: try UpstreamHandlers(context: context).buttons(projectID: nil, binding: binding, requestID: nil))
    }

    /// `POST /account/signin` (form: `csrf`, `email`, `password`): the same rate-limited password check as
    /// the app sign-in, then the second factor when enrolled, then a ZevID browser session.
    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard try signedOutCSRFMatches(request, form, name: "signin") else { return AccountForms.expiredForm }
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        // The form's CSRF matched, so the binding is on record; the page keeps offering passkeys.
        let passkeys = try BrowserBinding(context: context).onRecord(request).map {
            PasskeyPageContext(csrf: PasskeyHandlers.csrf(binding: $0), requestID: nil)
        }
        let user: UserRecord
        switch try security.checkPassword(email: email, password: form["password"] ?? "", request: request) {
        case .limited(let seconds):
            context.metrics.signIn(.password, .rateLimited)
            var response = AccountPages.signIn(
                csrf: form["csrf"] ?? "", email: email, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429,
                passkeys: passkeys)
            response.headers.set("Retry-After", String(seconds))
            return response
        case .wrong:
            context.metrics.signIn(.password, .invalidCredentials)
            return AccountPages.signIn(
                csrf: form["csrf"] ?? "", email: email, error: SignInFlow.genericCredentialsMessage, invalid: ["email", "password"],
                status: 401, passkeys: passkeys)
        case .invalidEmail:
            context.metrics.signIn(.password, .invalidRequest)
            return AccountPages.signIn(
                csrf: form["csrf"] ?? "", email: email, error: SignInFlow.invalidEmailMessage, invalid: ["email"], status: 400,
                passkeys: passkeys)
        case .ok(let found):
            user = found
        }
        // The person authenticated: a fresh binding id replaces the one this browser held (session fixation).
        let fresh = try BrowserBinding(context: context).mint()
        let signIn = BrowserSignIn(store: ports.browserSignIn, secrets: context.secrets)
        switch try signIn(user: user, binding: fresh.value, authorizationRequestID: nil, now: context.clock.now()) {
        case .secondFactor(let challenge):
            context.metrics.signIn(.password, .mfaRequired)
            return Wire.seeOther(
                "\(MFAFlow.path)?challenge=\(challenge)",
                cookies: [fresh.setCookie, KnownBrowsers(context: context).signedIn(userID: user.id, request)])
        case .signedIn(let token, _):
            context.metrics.signIn(.password, .ok)
            try PersonalActivity(context: context).record("signin.password", userID: user.id, request)
            return Wire.seeOther(
                try PasskeyHandlers(context: context).nextAfterPassword(userID: user.id, requestID: nil, form: form),
                cookies: [sessionCookie(token), fresh.setCookie, KnownBrowsers(context: context).signedIn(userID: user.id, request)])
        }
    }

    // MARK: Signed in

    /// The signed-in browser: its session, account, cookie value and the CSRF token of its forms.
    struct Current {
        let session: BrowserSessionRecord
        let user: UserRecord
        let token: String
        /// This browser's binding secret when on record (the passkey calls' CSRF key).
        let binding: String?
        var csrf: String { AccountHandlers.sessionCSRF(token) }
    }

    /// CSRF of signed-in forms: HMAC of a label under the browser session's own secret (an HttpOnly cookie).
    static func sessionCSRF(_ token: String) -> String {
        AccountForms.csrf(secret: token, label: "account-csrf")
    }

    private func current(_ request: HTTPRequest) throws -> Current? {
        guard let token = context.cookie(.session, in: request),
            let signedIn = try CurrentAccount(store: ports.current, secrets: context.secrets)(token: token)
        else { return nil }
        return Current(
            session: signedIn.session, user: signedIn.user, token: token, binding: try BrowserBinding(context: context).onRecord(request))
    }

    private func sessionCookie(_ token: String) -> String {
        context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds)
    }

    private var clearedSessionCookie: String {
        context.setCookie(.session, "", maxAge: 0)
    }

    private func accountPage(
        _ current: Current, notice: String? = nil, error: String? = nil, invalid: Set<String> = [], status: Int = 200,
        cookies: [String] = []
    ) throws -> HTTPResponse {
        let facts = try AccountOverview(store: ports.overview)(userID: current.user.id)
        let passkeys = PasskeySection(
            passkeys: try ports.passkeys.passkeys(userID: current.user.id),
            context: PasskeyPageContext(csrf: current.binding.map(PasskeyHandlers.csrf(binding:)) ?? "", requestID: nil),
            removalNeedsPassword: context.clock.now().timeIntervalSince(current.session.authTime) >= PasskeyRules.recentSignInSeconds)
        return AccountPages.account(
            user: current.user, csrf: current.csrf, apps: facts.apps, totpEnabled: facts.totpEnabled,
            recoveryCodesLeft: facts.recoveryCodesLeft, notice: notice, error: error, invalid: invalid, status: status,
            cookies: cookies, activity: try PersonalActivity(context: context).recent(userID: current.user.id), passkeys: passkeys,
            linked: try ports.upstream.linkedIdentities(userID: current.user.id))
    }

    /// Runs a signed-in form: the browser session and the CSRF token must both check out.
    private func signedInForm(_ request: HTTPRequest, _ body: (Current, [String: String]) throws -> HTTPResponse) throws -> HTTPResponse {
        guard let current = try current(request) else { return Wire.seeOther("/account/signin") }
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard AccountForms.csrfMatches(form["csrf"], current.csrf) else { return AccountForms.expiredForm }
        return try body(current, form)
    }

    /// The account's current password on a signed-in form, checked like a sign-in (rate-limited).
    /// - Returns: nil when it is right; else the account page saying why (429 with `Retry-After` when over
    ///   the limit, 401 with `wrong` when it does not match), `invalid` marking the field.
    private func passwordRefused(
        _ current: Current, _ password: String?, _ request: HTTPRequest, wrong: String = "The current password is incorrect.",
        invalid: Set<String> = []
    ) throws -> HTTPResponse? {
        switch try security.checkPassword(email: current.user.email, password: password ?? "", request: request, account: current.user.id) {
        case .limited(let seconds):
            var response = try accountPage(current, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        case .wrong, .invalidEmail:
            return try accountPage(current, error: wrong, invalid: invalid, status: 401)
        case .ok:
            return nil
        }
    }

    /// `GET /account`: the account page, or the sign-in form.
    func accountPage(_ request: HTTPRequest) throws -> HTTPResponse {
        guard var current = try current(request) else { return Wire.seeOther("/account/signin") }
        // A link that waited for this sign-in is confirmed (or cancelled) first (docs/federation.md).
        if let detour = try UpstreamHandlers(context: context).confirmationDetour(request) { return Wire.seeOther(detour) }
        // The passkey calls need a binding on record; a browser without one gets one here.
        var cookies: [String] = []
        if current.binding == nil {
            let minted = try BrowserBinding(context: context).mint()
            current = Current(session: current.session, user: current.user, token: current.token, binding: minted.value)
            cookies = [minted.setCookie]
        }
        let notices = [
            "removed": "The app was removed and signed out.",
            "password": "Your password was changed. Other browsers and apps are signed out.",
            "email": "Your email address was changed.",
            "email_taken": "That address now belongs to another account, so your address was not changed.",
            "passkey_renamed": "The passkey was renamed.",
            "passkey_removed": "The passkey was removed.",
            "linked": "The account was linked. You can now sign in with it.",
            "unlinked": "The account was unlinked.",
            "unlink_refused":
                "That account was not unlinked: it is your only way to sign in. Set a password (Forgot password?) or create a passkey first.",
            "unlink_gone": "That linked account is no longer on your account.",
        ]
        return try accountPage(current, notice: AccountForms.query(request, "done").flatMap { notices[$0] }, cookies: cookies)
    }

    /// `POST /account/apps/remove` (form: `csrf`, and `client` for a web client or else `environment` for an
    /// environment's native apps): ends the person's sessions with that app and forgets its remembered
    /// consent (docs/protocol.md#connected-apps).
    func removeApp(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            let app: ConnectedAppID =
                form["client"].map { .webClient($0) } ?? .environment(form["environment"] ?? "")
            try RemoveConnectedApp(store: ports.removeApp)(userID: current.user.id, app: app, now: context.clock.now())
            return Wire.seeOther("/account?done=removed")
        }
    }

    /// `POST /account/signout`: ends this ZevID browser session and only the app sessions made from it.
    func signOut(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            try SignOut(store: ports.signOut)(browserSessionID: current.session.id, now: context.clock.now())
            try PersonalActivity(context: context).record("signout", userID: current.user.id, request)
            return Wire.seeOther("/account/signin?signed_out=1", cookies: [clearedSessionCookie])
        }
    }

    /// `POST /account/signout-everywhere`: every browser session and every app session of the person.
    func signOutEverywhere(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            try SignOutEverywhere(store: ports.signOutEverywhere)(userID: current.user.id, now: context.clock.now())
            try PersonalActivity(context: context).record("signout.everywhere", userID: current.user.id, request)
            return Wire.seeOther("/account/signin?signed_out=1", cookies: [clearedSessionCookie])
        }
    }

    /// `POST /account/password` (form: `csrf`, `current_password`, `new_password`): needs the current
    /// password (rate-limited like a sign-in); ends every session, then starts a fresh browser session here.
    func changePassword(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            if let refused = try passwordRefused(current, form["current_password"], request, invalid: ["current"]) { return refused }
            let newPassword: NewPassword
            switch NewPassword.parse(form["new_password"] ?? "") {
            case .failure(let problem):
                return try accountPage(current, error: "The new password \(problem.explanation).", invalid: ["new"], status: 400)
            case .success(let value): newPassword = value
            }
            let token = try ChangePassword(store: ports.changePassword, passwords: context.accountPasswords, secrets: context.secrets)(
                userID: current.user.id, newPassword: newPassword, now: context.clock.now())
            try ports.notices.queue(.passwordChanged, userID: current.user.id, now: context.clock.now())
            try PersonalActivity(context: context).record("password.change", userID: current.user.id, request)
            return Wire.seeOther("/account?done=password", cookies: [sessionCookie(token)])
        }
    }

    /// `POST /account/email` (form: `csrf`, `new_email`, `password`): needs the current password; sends a
    /// code to the new address and a notice to the old one (docs/protocol.md, "Changing the address").
    func changeEmail(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            if let refused = try passwordRefused(current, form["password"], request) { return refused }
            guard
                let page = try EmailCodeFlow(context: context).startEmailChange(
                    user: current.user, newEmail: form["new_email"] ?? "", request: request)
            else {
                return try accountPage(current, error: SignInFlow.invalidEmailMessage, status: 400)
            }
            return page
        }
    }

    // MARK: Passkeys

    /// `POST /account/passkeys/rename` (form: `csrf`, `id`, `name` of 1 to 64 characters).
    func renamePasskey(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            guard let name = PasskeyName(form["name"] ?? "") else {
                return try accountPage(
                    current, error: "Give the passkey a name of 1 to 64 characters, without control characters.", status: 400)
            }
            guard try ports.passkeys.renamePasskey(userID: current.user.id, id: form["id"] ?? "", name: name) else {
                return try accountPage(current, error: "That passkey is no longer on your account.", status: 404)
            }
            return Wire.seeOther("/account?done=passkey_renamed#passkeys")
        }
    }

    /// `POST /account/passkeys/remove` (form: `csrf`, `id`, and `password` when the sign-in is 10 minutes old
    /// or older, checked like the account page's other sensitive changes): recorded and emailed.
    func removePasskey(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            let remove = RemovePasskey(store: ports.passkeys)
            let id = form["id"] ?? ""
            var outcome = try remove(userID: current.user.id, id: id, authTime: current.session.authTime, now: context.clock.now())
            if outcome == .signInTooOld {
                if let refused = try passwordRefused(
                    current, form["password"], request, wrong: "Enter your current password to remove a passkey.")
                {
                    return refused
                }
                // The password just checked out: a sign-in as fresh as it gets.
                outcome = try remove(userID: current.user.id, id: id, authTime: context.clock.now(), now: context.clock.now())
            }
            switch outcome {
            case .signInTooOld, .notFound:
                return try accountPage(current, error: "That passkey is no longer on your account.", status: 404)
            case .removed:
                try PersonalActivity(context: context).record("passkey.remove", userID: current.user.id, request)
                try ports.notices.queue(.passkeyRemoved, userID: current.user.id, now: context.clock.now())
                context.mail.kick()
                return Wire.seeOther("/account?done=passkey_removed#passkeys")
            }
        }
    }

    // MARK: TOTP enrolment

    private static let noKeyMessage =
        "Two-step verification is not available on this server: it has no encryption key (ZEVAUTH_ENCRYPTION_KEY) to protect the secret."

    private var enrolment: TOTPEnrolment {
        TOTPEnrolment(store: ports.totpEnrolment, codes: context.oneTimePasswords, sealer: context.totpSealer, secrets: context.secrets)
    }

    /// `POST /account/totp/start`: a new secret (20 bytes, RFC 4226 §4's recommended length), sealed at
    /// rest, shown as an `otpauth://` link and as text; it becomes active only after a correct code.
    func startTOTP(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            switch try enrolment.start(userID: current.user.id, now: context.clock.now()) {
            case .unavailable:
                return try accountPage(current, error: Self.noKeyMessage, status: 503)
            case .alreadyEnabled:
                return Wire.seeOther("/account")
            case .started(let secret):
                return AccountPages.enrolTOTP(
                    csrf: current.csrf, uri: AccountSecurity.otpauthURI(email: current.user.email, secret: secret),
                    secretBase32: Base32.encode(secret), error: nil)
            }
        }
    }

    /// `POST /account/totp/confirm` (form: `csrf`, `code`): a correct code activates the factor (its step
    /// counts as used) and shows ten new recovery codes once.
    func confirmTOTP(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            let secret: [UInt8]
            switch try enrolment.pending(userID: current.user.id) {
            case .unavailable: return try accountPage(current, error: Self.noKeyMessage, status: 503)
            case .none: return Wire.seeOther("/account")
            case .pending(let value): secret = value
            }
            let again = { (message: String, status: Int) in
                AccountPages.enrolTOTP(
                    csrf: current.csrf, uri: AccountSecurity.otpauthURI(email: current.user.email, secret: secret),
                    secretBase32: Base32.encode(secret), error: message, status: status)
            }
            if case .limited(let seconds) = try RateLimiter(context: context).hit(.mfaPerAccount, key: current.user.id) {
                var response = again(RateLimiter.pageMessage(retryAfterSeconds: seconds), 429)
                response.headers.set("Retry-After", String(seconds))
                return response
            }
            switch try enrolment.confirm(
                userID: current.user.id, secret: secret, code: TOTPCode(form["code"] ?? ""), now: context.clock.now())
            {
            case .wrongCode: return again("That code is not right. Check the app and enter the code it shows now.", 400)
            case .notPending: return Wire.seeOther("/account")
            case .confirmed(let codes):
                try ports.notices.queue(.mfaEnrolled, userID: current.user.id, now: context.clock.now())
                try PersonalActivity(context: context).record("mfa.enrol", userID: current.user.id, request)
                return AccountPages.recoveryCodes(codes.map(\.display))
            }
        }
    }

    // MARK: Closing one's own account

    /// `POST /account/close` (form: `csrf`, `password`, and `code` when TOTP is enrolled;
    /// docs/protocol.md#closing-an-account): the password (rate-limited like a sign-in) and the second
    /// factor (rate-limited like the MFA step) must both check out; then the account is closed the way the
    /// operator's close does (`CloseUser`: every app and browser session ends), and this browser's session
    /// cookie is cleared.
    func closeAccount(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            let again = { (message: String, status: Int, invalid: Set<String>) throws -> HTTPResponse in
                try accountPage(current, error: message, invalid: invalid, status: status)
            }
            if let refused = try passwordRefused(
                current, form["password"], request, wrong: "The password is incorrect. Your account is still open.",
                invalid: ["close-password"])
            {
                return refused
            }
            if try AccountOverview(store: ports.overview)(userID: current.user.id).totpEnabled {
                switch try security.verifySecondFactor(userID: current.user.id, input: form["code"] ?? "") {
                case .limited(let seconds):
                    var response = try again(RateLimiter.pageMessage(retryAfterSeconds: seconds), 429, [])
                    response.headers.set("Retry-After", String(seconds))
                    return response
                case .unavailable:
                    return try again("Two-step verification is not available right now. Try again later.", 503, [])
                case .rejected:
                    return try again(
                        "That code is not right. Enter the current code from your app, or an unused recovery code.", 401, ["close-code"])
                case .accepted:
                    break
                }
            }
            let entry = AuditEntry(
                actor: .account(userID: current.user.id), action: "account.close", target: current.user.id,
                subjectUserID: current.user.id, clientAddress: ClientAddress.of(request, configuration: context.configuration),
                at: context.clock.now())
            _ = try CloseUser(store: ports.closeUser)(id: current.user.id, now: context.clock.now(), audit: entry)
            var response = AccountPages.closed()
            response.headers.add("Set-Cookie", clearedSessionCookie)
            return response
        }
    }

    // MARK: Operator

    /// `POST /v1/admin/users/{id}/close` (operator token): closes the account and ends every session.
    /// 200 `{"id","email","name","closedAt"}`, the same on a repeat (idempotent); 404 `not_found` for an unknown id.
    func closeUser(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let admin = AdminHandlers(context: context)
        let target = UUID(uuidString: id).map { _ in id }
        if case .failure(let stop) = try admin.requireOperator(
            request, action: "account.close", target: target, message: "Only the operator token may close accounts.")
        {
            return stop.response
        }
        let entry = try admin.audit.entry(.operator, request, "account.close", target: target, subjectUserID: target)
        guard let closed = try CloseUser(store: ports.closeUser)(id: id, now: context.clock.now(), audit: entry) else {
            return Wire.error(.notFound, "No account has this id.")
        }
        return Wire.json(status: 200, try UserBody(closed.user, context: context, closedAt: closed.closedAt))
    }

    /// `POST /v1/admin/users/{id}/mfa/reset` (operator token; docs/protocol.md#mfa-reset): removes the
    /// account's TOTP factor and recovery codes, ends every session and queues the `mfa_removed` notice.
    /// Passkeys stay (docs/passkeys.md, "Events and emails").
    /// 200 `{"id","email","name","passkeys","mfaRemoved"}` (`mfaRemoved` false on a repeat); 404 `not_found`.
    func resetMFA(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let admin = AdminHandlers(context: context)
        let target = UUID(uuidString: id).map { _ in id }
        if case .failure(let stop) = try admin.requireOperator(
            request, action: "account.mfa_reset", target: target, message: "Only the operator token may reset two-step verification.")
        {
            return stop.response
        }
        let entry = try admin.audit.entry(.operator, request, "account.mfa_reset", target: target, subjectUserID: target)
        guard
            let reset = try ResetMFA(store: ports.mfaReset, notices: ports.notices)(
                userID: id, now: context.clock.now(), audit: entry)
        else {
            return Wire.error(.notFound, "No account has this id.")
        }
        return Wire.json(
            status: 200, MFAResetBody(reset: reset, passkeys: try context.accounts.passkeys.passkeyCount(userID: reset.user.id)))
    }

    /// `{"id","email","name","passkeys","mfaRemoved"}`.
    struct MFAResetBody: JSONEncodable {
        let reset: ResetMFA.Reset
        /// How many passkeys the account holds (the reset keeps them).
        let passkeys: Int

        func encode(to writer: inout JSONWriter) {
            writer.object { object in
                object.field("id", reset.user.id)
                object.field("email", reset.user.email)
                object.field("name", reset.user.name)
                object.field("passkeys", passkeys)
                object.field("mfaRemoved", reset.removed)
            }
        }
    }
}
