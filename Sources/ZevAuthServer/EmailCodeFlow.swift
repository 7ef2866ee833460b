import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The hosted email flows (docs/protocol.md, "Email codes", "Sign-up", "Password reset"): each starts a
/// code flow bound to this browser's binding cookie, shows the same code page whether or not anything was
/// sent, and on the right code finishes what it is for. The page only queues the message and wakes the
/// drainer (`MailDrainer.kick`), so a relay that is slow or down never holds it.
struct EmailCodeFlow: Sendable {
    let context: ServerContext

    private var codes: EmailCodes {
        EmailCodes(store: context.accounts.emailCodes, secrets: context.secrets, sealer: context.codeSealer)
    }
    private var flows: any EmailFlowStore { context.accounts.emailFlows }
    private var now: Date { context.clock.now() }

    static let expiredFlowMessage = "This page has expired or was opened in another browser. Start again from the sign-in page."

    /// The CSRF token of a flow's forms: HMAC of the flow id under this browser's binding secret.
    static func csrf(binding: String, flowID: String) -> String {
        AccountForms.csrf(secret: binding, label: "email-code:\(flowID)")
    }

    /// The flow a request names, when it belongs to this browser, with the browser's binding.
    private func load(_ id: String?, _ request: HTTPRequest) throws -> (flow: EmailCodeFlowRecord, binding: String)? {
        guard let id, let binding = try BrowserBinding(context: context).onRecord(request),
            let flow = try codes.flow(id: id, bindingHash: Crypto.hexSHA256(binding))
        else { return nil }
        return (flow, binding)
    }

    private func loadPosted(_ form: [String: String], _ request: HTTPRequest) throws -> (flow: EmailCodeFlowRecord, binding: String)? {
        guard let loaded = try load(form["flow"], request),
            AccountForms.csrfMatches(form["csrf"], Self.csrf(binding: loaded.binding, flowID: loaded.flow.id))
        else { return nil }
        return loaded
    }

    /// Counts a code request against the client address's password limit (docs/protocol.md#rate-limits).
    /// - Returns: the seconds to wait when over it.
    private func overAddressLimit(_ request: HTTPRequest) throws -> Int? {
        let client = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try RateLimiter(context: context).hit(.passwordPerAddress, key: client) { return seconds }
        return nil
    }

    private func codePage(
        _ flowID: String, binding: String, purpose: EmailCodePurpose, error: String? = nil, codeError: Bool = true,
        notice: String? = nil, status: Int = 200
    )
        -> HTTPResponse
    {
        // A code that ends in a browser session may be followed by the passkey offer, so its form carries the
        // field the passkey script sets (docs/passkeys.md, "The offer").
        let offersPasskey = purpose == .signUp || purpose == .verifyEmail
        return EmailCodePages.code(
            flowID: flowID, csrf: Self.csrf(binding: binding, flowID: flowID), purpose: purpose, error: error, codeError: codeError,
            notice: notice, status: status,
            passkeys: offersPasskey ? PasskeyPageContext(csrf: PasskeyHandlers.csrf(binding: binding), requestID: nil) : nil)
    }

    // MARK: Sign-up

    /// Continues `POST /account/signup` once its fields are parsed and counted: the account (or none),
    /// the code, and the code page, the same in every case.
    func signUp(
        email: EmailAddress, name: DisplayName, password: NewPassword, binding: String, requestID: String?
    ) throws -> HTTPResponse {
        let signUp = SignUpWithCode(store: flows, codes: codes, passwords: context.accountPasswords, notices: context.accounts.notices)
        let flowID = try signUp(
            email: email, name: name, password: password, bindingHash: Crypto.hexSHA256(binding), authorizationRequestID: requestID,
            now: now)
        context.mail.kick()
        return codePage(flowID, binding: binding, purpose: .signUp)
    }

    // MARK: The code page

    /// `GET /account/code?flow=…`.
    func page(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let (flow, binding) = try load(AccountForms.query(request, "flow"), request) else {
            return EmailCodePages.over(Self.expiredFlowMessage)
        }
        let notice = AccountForms.query(request, "sent") == "1" ? "We sent a new code. Earlier codes no longer work." : nil
        return codePage(flow.id, binding: binding, purpose: flow.purpose, notice: notice)
    }

    /// `POST /account/code/resend` (form: `flow`, `csrf`): a new flow with a new code replacing the old one.
    func resend(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let (flow, binding) = try loadPosted(form, request) else { return EmailCodePages.over(Self.expiredFlowMessage) }
        if let seconds = try overAddressLimit(request) {
            var response = codePage(
                flow.id, binding: binding, purpose: flow.purpose, error: RateLimiter.pageMessage(retryAfterSeconds: seconds),
                codeError: false, status: 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        }
        // The account the flow was asked for, sent or not: the limits decide from its codes in the window now.
        let issued = try codes.issue(
            EmailCodes.Request(
                userID: flow.requestedUserID, purpose: flow.purpose, browserBindingHash: flow.browserBindingHash,
                authorizationRequestID: flow.authorizationRequestID, passwordHash: flow.passwordHash, newEmail: flow.newEmail,
                newEmailKey: flow.newEmailKey), now: now)
        context.mail.kick()
        return Wire.seeOther("/account/code?flow=\(issued.flowID)&sent=1")
    }

    /// `POST /account/code` (form: `flow`, `csrf`, `code`): the attempt, counted atomically; the right code
    /// finishes the flow's purpose.
    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let (flow, binding) = try loadPosted(form, request) else { return EmailCodePages.over(Self.expiredFlowMessage) }
        let again = { (message: String, status: Int) in
            codePage(flow.id, binding: binding, purpose: flow.purpose, error: message, status: status)
        }
        switch try codes.enter(flow: flow, typed: form["code"] ?? "", now: now) {
        case .wrong(let left):
            return again("That code is not right. You have \(left) \(left == 1 ? "try" : "tries") left.", 400)
        case .exhausted:
            return again(
                "That code was entered wrongly too many times and no longer works. Select “Send a new code” to get a new one.", 400)
        case .expired:
            return again("That code has expired. Select “Send a new code” to get a new one.", 400)
        case .locked:
            return again("Too many wrong codes were entered for this account. Code entry is locked for 24 hours.", 429)
        case .unknown:
            return EmailCodePages.over(Self.expiredFlowMessage)
        case .accepted(let accepted):
            return try finish(accepted, binding: binding, form: form, request)
        }
    }

    /// What the right code leads to, by purpose. `form` is the code form, whose `passkey_capable` decides the
    /// passkey offer after a sign-up or a sign-in.
    private func finish(
        _ flow: EmailCodeFlowRecord, binding: String, form: [String: String], _ request: HTTPRequest
    ) throws -> HTTPResponse {
        guard let userID = flow.userID else { return EmailCodePages.over(Self.expiredFlowMessage) }
        switch flow.purpose {
        case .signUp:
            guard let hash = flow.passwordHash else { return EmailCodePages.over(Self.expiredFlowMessage) }
            let token = try context.secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
            guard
                let sessionID = try flows.completeSignUp(
                    flowID: flow.id, userID: userID, passwordHash: hash, browserSessionTokenHash: Crypto.hexSHA256(token), now: now)
            else { return EmailCodePages.over(Self.expiredFlowMessage) }
            context.metrics.signIn(.password, .ok)
            return try signedIn(
                token: token, sessionID: sessionID, userID: userID, requestID: flow.authorizationRequestID, binding: binding, form: form,
                request)
        case .verifyEmail:
            guard try flows.completeVerification(flowID: flow.id, userID: userID, now: now),
                let user = try context.roundTrip.pendingSignIns.user(id: userID)
            else { return EmailCodePages.over(Self.expiredFlowMessage) }
            return try continueSignIn(user: user, requestID: flow.authorizationRequestID, binding: binding, form: form, request)
        case .passwordReset:
            let csrf = Self.csrf(binding: binding, flowID: flow.id)
            if try needsSecondFactor(flow) { return EmailCodePages.resetSecondFactor(flowID: flow.id, csrf: csrf, error: nil) }
            return EmailCodePages.newPassword(flowID: flow.id, csrf: csrf, error: nil)
        case .changeEmail:
            switch try flows.completeEmailChange(flowID: flow.id, userID: userID, now: now) {
            case .changed:
                try PersonalActivity(context: context).record("email.change", userID: userID, request)
                return Wire.seeOther("/account?done=email")
            case .taken: return Wire.seeOther("/account?done=email_taken")
            case .over: return EmailCodePages.over(Self.expiredFlowMessage)
            }
        }
    }

    /// A browser session now exists for this browser: a fresh binding (session fixation), the pending app
    /// sign-in moved to it, then the passkey offer when the code form says the device can hold one
    /// (docs/passkeys.md, "The offer"), else consent (or the account page).
    private func signedIn(
        token: String, sessionID: String, userID: String, requestID: String?, binding: String, form: [String: String],
        _ request: HTTPRequest
    ) throws -> HTTPResponse {
        let fresh = try BrowserBinding(context: context).mint()
        let cookies = [
            context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds), fresh.setCookie,
            KnownBrowsers(context: context).remember(userID: userID, request),
        ]
        var continued: String?
        if let requestID, try pendingSignInIsLive(requestID, binding: binding) {
            try context.roundTrip.pendingSignIns.rebindAuthorizationRequest(
                requestID: requestID, browserBindingHash: Crypto.hexSHA256(fresh.value), browserSessionID: sessionID)
            continued = requestID
        }
        let next = try PasskeyHandlers(context: context).nextAfterPassword(userID: userID, requestID: continued, form: form)
        return Wire.seeOther(next, cookies: cookies)
    }

    private func pendingSignInIsLive(_ requestID: String, binding: String) throws -> Bool {
        if case .live = try LoadPendingSignIn(store: context.roundTrip.pendingSignIns, secrets: context.secrets).load(
            id: requestID, binding: binding, now: now)
        {
            return true
        }
        return false
    }

    /// After a verified address: the rest of a password sign-in (the second factor when enrolled, else the
    /// passkey offer or straight on, as after a password).
    private func continueSignIn(
        user: UserRecord, requestID: String?, binding: String, form: [String: String], _ request: HTTPRequest
    ) throws -> HTTPResponse {
        let live = try requestID.map { try pendingSignInIsLive($0, binding: binding) } ?? false
        let fresh = try BrowserBinding(context: context).mint()
        let freshHash = Crypto.hexSHA256(fresh.value)
        let signIn = BrowserSignIn(store: context.accounts.browserSignIn, secrets: context.secrets)
        switch try signIn(user: user, binding: fresh.value, authorizationRequestID: live ? requestID : nil, now: now) {
        case .secondFactor(let challenge):
            if live, let requestID {
                try context.roundTrip.pendingSignIns.rebindAuthorizationRequest(
                    requestID: requestID, browserBindingHash: freshHash, browserSessionID: nil)
            }
            return Wire.seeOther("\(MFAFlow.path)?challenge=\(challenge)", cookies: [fresh.setCookie])
        case .signedIn(let token, let sessionID):
            let cookies = [context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds), fresh.setCookie]
            if live, let requestID {
                try context.roundTrip.pendingSignIns.rebindAuthorizationRequest(
                    requestID: requestID, browserBindingHash: freshHash, browserSessionID: sessionID)
            }
            let next = try PasskeyHandlers(context: context).nextAfterPassword(
                userID: user.id, requestID: live ? requestID : nil, form: form)
            return Wire.seeOther(next, cookies: cookies)
        }
    }

    // MARK: Verification at sign-in

    /// A sign-in whose environment sets `requireVerifiedEmail`, after a correct password of an unverified
    /// account: a code to the stored address, then the rest of the sign-in.
    func startVerification(user: UserRecord, requestID: String?, request: HTTPRequest) throws -> HTTPResponse {
        let (binding, cookies) = try BrowserBinding(context: context).adoptOrMint(request)
        let issued = try codes.issue(
            EmailCodes.Request(
                userID: user.id, purpose: .verifyEmail, browserBindingHash: Crypto.hexSHA256(binding), authorizationRequestID: requestID),
            now: now)
        context.mail.kick()
        var response = codePage(issued.flowID, binding: binding, purpose: .verifyEmail)
        for cookie in cookies { response.headers.add("Set-Cookie", cookie) }
        return response
    }

    // MARK: Password reset

    private func needsSecondFactor(_ flow: EmailCodeFlowRecord) throws -> Bool {
        guard let userID = flow.userID, flow.secondFactorAt == nil else { return false }
        return try context.accounts.browserSignIn.totpFactor(userID: userID)?.confirmed == true
    }

    private static func formCSRF(binding: String) -> String {
        AccountForms.csrf(secret: binding, label: "account-form:reset")
    }

    /// `GET /account/reset[?request=…]`: "Forgot password?".
    func forgotPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let (binding, cookies) = try BrowserBinding(context: context).adoptOrMint(request)
        return EmailCodePages.forgot(
            csrf: Self.formCSRF(binding: binding), requestID: AccountHandlers.pendingRequestID(AccountForms.query(request, "request")),
            email: nil, error: nil, cookies: cookies)
    }

    /// `POST /account/reset` (form: `csrf`, `email`, optional `request`): the same code page whether or not
    /// the address has an account; a code goes only to the stored address of an open account.
    func forgot(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let binding = try BrowserBinding(context: context).onRecord(request),
            AccountForms.csrfMatches(form["csrf"], Self.formCSRF(binding: binding))
        else { return AccountForms.expiredForm }
        let requestID = AccountHandlers.pendingRequestID(form["request"])
        let typed = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        if let seconds = try overAddressLimit(request) {
            var response = EmailCodePages.forgot(
                csrf: form["csrf"] ?? "", requestID: requestID, email: typed, error: RateLimiter.pageMessage(retryAfterSeconds: seconds),
                status: 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        }
        guard let email = EmailAddress(typed) else {
            return EmailCodePages.forgot(
                csrf: form["csrf"] ?? "", requestID: requestID, email: typed, error: SignInFlow.invalidEmailMessage, invalidEmail: true,
                status: 400)
        }
        let user = try context.accounts.signIn.user(emailKey: email.key)
        let issued = try codes.issue(
            EmailCodes.Request(
                userID: user.flatMap { $0.closed ? nil : $0.id }, purpose: .passwordReset, browserBindingHash: Crypto.hexSHA256(binding),
                authorizationRequestID: requestID), now: now)
        context.mail.kick()
        return codePage(issued.flowID, binding: binding, purpose: .passwordReset)
    }

    /// `POST /account/reset/second-factor` (form: `flow`, `csrf`, `code`): the TOTP or a recovery code
    /// of an account with MFA, after the emailed code; never skipped.
    func resetSecondFactor(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let (flow, binding) = try loadPosted(form, request), flow.codeAccepted(now: now), let userID = flow.userID else {
            return EmailCodePages.over(Self.expiredFlowMessage)
        }
        let csrf = Self.csrf(binding: binding, flowID: flow.id)
        switch try AccountSecurity(context: context).verifySecondFactor(userID: userID, input: form["code"] ?? "") {
        case .limited(let seconds):
            var response = EmailCodePages.resetSecondFactor(
                flowID: flow.id, csrf: csrf, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        case .unavailable:
            return EmailCodePages.resetSecondFactor(
                flowID: flow.id, csrf: csrf, error: "Two-step verification is not available right now. Try again later.", status: 503)
        case .rejected:
            return EmailCodePages.resetSecondFactor(
                flowID: flow.id, csrf: csrf,
                error: "That code is not right. Enter the current code from your app, or an unused recovery code.",
                invalid: true, status: 401)
        case .accepted:
            try flows.recordSecondFactor(flowID: flow.id, now: now)
            return EmailCodePages.newPassword(flowID: flow.id, csrf: csrf, error: nil)
        }
    }

    /// `POST /account/reset/password` (form: `flow`, `csrf`, `new_password`): the new password ends every
    /// session of the account, then signs this browser in.
    func resetPassword(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let (flow, binding) = try loadPosted(form, request), flow.codeAccepted(now: now), let userID = flow.userID else {
            return EmailCodePages.over(Self.expiredFlowMessage)
        }
        let csrf = Self.csrf(binding: binding, flowID: flow.id)
        if try needsSecondFactor(flow) { return EmailCodePages.resetSecondFactor(flowID: flow.id, csrf: csrf, error: nil) }
        let password: NewPassword
        switch NewPassword.parse(form["new_password"] ?? "") {
        case .failure(let problem):
            return EmailCodePages.newPassword(flowID: flow.id, csrf: csrf, error: "The new password \(problem.explanation).", status: 400)
        case .success(let value): password = value
        }
        let hash = try context.accountPasswords.hash(password.text)
        let token = try context.secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        guard
            let sessionID = try flows.completeReset(
                flowID: flow.id, userID: userID, passwordHash: hash, browserSessionTokenHash: Crypto.hexSHA256(token), now: now)
        else { return EmailCodePages.over(Self.expiredFlowMessage) }
        context.mail.kick()
        try PersonalActivity(context: context).record("password.reset", userID: userID, request)
        return try signedIn(
            token: token, sessionID: sessionID, userID: userID, requestID: flow.authorizationRequestID, binding: binding, form: form,
            request)
    }

    // MARK: Changing the address

    /// `POST /account/email` (signed in; form: `new_email`): a code to the new address and a notice to the
    /// old one; the address changes only when the code is entered.
    func startEmailChange(user: UserRecord, newEmail typed: String, request: HTTPRequest) throws -> HTTPResponse? {
        guard let email = EmailAddress(typed.trimmingCharacters(in: .whitespaces)) else { return nil }
        let (binding, cookies) = try BrowserBinding(context: context).adoptOrMint(request)
        if let seconds = try overAddressLimit(request) {
            return EmailCodePages.over(RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429)
        }
        let issued = try codes.issue(
            EmailCodes.Request(
                userID: user.id, purpose: .changeEmail, browserBindingHash: Crypto.hexSHA256(binding), newEmail: email.typed,
                newEmailKey: email.key), now: now)
        if issued.sent { try context.accounts.notices.queue(.emailChangeRequested, userID: user.id, now: now) }
        context.mail.kick()
        var response = codePage(issued.flowID, binding: binding, purpose: .changeEmail)
        for cookie in cookies { response.headers.add("Set-Cookie", cookie) }
        return response
    }
}
