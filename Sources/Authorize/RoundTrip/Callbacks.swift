import Foundation

/// A registered redirect URI (docs/protocol.md#admin-callbacks).
public struct CallbackRecord: Sendable, Equatable {
    public let id: String
    public let uri: String
    public let kind: RedirectKind
    public let createdAt: Date

    /// A stored callback.
    public init(id: String, uri: String, kind: RedirectKind, createdAt: Date) {
        self.id = id
        self.uri = uri
        self.kind = kind
        self.createdAt = createdAt
    }
}

/// What registering, listing and deleting callbacks needs from storage.
public protocol CallbackStore: Sendable {
    /// Whether the project proved ownership of `domain`. - Throws: `StoreUnavailable`.
    func isDomainVerified(projectID: String, domain: String) throws -> Bool
    /// Registers a parsed redirect URI with its parts (so the start never parses it again).
    /// `audit` (named after the new callback) is written in the same transaction (docs/console.md, "Audit log").
    /// - Throws: `StoreError.duplicate` when it is registered already; `StoreUnavailable`.
    func addCallback(environmentID: String, uri: RedirectURI, now: Date, audit: AuditEntry) throws -> CallbackRecord
    /// One page of an environment's callbacks in creation order, after the cursor id.
    /// - Throws: `StoreUnavailable`.
    func callbacks(environmentID: String, after: String?, limit: Int) throws -> [CallbackRecord]
    /// Deletes a callback of this environment, writing `audit` in the same statement when one is.
    /// - Returns: whether one was deleted. - Throws: `StoreUnavailable`.
    func deleteCallback(environmentID: String, id: String, audit: AuditEntry) throws -> Bool
}

/// Registering a callback (docs/protocol.md#callback-registration): the URI is parsed once at the edge
/// (`RedirectURI.parse`); a link needs a verified domain of the project; a URI is registered once.
public struct RegisterCallback: Sendable {
    /// The answer to a registration.
    public enum Outcome: Sendable, Equatable {
        case registered(CallbackRecord)
        /// A link whose host is not a verified domain of the project.
        case domainNotVerified
        /// This environment has it already.
        case duplicate
    }

    let store: any CallbackStore

    /// - Parameter store: callbacks and project domains.
    public init(store: any CallbackStore) { self.store = store }

    /// - Parameter audit: the `callback.add` row, written with the registration.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(_ uri: RedirectURI, environment: EnvironmentRecord, now: Date, audit: AuditEntry) throws -> Outcome {
        if uri.kind == .link, try !store.isDomainVerified(projectID: environment.projectID, domain: uri.host ?? "") {
            return .domainNotVerified
        }
        do {
            return .registered(try store.addCallback(environmentID: environment.id, uri: uri, now: now, audit: audit))
        } catch StoreError.duplicate {
            return .duplicate
        }
    }
}
