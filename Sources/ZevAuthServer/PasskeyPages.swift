import Authorize
import Encoding
import Foundation
import HTTPServer

/// The account page's passkeys and its re-authentication state.
struct PasskeySection: Sendable {
    /// The account's passkeys, oldest first.
    let passkeys: [PasskeyRecord]
    /// The script's context (`data-csrf` for the JSON calls).
    let context: PasskeyPageContext
    /// Whether removing needs the password again (the sign-in is 10 minutes old or older).
    let removalNeedsPassword: Bool
}

/// The passkey parts of the hosted pages (docs/passkeys.md, "Pages and script"), rendered like `Pages`:
/// every value escaped, every input labelled, the ids the script looks for (`passkey-create`,
/// `passkey-name`, `passkey-error`) fixed here.
enum PasskeyPages {
    /// `<section id="passkeys">` of `/account`: the create button (shown by the script when the browser
    /// can create passkeys), an optional name, and the list with rename and remove forms.
    /// - Parameter hidden: the signed-in forms' CSRF field.
    static func section(_ section: PasskeySection, hidden: String) -> String {
        let list =
            section.passkeys.isEmpty
            ? "<p class=\"muted\">You have no passkeys yet.</p>"
            : section.passkeys.map { item($0, hidden: hidden, removalNeedsPassword: section.removalNeedsPassword) }
                .joined(separator: "\n")
        let full = section.passkeys.count >= PasskeyRules.maxPerAccount
        return """
            <section id="passkeys" aria-labelledby="passkeys-heading">
            <h2 id="passkeys-heading">Passkeys</h2>
            <p>A passkey signs you in with your fingerprint, face or device PIN instead of your password.</p>
            \(full ? "<p class=\"muted\">\(HTML.escape(PasskeyFailure.limit.message))</p>" : createControls)
            \(list)
            </section>
            """
    }

    /// The name field and the create button, with the script's error area.
    static let createControls = """
        <label for="passkey-name">Name for a new passkey (optional)</label>
        <input id="passkey-name" name="passkey_name" type="text" autocomplete="off" maxlength="64" aria-describedby="passkey-name-hint">
        <p class="hint" id="passkey-name-hint">Up to 64 characters, such as "Work laptop". Without one, it is named after its provider.</p>
        <button type="button" id="passkey-create" hidden>Create a passkey</button>
        <p class="error" id="passkey-error" role="alert" hidden></p>
        """

    /// One passkey: name, provider, created, last used, synced or device-bound; rename and remove.
    static func item(_ passkey: PasskeyRecord, hidden: String, removalNeedsPassword: Bool) -> String {
        let id = HTML.escape(passkey.id)
        let used = passkey.lastUsedAt.map { "last used \(time($0))" } ?? "never used"
        let password =
            removalNeedsPassword
            ? Pages.input(
                id: "passkey-password-\(id)", name: "password", label: "Current password (you signed in more than 10 minutes ago)",
                type: "password", autocomplete: "current-password")
            : ""
        return """
            <div class="passkey">
            <p><strong>\(HTML.escape(passkey.name))</strong><br>
            <span class="muted">\(HTML.escape(passkey.provider)) · \(HTML.escape(passkey.syncLabel)) · created \(time(passkey.createdAt)) · \(used)</span></p>
            <form method="post" action="/account/passkeys/rename">\(hidden)
            <input type="hidden" name="id" value="\(id)">
            <label for="passkey-rename-\(id)">New name for \(HTML.escape(passkey.name))</label>
            <input id="passkey-rename-\(id)" name="name" type="text" autocomplete="off" required maxlength="64" value="\(HTML.escape(passkey.name))">
            <button type="submit" class="secondary">Rename</button>
            </form>
            <form method="post" action="/account/passkeys/remove">\(hidden)
            <input type="hidden" name="id" value="\(id)">
            \(password)
            <button type="submit" class="secondary">Remove \(HTML.escape(passkey.name))</button>
            </form>
            </div>
            """
    }

    /// A `<time>` element in UTC, to the minute.
    static func time(_ date: Date) -> String {
        let stamp = Wire.timestamp(date)
        return
            "<time datetime=\"\(HTML.escape(stamp))\">\(HTML.escape(String(stamp.prefix(16)).replacingOccurrences(of: "T", with: " "))) UTC</time>"
    }

    /// The offer after a sign-up or a password sign-in (`GET /account/passkeys/offer`): "Create a passkey"
    /// (the script) or "Not now", which is remembered for 30 days.
    static func offer(context: PasskeyPageContext, cookies: [String]) -> HTTPResponse {
        let request = context.requestID.map { "<input type=\"hidden\" name=\"request\" value=\"\(HTML.escape($0))\">" } ?? ""
        return Pages.page(
            title: "Create a passkey",
            body: """
                <h1>Sign in faster next time</h1>
                <p>Create a passkey to sign in with your fingerprint, face or device PIN instead of your password.</p>
                \(createControls)
                <form method="post" action="/account/passkeys/offer/skip">
                <input type="hidden" name="csrf" value="\(HTML.escape(context.csrf))">
                \(request)
                <button type="submit" class="secondary">Not now</button>
                </form>
                """, cookies: cookies, passkeys: context)
    }
}
