import Foundation

/// What secret-key rotation needs from storage (docs/protocol.md#admin-keys).
public protocol SecretKeyStore: Sendable {
    /// Adds a key (stored as `keyHash`, its digest, and its last 4 characters); it works at once.
    /// `audit` (named after the new key) is written in the same transaction (docs/console.md, "Audit log").
    /// - Throws: `StoreUnavailable`.
    func addSecretKey(environmentID: String, keyHash: String, suffix: String, now: Date, audit: AuditEntry) throws -> SecretKeyRecord
    /// Up to `limit` keys of the environment, live and revoked, oldest first, after the key `after`.
    /// - Throws: `StoreUnavailable`.
    func secretKeys(environmentID: String, after: String?, limit: Int) throws -> [SecretKeyRecord]
    /// The id of the live key with this digest.
    /// - Throws: `StoreUnavailable`.
    func secretKeyID(keyHash: String) throws -> String?
    /// Revokes a key of the environment, never its last live one (serialised per environment).
    /// `audit` is written in the same transaction when a live key is revoked, and only then.
    /// - Throws: `StoreUnavailable`.
    func revokeSecretKey(environmentID: String, id: String, now: Date, audit: AuditEntry) throws -> SecretKeyRevocation
}

/// A listed key, with whether it is the one making the call.
public struct ListedSecretKey: Sendable, Equatable {
    public let key: SecretKeyRecord
    /// Whether this is the calling key.
    public let current: Bool
}

/// Secret-key rotation of an environment: mint a key of the environment's kind, list keys (never a key
/// itself), revoke one but never the last live one (docs/protocol.md#secret-keys).
public struct SecretKeys: Sendable {
    let store: any SecretKeyStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: where keys are kept.
    ///   - secrets: the key mint and digest.
    public init(store: any SecretKeyStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// Mints a key for `environment` (`sk_live_…` in production, `sk_test_…` in development).
    /// - Returns: the stored record and the key, which is shown only once.
    /// - Throws: when the CSPRNG fails; `StoreUnavailable`.
    public func create(for environment: EnvironmentRecord, now: Date, audit: AuditEntry) throws -> (record: SecretKeyRecord, secret: String)
    {
        let secret = try secrets.mintToken(prefix: environment.kind.secretKeyPrefix)
        let record = try store.addSecretKey(
            environmentID: environment.id, keyHash: secrets.digest(secret), suffix: String(secret.suffix(4)), now: now, audit: audit)
        return (record, secret)
    }

    /// One page of the environment's keys; `callingKeyHash` marks the calling key `current`.
    /// - Throws: `StoreUnavailable`.
    public func list(environmentID: String, callingKeyHash: String, cursor: String?, limit: Int) throws -> Page<ListedSecretKey> {
        let callingID = try store.secretKeyID(keyHash: callingKeyHash)
        let rows = try store.secretKeys(environmentID: environmentID, after: cursor, limit: limit + 1)
        return Page(rows: rows.map { ListedSecretKey(key: $0, current: $0.id == callingID) }, limit: limit, id: \.key.id)
    }

    /// Revokes a key (the calling key may revoke itself while another live key exists).
    /// - Throws: `StoreUnavailable`.
    public func revoke(environmentID: String, id: String, now: Date, audit: AuditEntry) throws -> SecretKeyRevocation {
        try store.revokeSecretKey(environmentID: environmentID, id: id, now: now, audit: audit)
    }
}
