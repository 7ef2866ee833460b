import Authorize
import Foundation
import HTTPServer

/// A person's own security events (docs/console.md, "Audit log"; listed on `/account` as "Recent
/// activity"): sign-ins, failed passwords of an existing account, MFA enrolment, password changes and
/// resets, sign-outs and email changes, each one `audit_log` row with actor `account` and the person as
/// its subject. They accompany no admin change, so they go through the `AuditRecorder`.
struct PersonalActivity: Sendable {
    let context: ServerContext

    /// Records `action` (`signin.password`, `mfa.enrol`, …) for the account `userID`.
    /// - Throws: `StoreUnavailable`.
    func record(_ action: String, userID: String, _ request: HTTPRequest) throws {
        try context.tenancy.audit.record(
            AuditEntry(
                actor: .account(userID: userID), action: action, subjectUserID: userID,
                clientAddress: ClientAddress.of(request, configuration: context.configuration), at: context.clock.now()))
    }

    /// The person's last 20 events, newest first.
    /// - Throws: `StoreUnavailable`.
    func recent(userID: String) throws -> [AuditEntry] {
        try ListAudit(store: context.tenancy.auditLog)(.subject(userID: userID), cursor: nil, limit: 20).items.map(\.entry)
    }

    /// An event in words, as the person reads it on `/account`.
    static func words(_ entry: AuditEntry) -> String {
        let refused = entry.outcome == .refused
        switch entry.action {
        case "signin.password": return "Signed in with your password"
        case "signin.second_factor": return "Signed in with your password and two-step verification"
        case "signin.failed_password": return "A sign-in failed: the password was wrong"
        case "signin.passkey": return "Signed in with a passkey"
        case "signin.upstream": return "Signed in with a linked account (Apple, Google or another provider)"
        case "signin.upstream_second_factor": return "Signed in with a linked account and two-step verification"
        case "upstream.link": return "A sign-in provider was linked"
        case "upstream.unlink": return "A sign-in provider was unlinked"
        case "passkey.create": return "Passkey created"
        case "passkey.remove": return "Passkey removed"
        case "passkey.counter_regressed": return "A passkey sign-in was refused: the passkey looked copied"
        case "mfa.enrol": return "Two-step verification turned on"
        case "mfa.remove": return "Two-step verification turned off"
        case "account.mfa_reset": return "Two-step verification removed by the operator"
        case "password.change": return "Password changed"
        case "password.reset": return "Password reset by email"
        case "signout": return "Signed out"
        case "signout.everywhere": return "Signed out everywhere"
        case "email.change": return "Email address changed"
        case "account.create": return "Account created"
        case "account.close": return "Account closed"
        default: return refused ? "An action on your account was refused" : "A change to your account"
        }
    }
}
