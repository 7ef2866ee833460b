import Authorize
import CBOR
import Crypto
import Encoding
import Foundation
import HTTPServer
import WebAuthn

/// Passkeys on the hosted pages (docs/passkeys.md, "Endpoints"): the JSON ceremonies the page script
/// (`PasskeyScript`) calls, the account page's rename and remove forms, and the offer after a sign-in.
///
/// Every JSON POST must carry an `Origin` header equal to the issuer and the page's `csrf` token, the
/// HMAC of `account-form:passkeys` under this browser's binding cookie (an HttpOnly secret a cross-site
/// page cannot read); either missing answers 403. Answers are `no-store`.
struct PasskeyHandlers: Sendable {
    let context: ServerContext

    private var store: any PasskeyStores { context.accounts.passkeys }
    private var now: Date { context.clock.now() }

    /// The production primitives: libcbor through `CBOR`, OpenSSL through `Crypto`.
    static let crypto = PasskeyCrypto(
        primitives: WebAuthn.Primitives(
            sha256: { Crypto.sha256($0) }, constantTimeEquals: { Crypto.constantTimeEquals($0, $1) }, decodeCBORItem: CBOR.decodeItem,
            verifySignature: Crypto.verifyCOSESignature, isUsableKey: { Crypto.isUsableCOSEKey($0) }),
        encodeCBOR: { CBOR.encode($0) })

    /// The `csrf` of the passkey JSON calls under a browser binding secret.
    static func csrf(binding: String) -> String {
        AccountForms.csrf(secret: binding, label: "account-form:passkeys")
    }

    /// The `timeout` of both options, in milliseconds (the challenge's lifetime).
    static let timeoutMilliseconds = Int(PasskeyRules.challengeLifetimeSeconds * 1000)

    // MARK: The JSON edge

    /// A JSON call's checked facts: the body and this browser's binding secret.
    private struct Call {
        let body: JSONObjectBody
        let binding: String
    }

    /// `{"error","message"}` with `status`, `no-store`.
    static func refusal(_ status: Int, _ error: String, _ message: String) -> HTTPResponse {
        Wire.json(status: status, JSONValue.object([("error", .string(error)), ("message", .string(message))]))
    }

    static func refusal(_ failure: PasskeyFailure, status: Int = 400) -> HTTPResponse {
        refusal(status, failure.rawValue, failure.message)
    }

    /// The Origin and csrf checks every JSON call starts with; the 403 or 400 to answer instead.
    private func call(_ request: HTTPRequest) throws -> Result<Call, Stop> {
        let origins = request.headers.values("Origin")
        guard origins.count == 1, origins[0] == context.configuration.issuer else {
            return .failure(Stop(Self.refusal(403, "invalid_request", "This request did not come from this site's pages.")))
        }
        guard let body = JSONObjectBody(request.body) else {
            return .failure(Stop(Self.refusal(400, "invalid_request", "The request body is not a JSON object.")))
        }
        guard case .value(let csrf) = body.string("csrf"), let binding = try BrowserBinding(context: context).onRecord(request),
            AccountForms.csrfMatches(csrf, Self.csrf(binding: binding))
        else {
            return .failure(Stop(Self.refusal(403, "invalid_request", "This page has expired. Reload it and try again.")))
        }
        return .success(Call(body: body, binding: binding))
    }

    private struct Stop: Error {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
    }

    /// The signed-in browser, or nil.
    private func signedIn(_ request: HTTPRequest) throws -> CurrentAccount.SignedIn? {
        guard let token = context.cookie(.session, in: request) else { return nil }
        return try CurrentAccount(store: context.accounts.current, secrets: context.secrets)(token: token)
    }

    /// A base64url (unpadded, canonical) member of an object, decoded.
    private static func bytes(_ members: [(String, JSONValue)], _ name: String) -> [UInt8]? {
        guard let text = members.first(where: { $0.0 == name })?.1.stringValue else { return nil }
        return Base64URL.decodeCanonical(text)
    }

    private static func object(_ members: [(String, JSONValue)], _ name: String) -> [(String, JSONValue)]? {
        members.first(where: { $0.0 == name })?.1.objectValue
    }

    /// A body's `credential`, the `PublicKeyCredential` as JSON (WebAuthn Level 3 §5.1): `type` exactly
    /// "public-key", `rawId` a canonical base64url credential ID of 1 to 1023 bytes, `id` exactly its
    /// base64url, and `response` an object. Both ceremonies read it here; nil answers 400 `passkey_invalid`.
    private static func credential(_ body: JSONObjectBody) -> (rawID: [UInt8], response: [(String, JSONValue)])? {
        guard case .value(let credential) = body.object("credential"),
            credential.first(where: { $0.0 == "type" })?.1.stringValue == "public-key",
            let rawID = bytes(credential, "rawId"), (1...WebAuthn.maxCredentialIDBytes).contains(rawID.count),
            credential.first(where: { $0.0 == "id" })?.1.stringValue == Base64URL.encode(rawID),
            let response = object(credential, "response")
        else { return nil }
        return (rawID, response)
    }

    /// The pending sign-in id a body names (a UUID, lower-case), nil when absent or empty, or `.failure` (400
    /// `invalid_request`) for anything else: both options calls and both ceremonies read `request` here.
    private static func requestID(_ body: JSONObjectBody) -> Result<String?, Stop> {
        switch body.string("request") {
        case .missing: return .success(nil)
        case .value(let raw) where raw.isEmpty: return .success(nil)
        case .value(let raw):
            guard let id = AccountHandlers.pendingRequestID(raw) else { fallthrough }
            return .success(id)
        case .wrongType:
            return .failure(Stop(refusal(400, "invalid_request", "The sign-in this page belongs to is not valid.")))
        }
    }

    // MARK: Signing in

    /// `POST /account/passkeys/signin/options` `{"csrf","request"?}` → 200 `{"publicKey":{…}}`: a fresh
    /// challenge for a discoverable credential, bound to this browser (WebAuthn Level 3 §5.5); 400 when
    /// `request` is not a pending sign-in's id (`requestID`, as the ceremony reads it).
    func signInOptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let call: Call
        switch try self.call(request) {
        case .failure(let stop): return stop.response
        case .success(let value): call = value
        }
        if case .failure(let stop) = Self.requestID(call.body) { return stop.response }
        let challenge = try BeginPasskeySignIn(store: store, secrets: context.secrets)(binding: call.binding, now: now)
        let options: JSONValue = .object([
            ("challenge", .string(Base64URL.encode(challenge))), ("rpId", .string(context.configuration.relyingParty.id)),
            ("timeout", .int(Self.timeoutMilliseconds)), ("userVerification", "required"), ("allowCredentials", .array([])),
        ])
        return Wire.json(status: 200, JSONValue.object([("publicKey", options)]))
    }

    /// `POST /account/passkeys/signin` `{"csrf","request"?,"credential":{…}}` → 200 `{"redirect"}`: where
    /// a password sign-in would go next, without the TOTP step; 400 `{"error","message"}`; 429 over the
    /// client address's password limit, which each failure counts against (docs/passkeys.md, "Limits").
    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        let call: Call
        switch try self.call(request) {
        case .failure(let stop): return stop.response
        case .success(let value): call = value
        }
        let limiter = RateLimiter(context: context)
        let address = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try limiter.check(.passwordPerAddress, key: address) {
            return Self.limited(seconds)
        }
        let failed = { (failure: PasskeyFailure) throws -> HTTPResponse in
            context.metrics.signIn(.passkey, .invalidCredentials)
            if case .limited(let seconds) = try limiter.hit(.passwordPerAddress, key: address) { return Self.limited(seconds) }
            return Self.refusal(failure)
        }
        let requestID: String?
        switch Self.requestID(call.body) {
        case .failure(let stop): return stop.response
        case .success(let id): requestID = id
        }
        var requireVerified = false
        if let requestID {
            switch try LoadPendingSignIn(store: context.roundTrip.pendingSignIns, secrets: context.secrets).load(
                id: requestID, binding: call.binding, now: now)
            {
            case .live(_, let environment): requireVerified = environment.requireVerifiedEmail
            case .unknown, .over, .otherBrowser:
                return Self.refusal(400, "invalid_request", PersonFacingErrors.signInOver.headline)
            }
        }
        guard let (rawID, response) = Self.credential(call.body), let clientDataJSON = Self.bytes(response, "clientDataJSON"),
            let authenticatorData = Self.bytes(response, "authenticatorData"), let signature = Self.bytes(response, "signature")
        else { return try failed(.invalid) }
        let userHandle = Self.bytes(response, "userHandle")
        let assertion = AssertionResponse(
            credentialID: rawID, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
            userHandle: userHandle)
        let finish = FinishPasskeySignIn(
            store: store, secrets: context.secrets, crypto: Self.crypto, relyingParty: context.configuration.relyingParty)
        switch try finish(assertion, binding: call.binding, requireVerifiedEmail: requireVerified, now: now) {
        case .refused(let failure):
            return try failed(failure)
        case .counterRegressed(let user, _):
            // A counter that went backwards (WebAuthn Level 3 §6.1.1): the passkey may have been copied.
            try context.tenancy.audit.record(
                AuditEntry(
                    actor: .account(userID: user.id), action: "passkey.counter_regressed", subjectUserID: user.id,
                    clientAddress: address, outcome: .refused, at: now))
            try context.accounts.notices.queue(.passkeyCounterRegressed, userID: user.id, now: now)
            context.mail.kick()
            return try failed(.counterRegressed)
        case .signedIn(let user, let token, let browserSessionID, _):
            context.metrics.signIn(.passkey, .ok)
            try PersonalActivity(context: context).record("signin.passkey", userID: user.id, request)
            // The person authenticated: a fresh binding id replaces the one this browser held (session
            // fixation), and the pending sign-in moves to it, as after a password.
            let fresh = try BrowserBinding(context: context).mint()
            let next: String
            if let requestID {
                try context.roundTrip.pendingSignIns.rebindAuthorizationRequest(
                    requestID: requestID, browserBindingHash: Crypto.hexSHA256(fresh.value), browserSessionID: browserSessionID)
                next = "/v1/auth/zevid/consent?request=\(requestID)"
            } else {
                next = "/account"
            }
            let cookies = [
                context.setCookie(.session, token, maxAge: AccountRules.browserSessionCookieSeconds), fresh.setCookie,
                KnownBrowsers(context: context).signedIn(userID: user.id, request),
            ]
            var answer = Wire.json(status: 200, JSONValue.object([("redirect", .string(next))]))
            for cookie in cookies { answer.headers.add("Set-Cookie", cookie) }
            return answer
        }
    }

    /// 429 `{"error":"rate_limited","message"}` with `Retry-After`, the password limit's sentence.
    private static func limited(_ seconds: Int) -> HTTPResponse {
        var response = refusal(429, "rate_limited", RateLimiter.pageMessage(retryAfterSeconds: seconds))
        response.headers.set("Retry-After", String(seconds))
        return response
    }

    // MARK: Creating

    /// `POST /account/passkeys/create/options` `{"csrf","request"?}` (signed in) → 200 `{"publicKey":{…}}`
    /// (WebAuthn Level 3 §5.4); 409 `passkey_limit` at 20 passkeys; 401 when not signed in; 400 when
    /// `request` is not a pending sign-in's id (`requestID`).
    func createOptions(_ request: HTTPRequest) throws -> HTTPResponse {
        let call: Call
        switch try self.call(request) {
        case .failure(let stop): return stop.response
        case .success(let value): call = value
        }
        guard let current = try signedIn(request) else { return Self.notSignedIn }
        if case .failure(let stop) = Self.requestID(call.body) { return stop.response }
        let begin = BeginPasskeyRegistration(store: store, secrets: context.secrets)
        let options: BeginPasskeyRegistration.Options
        switch try begin(userID: current.user.id, binding: call.binding, now: now) {
        case .failure(let failure): return Self.refusal(failure, status: 409)
        case .success(let value): options = value
        }
        let rp = context.configuration.relyingParty
        let user: JSONValue = .object([
            ("id", .string(Base64URL.encode(options.userHandle))), ("name", .string(current.user.email)),
            ("displayName", .string(current.user.name.isEmpty ? current.user.email : current.user.name)),
        ])
        let parameters = PasskeyRules.offeredAlgorithms.map { algorithm -> JSONValue in
            .object([("type", "public-key"), ("alg", .int(Int(algorithm.rawValue)))])
        }
        let excluded = options.existing.map { passkey -> JSONValue in
            .object([
                ("type", "public-key"), ("id", .string(Base64URL.encode(passkey.credentialID))),
                ("transports", .array(passkey.transports.map { .string($0) })),
            ])
        }
        let publicKey: JSONValue = .object([
            ("challenge", .string(Base64URL.encode(options.challenge))),
            ("rp", .object([("id", .string(rp.id)), ("name", .string(PasskeyRules.relyingPartyName))])), ("user", user),
            ("pubKeyCredParams", .array(parameters)),
            (
                "authenticatorSelection",
                .object([("residentKey", "required"), ("requireResidentKey", true), ("userVerification", "required")])
            ),
            ("attestation", "none"), ("excludeCredentials", .array(excluded)), ("timeout", .int(Self.timeoutMilliseconds)),
        ])
        return Wire.json(status: 200, JSONValue.object([("publicKey", publicKey)]))
    }

    /// `POST /account/passkeys/create` `{"csrf","name"?,"request"?,"credential":{…}}` (signed in) → 201
    /// `{"redirect"}`: `/account#passkeys`, or on the offer after a sign-in the rest of that sign-in;
    /// 400 `{"error","message"}`.
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        let call: Call
        switch try self.call(request) {
        case .failure(let stop): return stop.response
        case .success(let value): call = value
        }
        guard let current = try signedIn(request) else { return Self.notSignedIn }
        let requestID: String?
        switch Self.requestID(call.body) {
        case .failure(let stop): return stop.response
        case .success(let id): requestID = id
        }
        var name: PasskeyName?
        switch call.body.string("name") {
        case .missing: name = nil
        case .wrongType: return Self.refusal(400, "invalid_request", "Give the passkey a name of up to 64 characters.")
        case .value(let raw):
            if !raw.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                guard let parsed = PasskeyName(raw) else {
                    return Self.refusal(400, "invalid_request", "Give the passkey a name of up to 64 characters.")
                }
                name = parsed
            }
        }
        guard let (_, response) = Self.credential(call.body), let clientDataJSON = Self.bytes(response, "clientDataJSON"),
            let attestationObject = Self.bytes(response, "attestationObject")
        else { return Self.refusal(.invalid) }
        let transports =
            response.first(where: { $0.0 == "transports" })?.1.arrayValue?.prefix(8).compactMap(\.stringValue) ?? []
        let finish = FinishPasskeyRegistration(
            store: store, secrets: context.secrets, crypto: Self.crypto, relyingParty: context.configuration.relyingParty)
        switch try finish(
            .init(clientDataJSON: clientDataJSON, attestationObject: attestationObject, transports: Array(transports), name: name),
            userID: current.user.id, binding: call.binding, now: now)
        {
        case .failure(let failure):
            return Self.refusal(failure)
        case .success:
            try PersonalActivity(context: context).record("passkey.create", userID: current.user.id, request)
            let next = requestID.map { "/v1/auth/zevid/consent?request=\($0)" } ?? "/account#passkeys"
            return Wire.json(status: 201, JSONValue.object([("redirect", .string(next))]))
        }
    }

    private static var notSignedIn: HTTPResponse {
        refusal(401, "invalid_request", "You're signed out. Sign in again to manage your passkeys.")
    }

    // MARK: The offer after a sign-in

    /// `GET /account/passkeys/offer?request=…` (signed in): "Create a passkey" or "Not now".
    func offerPage(_ request: HTTPRequest) throws -> HTTPResponse {
        guard try signedIn(request) != nil else { return Wire.seeOther("/account/signin") }
        let requestID = AccountHandlers.pendingRequestID(AccountForms.query(request, "request"))
        let (binding, cookies) = try BrowserBinding(context: context).adoptOrMint(request)
        return PasskeyPages.offer(
            context: PasskeyPageContext(csrf: Self.csrf(binding: binding), requestID: requestID), cookies: cookies)
    }

    /// `POST /account/passkeys/offer/skip` (form: `csrf`, `request`): "Not now" is remembered for 30 days,
    /// and the sign-in continues.
    func skipOffer(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let current = try signedIn(request) else { return Wire.seeOther("/account/signin") }
        guard let form = AccountForms.fields(request) else { return AccountForms.unreadableForm }
        guard let binding = try BrowserBinding(context: context).onRecord(request),
            AccountForms.csrfMatches(form["csrf"], Self.csrf(binding: binding))
        else { return AccountForms.expiredForm }
        try store.skipPasskeyOffer(userID: current.user.id, now: now)
        return Wire.seeOther(Self.afterSignIn(AccountHandlers.pendingRequestID(form["request"])))
    }

    /// Where a sign-in goes after its password (and the offer): the app's consent, or the account page.
    static func afterSignIn(_ requestID: String?) -> String {
        requestID.map { "/v1/auth/zevid/consent?request=\($0)" } ?? "/account"
    }

    /// Where a password sign-in, or a sign-up once its code is entered, goes once it has a browser session:
    /// the offer when the form just posted said the browser can create passkeys (the script sets its
    /// `passkey_capable`) and the account should be offered one (`ShouldOfferPasskey`), else straight on
    /// (docs/passkeys.md, "The offer").
    func nextAfterPassword(userID: String, requestID: String?, form: [String: String]) throws -> String {
        guard form["passkey_capable"] == "1", try ShouldOfferPasskey(store: store)(userID: userID, now: now) else {
            return Self.afterSignIn(requestID)
        }
        return "/account/passkeys/offer" + (requestID.map { "?request=\($0)" } ?? "")
    }
}

/// What a page that loads the passkey script puts on `<main id="passkey-context">`.
struct PasskeyPageContext: Sendable {
    /// `data-csrf`: the token every passkey JSON call carries.
    let csrf: String
    /// `data-request`: the pending sign-in, nil for the account area.
    let requestID: String?
}
