import Foundation

/// DNS host names for project domains (docs/protocol.md#admin-calls).
public enum DomainName {
    /// Lower-cases and checks a host name: labels of letters, digits and `-`, at least two labels, ≤ 253
    /// bytes, each label 1–63 bytes not starting or ending with `-`, the last label not all digits (an
    /// IPv4 literal is not a domain).
    /// - Returns: the normalized name, or nil.
    public static func normalize(_ raw: String) -> String? {
        let name = raw.lowercased()
        guard (1...253).contains(name.utf8.count) else { return nil }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return nil }
        for label in labels {
            guard (1...63).contains(label.utf8.count), !label.hasPrefix("-"), !label.hasSuffix("-"),
                label.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
            else { return nil }
        }
        guard let last = labels.last, !last.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return name
    }
}

/// What a project's domains need from storage.
public protocol DomainStore: Sendable {
    /// Adds a domain with the token it must publish.
    /// `audit` is written in the same transaction, so a refused duplicate leaves no row.
    /// - Throws: `StoreError.duplicate` when the project has it already; `StoreUnavailable`.
    func addDomain(projectID: String, domain: String, verificationToken: String, now: Date, audit: AuditEntry) throws -> DomainRecord
    /// A project's domains, alphabetically.
    /// - Throws: `StoreUnavailable`.
    func domains(projectID: String) throws -> [DomainRecord]
    /// Marks a project's domain verified (keeping the first verification time) and sets `hosted` when given.
    /// `audit` is written in the same transaction when the domain exists.
    /// - Returns: false when the project has no such domain.
    /// - Throws: `StoreUnavailable`.
    func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date, audit: AuditEntry) throws -> Bool
}

/// A project's domains (docs/protocol.md#admin-calls): add one with a fresh verification token, list them,
/// and the operator's mark that one is verified (and whether this server hosts its association files).
public struct ProjectDomains: Sendable {
    let store: any DomainStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: where domains are kept.
    ///   - secrets: the token mint.
    public init(store: any DomainStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// Adds `domain` (normalized by `DomainName`) with a new `zdv_…` token.
    /// - Throws: `StoreError.duplicate`; `StoreUnavailable`; when the CSPRNG fails.
    public func add(projectID: String, domain: String, now: Date, audit: AuditEntry) throws -> DomainRecord {
        try store.addDomain(
            projectID: projectID, domain: domain, verificationToken: try secrets.mintToken(prefix: "zdv_"), now: now, audit: audit)
    }

    /// The project's domains, alphabetically.
    /// - Throws: `StoreUnavailable`.
    public func list(projectID: String) throws -> [DomainRecord] { try store.domains(projectID: projectID) }

    /// The operator's mark: verified, and `hosted` when given.
    /// - Returns: the domain as it now stands, or nil when the project has no such domain.
    /// - Throws: `StoreUnavailable`.
    public func markVerified(projectID: String, domain: String, hosted: Bool?, now: Date, audit: AuditEntry) throws -> DomainRecord? {
        guard try store.markDomainVerified(projectID: projectID, domain: domain, hosted: hosted, now: now, audit: audit) else {
            return nil
        }
        return try store.domains(projectID: projectID).first { $0.domain == domain }
            ?? DomainRecord(domain: domain, verificationToken: "", verifiedAt: now, hosted: hosted ?? false)
    }
}
