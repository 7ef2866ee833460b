import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The second step of a sign-in (docs/protocol.md#round-trip: then TOTP when enrolled):
/// after a correct password, an enrolled account gives a TOTP or recovery code before any browser session
/// is created. The challenge is bound to the browser (its binding cookie) and, for an app sign-in, to the
/// pending sign-in; `MFAChallenge` decides whether it may be used.
struct MFAFlow: Sendable {
    let context: ServerContext

    static let path = "/v1/auth/zevid/mfa"

    struct Loaded {
        let challenge: MFAChallengeRecord
        let csrf: String
    }

    private var challenges: MFAChallenge { MFAChallenge(store: context.accounts.mfaChallenges, secrets: context.secrets) }

    /// Loads a live challenge that belongs to this browser, or the page to answer instead.
    private func load(_ id: String?, _ request: HTTPRequest) throws -> Result<Loaded, Stop> {
        let binding = context.cookie(.binding, in: request)
        switch try challenges.load(id: id, binding: binding, now: context.clock.now()) {
        case .failure(.unknown):
            return .failure(Stop(Pages.error(status: 400, PersonFacingErrors.linkNotValid, code: "invalid_request")))
        case .failure(.over):
            return .failure(Stop(Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")))
        case .failure(.otherBrowser):
            return .failure(Stop(Pages.error(status: 400, PersonFacingErrors.otherBrowser, code: "invalid_request")))
        case .success(let challenge):
            // `load` succeeded, so the browser sent its binding cookie.
            let csrf = AccountForms.csrf(secret: binding ?? "", label: "mfa:\(challenge.id)")
            return .success(Loaded(challenge: challenge, csrf: csrf))
        }
    }

    struct Stop: Error {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    /// `GET /v1/auth/zevid/mfa?challenge=…`: the code form.
    func page(_ request: HTTPRequest) throws -> HTTPResponse {
        switch try load(AccountForms.query(request, "challenge"), request) {
        case .failure(let stop): return stop.response
        case .success(let loaded): return AccountPages.mfa(challengeID: loaded.challenge.id, csrf: loaded.csrf, error: nil)
        }
    }

    /// `POST /v1/auth/zevid/mfa` (form: `challenge`, `csrf`, `code`): a TOTP code or a recovery code,
    /// counted against the account's MFA limit. Success starts the browser session and continues to
    /// consent (app sign-in) or the account page.
    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        let loaded: Loaded
        switch try load(form["challenge"], request) {
        case .failure(let stop): return stop.response
        case .success(let value): loaded = value
        }
        guard AccountForms.csrfMatches(form["csrf"], loaded.csrf) else { return AccountForms.expiredForm }
        let page = { (message: String, status: Int, invalid: Bool) in
            AccountPages.mfa(challengeID: loaded.challenge.id, csrf: loaded.csrf, error: message, invalid: invalid, status: status)
        }
        switch try AccountSecurity(context: context).verifySecondFactor(userID: loaded.challenge.userID, input: form["code"] ?? "") {
        case .limited(let seconds):
            context.metrics.signIn(.secondFactor, .rateLimited)
            var response = page(RateLimiter.pageMessage(retryAfterSeconds: seconds), 429, false)
            response.headers.set("Retry-After", String(seconds))
            return response
        case .unavailable:
            context.metrics.signIn(.secondFactor, .unavailable)
            return page("Two-step verification is not available right now. Try again later, or use a recovery code.", 503, false)
        case .rejected:
            context.metrics.signIn(.secondFactor, .invalidCredentials)
            return page("That code is not right. Enter the current code from your app, or an unused recovery code.", 401, true)
        case .accepted:
            break
        }
        let methods = AuthenticationMethods(secondFactor: SecondFactorCode(form["code"] ?? ""), federated: loaded.challenge.federated)
        guard let completed = try challenges.complete(loaded.challenge, methods: methods, now: context.clock.now()) else {
            return Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")
        }
        let cookie = context.setCookie(.session, completed.token, maxAge: AccountRules.browserSessionCookieSeconds)
        context.metrics.signIn(.secondFactor, .ok)
        try PersonalActivity(context: context).record(
            loaded.challenge.federated ? "signin.upstream_second_factor" : "signin.second_factor", userID: loaded.challenge.userID, request)
        if let requestID = completed.authorizationRequestID {
            return Wire.seeOther("/v1/auth/zevid/consent?request=\(requestID)", cookies: [cookie])
        }
        return Wire.seeOther("/account", cookies: [cookie])
    }
}

/// Form plumbing shared by the account pages and the MFA step.
enum AccountForms {
    /// Every field of an `application/x-www-form-urlencoded` body, first value of each name; nil when the
    /// body does not decode (a bad `%` escape, invalid UTF-8, or a U+0000 that no field accepts), which the
    /// page answers with `unreadableForm`.
    static func fields(_ request: HTTPRequest) -> [String: String]? {
        guard let pairs = try? FormURLEncoding.decode(bytes: request.body) else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in pairs where fields[name] == nil {
            fields[name] = value
        }
        return fields
    }

    /// The answer to a form body that does not decode (`fields(_:)` nil): 400 `invalid_request`.
    static var unreadableForm: HTTPResponse {
        Pages.error(status: 400, PersonFacingErrors.unreadableForm, code: "invalid_request")
    }

    /// One query parameter's decoded value.
    static func query(_ request: HTTPRequest, _ name: String) -> String? {
        (try? FormURLEncoding.decode(request.rawQuery ?? ""))?.first { $0.name == name }?.value
    }

    /// The one CSRF token formula of the hosted forms: base64url of HMAC-SHA256 of `label` under `secret`,
    /// a value only this browser holds in an HttpOnly cookie (its binding secret, or its ZevID session
    /// token), so a cross-site form cannot know it. Each form names its own label (`csrf:<pending id>`,
    /// `account-form:signin`, `email-code:<flow id>`, …), so one form's token never fits another.
    static func csrf(secret: String, label: String) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array(label.utf8)))
    }

    /// Constant-time comparison of a submitted CSRF token with the expected one.
    static func csrfMatches(_ submitted: String?, _ expected: String) -> Bool {
        guard let submitted else { return false }
        return Crypto.constantTimeEquals(Array(submitted.utf8), Array(expected.utf8))
    }

    static var expiredForm: HTTPResponse {
        Pages.error(status: 403, PersonFacingErrors.formExpired, code: "invalid_request")
    }
}
