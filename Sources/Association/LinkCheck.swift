import Foundation

/// A file an HTTPS fetch returned (any status).
public struct FetchedFile: Sendable, Equatable {
    /// The HTTP status.
    public let status: Int
    /// The `Content-Type` header, if any.
    public let contentType: String?
    /// The body, at most the fetch's byte limit.
    public let body: [UInt8]
    /// The `Location` header of a redirect, if any (never followed).
    public let redirectLocation: String?

    /// Creates a fetched file.
    public init(status: Int, contentType: String?, body: [UInt8], redirectLocation: String? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.redirectLocation = redirectLocation
    }
}

/// Why a fetch produced no response; each message names the host and the cause, never a secret.
public enum FileFetchFailure: Error, Sendable, Equatable {
    case timeout(String)
    case dnsError(String)
    case addressRefused(String)
    case tlsError(String)
    case tooLarge(limit: Int)
    case connectionFailed(String)

    /// What went wrong, in words for a person.
    public var explanation: String {
        switch self {
        case .timeout(let message), .dnsError(let message), .addressRefused(let message), .tlsError(let message): message
        case .tooLarge(let limit): "the response is larger than \(limit) bytes"
        case .connectionFailed(let message): "no HTTP response: \(message)"
        }
    }
}

/// Fetches a small document over HTTPS from a customer's host (the server's `HTTPSFetcher` through an
/// adapter; tests a fake). It follows no redirect and enforces `maxBytes`.
public protocol AssociationFetcher: Sendable {
    /// - Returns: the response, or why there was none.
    func get(host: String, path: String, maxBytes: Int) -> Result<FetchedFile, FileFetchFailure>
}

/// What fetching one association file came to.
public enum FileOutcome: Sendable, Equatable {
    /// A 200: judge the body.
    case fetched(FetchedFile)
    /// No usable file: the problem every app of that platform gets, and whether it is transient.
    case failed(status: Int?, problem: LinkProblemRecord, transient: Bool)

    /// The HTTP status, when there was a response.
    public var status: Int? {
        switch self {
        case .fetched(let file): file.status
        case .failed(let status, _, _): status
        }
    }

    /// Whether the failure is retried before it counts (timeout, DNS, 5xx, 429, no response).
    public var isTransient: Bool {
        if case .failed(_, _, let transient) = self { return transient }
        return false
    }
}

/// The outcome of checking one domain, ready to store.
public struct LinkCheckRecord: Sendable, Equatable {
    public let domain: String
    public let checkedAt: Date
    public let aasaStatus: Int?
    public let assetlinksStatus: Int?
    /// Whether a fetch failed transiently.
    public let transient: Bool
    /// The new state of every app judged on this domain.
    public let states: [LinkStateRecord]
    public let nextCheckAt: Date
    public let consecutiveTransientFailures: Int
    /// The scheduler instance whose lease this check ran under, or nil for an on-demand check.
    public let leaseOwner: String?

    /// Creates a check record.
    public init(
        domain: String, checkedAt: Date, aasaStatus: Int?, assetlinksStatus: Int?, transient: Bool, states: [LinkStateRecord],
        nextCheckAt: Date, consecutiveTransientFailures: Int, leaseOwner: String?
    ) {
        self.domain = domain
        self.checkedAt = checkedAt
        self.aasaStatus = aasaStatus
        self.assetlinksStatus = assetlinksStatus
        self.transient = transient
        self.states = states
        self.nextCheckAt = nextCheckAt
        self.consecutiveTransientFailures = consecutiveTransientFailures
        self.leaseOwner = leaseOwner
    }
}

/// What a link check needs from storage.
public protocol LinkCheckStore: Sendable {
    /// The distinct hosts of an environment's link callbacks, alphabetically.
    func linkDomains(environmentID: String) throws -> [String]
    /// Every app, of any project, whose environment has a link callback on `domain`.
    func domainSubjects(domain: String) throws -> [DomainSubject]
    /// The current link states on `domain`, by app id.
    func linkStates(domain: String) throws -> [String: LinkStateRecord]
    /// Consecutive transient failures recorded for `domain` (0 when never checked).
    func consecutiveTransientFailures(domain: String) throws -> Int
    /// Stores a check in one transaction: history, each app's state (others on the domain removed), schedule.
    func recordCheck(_ check: LinkCheckRecord) throws
    /// Releases `owner`'s lease on `domain` without a check, moving it to `nextCheckAt`.
    func releaseLease(domain: String, owner: String, nextCheckAt: Date) throws
}

/// Checks the association files one link domain publishes (docs/protocol.md#link-check): fetches each file
/// at most once, maps the fetch to a problem or judges every app of the domain, applies the retry rule for
/// transient failures (docs/protocol.md#link-check-schedule), and stores the history row and each app's state.
public struct LinkCheck: Sendable {
    let store: any LinkCheckStore
    let fetcher: any AssociationFetcher
    let jitter: @Sendable () -> Double

    /// Apple's limit for the uncompressed AASA: 128 KB (docs/association.md#aasa-hosting).
    public static let aasaCap = 131_072
    /// The AOSP verifier's limit for `assetlinks.json`: 1 MiB.
    public static let assetLinksCap = 1_048_576
    public static let aasaPath = "/.well-known/apple-app-site-association"
    public static let assetLinksPath = "/.well-known/assetlinks.json"
    /// A verified app turns unverified only after this many consecutive transient failures.
    public static let transientFailuresBeforeUnverified = 3
    /// The next check after the 1st, 2nd, 3rd… consecutive transient failure, in seconds.
    public static let transientBackoff: [Double] = [60, 300, 900, 3600]
    /// The daily check, ± up to an hour of jitter so instances and domains spread out.
    public static let dailySeconds: Double = 86_400
    public static let jitterSeconds: Double = 3_600

    /// - Parameters:
    ///   - store: link states, history and schedule.
    ///   - fetcher: the HTTPS fetch of the files.
    ///   - jitter: seconds added to the daily check, within ±`jitterSeconds` (random by default).
    public init(
        store: any LinkCheckStore, fetcher: any AssociationFetcher,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: -LinkCheck.jitterSeconds...LinkCheck.jitterSeconds) }
    ) {
        self.store = store
        self.fetcher = fetcher
        self.jitter = jitter
    }

    /// Checks every link domain of an environment now (each fetch serves every app on that domain).
    /// - Throws: `StoreUnavailable`.
    /// - Returns: each new state with its app's platform, over every domain.
    @discardableResult
    public func checkEnvironment(_ environmentID: String, now: Date) throws -> [(platform: Platform, state: LinkStateRecord)] {
        var judged: [(platform: Platform, state: LinkStateRecord)] = []
        for domain in try store.linkDomains(environmentID: environmentID) {
            judged += try judge(domain: domain, leaseOwner: nil, now: now)
        }
        return judged
    }

    /// Checks one domain now and stores the result.
    /// - Parameter leaseOwner: the scheduler instance holding the domain's lease, or nil (on demand).
    /// - Returns: the new state of every app judged on the domain.
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    public func check(domain: String, leaseOwner: String?, now: Date) throws -> [LinkStateRecord] {
        try judge(domain: domain, leaseOwner: leaseOwner, now: now).map(\.state)
    }

    /// `check(domain:leaseOwner:now:)`, with each new state's platform (for the link-check metrics).
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    public func judge(domain: String, leaseOwner: String?, now: Date) throws -> [(platform: Platform, state: LinkStateRecord)] {
        let subjects = try store.domainSubjects(domain: domain)
        guard !subjects.isEmpty else {
            if let leaseOwner {
                try store.releaseLease(domain: domain, owner: leaseOwner, nextCheckAt: Self.nextDailyCheck(now, jitter: jitter()))
            }
            return []
        }
        let previous = try store.linkStates(domain: domain)
        let previousFailures = try store.consecutiveTransientFailures(domain: domain)
        let aasa =
            subjects.contains { $0.app.platform == .ios } ? fetch(domain: domain, path: Self.aasaPath, cap: Self.aasaCap) : nil
        let assetLinks =
            subjects.contains { $0.app.platform == .android }
            ? fetch(domain: domain, path: Self.assetLinksPath, cap: Self.assetLinksCap) : nil
        let check = Self.decide(
            domain: domain, subjects: subjects, aasa: aasa, assetLinks: assetLinks, previous: previous,
            previousFailures: previousFailures, now: now, jitter: jitter(), leaseOwner: leaseOwner)
        try store.recordCheck(check)
        var platforms: [String: Platform] = [:]
        for subject in subjects { platforms[subject.app.id] = subject.app.platform }
        return check.states.map { (platforms[$0.appID] ?? .ios, $0) }
    }

    /// Fetches `path` on `domain` once and maps the answer.
    func fetch(domain: String, path: String, cap: Int) -> FileOutcome {
        Self.outcome(fetcher.get(host: domain, path: path, maxBytes: cap), url: "https://\(domain)\(path)")
    }

    /// The whole check's decision from the fetched files: each app's state, the next check, the failure count.
    /// A transient failure does not turn a verified app unverified until it repeats
    /// `transientFailuresBeforeUnverified` times (docs/protocol.md#link-check-schedule).
    public static func decide(
        domain: String, subjects: [DomainSubject], aasa: FileOutcome?, assetLinks: FileOutcome?, previous: [String: LinkStateRecord],
        previousFailures: Int, now: Date, jitter: Double, leaseOwner: String?
    ) -> LinkCheckRecord {
        let transient = (aasa?.isTransient ?? false) || (assetLinks?.isTransient ?? false)
        let failures = transient ? previousFailures + 1 : 0
        let nextCheckAt =
            transient
            ? now.addingTimeInterval(transientBackoff[min(failures, transientBackoff.count) - 1])
            : nextDailyCheck(now, jitter: jitter)
        var states: [LinkStateRecord] = []
        for subject in subjects {
            let file = subject.app.platform == .ios ? aasa : assetLinks
            guard let file else { continue }
            var state = judge(subject, file: file, domain: domain, now: now, nextCheckAt: nextCheckAt)
            if file.isTransient, failures < transientFailuresBeforeUnverified, let before = previous[subject.app.id],
                before.status == .verified
            {
                state = LinkStateRecord(
                    appID: state.appID, domain: domain, status: .verified, checkedAt: now, nextCheckAt: nextCheckAt,
                    problems: state.problems, coveredPaths: before.coveredPaths)
            }
            states.append(state)
        }
        return LinkCheckRecord(
            domain: domain, checkedAt: now, aasaStatus: aasa?.status, assetlinksStatus: assetLinks?.status, transient: transient,
            states: states, nextCheckAt: nextCheckAt, consecutiveTransientFailures: failures, leaseOwner: leaseOwner)
    }

    /// The daily check: a day from `now` plus `jitter` seconds (clamped to ±`jitterSeconds`).
    public static func nextDailyCheck(_ now: Date, jitter: Double) -> Date {
        now.addingTimeInterval(dailySeconds + min(jitterSeconds, max(-jitterSeconds, jitter)))
    }

    static func problem(_ code: ProblemCode, _ message: String) -> LinkProblemRecord {
        LinkProblemRecord(code: code.rawValue, message: message, blocking: true)
    }

    /// Maps one fetch of `url` to an outcome (docs/protocol.md#problem-codes): 200 is judged; 404/410 is
    /// `file_missing`; a redirect is `redirected` (the platforms follow none); 5xx and 429 are transient
    /// `http_status`; timeouts, DNS errors and missing responses are transient; refused addresses, TLS
    /// errors and oversized files are not.
    public static func outcome(_ fetched: Result<FetchedFile, FileFetchFailure>, url: String) -> FileOutcome {
        switch fetched {
        case .success(let response):
            switch response.status {
            case 200:
                return .fetched(response)
            case 404, 410:
                return .failed(
                    status: response.status,
                    problem: problem(.fileMissing, "\(url) answered \(response.status): the file is not published."), transient: false)
            case 300..<400:
                let target = response.redirectLocation ?? "(no Location header)"
                return .failed(
                    status: response.status,
                    problem: problem(
                        .redirected, "\(url) answered \(response.status) redirecting to \(target); the platforms follow no redirect."),
                    transient: false)
            default:
                let transient = response.status >= 500 || response.status == 429
                return .failed(
                    status: response.status,
                    problem: problem(
                        .httpStatus, "\(url) answered \(response.status) instead of 200\(transient ? " (retried before it counts)" : "")."),
                    transient: transient)
            }
        case .failure(let failure):
            switch failure {
            case .timeout(let message):
                return .failed(status: nil, problem: problem(.timeout, "\(url): \(message) (retried before it counts)."), transient: true)
            case .dnsError(let message):
                return .failed(status: nil, problem: problem(.dnsError, "\(url): \(message) (retried before it counts)."), transient: true)
            case .addressRefused(let message):
                return .failed(status: nil, problem: problem(.addressRefused, "\(url): \(message)."), transient: false)
            case .tlsError(let message):
                return .failed(status: nil, problem: problem(.tlsError, "\(url): \(message)."), transient: false)
            case .tooLarge(let limit):
                return .failed(
                    status: nil, problem: problem(.tooLarge, "\(url) is larger than \(limit) bytes, the platform's limit."),
                    transient: false)
            case .connectionFailed(let message):
                return .failed(
                    status: nil, problem: problem(.httpStatus, "\(url) gave no HTTP response: \(message) (retried before it counts)."),
                    transient: true)
            }
        }
    }

    /// One app's verdict on the domain's file: iOS is verified when every link callback on the domain (path
    /// and query) is covered without a blocking problem, and a path is recorded as covered when every callback
    /// with that path is; Android when the file lists the app without a blocking problem.
    public static func judge(_ subject: DomainSubject, file: FileOutcome, domain: String, now: Date, nextCheckAt: Date) -> LinkStateRecord {
        let response: FetchedFile
        switch file {
        case .failed(_, let problem, _):
            return LinkStateRecord(
                appID: subject.app.id, domain: domain, status: .notVerified, checkedAt: now, nextCheckAt: nextCheckAt,
                problems: [problem], coveredPaths: [])
        case .fetched(let value):
            response = value
        }
        var problems: [LinkProblemRecord] = []
        var covered: [String] = []
        let verified: Bool
        switch subject.app.identity {
        case .ios(let app):
            var uncovered: Set<String> = []
            for callback in subject.callbacks {
                let found = AASAJudge.judge(body: response.body, contentType: response.contentType, app: app, callback: callback)
                for problem in found.map(LinkProblemRecord.init) where !problems.contains(problem) { problems.append(problem) }
                if found.contains(where: \.blocking) { uncovered.insert(callback.path) }
            }
            // A path counts as covered only when every callback registered with it (each query) is.
            covered = subject.callbackPaths.filter { !uncovered.contains($0) }
            verified = !subject.callbacks.isEmpty && uncovered.isEmpty
        case .android(let app):
            let found = AssetLinksJudge.judge(
                body: response.body, contentType: response.contentType, app: app, callbacks: subject.callbacks)
            problems = found.map(LinkProblemRecord.init)
            verified = !found.contains(where: \.blocking)
            covered = verified ? subject.callbackPaths : []
        }
        return LinkStateRecord(
            appID: subject.app.id, domain: domain, status: verified ? .verified : .notVerified, checkedAt: now,
            nextCheckAt: nextCheckAt, problems: problems, coveredPaths: covered)
    }
}

/// What the link scheduler needs from storage (docs/protocol.md#link-check-schedule).
public protocol LinkScheduleStore: Sendable {
    /// Puts every link domain with apps to judge on the schedule (due now when new), and makes a scheduled
    /// domain due now when a link callback or an app was added there since its last check.
    func syncSchedule(now: Date) throws
    /// Claims up to `limit` domains due by `dueBy` for `owner` with a lease of `leaseSeconds` from `now`;
    /// `only` restricts the claim to these domains (nil: all).
    func claimDueDomains(owner: String, now: Date, dueBy: Date?, leaseSeconds: Double, limit: Int, only: [String]?) throws
        -> [DomainScheduleRecord]
}
