import Association
import Authorize
import Fetch
import Foundation
import PostgresStore

/// Checks the association files one link domain publishes (docs/protocol.md#link-check): fetches each file at
/// most once, maps the fetch to a problem or judges every app of the domain, applies the retry rule for
/// transient failures, and stores the history row and each app's state.
struct AssociationChecker: Sendable {
    let store: PostgresStore
    let clock: any Clock
    let fetcher: HTTPSFetcher
    /// The port association files are fetched from: 443, except in tests.
    let port: Int
    let metrics: Metrics

    /// Apple's limit for the uncompressed AASA: 128 KB (docs/association.md#aasa-hosting).
    static let aasaCap = 131_072
    /// The AOSP verifier's limit for `assetlinks.json`: 1 MiB.
    static let assetLinksCap = 1_048_576
    static let aasaPath = "/.well-known/apple-app-site-association"
    static let assetLinksPath = "/.well-known/assetlinks.json"
    /// A verified app turns unverified only after this many consecutive transient failures.
    static let transientFailuresBeforeUnverified = 3
    /// The next check after the 1st, 2nd, 3rd… consecutive transient failure, in seconds.
    static let transientBackoff: [Double] = [60, 300, 900, 3600]
    /// The daily check, ± up to an hour of jitter so instances and domains spread out.
    static let dailySeconds: Double = 86_400
    static let jitterSeconds: Double = 3_600

    init(context: ServerContext) {
        self.store = context.store
        self.clock = context.clock
        self.fetcher = HTTPSFetcher(configuration: context.configuration.outbound)
        self.port = context.configuration.outboundPort
        self.metrics = context.metrics
    }

    /// What fetching one file came to.
    enum FileOutcome {
        /// A 200: judge the body.
        case fetched(FetchedResponse)
        /// No usable file: the problem every app of that platform gets, and whether it is transient.
        case failed(status: Int?, problem: LinkProblemRecord, transient: Bool)

        var status: Int? {
            switch self {
            case .fetched(let response): response.status
            case .failed(let status, _, _): status
            }
        }

        var isTransient: Bool {
            if case .failed(_, _, let transient) = self { return transient }
            return false
        }
    }

    /// Fetches `path` on `domain` once and maps the answer (docs/protocol.md#problem-codes).
    func fetch(domain: String, path: String, cap: Int) -> FileOutcome {
        let url = "https://\(domain)\(path)"
        switch fetcher.get(host: domain, port: port, path: path, maxBytes: cap) {
        case .success(let response):
            switch response.status {
            case 200:
                return .fetched(response)
            case 404, 410:
                return .failed(
                    status: response.status,
                    problem: Self.problem(.fileMissing, "\(url) answered \(response.status): the file is not published."), transient: false)
            case 300..<400:
                let target = response.redirectLocation ?? "(no Location header)"
                return .failed(
                    status: response.status,
                    problem: Self.problem(
                        .redirected, "\(url) answered \(response.status) redirecting to \(target); the platforms follow no redirect."),
                    transient: false)
            default:
                let transient = response.status >= 500 || response.status == 429
                return .failed(
                    status: response.status,
                    problem: Self.problem(
                        .httpStatus, "\(url) answered \(response.status) instead of 200\(transient ? " (retried before it counts)" : "")."),
                    transient: transient)
            }
        case .failure(let failure):
            switch failure {
            case .timeout(let message):
                return .failed(
                    status: nil, problem: Self.problem(.timeout, "\(url): \(message) (retried before it counts)."), transient: true)
            case .dnsError(let message):
                return .failed(
                    status: nil, problem: Self.problem(.dnsError, "\(url): \(message) (retried before it counts)."), transient: true)
            case .addressRefused(let message):
                return .failed(status: nil, problem: Self.problem(.addressRefused, "\(url): \(message)."), transient: false)
            case .tlsError(let message):
                return .failed(status: nil, problem: Self.problem(.tlsError, "\(url): \(message)."), transient: false)
            case .tooLarge(let limit):
                return .failed(
                    status: nil, problem: Self.problem(.tooLarge, "\(url) is larger than \(limit) bytes, the platform's limit."),
                    transient: false)
            case .connectionFailed(let message):
                return .failed(
                    status: nil,
                    problem: Self.problem(.httpStatus, "\(url) gave no HTTP response: \(message) (retried before it counts)."),
                    transient: true)
            }
        }
    }

    static func problem(_ code: ProblemCode, _ message: String) -> LinkProblemRecord {
        LinkProblemRecord(code: code.rawValue, message: message, blocking: true)
    }

    static func record(_ problem: Problem) -> LinkProblemRecord {
        LinkProblemRecord(code: problem.code.rawValue, message: problem.message, blocking: problem.blocking)
    }

    /// Checks one domain now and stores the result.
    /// - Parameter leaseOwner: the scheduler instance holding the domain's lease, or nil (on demand).
    /// - Returns: the new state of every app judged on the domain.
    /// - Throws: `PostgresError`.
    @discardableResult
    func check(domain: String, leaseOwner: String?) throws -> [LinkStateRecord] {
        let subjects = try store.domainSubjects(domain: domain)
        let now = clock.now()
        guard !subjects.isEmpty else {
            if let leaseOwner { try store.releaseLease(domain: domain, owner: leaseOwner, nextCheckAt: Self.nextDailyCheck(now)) }
            return []
        }
        let previous = try store.linkStates(domain: domain)
        let previousFailures = try store.consecutiveTransientFailures(domain: domain)
        let aasa = subjects.contains { $0.app.platform == "ios" } ? fetch(domain: domain, path: Self.aasaPath, cap: Self.aasaCap) : nil
        let assetLinks =
            subjects.contains { $0.app.platform == "android" }
            ? fetch(domain: domain, path: Self.assetLinksPath, cap: Self.assetLinksCap) : nil
        let transient = (aasa?.isTransient ?? false) || (assetLinks?.isTransient ?? false)
        let failures = transient ? previousFailures + 1 : 0
        let nextCheckAt =
            transient
            ? now.addingTimeInterval(Self.transientBackoff[min(failures, Self.transientBackoff.count) - 1])
            : Self.nextDailyCheck(now)

        var states: [LinkStateRecord] = []
        for subject in subjects {
            let file = subject.app.platform == "ios" ? aasa : assetLinks
            guard let file else { continue }
            var state = judge(subject, file: file, domain: domain, now: now, nextCheckAt: nextCheckAt)
            // A transient failure does not turn a verified app unverified until it repeats
            // (docs/protocol.md#link-check-schedule).
            if file.isTransient, failures < Self.transientFailuresBeforeUnverified, let before = previous[subject.app.id],
                before.status == "verified"
            {
                state = LinkStateRecord(
                    appID: state.appID, domain: domain, status: "verified", checkedAt: now, nextCheckAt: nextCheckAt,
                    problems: state.problems, coveredPaths: before.coveredPaths)
            }
            states.append(state)
            metrics.linkCheck(platform: subject.app.platform, result: state.status)
        }
        try store.recordCheck(
            PostgresStore.CheckRecord(
                domain: domain, checkedAt: now, aasaStatus: aasa?.status, assetlinksStatus: assetLinks?.status, transient: transient,
                states: states, nextCheckAt: nextCheckAt, consecutiveTransientFailures: failures, leaseOwner: leaseOwner))
        return states
    }

    static func nextDailyCheck(_ now: Date) -> Date {
        now.addingTimeInterval(dailySeconds + Double.random(in: -jitterSeconds...jitterSeconds))
    }

    /// One app's verdict on the domain's file.
    func judge(_ subject: DomainSubject, file: FileOutcome, domain: String, now: Date, nextCheckAt: Date) -> LinkStateRecord {
        let response: FetchedResponse
        switch file {
        case .failed(_, let problem, _):
            return LinkStateRecord(
                appID: subject.app.id, domain: domain, status: "not_verified", checkedAt: now, nextCheckAt: nextCheckAt,
                problems: [problem], coveredPaths: [])
        case .fetched(let value):
            response = value
        }
        var problems: [LinkProblemRecord] = []
        var covered: [String] = []
        var verified = false
        if subject.app.platform == "ios", let app = Self.iosApp(subject.app) {
            let paths = Self.callbackPaths(subject.callbackURIs)
            for path in paths {
                let found = AASAJudge.judge(body: response.body, contentType: response.contentType, app: app, callbackPath: path)
                for problem in found.map(Self.record) where !problems.contains(problem) { problems.append(problem) }
                if !found.contains(where: \.blocking) { covered.append(path) }
            }
            verified = !paths.isEmpty && covered.count == paths.count
        } else if subject.app.platform == "android", let app = Self.androidApp(subject.app) {
            let found = AssetLinksJudge.judge(body: response.body, contentType: response.contentType, app: app)
            problems = found.map(Self.record)
            verified = !found.contains(where: \.blocking)
            covered = verified ? Self.callbackPaths(subject.callbackURIs) : []
        }
        return LinkStateRecord(
            appID: subject.app.id, domain: domain, status: verified ? "verified" : "not_verified", checkedAt: now,
            nextCheckAt: nextCheckAt, problems: problems, coveredPaths: covered)
    }

    /// The paths of link callbacks (query excluded: AASA components match the path and query apart).
    static func callbackPaths(_ uris: [String]) -> [String] {
        var paths: [String] = []
        for raw in uris {
            guard case .success(let uri) = RedirectURI.parse(raw) else { continue }
            let path = String(uri.pathAndQuery.prefix { $0 != "?" })
            if !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    /// The pure module's iOS app for a stored one (stored values passed the same parsing on the way in).
    static func iosApp(_ app: AppRecord) -> IOSApp? {
        guard let team = app.teamID, let bundle = app.bundleID, case .success(let teamID) = TeamID.parse(team),
            case .success(let bundleID) = BundleID.parse(bundle)
        else { return nil }
        return IOSApp(teamID: teamID, bundleID: bundleID)
    }

    /// The pure module's Android app for a stored one.
    static func androidApp(_ app: AppRecord) -> AndroidApp? {
        guard let package = app.packageName, case .success(let packageName) = PackageName.parse(package) else { return nil }
        var fingerprints: [CertificateFingerprint] = []
        for stored in app.fingerprints {
            guard case .success(let fingerprint) = CertificateFingerprint.parse(stored, field: "sha256CertFingerprints") else { return nil }
            fingerprints.append(fingerprint)
        }
        return AndroidApp(packageName: packageName, fingerprints: fingerprints)
    }
}
