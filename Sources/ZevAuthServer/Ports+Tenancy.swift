import Association
import Authorize
import Foundation
import PostgresStore

/// The store ports of tenancy, mobile apps and association files (projects, environments, keys, domains,
/// apps, link checks): one existential per use case's protocol, so handlers can be tested in process with
/// fakes (Tests/ZevAuthTesting/Fakes+Tenancy.swift).
public struct TenancyPorts: Sendable {
    /// Admin bearer → environment (`ResolveAdminCaller`).
    public var secretKeyLookup: any SecretKeyLookupStore
    /// `CreateProject`.
    public var projectCreation: any ProjectCreationStore
    /// `ListProjects`.
    public var projectList: any ProjectListStore
    /// `UpdateSessionSettings`.
    public var sessionSettings: any SessionSettingsStore
    /// `SecretKeys`.
    public var secretKeys: any SecretKeyStore
    /// `ProjectDomains`.
    public var domains: any DomainStore
    /// `DomainVerification`.
    public var domainTokens: any DomainTokenStore
    /// `AppRegistration`.
    public var apps: any AppRegistrationStore
    /// `AssociationFiles`.
    public var associationFiles: any AssociationFileStore
    /// `LinkCheck`.
    public var linkChecks: any LinkCheckStore
    /// The link scheduler's claims.
    public var linkSchedule: any LinkScheduleStore
    /// `ProjectMembers` (members and operators).
    public var members: any ProjectMemberStore
    /// The HTTPS fetch of association and token files; nil: the configured `HTTPSFetcher`.
    public var fetcher: (any AssociationFetcher)?
    /// Refused admin calls and events without a write of their own (`AdminAudit`).
    public var audit: any AuditRecorder
    /// `ListAudit` (`GET /v1/admin/audit`, "Recent activity" on `/account`).
    public var auditLog: any AuditLogStore
    /// The deployment's upstream OpenID providers and each project's choice (`UpstreamProviders`).
    public var providers: any UpstreamProviderStore
    /// The environments' web clients (`WebClients`, client authentication at the token endpoint).
    public var webClients: any WebClientStore

    /// Every port given explicitly (tests pass fakes).
    public init(
        secretKeyLookup: any SecretKeyLookupStore, projectCreation: any ProjectCreationStore, projectList: any ProjectListStore,
        sessionSettings: any SessionSettingsStore, secretKeys: any SecretKeyStore, domains: any DomainStore,
        domainTokens: any DomainTokenStore, apps: any AppRegistrationStore, associationFiles: any AssociationFileStore,
        linkChecks: any LinkCheckStore, linkSchedule: any LinkScheduleStore, members: any ProjectMemberStore,
        fetcher: (any AssociationFetcher)? = nil, audit: any AuditRecorder, auditLog: any AuditLogStore,
        providers: any UpstreamProviderStore, webClients: (any WebClientStore)? = nil
    ) {
        self.secretKeyLookup = secretKeyLookup
        self.projectCreation = projectCreation
        self.projectList = projectList
        self.sessionSettings = sessionSettings
        self.secretKeys = secretKeys
        self.domains = domains
        self.domainTokens = domainTokens
        self.apps = apps
        self.associationFiles = associationFiles
        self.linkChecks = linkChecks
        self.linkSchedule = linkSchedule
        self.members = members
        self.fetcher = fetcher
        self.audit = audit
        self.auditLog = auditLog
        self.providers = providers
        self.webClients = webClients ?? UnavailableWebClientStore()
    }

    /// Every port of this area backed by PostgreSQL.
    public init(_ store: PostgresStore) {
        let tenancy = store.tenancy
        let apps = store.apps
        let linkChecks = store.linkChecks
        self.init(
            secretKeyLookup: tenancy, projectCreation: tenancy, projectList: tenancy, sessionSettings: tenancy, secretKeys: tenancy,
            domains: tenancy, domainTokens: tenancy, apps: apps, associationFiles: apps, linkChecks: linkChecks,
            linkSchedule: linkChecks, members: store.members, audit: store.audit, auditLog: store.audit,
            providers: store.providers, webClients: store.webClients)
    }
}

/// The web-client port of a composition that has none (in-process tests that never reach web clients):
/// every call is `StoreUnavailable`.
public struct UnavailableWebClientStore: WebClientStore {
    static let unavailable = StoreUnavailable(reason: "no_web_client_store")

    public init() {}
    public func webClients(environmentID: String, after: String?, limit: Int) throws -> [ListedWebClient] { throw Self.unavailable }
    public func webClient(clientID: String) throws -> ListedWebClient? { throw Self.unavailable }
    public func createWebClient(
        clientID: String, environmentID: String, _ columns: WebClientColumns, secret: NewWebClientSecret?, now: Date, audit: AuditEntry
    ) throws -> ListedWebClient { throw Self.unavailable }
    public func updateWebClient(clientID: String, environmentID: String, _ columns: WebClientColumns, now: Date, audit: AuditEntry) throws
        -> ListedWebClient
    { throw Self.unavailable }
    public func deleteWebClient(clientID: String, environmentID: String, audit: AuditEntry) throws { throw Self.unavailable }
    public func addWebClientSecret(clientID: String, environmentID: String, _ secret: NewWebClientSecret, now: Date, audit: AuditEntry)
        throws -> WebClientSecretRecord
    { throw Self.unavailable }
    public func revokeWebClientSecret(clientID: String, environmentID: String, secretID: String, now: Date, audit: AuditEntry) throws
        -> WebClientSecretRecord
    { throw Self.unavailable }
    public func authenticatingClient(clientID: String, now: Date) throws -> AuthenticatingClient? { throw Self.unavailable }
    public func useAssertionID(clientID: String, jti: String, expiresAt: Date) throws -> Bool { throw Self.unavailable }
    public func webClientConsents(userID: String, clientID: String) throws -> [String] { throw Self.unavailable }
    public func revokeWebClientSession(clientID: String, tokenHash: String, now: Date) throws -> Bool { throw Self.unavailable }
}
