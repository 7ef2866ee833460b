import Authorize
import Foundation
import Postgres

/// The account statements other areas still call on `PostgresStore` itself, forwarding to the aggregates
/// (`accounts`, `browserSessions`, `mfa`), and the rate-limit counters (docs/protocol.md#rate-limits).
/// New code uses the aggregates through the use cases' store protocols (docs/architecture.md).
extension PostgresStore {
    // MARK: - Forwarding to the account aggregates

    /// Creates a ZevID account (`PostgresAccounts.createUser`).
    /// - Parameters:
    ///   - emailNormalized: the address's key (`EmailAddress.key`); unique across the deployment.
    ///   - passwordHash: an Argon2id PHC string.
    /// - Throws: `StoreError.duplicate("users_email_unique")` when the address is taken; `StoreUnavailable`.
    public func createUser(email: String, emailNormalized: String, name: String, passwordHash: String, now: Date) throws -> UserRecord {
        try accounts.createUser(email: email, emailKey: emailNormalized, name: name, passwordHash: passwordHash, now: now)
    }

    /// The account with this normalized email, open or closed (`PostgresAccounts.user(emailKey:)`).
    public func user(emailNormalized: String) throws -> UserRecord? { try accounts.user(emailKey: emailNormalized) }

    /// The account with this id, open or closed (`PostgresAccounts.user(id:)`).
    public func user(id: String) throws -> UserRecord? { try accounts.user(id: id) }

    /// Whether the person has consented to this environment's app before (`PostgresAccounts.hasConsent`).
    public func hasConsent(userID: String, environmentID: String) throws -> Bool {
        try accounts.hasConsent(userID: userID, environmentID: environmentID)
    }

    /// The live browser session whose cookie hashes to `tokenHash`, with an open account.
    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
        try browserSessions.browserSession(tokenHash: tokenHash)
    }

    /// Ends every browser and app session and pending second-factor challenge of the person on the
    /// connection given (`PostgresAccounts.endEverything`), for tests that hold the transaction open.
    static func endEverything(_ connection: PostgresConnection, userID: String, now: Date, reason: String) throws {
        try PostgresAccounts.endEverything(connection, userID: userID, now: now, reason: reason)
    }
}
