import Authorize
import Foundation

/// What registering and managing an environment's apps needs from storage (docs/protocol.md#apps). The
/// store enforces the limits of docs/protocol.md#app-limits atomically and reports them as `AppLimitError`.
/// Each change writes its `audit` row in its own transaction, and only when it takes effect
/// (docs/console.md, "Audit log").
public protocol AppRegistrationStore: Sendable {
    /// Registers an app.
    /// - Throws: `AppLimitError` (an 11th app of the platform, a 6th fingerprint, another Apple team),
    ///   `DuplicateApp` (the bundle ID or package name is registered in the environment), `StoreUnavailable`.
    func createApp(environmentID: String, identity: AppIdentity, now: Date, audit: AuditEntry) throws -> AppRecord
    /// An app of this environment.
    func app(environmentID: String, id: String) throws -> AppRecord?
    /// Up to `limit` of the environment's apps in creation order after the app `after`.
    func apps(environmentID: String, after: String?, limit: Int) throws -> [AppRecord]
    /// Replaces an Android app's certificates. - Returns: the app, or nil when the environment has no such Android app.
    /// - Throws: `AppLimitError.nativeAppLimit` (more than 5).
    func replaceFingerprints(
        environmentID: String, id: String, fingerprints: [CertificateFingerprint], audit: AuditEntry
    ) throws -> AppRecord?
    /// Sets or clears the operator's production custom-scheme exception of an app of any environment.
    func setProductionCustomScheme(id: String, scheme: String?, audit: AuditEntry) throws -> AppRecord?
    /// Deletes an app of this environment (its certificates and link states go with it). - Returns: whether one was.
    func deleteApp(environmentID: String, id: String, audit: AuditEntry) throws -> Bool
    /// The link states of these apps, by app id, each list ordered by domain.
    func linkStates(appIDs: [String]) throws -> [String: [LinkStateRecord]]
}

/// An app as the admin API shows it: the app and its states on every link domain of its environment.
public struct AppWithLink: Sendable, Equatable {
    public let app: AppRecord
    public let states: [LinkStateRecord]

    /// The app's link summary.
    public var link: LinkSummary { LinkSummary(states) }
}

/// An app's `link` summary over its states on every link domain (docs/protocol.md#apps): `pending` until
/// every domain was checked, `not_verified` when one fails, else `verified`.
public struct LinkSummary: Sendable, Equatable {
    public let status: LinkStatus
    /// The latest check on any domain.
    public let checkedAt: Date?
    /// The earliest next check on any domain.
    public let nextCheckAt: Date?
    /// The domains, in the states' order.
    public let domains: [String]
    /// Every problem with the domain it was found on.
    public let problems: [(domain: String, problem: LinkProblemRecord)]

    /// Summarises `states`.
    public init(_ states: [LinkStateRecord]) {
        if states.isEmpty || states.contains(where: { $0.status == .pending }) {
            status = .pending
        } else if states.contains(where: { $0.status == .notVerified }) {
            status = .notVerified
        } else {
            status = .verified
        }
        checkedAt = states.compactMap(\.checkedAt).max()
        nextCheckAt = states.compactMap(\.nextCheckAt).min()
        domains = states.map(\.domain)
        problems = states.flatMap { state in state.problems.map { (state.domain, $0) } }
    }

    public static func == (a: LinkSummary, b: LinkSummary) -> Bool {
        a.status == b.status && a.checkedAt == b.checkedAt && a.nextCheckAt == b.nextCheckAt && a.domains == b.domains
            && a.problems.map(\.domain) == b.problems.map(\.domain) && a.problems.map(\.problem) == b.problems.map(\.problem)
    }
}

/// The store's refusal of an app whose bundle ID (iOS) or package name (Android) the environment has already.
public struct DuplicateApp: Error, Sendable, Equatable {
    /// The unique index that refused it.
    public let constraint: String

    /// - Parameter constraint: the unique index's name.
    public init(constraint: String) { self.constraint = constraint }
}

/// App registration (docs/protocol.md#apps): register, list, read, change certificates or the operator's
/// custom-scheme exception, delete. Identities arrive parsed (`TeamID`, `BundleID`, `PackageName`,
/// `Fingerprints`); the limits and the one-team rule are the store's, atomically.
public struct AppRegistration: Sendable {
    let store: any AppRegistrationStore

    /// - Parameter store: where apps are kept.
    public init(store: any AppRegistrationStore) { self.store = store }

    /// Why a change was refused.
    public enum Refusal: Error, Sendable, Equatable {
        /// `native_app_limit` or `native_app_team_mismatch`.
        case limit(AppLimitError)
        /// The bundle ID or package name is registered in the environment already.
        case duplicate
        /// No such app here.
        case notFound
        /// Certificates apply to Android apps only.
        case notAndroid
    }

    /// Registers an app.
    /// - Throws: `StoreUnavailable`.
    public func register(environmentID: String, identity: AppIdentity, now: Date, audit: AuditEntry) throws -> Result<AppRecord, Refusal> {
        do {
            return .success(try store.createApp(environmentID: environmentID, identity: identity, now: now, audit: audit))
        } catch let limit as AppLimitError {
            return .failure(.limit(limit))
        } catch is DuplicateApp {
            return .failure(.duplicate)
        }
    }

    /// One page of the environment's apps with their link states.
    /// - Throws: `StoreUnavailable`.
    public func list(environmentID: String, cursor: String?, limit: Int) throws -> (items: [AppWithLink], nextCursor: String?) {
        let rows = try store.apps(environmentID: environmentID, after: cursor, limit: limit + 1)
        let page = Array(rows.prefix(limit))
        let states = try store.linkStates(appIDs: page.map(\.id))
        return (page.map { AppWithLink(app: $0, states: states[$0.id] ?? []) }, rows.count > limit ? page.last?.id : nil)
    }

    /// An app of the environment, or nil.
    /// - Throws: `StoreUnavailable`.
    public func app(environmentID: String, id: String) throws -> AppRecord? { try store.app(environmentID: environmentID, id: id) }

    /// The app with its current link states.
    /// - Throws: `StoreUnavailable`.
    public func withLink(_ app: AppRecord) throws -> AppWithLink {
        AppWithLink(app: app, states: try store.linkStates(appIDs: [app.id])[app.id] ?? [])
    }

    /// Replaces an Android app's certificates.
    /// - Throws: `StoreUnavailable`.
    public func replaceFingerprints(
        environmentID: String, id: String, fingerprints: [CertificateFingerprint], audit: AuditEntry
    ) throws -> Result<
        AppRecord, Refusal
    > {
        guard let existing = try store.app(environmentID: environmentID, id: id) else { return .failure(.notFound) }
        guard existing.platform == .android else { return .failure(.notAndroid) }
        do {
            guard
                let updated = try store.replaceFingerprints(environmentID: environmentID, id: id, fingerprints: fingerprints, audit: audit)
            else {
                return .failure(.notFound)
            }
            return .success(updated)
        } catch let limit as AppLimitError {
            return .failure(.limit(limit))
        }
    }

    /// The operator's production custom-scheme exception (`scheme` already a reverse-domain private-use
    /// scheme, or nil to clear). - Returns: the app, or nil when there is no such app.
    /// - Throws: `StoreUnavailable`.
    public func setProductionCustomScheme(id: String, scheme: String?, audit: AuditEntry) throws -> AppRecord? {
        try store.setProductionCustomScheme(id: id, scheme: scheme, audit: audit)
    }

    /// Deletes an app. - Returns: whether the environment had it.
    /// - Throws: `StoreUnavailable`.
    public func delete(environmentID: String, id: String, audit: AuditEntry) throws -> Bool {
        try store.deleteApp(environmentID: environmentID, id: id, audit: audit)
    }
}
