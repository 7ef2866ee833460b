import Authorize
import Foundation
import Synchronization
import Testing

/// The operator's MFA reset decides when to send the `mfa_removed` notice (docs/protocol.md#mfa-reset).
@Suite struct ResetMFATests {
    /// One account; its factor is there until the first reset.
    final class OneAccount: ResetMFAStore {
        let user = UserRecord(id: "u1", email: "pat@example.com", name: "Pat", imageURL: nil, passwordHash: "h", closed: false)
        let factor = Mutex(true)
        let resets = Mutex(0)
        func resetMFA(userID: String, now: Date, audit: AuditEntry) throws -> (user: UserRecord, hadFactor: Bool)? {
            guard userID == user.id else { return nil }
            resets.withLock { $0 += 1 }
            let had = factor.withLock { present in
                let was = present
                present = false
                return was
            }
            return (user, had)
        }
    }

    /// Records each notice queued.
    final class RecordingNotices: SecurityNotices {
        let queued = Mutex<[String]>([])
        func queue(_ notice: SecurityNotice, userID: String, now: Date) throws {
            queued.withLock { $0.append("\(notice.rawValue) \(userID)") }
        }
    }

    @Test func removesOnceNotifiesOnceAndEndsSessionsOnEveryCall() throws {
        let store = OneAccount()
        let notices = RecordingNotices()
        let reset = ResetMFA(store: store, notices: notices)
        let first = try #require(
            try reset(userID: "u1", now: Date(), audit: AuditEntry(actor: .operatorToken, action: "test", clientAddress: nil, at: Date())))
        #expect(first.removed)
        #expect(notices.queued.withLock { $0 } == ["mfa_removed u1"])
        let again = try #require(
            try reset(userID: "u1", now: Date(), audit: AuditEntry(actor: .operatorToken, action: "test", clientAddress: nil, at: Date())))
        #expect(!again.removed)
        #expect(notices.queued.withLock { $0 } == ["mfa_removed u1"])
        #expect(store.resets.withLock { $0 } == 2)
        #expect(
            try reset(
                userID: "nobody", now: Date(), audit: AuditEntry(actor: .operatorToken, action: "test", clientAddress: nil, at: Date()))
                == nil)
    }
}
