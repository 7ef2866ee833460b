import Authorize
import Foundation

/// An `id_token_hint` reader that knows a fixed set of hints by their exact text (every other hint is
/// not this server's ID token), and records what it was asked.
public final class FakeIDTokenHints: IDTokenHintReader, @unchecked Sendable {
    private let lock = NSLock()
    private var hints: [String: IDTokenHint]
    private var asked: [String] = []

    /// - Parameter hints: the hints it verifies, by their compact text.
    public init(_ hints: [String: IDTokenHint] = [:]) { self.hints = hints }

    /// Adds a hint it verifies.
    public func add(_ compact: String, _ hint: IDTokenHint) { lock.withLock { hints[compact] = hint } }

    /// The hints read so far, in order.
    public var reads: [String] { lock.withLock { asked } }

    public func read(_ compact: String) -> IDTokenHint? {
        lock.withLock {
            asked.append(compact)
            return hints[compact]
        }
    }

    /// A hint for `subject` issued to `audience`, naming app session `sessionID`.
    public static func hint(subject: String, audience: String, sessionID: String? = nil) -> IDTokenHint {
        IDTokenHint(
            subject: subject, audience: [audience], sessionID: sessionID, issuedAt: Date().addingTimeInterval(-7200),
            expiresAt: Date().addingTimeInterval(-3600))
    }
}
