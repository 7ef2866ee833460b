/// The two association files a link domain publishes, with where they live and how large they may be.
public enum AssociationFile: String, Sendable, CaseIterable {
    /// `apple-app-site-association` (iOS universal links, `webcredentials`).
    case appleAppSiteAssociation = "apple-app-site-association"
    /// `assetlinks.json` (Android App Links, Digital Asset Links).
    case assetLinks = "assetlinks.json"

    /// The path the platforms fetch, with no file extension for the AASA (docs/association.md#aasa-hosting,
    /// docs/association.md#assetlinks-hosting).
    public var wellKnownPath: String {
        switch self {
        case .appleAppSiteAssociation: "/.well-known/apple-app-site-association"
        case .assetLinks: "/.well-known/assetlinks.json"
        }
    }

    /// The largest body accepted, in bytes: 131 072 (128 KB, Apple's uncompressed limit since iOS 9.3.1,
    /// docs/association.md#aasa-hosting) and 1 048 576 (1 MiB, the AOSP verifier's limit,
    /// docs/association.md#android-verification).
    public var maximumBytes: Int {
        switch self {
        case .appleAppSiteAssociation: 131_072
        case .assetLinks: 1_048_576
        }
    }
}

/// The stable problem codes of docs/protocol.md#problem-codes, as sent in
/// `link.problems[].code`.
///
/// The fetcher produces `file_missing`, `redirected`, `http_status`, `tls_error`, `timeout`, `dns_error`,
/// `address_refused` and `too_large`; the judges in this module produce the rest.
public enum ProblemCode: String, Sendable, Codable, CaseIterable {
    /// 404 or 410.
    case fileMissing = "file_missing"
    /// A 3xx; the message names the target.
    case redirected
    /// Any other non-200 status.
    case httpStatus = "http_status"
    /// A certificate or handshake failure.
    case tlsError = "tls_error"
    /// A connect or total timeout.
    case timeout
    /// The name does not resolve.
    case dnsError = "dns_error"
    /// The name resolves to a private, loopback or link-local address.
    case addressRefused = "address_refused"
    /// The file is not served as `application/json`.
    case contentType = "content_type"
    /// The body is over the cap (`AssociationFile.maximumBytes`).
    case tooLarge = "too_large"
    /// Not strict JSON: a BOM, comments, trailing commas, HTML, …
    case notJSON = "not_json"
    /// The iOS App ID is not listed under `applinks`.
    case appIDMissing = "app_id_missing"
    /// No rule matches the callback's path, or it is excluded.
    case pathNotCovered = "path_not_covered"
    /// No statement for the Android package.
    case packageMissing = "package_missing"
    /// A registered fingerprint is absent (in canonical form).
    case fingerprintMissing = "fingerprint_missing"
    /// The package's statements lack `delegate_permission/common.handle_all_urls`.
    case relationMissing = "relation_missing"
    /// The App ID is absent from `webcredentials.apps`.
    case webcredentialsMissing = "webcredentials_missing"
    /// The Android package's Dynamic App Links rules (Android 15+) exclude the callback, or no rule includes it.
    case dynamicRulesExcludePath = "dynamic_rules_exclude_path"

    /// Whether this code keeps an app of `file`'s platform from being verified, per docs/protocol.md#problem-codes:
    /// every code blocks except `webcredentials_missing`, `dynamic_rules_exclude_path` (Android 14 and older
    /// ignore the rules, docs/association.md#assetlinks-dynamic-rules), and `content_type`, which blocks for assetlinks
    /// only (Google requires `application/json`; Apple's current pages do not,
    /// docs/association.md#aasa-hosting).
    /// `timeout` and `dns_error` block "after retries": retrying is the scheduler's job.
    public func blocksVerification(for file: AssociationFile) -> Bool {
        switch self {
        case .webcredentialsMissing, .dynamicRulesExcludePath: false
        case .contentType: file == .assetLinks
        default: true
        }
    }
}

/// One thing wrong with a domain's association file for one app, as shown in `link.problems`.
public struct Problem: Sendable, Equatable, Codable {
    /// The stable code from docs/protocol.md#problem-codes.
    public let code: ProblemCode
    /// What exactly is missing or wrong, naming the path, the near misses or the absent fingerprint.
    public let message: String
    /// Whether the problem keeps the app unverified (`false`: a warning).
    public let blocking: Bool

    /// Creates a problem with an explicit `blocking` flag.
    public init(code: ProblemCode, message: String, blocking: Bool) {
        self.code = code
        self.message = message
        self.blocking = blocking
    }

    /// Creates a problem whose `blocking` flag follows docs/protocol.md#problem-codes for `file`.
    public init(code: ProblemCode, message: String, file: AssociationFile) {
        self.init(code: code, message: message, blocking: code.blocksVerification(for: file))
    }
}
