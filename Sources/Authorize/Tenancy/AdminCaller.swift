/// Who calls the admin API (docs/protocol.md#admin-api): the operator (the deployment's token) or an
/// environment, by one of its unrevoked secret keys.
public enum AdminCaller: Sendable, Equatable {
    /// The bearer is the operator token.
    case `operator`
    /// The bearer is a live secret key of this environment; `keyHash` is its stored digest.
    case environment(EnvironmentRecord, keyHash: String)
}

/// What resolving an admin bearer needs from storage.
public protocol SecretKeyLookupStore: Sendable {
    /// The environment whose unrevoked secret key has this digest, or nil.
    /// - Throws: `StoreUnavailable`.
    func environment(secretKeyHash: String) throws -> EnvironmentRecord?
}

/// Resolves an admin bearer: the operator token (compared as SHA-256 digests in constant time) or an
/// unrevoked `sk_test_…`/`sk_live_…` key (looked up by its digest). Anything else is nobody.
public struct ResolveAdminCaller: Sendable {
    let store: any SecretKeyLookupStore
    let secrets: any Secrets
    let operatorTokenDigest: [UInt8]

    /// - Parameters:
    ///   - store: the secret-key lookup.
    ///   - secrets: hashing and constant-time comparison.
    ///   - operatorToken: the deployment's operator token (only its SHA-256 is kept).
    public init(store: any SecretKeyLookupStore, secrets: any Secrets, operatorToken: String) {
        self.store = store
        self.secrets = secrets
        self.operatorTokenDigest = secrets.sha256(Array(operatorToken.utf8))
    }

    /// - Parameter bearer: the `Authorization: Bearer` credential, or nil.
    /// - Returns: the caller, or nil when the bearer names nobody.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(bearer: String?) throws -> AdminCaller? {
        guard let bearer else { return nil }
        if secrets.constantTimeEquals(secrets.sha256(Array(bearer.utf8)), operatorTokenDigest) { return .operator }
        guard Self.looksLikeSecretKey(bearer) else { return nil }
        let hash = secrets.digest(bearer)
        return try store.environment(secretKeyHash: hash).map { .environment($0, keyHash: hash) }
    }

    /// Whether `token` has a secret key's prefix (docs/protocol.md#credentials).
    public static func looksLikeSecretKey(_ token: String) -> Bool {
        token.hasPrefix(EnvironmentKind.development.secretKeyPrefix) || token.hasPrefix(EnvironmentKind.production.secretKeyPrefix)
    }
}
