import Crypto
import Foundation
import HTTPServer
import PostgresStore

/// The two cookies the hosted pages set (docs/protocol.md, "Browser cookies"). Every cookie is
/// `HttpOnly`, `SameSite=Lax`, `Path=/` and carries no `Domain`; whenever it is `Secure` (an `https`
/// issuer) its name carries the `__Host-` prefix (RFC 6265bis §4.1.3.2), so no other host — a sibling
/// subdomain included — and no plain-HTTP answer can set it.
enum BrowserCookie: Sendable {
    /// The browser binding id (`zbb_…`): binds a pending sign-in, a second-factor challenge and the
    /// CSRF tokens of the signed-out forms to this browser.
    case binding
    /// The ZevID browser session (`zbs_…`).
    case session
    /// The accounts that signed in from this browser before (`KnownBrowsers`), for the new-browser notice.
    case knownBrowsers
    /// A link of an upstream identity waiting for its confirmation (`zul_…`, 10 minutes;
    /// docs/federation.md, "Hosted sign-in"): its own cookie, so it survives the binding's renewal at sign-in.
    case upstreamLink

    /// The name on the wire: `__Host-zevauth_browser` / `__Host-zevid_session` when `secure`, else
    /// `zevauth_browser` / `zevid_session`.
    func name(secure: Bool) -> String {
        let base =
            switch self {
            case .binding: "zevauth_browser"
            case .session: "zevid_session"
            case .knownBrowsers: "zevid_known"
            case .upstreamLink: "zevid_link"
            }
        return secure ? "__Host-" + base : base
    }

    /// A `Set-Cookie` value for this cookie (`maxAge` in seconds; nil for a browser-session cookie, 0 to
    /// delete).
    func set(_ value: String, maxAge: Int?, secure: Bool) -> String {
        Wire.cookie(name: name(secure: secure), value: value, maxAge: maxAge, secure: secure)
    }

    /// This cookie's value in the request, or nil when it is absent or sent more than once with
    /// different values: which of two same-named cookies a browser sends first depends on their paths and
    /// ages, not on who set them, so an ambiguous cookie is no cookie (docs/decisions.md).
    func value(in request: HTTPRequest, secure: Bool) -> String? {
        Wire.cookies(of: request)[name(secure: secure)]
    }
}

/// The browser binding id (`zevauth_browser`): minted by the server, stored hashed (sql/007), adopted only
/// when on record, and replaced whenever the person authenticates (docs/threat-model.md, "Planted
/// browser cookies").
struct BrowserBinding: Sendable {
    let context: ServerContext

    /// How long a minted binding stays on record. The cookie lives as long as the browser session; a
    /// browser that keeps it longer gets a fresh one at its next start.
    static let lifetimeSeconds: Double = 86_400

    private var secure: Bool { context.configuration.secureCookies }

    /// The shape of a binding id: `zbb_` and 43 base64url characters (256 bits).
    static func hasShape(_ value: String) -> Bool {
        value.hasPrefix("zbb_") && value.utf8.count == 47
    }

    /// The request's binding id when the server minted it and has it on record until at least `until`
    /// (default: now), else nil. A planted value of the right shape is not on record.
    func onRecord(_ request: HTTPRequest, until: Date? = nil) throws -> String? {
        guard let value = BrowserCookie.binding.value(in: request, secure: secure), Self.hasShape(value) else { return nil }
        let until = until ?? context.clock.now()
        return try context.roundTrip.browserBindings.isBrowserBindingOnRecord(bindingHash: Crypto.hexSHA256(value), until: until)
            ? value : nil
    }

    /// Mints a binding id, records its hash, and answers it with its `Set-Cookie`.
    func mint() throws -> (value: String, setCookie: String) {
        let value = try Crypto.mintToken(prefix: "zbb_")
        try context.roundTrip.browserBindings.recordBrowserBinding(
            bindingHash: Crypto.hexSHA256(value), now: context.clock.now(), lifetimeSeconds: Self.lifetimeSeconds)
        return (value, BrowserCookie.binding.set(value, maxAge: nil, secure: secure))
    }

    /// The request's binding id when on record (until `until`), else a freshly minted one with the
    /// `Set-Cookie` that gives it to the browser.
    func adoptOrMint(_ request: HTTPRequest, until: Date? = nil) throws -> (value: String, setCookies: [String]) {
        if let value = try onRecord(request, until: until) { return (value, []) }
        let minted = try mint()
        return (minted.value, [minted.setCookie])
    }
}

extension ServerContext {
    /// A browser cookie's unambiguous value in the request (see `BrowserCookie.value(in:secure:)`).
    func cookie(_ cookie: BrowserCookie, in request: HTTPRequest) -> String? {
        cookie.value(in: request, secure: configuration.secureCookies)
    }

    /// A `Set-Cookie` value for a browser cookie under this deployment's name and `Secure` setting.
    func setCookie(_ cookie: BrowserCookie, _ value: String, maxAge: Int?) -> String {
        cookie.set(value, maxAge: maxAge, secure: configuration.secureCookies)
    }
}
