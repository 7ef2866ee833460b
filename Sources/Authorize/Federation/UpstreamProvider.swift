import Foundation

/// The kinds of upstream OpenID provider a deployment may configure (docs/federation.md, "Providers").
public enum UpstreamProviderKind: String, Sendable, Equatable, CaseIterable {
    /// Sign in with Apple: a services ID, a team ID, a key ID and the `.p8` key the client secret is minted with.
    case apple
    /// Google: a client ID and a client secret.
    case google
    /// Any other OpenID provider with discovery: an issuer URL, a client ID and a client secret.
    case oidc

    /// The issuer of Apple and Google, which the operator does not type; nil for `oidc`.
    public var fixedIssuer: String? {
        switch self {
        case .apple: "https://appleid.apple.com"
        case .google: "https://accounts.google.com"
        case .oidc: nil
        }
    }

    /// The name of "Continue with NAME" for Apple and Google (their button rules fix it); nil for `oidc`.
    public var fixedDisplayName: String? {
        switch self {
        case .apple: "Apple"
        case .google: "Google"
        case .oidc: nil
        }
    }

    /// Whether the provider authenticates with a stored client secret (`google`, `oidc`); Apple's is minted.
    public var hasStoredClientSecret: Bool { self != .apple }
}

/// A provider as stored: everything but the secrets is plain; the secrets are sealed boxes
/// (`UpstreamProviderSecrets`), which no answer of the admin API or the console ever shows.
public struct UpstreamProviderRecord: Sendable, Equatable {
    /// A UUID, lower-case.
    public let id: String
    public let kind: UpstreamProviderKind
    /// Unique per deployment (`ProviderSlug`).
    public let slug: String
    /// NAME of "Continue with NAME".
    public let displayName: String
    /// The upstream's issuer identifier (OpenID Connect Discovery 1.0 §2).
    public let issuer: String
    /// The OAuth client ID at the upstream; Apple's services ID.
    public let clientID: String
    /// Apple's team ID (10 characters `A-Z0-9`); nil for other kinds.
    public let appleTeamID: String?
    /// The ID of Apple's `.p8` key (10 characters `A-Z0-9`); nil for other kinds.
    public let appleKeyID: String?
    /// The sealed client secret (`google`, `oidc`): base64 of `nonce ‖ ciphertext ‖ tag`.
    public let sealedClientSecret: String?
    /// The sealed PKCS#8 DER of Apple's private key (`apple`): base64 of `nonce ‖ ciphertext ‖ tag`.
    public let sealedApplePrivateKey: String?
    public let createdAt: Date
    /// When the provider last changed (also names the version of the Apple client secret minted from it).
    public let updatedAt: Date

    public init(
        id: String, kind: UpstreamProviderKind, slug: String, displayName: String, issuer: String, clientID: String,
        appleTeamID: String?, appleKeyID: String?, sealedClientSecret: String?, sealedApplePrivateKey: String?, createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.slug = slug
        self.displayName = displayName
        self.issuer = issuer
        self.clientID = clientID
        self.appleTeamID = appleTeamID
        self.appleKeyID = appleKeyID
        self.sealedClientSecret = sealedClientSecret
        self.sealedApplePrivateKey = sealedApplePrivateKey
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// The columns a create or an update writes, secrets already sealed. For an update, nil means "keep".
public struct UpstreamProviderColumns: Sendable, Equatable {
    public var slug: String?
    public var displayName: String?
    public var issuer: String?
    public var clientID: String?
    public var appleTeamID: String?
    public var appleKeyID: String?
    public var sealedClientSecret: String?
    public var sealedApplePrivateKey: String?

    public init(
        slug: String? = nil, displayName: String? = nil, issuer: String? = nil, clientID: String? = nil, appleTeamID: String? = nil,
        appleKeyID: String? = nil, sealedClientSecret: String? = nil, sealedApplePrivateKey: String? = nil
    ) {
        self.slug = slug
        self.displayName = displayName
        self.issuer = issuer
        self.clientID = clientID
        self.appleTeamID = appleTeamID
        self.appleKeyID = appleKeyID
        self.sealedClientSecret = sealedClientSecret
        self.sealedApplePrivateKey = sealedApplePrivateKey
    }
}

/// Why a change of providers did not happen.
public enum ProviderRefusal: Error, Sendable, Equatable {
    /// Another provider has the slug (answered 409 `conflict`).
    case slugTaken
    /// No provider has the id (404 `not_found`).
    case noProvider
    /// No project has the id (404 `not_found`).
    case noProject
    /// A project's list names a provider that does not exist (400 `invalid_request`, naming `providerIds`).
    case unknownProvider
}

/// What managing providers needs from storage. Every write inserts its audit row in its own transaction.
public protocol UpstreamProviderStore: Sendable {
    /// Up to `limit` providers in creation order, after the provider `after` (a cursor that names no provider
    /// starts from the beginning).
    /// - Throws: `StoreUnavailable`.
    func providers(after: String?, limit: Int) throws -> [UpstreamProviderRecord]
    /// The provider with `id`, or nil.
    /// - Throws: `StoreUnavailable`.
    func provider(id: String) throws -> UpstreamProviderRecord?
    /// Stores a new provider (every column of `columns` given, as its kind needs).
    /// - Throws: `ProviderRefusal.slugTaken`; `StoreUnavailable`.
    func createProvider(
        id: String, kind: UpstreamProviderKind, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry
    ) throws -> UpstreamProviderRecord
    /// Changes the given columns of a provider and its `updated_at`.
    /// - Throws: `ProviderRefusal.noProvider`, `.slugTaken`; `StoreUnavailable`.
    func updateProvider(id: String, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry) throws
        -> UpstreamProviderRecord
    /// Deletes a provider (and so every project's choice of it and every identity linked through it).
    /// - Throws: `ProviderRefusal.noProvider`; `StoreUnavailable`.
    func deleteProvider(id: String, audit: AuditEntry) throws
    /// The providers `projectID`'s sign-in page shows, in order.
    /// - Throws: `ProviderRefusal.noProject`; `StoreUnavailable`.
    func projectProviders(projectID: String) throws -> [UpstreamProviderRecord]
    /// Replaces the providers `projectID`'s sign-in page shows with `providerIDs`, in that order.
    /// - Throws: `ProviderRefusal.noProject`, `.unknownProvider`; `StoreUnavailable`.
    func setProjectProviders(projectID: String, providerIDs: [String], audit: AuditEntry) throws -> [UpstreamProviderRecord]
}
