import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import IDNA

/// "Continue with Apple", "Continue with Google", "Continue with NAME" on the hosted sign-in pages
/// (docs/federation.md, "Hosted sign-in"): the start, the callback (GET, and Apple's cross-site form_post),
/// the link confirmation, and unlinking on `/account`.
///
/// The trip to the provider is authorization code + PKCE (S256) + `state` + `nonce`. Its flow (sql/025)
/// belongs to the browser's binding cookie and lives 10 minutes; the callback consumes it once. The account
/// rules are `ResolveUpstreamAccount`'s; an upstream sign-in then continues the pending sign-in exactly as a
/// password does: TOTP when enrolled, a fresh binding, the pending sign-in rebound to it, consent.
struct UpstreamHandlers: Sendable {
    let context: ServerContext

    static let startPath = "/oauth2/upstream/start"
    static let callbackPath = "/oauth2/upstream/callback"
    static let linkPath = "/oauth2/upstream/link"
    static let unlinkPath = "/account/upstream/unlink"
    /// A flow and a link confirmation each live 10 minutes.
    static let lifetimeSeconds: Double = 600
    /// The longest `state` or `code` the callback reads (longer ones are no flow's).
    static let maxParameterBytes = 2048

    private var store: any UpstreamSignInStores { context.accounts.upstream }
    private var now: Date { context.clock.now() }
    /// `ISSUER/oauth2/upstream/callback`, the redirect URI registered at every provider.
    var redirectURI: String { context.configuration.issuer + Self.callbackPath }

    /// The `csrf` of the "Continue with NAME" forms under a browser binding secret.
    static func csrf(binding: String) -> String {
        AccountForms.csrf(secret: binding, label: "account-form:upstream")
    }

    // MARK: The buttons

    /// The buttons a sign-in page shows: a pending sign-in's project's providers in its order, or on the
    /// account area's own sign-in page every provider of the deployment (the account is the deployment's,
    /// not a project's). Apple's button comes first (its rules ask for at least equal prominence).
    func buttons(projectID: String?, binding: String, requestID: String?) throws -> UpstreamButtons? {
        let providers = try projectID.map { try store.shownProviders(projectID: $0) } ?? store.allProviders()
        guard !providers.isEmpty else { return nil }
        let ordered = providers.filter { $0.kind == .apple } + providers.filter { $0.kind != .apple }
        return UpstreamButtons(
            providers: ordered.map { ($0.slug, $0.displayName, $0.kind) }, csrf: Self.csrf(binding: binding), requestID: requestID)
    }

    // MARK: Start

    /// `POST /oauth2/upstream/start` (form: `csrf`, `provider` (a slug), `request` (optional)): records the
    /// flow and answers 303 to the provider's authorization endpoint.
    func start(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let binding = try BrowserBinding(context: context).onRecord(request),
            AccountForms.csrfMatches(form["csrf"], Self.csrf(binding: binding))
        else { return AccountForms.expiredForm }
        let requestID = AccountHandlers.pendingRequestID(form["request"])
        var allowed: [UpstreamProviderRecord]
        if let requestID {
            switch try LoadPendingSignIn(store: context.roundTrip.pendingSignIns, secrets: context.secrets).load(
                id: requestID, binding: binding, now: now)
            {
            case .unknown: return Pages.error(status: 400, PersonFacingErrors.linkNotValid, code: "invalid_request")
            case .over: return Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")
            case .otherBrowser: return Pages.error(status: 400, PersonFacingErrors.otherBrowser, code: "invalid_request")
            case .live(_, let environment): allowed = try store.shownProviders(projectID: environment.projectID)
            }
        } else {
            allowed = try store.allProviders()
        }
        guard let provider = allowed.first(where: { $0.slug == form["provider"] }) else {
            return Pages.error(status: 400, UpstreamProblems.notOffered, code: "invalid_request")
        }
        guard let key = context.configuration.encryptionKey else {
            return Pages.error(status: 503, UpstreamProblems.unavailable(provider.displayName), code: "temporarily_unavailable")
        }
        let sealer = AESGCMSealer(key: key)
        let flowID = context.secrets.newID()
        // 256 bits each from the CSPRNG; the verifier's 43 base64url characters are RFC 7636 §4.1's minimum.
        let state = try Crypto.mintToken(prefix: "")
        let nonce = try Crypto.mintToken(prefix: "")
        let verifier = try Crypto.mintToken(prefix: "")
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        let flow = UpstreamFlowRecord(
            id: flowID, providerID: provider.id, browserBindingHash: Crypto.hexSHA256(binding),
            sealedNonce: try UpstreamFlowSecrets.seal(nonce, flowID: flowID, field: "nonce", with: sealer),
            sealedCodeVerifier: try UpstreamFlowSecrets.seal(verifier, flowID: flowID, field: "verifier", with: sealer),
            authorizationRequestID: requestID, expiresAt: now.addingTimeInterval(Self.lifetimeSeconds), postedCodeSealed: nil,
            postedName: nil, used: false)
        try store.createUpstreamFlow(flow, stateHash: Crypto.hexSHA256(state), now: now)
        let upstream = context.upstream
        let redirect = redirectURI
        let answer = Result { () throws(UpstreamFailure) -> String in
            try upstream.authorizationURL(provider: provider, redirectURI: redirect, state: state, nonce: nonce, codeChallenge: challenge)
        }
        switch answer {
        case .failure(let failure):
            context.log.write("refused upstream start provider=\(provider.slug) reason=\(failure.code)")
            return Pages.error(status: 502, UpstreamProblems.failed(provider.displayName, failure), code: "temporarily_unavailable")
        case .success(let location):
            return Wire.seeOther(location)
        }
    }

    // MARK: Callback

    /// `POST /oauth2/upstream/callback` (`application/x-www-form-urlencoded`): Apple's `response_mode=form_post`.
    ///
    /// The POST comes from the provider's page, cross-site, so it carries no `SameSite=Lax` cookie and no
    /// form CSRF token; it is not a form of these pages. It only parks the code (sealed) and the name of
    /// Apple's `user` field on the live, unused flow its `state` names, once, and answers 303 to a GET of
    /// the callback with the `state` alone: that top-level GET carries the binding cookie, which the flow
    /// must match before anything is redeemed.
    func callbackPost(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let fields = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let state = Self.parameter(fields["state"]) else {
            return Pages.error(status: 400, UpstreamProblems.badState, code: "invalid_request")
        }
        let stateHash = Crypto.hexSHA256(state)
        if fields["error"] != nil { return try cancelled(stateHash: stateHash, error: fields["error"]) }
        guard let code = Self.parameter(fields["code"]), let flow = try store.upstreamFlow(stateHash: stateHash) else {
            return Pages.error(status: 400, UpstreamProblems.badState, code: "invalid_request")
        }
        guard let key = context.configuration.encryptionKey else {
            return Pages.error(status: 503, UpstreamProblems.unavailable("The sign-in provider"), code: "temporarily_unavailable")
        }
        let sealed = try UpstreamFlowSecrets.seal(code, flowID: flow.id, field: "code", with: AESGCMSealer(key: key))
        let name = UpstreamAccountRules.appleUserName(fields["user"]).flatMap(DisplayName.init)?.text
        guard try store.parkPostedCode(stateHash: stateHash, sealedCode: sealed, name: name, now: now) else {
            return try stale(flow, parking: true)
        }
        return Wire.seeOther("\(Self.callbackPath)?" + FormURLEncoding.encode([("state", state)]))
    }

    /// `GET /oauth2/upstream/callback?code&state` (or `?state` after Apple's form_post, or `?error&state`):
    /// consumes the flow in one statement (live, unused, and this browser's), redeems the code through the
    /// `UpstreamAuthority` port, applies the account rules, and signs in.
    func callback(_ request: HTTPRequest) throws -> HTTPResponse {
        let fields = Dictionary(
            ((try? FormURLEncoding.decode(request.rawQuery ?? "")) ?? []).map { ($0.name, $0.value) },
            uniquingKeysWith: { first, _ in first })
        guard let state = Self.parameter(fields["state"]) else {
            return Pages.error(status: 400, UpstreamProblems.badState, code: "invalid_request")
        }
        let stateHash = Crypto.hexSHA256(state)
        if fields["error"] != nil { return try cancelled(stateHash: stateHash, error: fields["error"]) }
        let binding = try BrowserBinding(context: context).onRecord(request)
        guard let binding, let flow = try store.consumeUpstreamFlow(stateHash: stateHash, bindingHash: Crypto.hexSHA256(binding), now: now)
        else {
            guard let flow = try store.upstreamFlow(stateHash: stateHash) else {
                return Pages.error(status: 400, UpstreamProblems.badState, code: "invalid_request")
            }
            return try stale(flow)
        }
        guard let provider = try context.tenancy.providers.provider(id: flow.providerID) else {
            return Pages.error(status: 400, UpstreamProblems.notOffered, code: "invalid_request")
        }
        guard let key = context.configuration.encryptionKey else {
            return Pages.error(status: 503, UpstreamProblems.unavailable(provider.displayName), code: "temporarily_unavailable")
        }
        let sealer = AESGCMSealer(key: key)
        let posted = flow.postedCodeSealed.flatMap { UpstreamFlowSecrets.open($0, flowID: flow.id, field: "code", with: sealer) }
        guard let code = Self.parameter(fields["code"]) ?? posted,
            let nonce = UpstreamFlowSecrets.open(flow.sealedNonce, flowID: flow.id, field: "nonce", with: sealer),
            let verifier = UpstreamFlowSecrets.open(flow.sealedCodeVerifier, flowID: flow.id, field: "verifier", with: sealer)
        else { return Pages.error(status: 400, UpstreamProblems.badState, code: "invalid_request") }
        let upstream = context.upstream
        let redirect = redirectURI
        let redeemed = Result { () throws(UpstreamFailure) -> UpstreamIdentity in
            try upstream.redeem(provider: provider, code: code, codeVerifier: verifier, redirectURI: redirect, nonce: nonce)
        }
        let identity: UpstreamIdentity
        switch redeemed {
        case .failure(let failure):
            context.log.write("refused upstream callback provider=\(provider.slug) reason=\(failure.code)")
            return Pages.error(status: 502, UpstreamProblems.failed(provider.displayName, failure), code: "access_denied")
        case .success(let verified):
            identity = verified.naming(flow.postedName)
        }
        let client = ClientAddress.of(request, configuration: context.configuration)
        let resolve = ResolveUpstreamAccount(store: store, domainToASCII: { IDNA.toASCII($0) })
        switch try resolve(identity, now: now, clientAddress: client) {
        case .refused(let refusal):
            return Pages.error(
                status: 400, PersonFacingError(headline: refusal.sentence(provider: provider.displayName), advice: UpstreamProblems.again),
                code: "access_denied")
        case .closed:
            return Pages.error(status: 403, UpstreamProblems.closed, code: "access_denied")
        case .confirmLink(let user):
            return try askToConfirm(identity: identity, user: user, provider: provider, flow: flow)
        case .signIn(let user, _):
            return try signIn(user, requestID: flow.authorizationRequestID, binding: binding, request: request)
        }
    }

    /// The page for an upstream `error` (the person cancelled, or the provider refused): the flow ends.
    private func cancelled(stateHash: String, error: String?) throws -> HTTPResponse {
        let flow = try store.upstreamFlow(stateHash: stateHash)
        try store.endUpstreamFlow(stateHash: stateHash, now: now)
        let name = try flow.flatMap { try context.tenancy.providers.provider(id: $0.providerID)?.displayName } ?? "the provider"
        return Pages.error(
            status: 400, UpstreamProblems.cancelled(name), code: "access_denied", detail: error.map { "The provider answered \($0)." },
            back: Self.back(flow?.authorizationRequestID))
    }

    /// The page for a flow this request may not use: used (or, for a form_post, parked already), expired, or
    /// live but started in another browser (its binding cookie missing or different).
    private func stale(_ flow: UpstreamFlowRecord, parking: Bool = false) throws -> HTTPResponse {
        let problem: PersonFacingError =
            if flow.expiresAt <= now { UpstreamProblems.expired } else if flow.used || parking { UpstreamProblems.used } else {
                PersonFacingErrors.otherBrowser
            }
        return Pages.error(status: 400, problem, code: "invalid_request", back: Self.back(flow.authorizationRequestID))
    }

    /// "Try again": the pending sign-in's page, or the account area's.
    static func back(_ requestID: String?) -> (String, String) {
        (requestID.map { "/v1/auth/zevid/signin?request=\($0)" } ?? "/account/signin", "Try again")
    }

    /// A `state` or `code` as received: non-empty and at most `maxParameterBytes`, else nil.
    static func parameter(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= maxParameterBytes else { return nil }
        return value
    }

    // MARK: Signing in

    /// Signs `user` in exactly as after a correct password (docs/protocol.md#round-trip): an unverified
    /// account where the environment requires a verified address gets a code first; an enrolled account gives
    /// its second factor (`amr` then `fed otp mfa` or `fed mfa`); else a browser session with `amr` `fed`. A
    /// fresh binding replaces the browser's (session fixation) and the pending sign-in moves to it.
    private func signIn(_ user: UserRecord, requestID: String?, binding: String, request: HTTPRequest) throws -> HTTPResponse {
        if let requestID {
            switch try LoadPendingSignIn(store: context.roundTrip.pendingSignIns, secrets: context.secrets).load(
                id: requestID, binding: binding, now: now)
            {
            case .unknown, .over: return Pages.error(status: 400, PersonFacingErrors.signInOver, code: "invalid_request")
            case .otherBrowser: return Pages.error(status: 400, PersonFacingErrors.otherBrowser, code: "invalid_request")
            case .live(_, let environment):
                if environment.requireVerifiedEmail && !user.emailVerified {
                    return try EmailCodeFlow(context: context).startVerification(user: user, requestID: requestID, request: request)
                }
            }
        }
        let known = KnownBrowsers(context: context).signedIn(userID: user.id, request)
        let fresh = try BrowserBinding(context: context).mint()
        let freshHash = Crypto.hexSHA256(fresh.value)
        let pending = context.roundTrip.pendingSignIns
        if try context.accounts.browserSignIn.totpFactor(userID: user.id)?.confirmed == true {
            let challenge = try store.createFederatedMFAChallenge(
                userID: user.id, browserBindingHash: freshHash, authorizationRequestID: requestID, now: now,
                lifetimeSeconds: AccountRules.mfaChallengeLifetimeSeconds)
            if let requestID {
                try pending.rebindAuthorizationRequest(requestID: requestID, browserBindingHash: freshHash, browserSessionID: nil)
            }
            return Wire.seeOther("\(MFAFlow.path)?challenge=\(challenge)", cookies: [fresh.setCookie, known])
        }
        let token = try context.secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        let sessionID = try store.createFederatedBrowserSession(tokenHash: context.secrets.digest(token), userID: user.id, now: now)
        try PersonalActivity(context: context).record("signin.upstream", userID: user.id, request)
        if let requestID {
            try pending.rebindAuthorizationRequest(requestID: requestID, browserBindingHash: freshHash, browserSessionID: sessionID)
        }
        let cookie = context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds)
        return Wire.seeOther(PasskeyHandlers.afterSignIn(requestID), cookies: [cookie, fresh.setCookie, known])
    }

    // MARK: Confirming a link

    /// An account has the address: nothing is linked yet. A confirmation waits (10 minutes, in a cookie of
    /// its own), the pending sign-in forgets any session so its page asks for a sign-in, and the browser goes
    /// to the link page, which sends it to sign in first.
    private func askToConfirm(
        identity: UpstreamIdentity, user: UserRecord, provider: UpstreamProviderRecord, flow: UpstreamFlowRecord
    ) throws -> HTTPResponse {
        let token = try Crypto.mintToken(prefix: "zul_")
        let confirmation = LinkConfirmationRecord(
            id: context.secrets.newID(), providerID: provider.id, issuer: identity.issuer, subject: identity.subject, email: identity.email,
            userID: user.id, authorizationRequestID: flow.authorizationRequestID, createdAt: now,
            expiresAt: now.addingTimeInterval(Self.lifetimeSeconds), used: false)
        try store.createLinkConfirmation(confirmation, tokenHash: Crypto.hexSHA256(token))
        if let requestID = flow.authorizationRequestID { try store.detachBrowserSession(requestID: requestID) }
        return Wire.seeOther(Self.linkPath, cookies: [context.setCookie(.upstreamLink, token, maxAge: Int(Self.lifetimeSeconds))])
    }

    /// The link waiting in this browser, live, with its provider's name; nil when there is none.
    func pendingLink(_ request: HTTPRequest) throws -> (LinkConfirmationRecord, providerName: String)? {
        guard let token = context.cookie(.upstreamLink, in: request), token.hasPrefix("zul_"), token.utf8.count < 100,
            let confirmation = try store.linkConfirmation(tokenHash: Crypto.hexSHA256(token)), !confirmation.used,
            confirmation.expiresAt > now, let provider = try context.tenancy.providers.provider(id: confirmation.providerID)
        else { return nil }
        return (confirmation, provider.displayName)
    }

    /// Whether the signed-in browser session may confirm `confirmation`: it is the account's, and it signed
    /// in after the confirmation was made ("sign in once", whatever the way).
    private func mayConfirm(_ confirmation: LinkConfirmationRecord, _ request: HTTPRequest) throws -> CurrentAccount.SignedIn? {
        guard let token = context.cookie(.session, in: request),
            let current = try CurrentAccount(store: context.accounts.current, secrets: context.secrets)(token: token),
            current.user.id == confirmation.userID, current.session.authTime >= confirmation.createdAt.addingTimeInterval(-1)
        else { return nil }
        return current
    }

    /// Where the consent page and the account page send a browser that just signed in to the account a
    /// waiting link names: the link page; nil when there is nothing to confirm (or this sign-in cannot).
    func confirmationDetour(_ request: HTTPRequest) throws -> String? {
        guard let (confirmation, _) = try pendingLink(request), try mayConfirm(confirmation, request) != nil else { return nil }
        return Self.linkPath
    }

    /// The sign-in page's notice and address while a link waits: "To link your Apple ID, sign in to your
    /// ZevID account first."
    func signInNotice(_ request: HTTPRequest) throws -> (notice: String, email: String?)? {
        guard let (confirmation, name) = try pendingLink(request) else { return nil }
        return (UpstreamPages.signInFirst(name), confirmation.email)
    }

    private func linkCSRF(_ confirmation: LinkConfirmationRecord, sessionToken: String) -> String {
        AccountForms.csrf(secret: sessionToken, label: "upstream-link:\(confirmation.id)")
    }

    /// `GET /oauth2/upstream/link`: "Link Apple to your ZevID account?" once this browser signed in to the
    /// account (after the confirmation was made); before that, the sign-in page with the address filled in.
    func linkPage(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let (confirmation, name) = try pendingLink(request) else {
            return Pages.error(status: 400, UpstreamProblems.linkExpired, code: "invalid_request", back: ("/account", "Your account"))
        }
        guard try mayConfirm(confirmation, request) != nil, let token = context.cookie(.session, in: request) else {
            return Wire.seeOther(Self.back(confirmation.authorizationRequestID).0)
        }
        return UpstreamPages.confirmLink(
            providerName: name, email: confirmation.email, csrf: linkCSRF(confirmation, sessionToken: token))
    }

    /// `POST /oauth2/upstream/link` (form: `csrf`, `decision` = `link` | `cancel`): Link inserts the
    /// identity (never moving one linked elsewhere); either way the confirmation is used and the sign-in
    /// goes on.
    func link(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let (confirmation, name) = try pendingLink(request) else {
            return Pages.error(status: 400, UpstreamProblems.linkExpired, code: "invalid_request", back: ("/account", "Your account"))
        }
        guard let current = try mayConfirm(confirmation, request), let token = context.cookie(.session, in: request) else {
            return Wire.seeOther(Self.linkPath)
        }
        guard AccountForms.csrfMatches(form["csrf"], linkCSRF(confirmation, sessionToken: token)) else { return AccountForms.expiredForm }
        let cleared = context.setCookie(.upstreamLink, "", maxAge: 0)
        let next = confirmation.authorizationRequestID.map { "/v1/auth/zevid/consent?request=\($0)" }
        guard try store.useLinkConfirmation(id: confirmation.id, now: now) else {
            return Pages.error(status: 400, UpstreamProblems.linkExpired, code: "invalid_request", back: ("/account", "Your account"))
        }
        guard form["decision"] == "link" else {
            return Wire.seeOther(next ?? "/account", cookies: [cleared])
        }
        let linked = try store.linkIdentity(
            providerID: confirmation.providerID, issuer: confirmation.issuer, subject: confirmation.subject, email: confirmation.email,
            userID: current.user.id, now: now, clientAddress: ClientAddress.of(request, configuration: context.configuration))
        guard linked else {
            var page = Pages.error(
                status: 409, UpstreamProblems.linkedElsewhere(name), code: "invalid_request",
                back: (next ?? "/account", next == nil ? "Your account" : "Continue"))
            page.headers.add("Set-Cookie", cleared)
            return page
        }
        return Wire.seeOther(next ?? "/account?done=linked#linked", cookies: [cleared])
    }

    // MARK: Unlinking

    /// `POST /account/upstream/unlink` (form: `csrf`, `id`): removes a link while another way to sign in
    /// remains (a password, a passkey, or another link: `UpstreamAccountRules.mayUnlink`).
    func unlink(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let token = context.cookie(.session, in: request),
            let current = try CurrentAccount(store: context.accounts.current, secrets: context.secrets)(token: token)
        else { return Wire.seeOther("/account/signin") }
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard AccountForms.csrfMatches(form["csrf"], AccountHandlers.sessionCSRF(token)) else { return AccountForms.expiredForm }
        let outcome = try store.unlinkIdentity(
            id: form["id"] ?? "", userID: current.user.id, now: now,
            clientAddress: ClientAddress.of(request, configuration: context.configuration)
        ) { UpstreamAccountRules.mayUnlink(hasPassword: $0, passkeys: $1, linkedIdentities: $2) }
        switch outcome {
        case .unlinked: return Wire.seeOther("/account?done=unlinked#linked")
        case .lastWayToSignIn: return Wire.seeOther("/account?done=unlink_refused#linked")
        case .notFound: return Wire.seeOther("/account?done=unlink_gone#linked")
        }
    }
}

/// Every store protocol of the hosted upstream sign-in.
public typealias UpstreamSignInStores = UpstreamFlowStore & UpstreamIdentityStore

/// The upstream ports of a context built without them: its pages show no provider, no link and no waiting
/// confirmation; every other call is `StoreUnavailable`.
struct UnconfiguredUpstream: UpstreamSignInStores {
    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "upstream_not_configured") }
    func provider(slug: String) throws -> UpstreamProviderRecord? { throw unavailable() }
    func shownProviders(projectID: String) throws -> [UpstreamProviderRecord] { [] }
    func allProviders() throws -> [UpstreamProviderRecord] { [] }
    func createUpstreamFlow(_ flow: UpstreamFlowRecord, stateHash: String, now: Date) throws { throw unavailable() }
    func parkPostedCode(stateHash: String, sealedCode: String, name: String?, now: Date) throws -> Bool { throw unavailable() }
    func consumeUpstreamFlow(stateHash: String, bindingHash: String, now: Date) throws -> UpstreamFlowRecord? { throw unavailable() }
    func upstreamFlow(stateHash: String) throws -> UpstreamFlowRecord? { throw unavailable() }
    func endUpstreamFlow(stateHash: String, now: Date) throws { throw unavailable() }
    func createLinkConfirmation(_ confirmation: LinkConfirmationRecord, tokenHash: String) throws { throw unavailable() }
    func linkConfirmation(tokenHash: String) throws -> LinkConfirmationRecord? { nil }
    func useLinkConfirmation(id: String, now: Date) throws -> Bool { throw unavailable() }
    func detachBrowserSession(requestID: String) throws { throw unavailable() }
    func createFederatedMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String { throw unavailable() }
    func createFederatedBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String { throw unavailable() }
    func linkedAccount(_ identity: UpstreamIdentity, now: Date) throws -> UserRecord? { throw unavailable() }
    func user(emailKey: String) throws -> UserRecord? { throw unavailable() }
    func createLinkedAccount(
        email: EmailAddress, name: DisplayName, verified: Bool, identity: UpstreamIdentity, now: Date, clientAddress: String?
    ) throws -> UserRecord { throw unavailable() }
    func linkIdentity(
        providerID: String, issuer: String, subject: String, email: String?, userID: String, now: Date, clientAddress: String?
    ) throws -> Bool { throw unavailable() }
    func linkedIdentities(userID: String) throws -> [LinkedIdentity] { [] }
    func unlinkIdentity(
        id: String, userID: String, now: Date, clientAddress: String?, allowed: (Bool, Int, Int) -> Bool
    ) throws -> UnlinkOutcome { throw unavailable() }
}
