import Authorize
import Encoding
import Foundation
import HTTPServer

/// The "Continue with NAME" buttons of a sign-in page: one small POST form each to
/// `/oauth2/upstream/start` (docs/federation.md, "Hosted sign-in").
struct UpstreamButtons: Sendable {
    /// Slug, display name and kind of each provider, in the order shown (Apple first).
    let providers: [(slug: String, name: String, kind: UpstreamProviderKind)]
    /// `UpstreamHandlers.csrf(binding:)`.
    let csrf: String
    /// The pending sign-in they continue, or nil on the account area's page.
    let requestID: String?

    /// The forms, then "or" above the email form.
    var html: String {
        // Each hidden field names its value first, so the page's first `name="csrf" value=` stays the email
        // form's.
        let request = requestID.map { "<input type=\"hidden\" value=\"\(HTML.escape($0))\" name=\"request\">" } ?? ""
        let forms = providers.map { provider in
            // Apple's button: black, the white Apple logo, "Continue with Apple" (its Human Interface
            // Guidelines); the logo is decorative (alt=""), the text is the accessible name.
            let logo =
                provider.kind == .apple
                ? "<img src=\"\(UpstreamPages.appleLogoPath)\" alt=\"\" width=\"20\" height=\"20\" class=\"upstream-logo\">" : ""
            let style = provider.kind == .apple ? "upstream upstream-apple" : "upstream"
            return """
                <form method="post" action="\(UpstreamHandlers.startPath)" class="upstream-form">
                <input type="hidden" value="\(HTML.escape(csrf))" name="csrf">
                <input type="hidden" value="\(HTML.escape(provider.slug))" name="provider">\(request)
                <button type="submit" class="\(style)">\(logo)Continue with \(HTML.escape(provider.name))</button>
                </form>
                """
        }
        return forms.joined(separator: "\n") + "\n<p class=\"upstream-or muted\">or</p>"
    }
}

/// The pages and words of the hosted upstream sign-in.
enum UpstreamPages {
    static let appleLogoPath = "/assets/apple-logo.svg"

    /// Apple's logo, white, as an SVG served from this origin (the pages' policy allows `img-src 'self'` only).
    static let appleLogo = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24"><path fill="#ffffff" \
        d="M12.152 6.896c-.948 0-2.415-1.078-3.96-1.04-2.04.027-3.91 1.183-4.961 3.014-2.117 3.675-.546 9.103 1.519 12.09 \
        1.013 1.454 2.208 3.09 3.792 3.039 1.52-.065 2.09-.987 3.935-.987 1.831 0 2.35.987 3.96.948 1.637-.026 2.676-1.48 \
        3.676-2.948 1.156-1.688 1.636-3.325 1.662-3.415-.039-.013-3.182-1.221-3.22-4.857-.026-3.04 2.48-4.494 2.597-4.559-1.429-2.09 \
        -3.623-2.324-4.39-2.376-2-.156-3.675 1.09-4.61 1.09zM15.53 3.83c.843-1.012 1.4-2.427 1.245-3.83-1.207.052-2.662.805-3.532 \
        1.818-.78.896-1.454 2.338-1.273 3.714 1.338.104 2.715-.688 3.559-1.701"/></svg>
        """

    /// The sign-in page's notice while a link waits.
    static func signInFirst(_ providerName: String) -> String {
        "To link your \(providerName == "Apple" ? "Apple ID" : "\(providerName) account"), sign in to your ZevID account first."
    }

    /// "Link Apple to your ZevID account?" with Link and Cancel.
    static func confirmLink(providerName: String, email: String?, csrf: String) -> HTTPResponse {
        let seen = email.map { " as <strong>\(HTML.escape($0))</strong>" } ?? ""
        return Pages.page(
            title: "Link \(providerName) to your ZevID account?",
            body: """
                <h1>Link \(HTML.escape(providerName)) to your ZevID account?</h1>
                <p>You signed in to \(HTML.escape(providerName))\(seen). Once linked, you can sign in to this ZevID account with \
                \(HTML.escape(providerName)).</p>
                <form method="post" action="\(UpstreamHandlers.linkPath)">
                <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
                <button type="submit" name="decision" value="link">Link</button>
                <button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
                </form>
                """)
    }

    /// The account page's "Linked accounts" section: each provider with the address it shared and when it was
    /// linked, and an Unlink form.
    static func linkedSection(_ identities: [LinkedIdentity], hidden: String) -> String {
        let rows = identities.map { identity in
            let date = ISO8601DateFormatter.string(from: identity.createdAt, timeZone: .gmt, formatOptions: [.withFullDate])
            let email = identity.email.map { "<br><span class=\"muted\">\(HTML.escape($0))</span>" } ?? ""
            return """
                <form method="post" action="\(UpstreamHandlers.unlinkPath)">\(hidden)
                <input type="hidden" name="id" value="\(HTML.escape(identity.id))">
                <p><strong>\(HTML.escape(identity.providerName))</strong>\(email)<br>\
                <span class="muted">Linked <time datetime="\(date)">\(date)</time></span></p>
                <button type="submit" class="secondary">Unlink \(HTML.escape(identity.providerName))</button>
                </form>
                """
        }
        let body =
            identities.isEmpty
            ? "<p class=\"muted\">No Apple, Google or other account is linked. Use “Continue with …” when you sign in to link one.</p>"
            : rows.joined(separator: "\n")
                + "\n<p class=\"muted\">You can unlink one while another way to sign in remains: a password, a passkey or another linked account.</p>"
        return "<h2 id=\"linked\">Linked accounts</h2>\n" + body
    }
}

/// The words of the upstream sign-in's pages (docs/federation.md, "Hosted sign-in").
enum UpstreamProblems {
    static let again = "Go back and try again, or sign in another way."

    static func cancelled(_ provider: String) -> PersonFacingError {
        PersonFacingError(headline: "Signing in with \(provider) was cancelled.", advice: again)
    }
    static let expired = PersonFacingError(headline: "That sign-in link has expired. Try again.", advice: again)
    static let used = PersonFacingError(headline: "That sign-in link was already used. Try again.", advice: again)
    static let badState = PersonFacingError(
        headline: "That sign-in link is not valid. Try again.", advice: "Start the sign-in again from the sign-in page.")
    static let notOffered = PersonFacingError(
        headline: "That way to sign in is not available here.", advice: "Go back and choose another way to sign in.")
    static let closed = PersonFacingError(
        headline: "This ZevID account is closed.", advice: "Sign in with another account, or ask the app's operator.")
    static let linkExpired = PersonFacingError(
        headline: "That request to link an account has expired.", advice: "Sign in again with the provider to link it.")

    static func unavailable(_ provider: String) -> PersonFacingError {
        PersonFacingError(headline: "Signing in with \(provider) is not available right now.", advice: again)
    }

    static func failed(_ provider: String, _ failure: UpstreamFailure) -> PersonFacingError {
        PersonFacingError(headline: "Signing in with \(provider) did not work.", advice: failure.sentence)
    }

    static func linkedElsewhere(_ provider: String) -> PersonFacingError {
        PersonFacingError(
            headline: "This \(provider) account is already linked to another ZevID account.",
            advice: "It stays linked there. Sign in to that account with \(provider), or unlink it there first.")
    }
}
