/// What an environment's apps say about its redirects in production (docs/protocol.md#redirect-kinds): the
/// operator's custom-scheme exceptions, and which link callbacks an association check verified.
public struct AppLinkFacts: Sendable, Equatable {
    /// Schemes the operator enabled for one of the environment's apps.
    public var customSchemes: Set<String> = []
    /// Domains on which an Android app of the environment is verified.
    public var verifiedAndroidDomains: Set<String> = []
    /// Per domain, the callback paths iOS apps of the environment are verified for.
    public var coveredIOSPaths: [String: Set<String>] = [:]

    /// No facts.
    public init() {}

    /// Adds one app's state on one domain.
    public mutating func add(platform: Platform, domain: String, status: LinkStatus, coveredPaths: [String]) {
        switch platform {
        case .android: if status == .verified { verifiedAndroidDomains.insert(domain) }
        case .ios: coveredIOSPaths[domain, default: []].formUnion(coveredPaths)
        }
    }

    /// Whether the domain's latest check verified one of the environment's apps for this link: an
    /// Android app on its domain, or an iOS app with the callback's path (query excluded) covered.
    public func verifiesLink(host: String, path: String) -> Bool {
        verifiedAndroidDomains.contains(host) || coveredIOSPaths[host]?.contains(path) == true
    }

    /// The production link rule (docs/protocol.md#redirect-kinds): in development a link callback needs
    /// only a verified project domain; in production also an app verified for it on that domain.
    /// - Parameters:
    ///   - host: the link's host; `path`: its path without the query.
    ///   - domainVerified: whether the host is a verified domain of the project.
    ///   - production: whether the environment is production.
    public func linkVerified(host: String, path: String, domainVerified: Bool, production: Bool) -> Bool {
        production ? domainVerified && verifiesLink(host: host, path: path) : domainVerified
    }
}
