import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PostgresStore

/// The hosted account area under `/account` (docs/protocol.md#accounts, docs/protocol.md#session-ends):
/// sign-up without account enumeration, sign-in that reuses the ZevID browser session, and the account page
/// whose actions end sessions at once.
struct AccountHandlers: Sendable {
    let context: ServerContext
    private var store: PostgresStore { context.store }
    private var security: AccountSecurity { AccountSecurity(context: context) }

    // MARK: Signed-out forms (CSRF under the browser binding cookie)

    /// The browser binding secret when the server minted it and has it on record, else a fresh one with
    /// its cookie.
    private func binding(_ request: HTTPRequest) throws -> (value: String, cookies: [String]) {
        let adopted = try BrowserBinding(context: context).adoptOrMint(request)
        return (adopted.value, adopted.setCookies)
    }

    private static func formCSRF(binding: String, form: String) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: Array(binding.utf8), message: Array("account-form:\(form)".utf8)))
    }

    /// The CSRF check of a signed-out form: the token must be the HMAC under this browser's binding cookie.
    private func signedOutCSRFMatches(_ request: HTTPRequest, _ form: [String: String], name: String) throws -> Bool {
        guard let binding = try BrowserBinding(context: context).onRecord(request) else { return false }
        return AccountForms.csrfMatches(form["csrf"], Self.formCSRF(binding: binding, form: name))
    }

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
        let again = { (problem: String, status: Int) -> HTTPResponse in
            AccountPages.signUp(
                csrf: form["csrf"] ?? "", requestID: requestID, email: email, name: name, error: problem, status: status)
        }
        let address = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try RateLimiter(context: context).hit(.passwordPerAddress, key: address) {
            var response = again(RateLimiter.pageMessage(retryAfterSeconds: seconds), 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        }
        guard let address = EmailAddress(email) else { return again("Enter a valid email address.", 400) }
        guard DisplayName(name) != nil else {
            return again("Enter your name: up to 200 characters, without control or text-direction characters.", 400)
        }
        if let problem = AccountRules.passwordProblem(password) { return again("The password \(problem).", 400) }
        let hash = try context.passwordHasher.hash(password)
        do {
            _ = try store.createUser(
                email: address.typed, emailNormalized: address.key, name: name, passwordHash: hash, now: context.clock.now())
        } catch StoreError.duplicate {
            // The address has an account: answer exactly as for a new one.
        }
        let continueTo = requestID.map { "/v1/auth/zevid/signin?request=\($0)" } ?? "/account/signin"
        return AccountPages.signedUp(email: email, continueTo: continueTo)
    }

    // MARK: Sign-in to the account area

    /// `GET /account/signin`: the form, or the account page when this browser is signed in.
    func signInPage(_ request: HTTPRequest) throws -> HTTPResponse {
        if try current(request) != nil { return Wire.seeOther("/account") }
        let (binding, cookies) = try binding(request)
        let notice = AccountForms.query(request, "signed_out") == "1" ? "You're signed out." : nil
        return AccountPages.signIn(
            csrf: Self.formCSRF(binding: binding, form: "signin"), email: nil, error: nil, notice: notice, cookies: cookies)
    }

    /// `POST /account/signin` (form: `csrf`, `email`, `password`): the same rate-limited password check as
    /// the app sign-in, then the second factor when enrolled, then a ZevID browser session.
    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard try signedOutCSRFMatches(request, form, name: "signin") else { return AccountForms.expiredForm }
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let user: UserRecord
        switch try security.checkPassword(email: email, password: form["password"] ?? "", request: request) {
        case .limited(let seconds):
            context.metrics.signIn(.password, .rateLimited)
            var response = AccountPages.signIn(
                csrf: form["csrf"] ?? "", email: email, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429)
            response.headers.set("Retry-After", String(seconds))
            return response
        case .wrong:
            context.metrics.signIn(.password, .invalidCredentials)
            return AccountPages.signIn(csrf: form["csrf"] ?? "", email: email, error: SignInFlow.genericCredentialsMessage, status: 401)
        case .invalidEmail:
            context.metrics.signIn(.password, .invalidRequest)
            return AccountPages.signIn(csrf: form["csrf"] ?? "", email: email, error: SignInFlow.invalidEmailMessage, status: 400)
        case .ok(let found):
            user = found
        }
        let now = context.clock.now()
        // The person authenticated: a fresh binding id replaces the one this browser held (session fixation).
        let fresh = try BrowserBinding(context: context).mint()
        if try store.totpFactor(userID: user.id)?.confirmed == true {
            let challenge = try store.createMFAChallenge(
                userID: user.id, browserBindingHash: Crypto.hexSHA256(fresh.value), authorizationRequestID: nil, now: now,
                lifetimeSeconds: AccountSecurity.mfaChallengeLifetimeSeconds)
            context.metrics.signIn(.password, .mfaRequired)
            return Wire.seeOther("\(MFAFlow.path)?challenge=\(challenge)", cookies: [fresh.setCookie])
        }
        let token = try Crypto.mintToken(prefix: "zbs_")
        _ = try store.createBrowserSession(tokenHash: Crypto.hexSHA256(token), userID: user.id, now: now)
        context.metrics.signIn(.password, .ok)
        return Wire.seeOther("/account", cookies: [sessionCookie(token), fresh.setCookie])
    }

    // MARK: Signed in

    /// The signed-in browser: its session, account, cookie value and the CSRF token of its forms.
    struct Current {
        let session: BrowserSessionRecord
        let user: UserRecord
        let token: String
        var csrf: String { AccountHandlers.sessionCSRF(token) }
    }

    /// CSRF of signed-in forms: HMAC of a label under the browser session's own secret (an HttpOnly cookie).
    static func sessionCSRF(_ token: String) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: Array(token.utf8), message: Array("account-csrf".utf8)))
    }

    private func current(_ request: HTTPRequest) throws -> Current? {
        guard let token = context.cookie(.session, in: request),
            let session = try store.browserSession(tokenHash: Crypto.hexSHA256(token)),
            let user = try store.user(id: session.userID), !user.closed
        else { return nil }
        return Current(session: session, user: user, token: token)
    }

    private func sessionCookie(_ token: String) -> String {
        context.setCookie(.session, token, maxAge: 90 * 86_400)
    }

    private var clearedSessionCookie: String {
        context.setCookie(.session, "", maxAge: 0)
    }

    private func accountPage(_ current: Current, notice: String? = nil, error: String? = nil, status: Int = 200) throws -> HTTPResponse {
        let factor = try store.totpFactor(userID: current.user.id)
        let enabled = factor?.confirmed == true
        return AccountPages.account(
            user: current.user, csrf: current.csrf, apps: try store.connectedApps(userID: current.user.id), totpEnabled: enabled,
            recoveryCodesLeft: enabled ? try store.unusedRecoveryCodes(userID: current.user.id) : 0, notice: notice, error: error,
            status: status)
    }

    /// Runs a signed-in form: the browser session and the CSRF token must both check out.
    private func signedInForm(_ request: HTTPRequest, _ body: (Current, [String: String]) throws -> HTTPResponse) throws -> HTTPResponse {
        guard let current = try current(request) else { return Wire.seeOther("/account/signin") }
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard AccountForms.csrfMatches(form["csrf"], current.csrf) else { return AccountForms.expiredForm }
        return try body(current, form)
    }

    /// `GET /account`: the account page, or the sign-in form.
    func accountPage(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let current = try current(request) else { return Wire.seeOther("/account/signin") }
        let notices = [
            "removed": "The app was removed and signed out.",
            "password": "Your password was changed. Other browsers and apps are signed out.",
        ]
        return try accountPage(current, notice: AccountForms.query(request, "done").flatMap { notices[$0] })
    }

    /// `POST /account/apps/remove` (form: `csrf`, `environment`): ends the person's sessions in that
    /// environment and forgets the consent.
    func removeApp(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            _ = try store.removeApp(userID: current.user.id, environmentID: form["environment"] ?? "", now: context.clock.now())
            return Wire.seeOther("/account?done=removed")
        }
    }

    /// `POST /account/signout`: ends this ZevID browser session and only the app sessions made from it.
    func signOut(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            _ = try store.endBrowserSession(id: current.session.id, now: context.clock.now())
            return Wire.seeOther("/account/signin?signed_out=1", cookies: [clearedSessionCookie])
        }
    }

    /// `POST /account/signout-everywhere`: every browser session and every app session of the person.
    func signOutEverywhere(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            try store.signOutEverywhere(userID: current.user.id, now: context.clock.now())
            return Wire.seeOther("/account/signin?signed_out=1", cookies: [clearedSessionCookie])
        }
    }

    /// `POST /account/password` (form: `csrf`, `current_password`, `new_password`): needs the current
    /// password (rate-limited like a sign-in); ends every session, then starts a fresh browser session here.
    func changePassword(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            switch try security.checkPassword(
                email: current.user.email, password: form["current_password"] ?? "", request: request, account: current.user.id)
            {
            case .limited(let seconds):
                var response = try accountPage(current, error: RateLimiter.pageMessage(retryAfterSeconds: seconds), status: 429)
                response.headers.set("Retry-After", String(seconds))
                return response
            case .wrong, .invalidEmail:
                return try accountPage(current, error: "The current password is incorrect.", status: 401)
            case .ok:
                break
            }
            let new = form["new_password"] ?? ""
            if let problem = AccountRules.passwordProblem(new) {
                return try accountPage(current, error: "The new password \(problem).", status: 400)
            }
            let token = try Crypto.mintToken(prefix: "zbs_")
            _ = try store.changePassword(
                userID: current.user.id, passwordHash: try context.passwordHasher.hash(new),
                newBrowserSessionTokenHash: Crypto.hexSHA256(token), now: context.clock.now())
            return Wire.seeOther("/account?done=password", cookies: [sessionCookie(token)])
        }
    }

    // MARK: TOTP enrolment

    private static let noKeyMessage =
        "Two-step verification is not available on this server: it has no encryption key (ZEVAUTH_ENCRYPTION_KEY) to protect the secret."

    /// `POST /account/totp/start`: a new secret (20 bytes, RFC 4226 §4's recommended length), sealed at
    /// rest, shown as an `otpauth://` link and as text; it becomes active only after a correct code.
    func startTOTP(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, _ in
            guard let key = context.configuration.encryptionKey else {
                return try accountPage(current, error: Self.noKeyMessage, status: 503)
            }
            let secret = try Crypto.randomBytes(20)
            let sealed = try AccountSecurity.seal(secret: secret, userID: current.user.id, key: key)
            guard try store.beginTOTPEnrolment(userID: current.user.id, secretSealed: sealed, now: context.clock.now()) else {
                return Wire.seeOther("/account")
            }
            return AccountPages.enrolTOTP(
                csrf: current.csrf, uri: AccountSecurity.otpauthURI(email: current.user.email, secret: secret),
                secretBase32: Base32.encode(secret), error: nil)
        }
    }

    /// `POST /account/totp/confirm` (form: `csrf`, `code`): a correct code activates the factor (its step
    /// counts as used) and shows ten new recovery codes once.
    func confirmTOTP(_ request: HTTPRequest) throws -> HTTPResponse {
        try signedInForm(request) { current, form in
            guard let key = context.configuration.encryptionKey else {
                return try accountPage(current, error: Self.noKeyMessage, status: 503)
            }
            guard let factor = try store.totpFactor(userID: current.user.id), !factor.confirmed,
                let secret = try? AccountSecurity.open(sealed: factor.secretSealed, userID: current.user.id, key: key)
            else { return Wire.seeOther("/account") }
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
            let code = (form["code"] ?? "").filter { $0 != " " }
            guard let step = TOTP.matchingStep(secret: secret, code: code, atUnixSeconds: context.clock.now().timeIntervalSince1970) else {
                return again("That code is not right. Check the app and enter the code it shows now.", 400)
            }
            let codes = try AccountSecurity.newRecoveryCodes()
            let hashes = codes.map { Crypto.hexSHA256(AccountSecurity.canonicalRecoveryCode($0) ?? $0) }
            guard try store.confirmTOTP(userID: current.user.id, step: step, recoveryCodeHashes: hashes, now: context.clock.now()) else {
                return Wire.seeOther("/account")
            }
            return AccountPages.recoveryCodes(codes)
        }
    }

    // MARK: Operator

    /// `POST /v1/admin/users/{id}/close` (operator token): closes the account and ends every session.
    /// 200 `{"id","email","name","closedAt"}`, the same on a repeat (idempotent); 404 `not_found` for an unknown id.
    func closeUser(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        switch try AdminHandlers(context: context).actor(request) {
        case .none: return AdminHandlers.invalidToken
        case .environment: return Wire.error(.forbidden, "Only the operator token may close accounts.")
        case .operator: break
        }
        guard let (user, closedAt) = try store.closeUser(id: id, now: context.clock.now()) else {
            return Wire.error(.notFound, "No account has this id.")
        }
        return Wire.anyJSON(status: 200, ["id": user.id, "email": user.email, "name": user.name, "closedAt": Wire.timestamp(closedAt)])
    }
}
