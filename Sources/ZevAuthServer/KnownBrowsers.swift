import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// "A sign-in from a new browser" (docs/protocol.md, "Security notices"): a browser is known to an
/// account once the account signed in from it. The browser keeps, in the `zevid_known` cookie (one year),
/// a tag per account that signed in there (at most 8): the first 16 characters of base64url(HMAC-SHA-256
/// under the server's key of `known-browser:<account id>`), so the cookie names no account and cannot
/// be forged for another. A password sign-in whose tag the browser does not present queues the notice.
/// Clearing cookies makes a browser new again, which errs on the side of telling the person.
struct KnownBrowsers: Sendable {
    let context: ServerContext

    static let maxTags = 8
    static let lifetimeSeconds = 365 * 86_400

    private func tag(userID: String) -> String {
        let key = context.configuration.encryptionKey ?? Array(context.configuration.operatorToken.utf8)
        return String(Base64URL.encode(Crypto.hmacSHA256(key: key, message: Array("known-browser:\(userID)".utf8))).prefix(16))
    }

    private func tags(_ request: HTTPRequest) -> [String] {
        (context.cookie(.knownBrowsers, in: request) ?? "").split(separator: ".").map(String.init).filter { $0.count == 16 }
    }

    /// Whether the browser presented the account's tag.
    func isKnown(userID: String, _ request: HTTPRequest) -> Bool { tags(request).contains(tag(userID: userID)) }

    /// The `Set-Cookie` that adds the account's tag (most recent last, the oldest dropped past `maxTags`).
    func remember(userID: String, _ request: HTTPRequest) -> String {
        let mine = tag(userID: userID)
        let kept = (tags(request).filter { $0 != mine } + [mine]).suffix(Self.maxTags)
        return context.setCookie(.knownBrowsers, kept.joined(separator: "."), maxAge: Self.lifetimeSeconds)
    }

    /// After a correct password: queues the notice when this browser is new to the account, and answers
    /// the cookie to set. A notice that cannot be queued does not stop the sign-in.
    func signedIn(userID: String, _ request: HTTPRequest) -> String {
        if !isKnown(userID: userID, request) {
            do {
                try context.accounts.notices.queue(.newBrowserSignIn, userID: userID, now: context.clock.now())
            } catch {
                context.log.write("new-browser notice not queued error=\(String(describing: type(of: error)))")
            }
        }
        return remember(userID: userID, request)
    }
}
