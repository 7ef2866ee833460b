import Foundation

/// One queued message as a drainer claims it (a row of `email_outbox` with its recipient resolved from
/// the account at send time: the stored address, or an address change's new one).
public struct OutboxMessage: Sendable, Equatable {
    public let id: String
    /// `code:<purpose>` for a code, else a `SecurityNotice` raw value.
    public let kind: String
    /// The address to send to; nil when the account is gone or closed (the message is dropped).
    public let recipient: String?
    /// The account's display name.
    public let name: String
    /// The code's flow and the code sealed to it (codes only).
    public let codeFlowID: String?
    public let codeSealed: String?
    /// Attempts made before this one.
    public let attempts: Int
    public let createdAt: Date
    public let giveUpAt: Date

    /// Creates a message (the store reads them; tests build them).
    public init(
        id: String, kind: String, recipient: String?, name: String, codeFlowID: String?, codeSealed: String?, attempts: Int,
        createdAt: Date, giveUpAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.recipient = recipient
        self.name = name
        self.codeFlowID = codeFlowID
        self.codeSealed = codeSealed
        self.attempts = attempts
        self.createdAt = createdAt
        self.giveUpAt = giveUpAt
    }
}

/// The outbox's retry rule (docs/operations.md, "Outbound email"): 15 s, then doubling up to 10 minutes
/// between attempts, for one hour from when the message was queued.
public enum EmailRetry {
    /// How long a message is retried, in seconds.
    public static let retrySeconds: Double = 3_600

    /// When to try again after `attempts` failed attempts, or nil when the hour is over.
    public static func nextAttempt(afterAttempts attempts: Int, now: Date, giveUpAt: Date) -> Date? {
        let delay = min(600, 15 * pow(2, Double(max(0, attempts - 1))))
        let next = now.addingTimeInterval(delay)
        if now >= giveUpAt { return nil }
        return min(next, giveUpAt)
    }
}

/// The messages' text (docs/protocol.md, "Email codes" and "Security notices"): a code names its purpose
/// and the code, never a link that signs in; a notice carries no code.
public enum EmailMessages {
    /// The outbox kind of a code for `purpose`.
    public static func codeKind(_ purpose: EmailCodePurpose) -> String { "code:\(purpose.rawValue)" }

    /// Subject and body of `kind`, or nil for a kind this server does not know (the message is dropped).
    public static func text(kind: String, name: String, code: String?) -> (subject: String, body: String)? {
        let greeting = "Hello \(name),\n\n"
        let closing = "\n\nZevID"
        if kind.hasPrefix("code:"), let purpose = EmailCodePurpose(rawValue: String(kind.dropFirst(5))), let code {
            let minutes = Int(EmailCodeRules.lifetimeSeconds / 60)
            return (
                "Your ZevID code: \(code)",
                greeting + "Enter this code to \(purpose.sentence):\n\n    \(code)\n\n"
                    + "It is valid for \(minutes) minutes. Type it on the page that asked for it; nobody from ZevID will ask you for it."
                    + "\nIf you did not ask for it, you can ignore this email." + closing
            )
        }
        guard let notice = SecurityNotice(rawValue: kind) else { return nil }
        let body: String
        let subject: String
        switch notice {
        case .passwordChanged:
            subject = "Your ZevID password was changed"
            body = "The password of your ZevID account was changed. Other browsers and apps were signed out."
        case .passwordReset:
            subject = "Your ZevID password was reset"
            body = "The password of your ZevID account was reset with a code sent to this address. Every browser and app was signed out."
        case .mfaEnrolled:
            subject = "Two-step verification was turned on"
            body = "An authenticator app was added to your ZevID account."
        case .mfaRemoved:
            subject = "Two-step verification was turned off"
            body = "The authenticator app was removed from your ZevID account."
        case .newBrowserSignIn:
            subject = "New sign-in to your ZevID account"
            body = "Your ZevID account was signed in to from a browser it had not used before."
        case .signUpAttempted:
            subject = "Someone tried to sign up with your address"
            body = "Someone tried to create a ZevID account with this address, which already has one. Nothing was changed."
        case .emailChangeRequested:
            subject = "A change of your ZevID address was asked for"
            body =
                "Someone signed in to your ZevID account asked to move it to another address. It moves only once that address is confirmed."
        case .codeEntryLocked:
            subject = "Code entry is locked for 24 hours"
            body = "Too many wrong codes were entered for your ZevID account, so codes cannot be entered for the next 24 hours."
        case .passkeyRemoved:
            subject = "A passkey was removed"
            body = "A passkey was removed from your ZevID account. It can no longer be used to sign in."
        case .passkeyCounterRegressed:
            subject = "A sign-in with one of your passkeys was refused"
            body =
                "A sign-in with one of your ZevID passkeys was refused because the passkey looked copied. Check the passkeys on your account page and remove any you do not recognise."
        }
        let advice = "\n\nIf this was not you, change your password from your account page and sign out everywhere."
        return (
            subject,
            greeting + body + (notice == .signUpAttempted ? "\n\nIf this was you, sign in instead, or use \"Forgot password?\"." : advice)
                + closing
        )
    }

    /// The complete RFC 5322 message (CRLF line endings, UTF-8 body), or nil for an unknown kind.
    /// - Parameters:
    ///   - fromHeader: the `From:` header's value as configured (7-bit, `ZevID <no-reply@example.com>`;
    ///     docs/operations.md, "Outbound email").
    ///   - fromAddress: its bare address, whose domain ends the `Message-ID`.
    public static func render(
        kind: String, to recipient: String, name: String, code: String?, fromHeader: String, fromAddress: String, messageID: String,
        date: Date
    ) -> [UInt8]? {
        guard let (subject, body) = text(kind: kind, name: name, code: code) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        let domain = fromAddress.split(separator: "@").last.map(String.init) ?? "zevauth.invalid"
        let headers = [
            "From: \(fromHeader)", "To: <\(recipient)>", "Subject: \(subject)", "Date: \(formatter.string(from: date))",
            "Message-ID: <\(messageID)@\(domain)>", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit", "Auto-Submitted: auto-generated",
        ]
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix(".") ? "." + $0 : String($0) }
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n" + lines.joined(separator: "\r\n") + "\r\n").utf8)
    }
}

/// What draining the outbox needs from storage.
public protocol EmailOutboxStore: Sendable {
    /// Claims up to `limit` due messages for `owner` for `leaseSeconds` (`FOR UPDATE SKIP LOCKED`), so no
    /// two drainers hold one message. `scope` restricts to messages queued under it (tests); nil: unscoped ones.
    /// - Throws: `StoreUnavailable`.
    func claimDueEmails(owner: String, scope: String?, now: Date, leaseSeconds: Double, limit: Int) throws -> [OutboxMessage]
    /// Records that `owner` sent `id` (only while it holds the lease). - Returns: whether the row was its.
    /// - Throws: `StoreUnavailable`.
    @discardableResult func markEmailSent(id: String, owner: String, now: Date) throws -> Bool
    /// Releases `id` for another attempt at `nextAttemptAt`, or ends it failed when that is nil.
    /// - Throws: `StoreUnavailable`.
    func markEmailRetry(id: String, owner: String, nextAttemptAt: Date?, now: Date) throws
    /// Counts one message against the deployment's hourly cap. - Returns: the count in this hour so far.
    /// - Throws: `StoreUnavailable`.
    func countDeploymentEmail(hourStart: Date) throws -> Int
}
