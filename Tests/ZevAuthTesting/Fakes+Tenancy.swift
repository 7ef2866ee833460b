import Association
import Authorize
import Foundation
import Synchronization
import ZevAuthServer

/// An in-memory tenancy: projects with both environments, secret keys (by digest), domains, apps and link
/// states, conforming to every store protocol of Authorize/Tenancy and Association, so handlers and use
/// cases are tested in process without PostgreSQL. It keeps the rules the real store enforces that tests
/// lean on (app limits and the one-team rule, duplicates, the last live key) in their simplest form.
public final class FakeTenancyStore: @unchecked Sendable {
    public struct State {
        public var environments: [EnvironmentRecord] = []
        public var projects: [ProjectRecord] = []
        /// Secret keys: environment id, digest, record.
        public var keys: [(environmentID: String, hash: String, record: SecretKeyRecord)] = []
        public var domains: [(projectID: String, record: DomainRecord)] = []
        public var apps: [AppRecord] = []
        /// Link callbacks: environment id, host, path.
        public var linkCallbacks: [(environmentID: String, host: String, path: String)] = []
        public var linkStates: [LinkStateRecord] = []
        public var checks: [LinkCheckRecord] = []
        public var failures: [String: Int] = [:]
        /// Every audit entry a change method was given or `record(_:)` received, in order (the fake keeps no
        /// transaction: it notes the entry whatever the change's outcome).
        public var audit: [AuditEntry] = []
    }

    public let state = Mutex(State())
    private let counter = Mutex(0)

    public init() {}

    /// A fresh UUID-shaped id.
    public func nextID() -> String {
        let n = counter.withLock { value -> Int in
            value += 1
            return value
        }
        return String(format: "00000000-0000-4000-8000-%012d", n)
    }

    /// Adds a project with both environments and one live key each; returns the environments and their secret keys.
    @discardableResult
    public func seedProject(name: String = "Acme", now: Date = Date(timeIntervalSince1970: 1_700_000_000)) -> (
        development: EnvironmentRecord, developmentSecret: String, production: EnvironmentRecord, productionSecret: String
    ) {
        let projectID = nextID()
        let secrets = FakeSecrets()
        func environment(_ kind: EnvironmentKind) -> (EnvironmentRecord, String) {
            let record = EnvironmentRecord(
                id: nextID(), projectID: projectID, projectName: name, kind: kind,
                publishableKey: "\(kind.publishableKeyPrefix)\(nextID())",
                sessionMaxAgeDays: 90, sessionIdleDays: 30, accessTokenTTLMinutes: 15, refreshReuseGraceSeconds: 10)
            let secret = "\(kind.secretKeyPrefix)\(nextID())"
            state.withLock {
                $0.environments.append(record)
                $0.keys.append(
                    (
                        record.id, secrets.digest(secret),
                        SecretKeyRecord(id: nextID(), suffix: String(secret.suffix(4)), createdAt: now, revokedAt: nil)
                    ))
            }
            return (record, secret)
        }
        let development = environment(.development)
        let production = environment(.production)
        state.withLock {
            $0.projects.append(
                ProjectRecord(
                    id: projectID, name: name, createdAt: now, developmentPublishableKey: development.0.publishableKey,
                    productionPublishableKey: production.0.publishableKey))
        }
        return (development.0, development.1, production.0, production.1)
    }
}

extension FakeTenancyStore: SecretKeyLookupStore, ProjectCreationStore, ProjectListStore, SessionSettingsStore, SecretKeyStore, DomainStore,
    DomainTokenStore
{
    public func environment(secretKeyHash: String) throws -> EnvironmentRecord? {
        state.withLock { state in
            guard let key = state.keys.first(where: { $0.hash == secretKeyHash && $0.record.revokedAt == nil }) else { return nil }
            return state.environments.first { $0.id == key.environmentID }
        }
    }

    public func createProject(
        name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, owner: NewProjectOwner?, now: Date,
        audit: AuditEntry
    ) throws -> String {
        record(audit)
        let projectID = nextID()
        state.withLock { state in
            for (kind, keys) in [(EnvironmentKind.development, development), (.production, production)] {
                let id = nextID()
                state.environments.append(
                    EnvironmentRecord(
                        id: id, projectID: projectID, projectName: name, kind: kind, publishableKey: keys.publishableKey,
                        sessionMaxAgeDays: 90, sessionIdleDays: 30, accessTokenTTLMinutes: 15, refreshReuseGraceSeconds: 10))
                state.keys.append(
                    (id, keys.secretKeyHash, SecretKeyRecord(id: nextID(), suffix: keys.secretKeySuffix, createdAt: now, revokedAt: nil)))
            }
            state.projects.append(
                ProjectRecord(
                    id: projectID, name: name, createdAt: now, developmentPublishableKey: development.publishableKey,
                    productionPublishableKey: production.publishableKey))
        }
        return projectID
    }

    public func projects(after: String?, limit: Int) throws -> [ProjectRecord] {
        state.withLock { state in
            let start = after.flatMap { cursor in state.projects.firstIndex { $0.id == cursor }.map { $0 + 1 } } ?? 0
            return Array(state.projects.dropFirst(start).prefix(limit))
        }
    }

    public func updateSessionSettings(
        environmentID: String, _ update: SessionSettingsUpdate, now: Date, audit: AuditEntry
    ) throws -> EnvironmentRecord? {
        record(audit)
        return state.withLock { state in
            guard let index = state.environments.firstIndex(where: { $0.id == environmentID }) else { return nil }
            let e = state.environments[index]
            var updated = EnvironmentRecord(
                id: e.id, projectID: e.projectID, projectName: e.projectName, kind: e.kind, publishableKey: e.publishableKey,
                sessionMaxAgeDays: update.sessionMaxAgeDays ?? e.sessionMaxAgeDays,
                sessionIdleDays: update.sessionIdleDays ?? e.sessionIdleDays,
                accessTokenTTLMinutes: update.accessTokenTTLMinutes ?? e.accessTokenTTLMinutes,
                refreshReuseGraceSeconds: update.refreshReuseGraceSeconds ?? e.refreshReuseGraceSeconds)
            updated.idTokenSigningAlg = update.idTokenSigningAlg ?? e.idTokenSigningAlg
            state.environments[index] = updated
            return updated
        }
    }

    public func addSecretKey(environmentID: String, keyHash: String, suffix: String, now: Date, audit: AuditEntry) throws -> SecretKeyRecord
    {
        record(audit)
        let record = SecretKeyRecord(id: nextID(), suffix: suffix, createdAt: now, revokedAt: nil)
        state.withLock { $0.keys.append((environmentID, keyHash, record)) }
        return record
    }

    public func secretKeys(environmentID: String, after: String?, limit: Int) throws -> [SecretKeyRecord] {
        state.withLock { state in
            let keys = state.keys.filter { $0.environmentID == environmentID }.map(\.record)
            let start = after.flatMap { cursor in keys.firstIndex { $0.id == cursor }.map { $0 + 1 } } ?? 0
            return Array(keys.dropFirst(start).prefix(limit))
        }
    }

    public func secretKeyID(keyHash: String) throws -> String? {
        state.withLock { $0.keys.first { $0.hash == keyHash && $0.record.revokedAt == nil }?.record.id }
    }

    public func revokeSecretKey(environmentID: String, id: String, now: Date, audit: AuditEntry) throws -> SecretKeyRevocation {
        record(audit)
        return state.withLock { state in
            guard let index = state.keys.firstIndex(where: { $0.environmentID == environmentID && $0.record.id == id }) else {
                return .notFound
            }
            if state.keys[index].record.revokedAt != nil { return .revoked }
            let live = state.keys.filter { $0.environmentID == environmentID && $0.record.revokedAt == nil }.count
            guard live > 1 else { return .lastKey }
            let key = state.keys[index]
            state.keys[index] = (
                key.environmentID, key.hash,
                SecretKeyRecord(id: key.record.id, suffix: key.record.suffix, createdAt: key.record.createdAt, revokedAt: now)
            )
            return .revoked
        }
    }

    public func addDomain(projectID: String, domain: String, verificationToken: String, now: Date, audit: AuditEntry) throws -> DomainRecord
    {
        record(audit)
        return try state.withLock { state in
            if state.domains.contains(where: { $0.projectID == projectID && $0.record.domain == domain }) {
                throw StoreError.duplicate(constraint: "project_domains_unique")
            }
            let record = DomainRecord(domain: domain, verificationToken: verificationToken, verifiedAt: nil, hosted: false)
            state.domains.append((projectID, record))
            return record
        }
    }

    public func domains(projectID: String) throws -> [DomainRecord] {
        state.withLock { $0.domains.filter { $0.projectID == projectID }.map(\.record).sorted { $0.domain < $1.domain } }
    }

    public func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date, audit: AuditEntry) throws -> Bool {
        record(audit)
        return state.withLock { state in
            guard let index = state.domains.firstIndex(where: { $0.projectID == projectID && $0.record.domain == domain }) else {
                return false
            }
            let old = state.domains[index].record
            state.domains[index].record = DomainRecord(
                domain: domain, verificationToken: old.verificationToken, verifiedAt: old.verifiedAt ?? now, hosted: hosted ?? old.hosted)
            return true
        }
    }

    public func domainVerificationToken(projectID: String, domain: String) throws -> String? {
        state.withLock { $0.domains.first { $0.projectID == projectID && $0.record.domain == domain }?.record.verificationToken }
    }
}

extension FakeTenancyStore: AppRegistrationStore, AssociationFileStore, LinkCheckStore, LinkScheduleStore {
    public func createApp(environmentID: String, identity: AppIdentity, now: Date, audit: AuditEntry) throws -> AppRecord {
        record(audit)
        return try state.withLock { state in
            let siblings = state.apps.filter { $0.environmentID == environmentID && $0.platform == identity.platform }
            if siblings.count >= 10 { throw AppLimitError.nativeAppLimit }
            switch identity {
            case .ios(let app):
                for case .ios(let other) in siblings.map(\.identity) {
                    if other.teamID != app.teamID { throw AppLimitError.teamMismatch }
                    if other.bundleID.value.lowercased() == app.bundleID.value.lowercased() {
                        throw DuplicateApp(constraint: "mobile_apps_ios_unique")
                    }
                }
            case .android(let app):
                if app.fingerprints.count > 5 { throw AppLimitError.nativeAppLimit }
                for case .android(let other) in siblings.map(\.identity) where other.packageName == app.packageName {
                    throw DuplicateApp(constraint: "mobile_apps_android_unique")
                }
            }
            let record = AppRecord(
                id: nextID(), environmentID: environmentID, identity: identity, productionCustomScheme: nil, createdAt: now)
            state.apps.append(record)
            return record
        }
    }

    public func app(environmentID: String, id: String) throws -> AppRecord? {
        state.withLock { $0.apps.first { $0.id == id && $0.environmentID == environmentID } }
    }

    public func apps(environmentID: String, after: String?, limit: Int) throws -> [AppRecord] {
        state.withLock { state in
            let apps = state.apps.filter { $0.environmentID == environmentID }
            let start = after.flatMap { cursor in apps.firstIndex { $0.id == cursor }.map { $0 + 1 } } ?? 0
            return Array(apps.dropFirst(start).prefix(limit))
        }
    }

    public func replaceFingerprints(
        environmentID: String, id: String, fingerprints: [CertificateFingerprint], audit: AuditEntry
    ) throws -> AppRecord? {
        record(audit)
        return try state.withLock { state in
            guard let index = state.apps.firstIndex(where: { $0.id == id && $0.environmentID == environmentID }),
                case .android(let app) = state.apps[index].identity
            else { return nil }
            if fingerprints.count > 5 { throw AppLimitError.nativeAppLimit }
            let old = state.apps[index]
            state.apps[index] = AppRecord(
                id: id, environmentID: environmentID,
                identity: .android(AndroidApp(packageName: app.packageName, fingerprints: fingerprints)),
                productionCustomScheme: old.productionCustomScheme, createdAt: old.createdAt)
            return state.apps[index]
        }
    }

    public func setProductionCustomScheme(id: String, scheme: String?, audit: AuditEntry) throws -> AppRecord? {
        record(audit)
        return state.withLock { state in
            guard let index = state.apps.firstIndex(where: { $0.id == id }) else { return nil }
            let old = state.apps[index]
            state.apps[index] = AppRecord(
                id: id, environmentID: old.environmentID, identity: old.identity, productionCustomScheme: scheme, createdAt: old.createdAt)
            return state.apps[index]
        }
    }

    public func deleteApp(environmentID: String, id: String, audit: AuditEntry) throws -> Bool {
        record(audit)
        return state.withLock { state in
            let before = state.apps.count
            state.apps.removeAll { $0.id == id && $0.environmentID == environmentID }
            return state.apps.count < before
        }
    }

    public func linkStates(appIDs: [String]) throws -> [String: [LinkStateRecord]] {
        state.withLock { state in
            var result: [String: [LinkStateRecord]] = [:]
            for stateRecord in state.linkStates.sorted(by: { $0.domain < $1.domain }) where appIDs.contains(stateRecord.appID) {
                result[stateRecord.appID, default: []].append(stateRecord)
            }
            return result
        }
    }

    public func hasDomain(projectID: String, domain: String) throws -> Bool {
        state.withLock { $0.domains.contains { $0.projectID == projectID && $0.record.domain == domain } }
    }

    private func subjects(domain: String, projectID: String?) -> [DomainSubject] {
        state.withLock { state in
            state.apps.compactMap { app -> DomainSubject? in
                guard let environment = state.environments.first(where: { $0.id == app.environmentID }),
                    projectID == nil || environment.projectID == projectID
                else { return nil }
                var paths: [String] = []
                for callback in state.linkCallbacks where callback.environmentID == app.environmentID && callback.host == domain {
                    if !paths.contains(callback.path) { paths.append(callback.path) }
                }
                return paths.isEmpty ? nil : DomainSubject(app: app, projectID: environment.projectID, callbackPaths: paths)
            }
        }
    }

    public func associationApps(projectID: String, domain: String) throws -> [DomainSubject] {
        subjects(domain: domain, projectID: projectID)
    }

    public func hostingProjects(domain: String) throws -> [String] {
        state.withLock {
            $0.domains.filter { $0.record.domain == domain && $0.record.hosted && $0.record.verifiedAt != nil }.map(\.projectID)
        }
    }

    public func linkDomains(environmentID: String) throws -> [String] {
        state.withLock { Set($0.linkCallbacks.filter { $0.environmentID == environmentID }.map(\.host)).sorted() }
    }

    public func domainSubjects(domain: String) throws -> [DomainSubject] { subjects(domain: domain, projectID: nil) }

    public func linkStates(domain: String) throws -> [String: LinkStateRecord] {
        state.withLock { state in
            var result: [String: LinkStateRecord] = [:]
            for record in state.linkStates where record.domain == domain { result[record.appID] = record }
            return result
        }
    }

    public func consecutiveTransientFailures(domain: String) throws -> Int { state.withLock { $0.failures[domain] ?? 0 } }

    public func recordCheck(_ check: LinkCheckRecord) throws {
        state.withLock { state in
            state.checks.append(check)
            state.linkStates.removeAll { $0.domain == check.domain }
            state.linkStates.append(contentsOf: check.states)
            state.failures[check.domain] = check.consecutiveTransientFailures
        }
    }

    public func releaseLease(domain: String, owner: String, nextCheckAt: Date) throws {}

    public func syncSchedule(now: Date) throws {}

    public func claimDueDomains(owner: String, now: Date, dueBy: Date?, leaseSeconds: Double, limit: Int, only: [String]?) throws
        -> [DomainScheduleRecord]
    { [] }
}

extension FakeTenancyStore: AuditRecorder, AuditLogStore {
    public func record(_ entry: AuditEntry) {
        state.withLock { $0.audit.append(entry) }
    }

    /// The recorded entries, newest first, with their index as the id (no scope filter beyond the subject's).
    public func auditRows(_ scope: AuditScope, after: String?, limit: Int) throws -> [AuditRecord] {
        let rows = state.withLock { $0.audit }.enumerated().reversed().map { AuditRecord(id: String($0.offset), entry: $0.element) }
        let scoped = rows.filter { row in
            if case .subject(let userID) = scope { return row.entry.subjectUserID == userID }
            return true
        }
        let start = after.flatMap { cursor in scoped.firstIndex { $0.id == cursor }.map { $0 + 1 } } ?? 0
        return Array(scoped.dropFirst(start).prefix(limit))
    }
}

extension TenancyPorts {
    /// Every port of this area backed by one fake, with `fetcher` for outbound fetches.
    public init(fake: FakeTenancyStore, fetcher: (any AssociationFetcher)? = FakeFetcher()) {
        self.init(
            secretKeyLookup: fake, projectCreation: fake, projectList: fake, sessionSettings: fake, secretKeys: fake, domains: fake,
            domainTokens: fake, apps: fake, associationFiles: fake, linkChecks: fake, linkSchedule: fake,
            members: UnreachableMemberStore(), fetcher: fetcher, audit: fake, auditLog: fake, providers: UnreachableProviderStore())
    }
}

/// A provider store for in-process tests that never reach providers: every call is `StoreUnavailable`.
public struct UnreachableProviderStore: UpstreamProviderStore {
    public init() {}
    static let unavailable = StoreUnavailable(reason: "connection")
    public func providers(after: String?, limit: Int) throws -> [UpstreamProviderRecord] { throw Self.unavailable }
    public func provider(id: String) throws -> UpstreamProviderRecord? { throw Self.unavailable }
    public func createProvider(
        id: String, kind: UpstreamProviderKind, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry
    ) throws -> UpstreamProviderRecord { throw Self.unavailable }
    public func updateProvider(id: String, _ columns: UpstreamProviderColumns, now: Date, audit: AuditEntry) throws
        -> UpstreamProviderRecord
    { throw Self.unavailable }
    public func deleteProvider(id: String, audit: AuditEntry) throws { throw Self.unavailable }
    public func projectProviders(projectID: String) throws -> [UpstreamProviderRecord] { throw Self.unavailable }
    public func setProjectProviders(projectID: String, providerIDs: [String], audit: AuditEntry) throws -> [UpstreamProviderRecord] {
        throw Self.unavailable
    }
}

/// A member store for in-process tests that never reach members: every call is `StoreUnavailable`.
public struct UnreachableMemberStore: ProjectMemberStore {
    public init() {}
    static let unavailable = StoreUnavailable(reason: "connection")
    public func projectExists(projectID: String) throws -> Bool { throw Self.unavailable }
    public func openAccountID(emailKey: String) throws -> String? { throw Self.unavailable }
    public func members(projectID: String, after: String?, limit: Int) throws -> [ProjectMember] { throw Self.unavailable }
    public func addMember(projectID: String, userID: String, role: ProjectRole, audit: AuditEntry) throws -> ProjectMember {
        throw Self.unavailable
    }
    public func changeMember(projectID: String, userID: String, role: ProjectRole?, rule: OwnerRule, audit: AuditEntry) throws
        -> ProjectMember?
    { throw Self.unavailable }
    public func markOperator(userID: String, audit: AuditEntry) throws -> OperatorRecord { throw Self.unavailable }
    public func unmarkOperator(userID: String, audit: AuditEntry) throws { throw Self.unavailable }
}

/// Answers fetches from a table keyed by `host + path` (404 for anything else) and counts them.
public final class FakeFetcher: AssociationFetcher, @unchecked Sendable {
    public let answers = Mutex<[String: Result<FetchedFile, FileFetchFailure>]>([:])
    public let requests = Mutex<[String]>([])

    public init(_ answers: [String: Result<FetchedFile, FileFetchFailure>] = [:]) { self.answers.withLock { $0 = answers } }

    public func get(host: String, path: String, maxBytes: Int) -> Result<FetchedFile, FileFetchFailure> {
        requests.withLock { $0.append(host + path) }
        return answers.withLock { $0[host + path] } ?? .success(FetchedFile(status: 404, contentType: "text/plain", body: []))
    }
}

/// Deterministic `Secrets`: counted tokens, a fake digest (`d:` + text), byte-wise "SHA-256" (the bytes
/// themselves), plain equality.
public final class FakeSecrets: Secrets {
    private let counter = Mutex(0)

    public init() {}

    public func mintToken(prefix: String) throws -> String {
        let n = counter.withLock { value -> Int in
            value += 1
            return value
        }
        return prefix + String(format: "token%038d", n)
    }
    public func digest(_ text: String) -> String { "d:" + text }
    public func sha256(_ bytes: [UInt8]) -> [UInt8] { bytes }
    public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
    public func newID() -> String { UUID().uuidString.lowercased() }
}
