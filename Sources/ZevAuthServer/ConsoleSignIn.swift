import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer
import PKCE
import PostgresStore

/// A signed-in console request: the session, its cookie secret, the account and its CSRF token.
struct ConsoleSession {
    let record: ConsoleSessionRecord
    let token: String
    let email: String
    var userID: String { record.userID }
    /// CSRF of the console's forms: the hosted forms' one formula under the session's own secret (an
    /// HttpOnly cookie), so a cross-site form cannot know it.
    var csrf: String { AccountForms.csrf(secret: token, label: "console-csrf") }
}

/// The console's sign-in through this server's own OpenID sign-in (docs/console.md, "Signing in"): the
/// console is the first-party client `console`; `GET /console` without a session starts code + PKCE S256
/// + nonce + state at `/oauth2/authorize`, `/console/callback` exchanges the code server-side through the
/// same exchange use case as every app, reads the ID token's claims and opens a console session.
struct ConsoleSignIn: Sendable {
    let context: ServerContext

    /// The console session cookie (`__Host-zevauth_console` when secure).
    static let sessionCookie = "zevauth_console"
    /// The sign-in in flight: a secret from which the state, the nonce and the PKCE verifier are derived,
    /// and the console page to return to (10 minutes, as a pending sign-in).
    static let flightCookie = "zevauth_console_signin"

    private var secure: Bool { context.configuration.secureCookies }
    private func name(_ base: String) -> String { secure ? "__Host-" + base : base }
    private var store: PostgresConsole { context.store.console }

    // MARK: Session

    /// The live console session of this request, marked used; nil when there is none, it ended (12 hours
    /// after its sign-in, or 1 hour unused: then it is deleted) or its account was closed.
    /// - Throws: `StoreUnavailable`.
    func current(_ request: HTTPRequest) throws -> ConsoleSession? {
        guard let token = Wire.cookies(of: request)[name(Self.sessionCookie)], token.hasPrefix("zcs_") else { return nil }
        let hash = Crypto.hexSHA256(token)
        guard let record = try store.consoleSession(idHash: hash) else { return nil }
        let now = context.clock.now()
        guard ConsoleSessionPolicy.isLive(record, now: now) else {
            try store.deleteConsoleSession(idHash: hash)
            return nil
        }
        guard let email = try store.openAccountEmail(userID: record.userID) else { return nil }
        try store.touchConsoleSession(idHash: hash, now: now)
        return ConsoleSession(record: record, token: token, email: email)
    }

    /// `POST /console/signout` (form: `csrf`): ends the console session (the ZevID browser session stays,
    /// as signing out of one app does) and goes to `/console/signed-out`.
    func signOut(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try current(request) else { return Wire.seeOther("/console/signed-out") }
        guard let form = AccountForms.fields(request), AccountForms.csrfMatches(form["csrf"], session.csrf) else {
            return AccountForms.expiredForm
        }
        try store.deleteConsoleSession(idHash: session.record.idHash)
        return Wire.seeOther("/console/signed-out", cookies: [clear(Self.sessionCookie)])
    }

    // MARK: Starting

    /// A 303 into this server's own sign-in as the client `console`, returning to `returnTo` (a console
    /// path) afterwards; `recent` adds `max_age=600` so the person authenticates again when their sign-in
    /// is older (a sensitive action); `login` adds `prompt=login`, which always asks for the password and,
    /// when enrolled, the second factor.
    /// - Throws: the CSPRNG's failure.
    func begin(returnTo: String, recent: Bool, login: Bool = false) throws -> HTTPResponse {
        let secret = try Crypto.mintToken(prefix: "zcf_")
        let back = Self.safeReturn(returnTo)
        var query: [(String, String)] = [
            ("response_type", "code"), ("client_id", ConsoleClient.clientID),
            ("redirect_uri", ConsoleClient.callbackURI(issuer: context.configuration.issuer)), ("scope", "openid"),
            ("state", Self.derive(secret, "state")), ("nonce", Self.derive(secret, "nonce")),
            ("code_challenge", Self.challenge(secret)), ("code_challenge_method", "S256"),
        ]
        if recent { query.append(("max_age", String(ConsoleSessionPolicy.recentAuthenticationSeconds))) }
        if login { query.append(("prompt", "login")) }
        let target =
            "/oauth2/authorize?"
            + query.map { "\($0.0)=\(FormURLEncoding.percentEncodeUnreserved($0.1))" }.joined(separator: "&")
        let flight = secret + "~" + Base64URL.encode(Array(back.utf8))
        return Wire.seeOther(
            target, cookies: [Wire.cookie(name: name(Self.flightCookie), value: flight, maxAge: 600, secure: secure)])
    }

    /// A console path to return to: `/console` or a path below it made of URL-safe segments, never a
    /// query, another origin or `//`.
    static func safeReturn(_ path: String) -> String {
        guard path.hasPrefix("/console/") || path == "/console" else { return "/console" }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        for segment in segments where segment.isEmpty || !segment.allSatisfy({ allowed.contains($0) }) { return "/console" }
        return path
    }

    /// A value derived from the flight secret: `state`, `nonce` or the PKCE `verifier` (43 base64url
    /// characters, RFC 7636 §4.1).
    static func derive(_ secret: String, _ label: String) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), message: Array("console-\(label)".utf8)))
    }

    private static func challenge(_ secret: String) -> String {
        guard let verifier = CodeVerifier(derive(secret, "verifier")) else { return "" }
        return PKCE.s256Challenge(for: verifier, sha256: { Crypto.sha256($0) }).value
    }

    // MARK: Callback

    /// `GET /console/callback?code&state&iss` (or `error`): only the browser that began this sign-in (its
    /// flight cookie, whose derived `state` must match) may finish it. The code is exchanged with the
    /// derived verifier through the exchange use case; the ID token's `nonce` and `aud` must be the
    /// console's. Its `sub`, `auth_time` and `amr` open the console session; the app session the exchange
    /// made is revoked at once (the console keeps its own session). A forged, replayed or foreign
    /// callback is refused with 400 and opens nothing.
    func callback(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = (try? FormURLEncoding.decode(request.rawQuery ?? "")) ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        guard let flight = Wire.cookies(of: request)[name(Self.flightCookie)],
            let tilde = flight.firstIndex(of: "~")
        else { return refused("This sign-in was not started in this browser, or it took longer than 10 minutes.") }
        let secret = String(flight[..<tilde])
        let back = Self.safeReturn(
            Base64URL.decodeCanonical(String(flight[flight.index(after: tilde)...])).map { String(decoding: $0, as: UTF8.self) }
                ?? "/console")
        guard let state = value("state"), Crypto.constantTimeEquals(Array(state.utf8), Array(Self.derive(secret, "state").utf8)) else {
            return refused("This sign-in answer does not belong to the sign-in this browser started.")
        }
        if value("error") != nil {
            return refused("The sign-in did not finish. Open the console to try again.")
        }
        guard let code = value("code") else { return refused("The sign-in answer carries no code.") }
        let grant = try ExchangeHandler(context: context).grant(
            ExchangeHandler.Fields(
                code: code, redirectURI: ConsoleClient.callbackURI(issuer: context.configuration.issuer),
                codeVerifier: Self.derive(secret, "verifier")),
            publishableKey: ConsoleClient.clientID)
        guard case .issued(let issued, _, let refreshToken) = grant.outcome, let idToken = grant.idToken,
            let claims = Self.claims(of: idToken), claims.aud == ConsoleClient.clientID,
            let nonce = claims.nonce, Crypto.constantTimeEquals(Array(nonce.utf8), Array(Self.derive(secret, "nonce").utf8)),
            claims.sub == issued.user.id
        else { return refused("The sign-in could not be completed. Open the console to try again.") }
        let now = context.clock.now()
        if let environment = try context.store.environment(publishableKey: ConsoleClient.clientID) {
            try Revoke(store: context.roundTrip.revoke, secrets: context.secrets)(
                token: refreshToken, environmentID: environment.id, now: now)
        }
        // An account with a second factor signs in to the console with it: a browser session from before
        // the enrolment (amr without "mfa") goes through the sign-in again with `prompt=login`, which asks
        // for both.
        if !claims.methods.contains("mfa"),
            try AccountOverview(store: context.accounts.overview)(userID: claims.sub).totpEnabled
        {
            return try begin(returnTo: back, recent: false, login: true)
        }
        // A console session cookie the browser already held is replaced, never adopted.
        if let old = Wire.cookies(of: request)[name(Self.sessionCookie)] {
            try store.deleteConsoleSession(idHash: Crypto.hexSHA256(old))
        }
        let token = try Crypto.mintToken(prefix: "zcs_")
        try store.createConsoleSession(
            ConsoleSessionRecord(
                idHash: Crypto.hexSHA256(token), userID: claims.sub, createdAt: now, lastSeenAt: now, authTime: claims.authTime))
        return Wire.seeOther(
            back,
            cookies: [
                Wire.cookie(
                    name: name(Self.sessionCookie), value: token, maxAge: Int(ConsoleSessionPolicy.absoluteSeconds), secure: secure),
                clear(Self.flightCookie),
            ])
    }

    /// The claims of the console's ID token it reads (OpenID Connect Core §2). The token came from this
    /// server's own exchange, in process, so its signature is not checked again.
    struct Claims {
        let sub: String
        let aud: String
        let nonce: String?
        let authTime: Date
        let methods: [String]
    }

    static func claims(of idToken: String) -> Claims? {
        guard let parsed = JWS.parse(idToken), case .object(let members)? = try? JSONValue.parse(parsed.payload) else { return nil }
        var fields: [String: JSONValue] = [:]
        for (key, value) in members { fields[key] = value }
        guard case .string(let sub)? = fields["sub"], case .string(let aud)? = fields["aud"], case .int(let authTime)? = fields["auth_time"]
        else { return nil }
        var nonce: String?
        if case .string(let value)? = fields["nonce"] { nonce = value }
        var methods: [String] = []
        if case .array(let values)? = fields["amr"] {
            methods = values.compactMap { if case .string(let method) = $0 { method } else { nil } }
        }
        return Claims(sub: sub, aud: aud, nonce: nonce, authTime: Date(timeIntervalSince1970: Double(authTime)), methods: methods)
    }

    private func clear(_ base: String) -> String { Wire.cookie(name: name(base), value: "", maxAge: 0, secure: secure) }

    private func refused(_ sentence: String) -> HTTPResponse {
        ConsolePages.message(title: "Sign-in refused", heading: "The console sign-in was refused", sentence, status: 400)
    }
}
