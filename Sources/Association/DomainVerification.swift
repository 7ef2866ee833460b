import Authorize
import Foundation

/// What proving a domain by its token file needs from storage.
public protocol DomainTokenStore: Sendable {
    /// The verification token of a project's domain, or nil when the project has no such domain.
    func domainVerificationToken(projectID: String, domain: String) throws -> String?
    /// Marks a project's domain verified. - Returns: false when the project has no such domain.
    func markDomainVerified(projectID: String, domain: String, hosted: Bool?, now: Date, audit: AuditEntry) throws -> Bool
}

/// Domain ownership by token file (docs/protocol.md#admin-calls): the body of
/// `https://DOMAIN/.well-known/zevauth-domain-verification`, trimmed, must equal the domain's token.
public struct DomainVerification: Sendable {
    let store: any DomainTokenStore

    /// The token file's path and size limit.
    public static let path = "/.well-known/zevauth-domain-verification"
    public static let maximumBytes = 4096

    /// - Parameter store: the domains' tokens.
    public init(store: any DomainTokenStore) { self.store = store }

    /// The token the domain must publish, or nil when the project has no such domain.
    /// - Throws: `StoreUnavailable`.
    public func token(projectID: String, domain: String) throws -> String? {
        try store.domainVerificationToken(projectID: projectID, domain: domain)
    }

    /// What the fetch came to: nil when the file holds the token, else the sentence saying what was found.
    public static func problem(_ fetched: Result<FetchedFile, FileFetchFailure>, token: String, domain: String) -> String? {
        let url = "https://\(domain)\(path)"
        switch fetched {
        case .success(let response) where response.status == 200:
            let published = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return constantTimeEquals(Array(published.utf8), Array(token.utf8))
                ? nil : "\(url) does not contain this domain's verification token"
        case .success(let response):
            return "\(url) answered \(response.status) instead of 200"
        case .failure(let failure):
            return "\(url) could not be fetched: \(failure.explanation)"
        }
    }

    /// Marks the domain verified once its file held the token.
    /// - Throws: `StoreUnavailable`.
    public func markVerified(projectID: String, domain: String, now: Date, audit: AuditEntry) throws {
        _ = try store.markDomainVerified(projectID: projectID, domain: domain, hosted: nil, now: now, audit: audit)
    }

    /// Whether `a` equals `b`, in time that depends on their lengths only.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
