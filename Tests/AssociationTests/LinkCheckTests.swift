import Association
import Foundation
import Testing

/// The link check's decisions (docs/protocol.md#link-check, docs/protocol.md#link-check-schedule), without a
/// socket or a database.
@Suite struct LinkCheckTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let fingerprint = sampleFingerprint(0x10)
    static let android = AppRecord(
        id: "a1", environmentID: "e1", identity: .android(androidApp("com.acme.app", [fingerprint])), productionCustomScheme: nil,
        createdAt: now)
    static let subject = DomainSubject(app: android, projectID: "p1", callbackPaths: ["/cb"])
    static let assetLinks =
        #"[{"relation": ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": ["\#(fingerprint)"]}}]"#

    @Test func fetchOutcomesMapToProblemCodesAndTransience() {
        let url = "https://acme.example/.well-known/assetlinks.json"
        func outcome(_ result: Result<FetchedFile, FileFetchFailure>) -> (code: String?, transient: Bool) {
            switch LinkCheck.outcome(result, url: url) {
            case .fetched: return (nil, false)
            case .failed(_, let problem, let transient): return (problem.code, transient)
            }
        }
        #expect(outcome(.success(FetchedFile(status: 404, contentType: nil, body: []))) == ("file_missing", false))
        #expect(
            outcome(.success(FetchedFile(status: 301, contentType: nil, body: [], redirectLocation: "https://x.example/"))) == (
                "redirected", false
            ))
        #expect(outcome(.success(FetchedFile(status: 503, contentType: nil, body: []))) == ("http_status", true))
        #expect(outcome(.success(FetchedFile(status: 429, contentType: nil, body: []))) == ("http_status", true))
        #expect(outcome(.success(FetchedFile(status: 403, contentType: nil, body: []))) == ("http_status", false))
        #expect(outcome(.failure(.timeout("slow"))) == ("timeout", true))
        #expect(outcome(.failure(.dnsError("no name"))) == ("dns_error", true))
        #expect(outcome(.failure(.addressRefused("10.0.0.1 is private"))) == ("address_refused", false))
        #expect(outcome(.failure(.tooLarge(limit: 5))) == ("too_large", false))
        #expect(outcome(.success(FetchedFile(status: 200, contentType: "application/json", body: []))).code == nil)
    }

    @Test func aListedAndroidAppIsVerifiedForEveryCallbackPath() {
        let file = LinkCheck.outcome(
            .success(FetchedFile(status: 200, contentType: "application/json", body: Array(Self.assetLinks.utf8))), url: "u")
        let state = LinkCheck.judge(Self.subject, file: file, domain: "acme.example", now: Self.now, nextCheckAt: Self.now)
        #expect(state.status == .verified)
        #expect(state.coveredPaths == ["/cb"])
    }

    @Test func eachCallbackIsJudgedWithItsQueryAndAPathIsCoveredOnlyWhenAllOfItsCallbacksAre() {
        let ios = AppRecord(
            id: "i1", environmentID: "e1", identity: .ios(iosApp("ABCDE12345", "com.acme.app")), productionCustomScheme: nil,
            createdAt: Self.now)
        let subject = DomainSubject(
            app: ios, projectID: "p1",
            callbacks: [LinkCallback(pathAndQuery: "/reset?token=abc"), LinkCallback(pathAndQuery: "/reset?token=xyz")])
        func state(_ pattern: String) -> LinkStateRecord {
            let body = AASAJudgeTests.modern(#"{"/": "/reset", "?": {"token": "\#(pattern)"}}"#)
            let file = LinkCheck.outcome(.success(FetchedFile(status: 200, contentType: "application/json", body: body)), url: "u")
            return LinkCheck.judge(subject, file: file, domain: "acme.example", now: Self.now, nextCheckAt: Self.now)
        }
        #expect(state("???").status == .verified)
        #expect(state("???").coveredPaths == ["/reset"])
        let partly = state("abc")
        #expect(partly.status == .notVerified)
        #expect(partly.coveredPaths == [])
        #expect(
            partly.problems.map(\.message) == [
                "The callback path '/reset?token=xyz' is not matched by any rule for ABCDE12345.com.acme.app in applinks.details[0]"
            ])
    }

    @Test func androidDynamicRulesWarnAboutTheSubjectsCallbacks() {
        let body =
            #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": ["\#(Self.fingerprint)"]}, "relation_extensions": {"delegate_permission/common.handle_all_urls": {"dynamic_app_link_components": [{"/": "/cb", "exclude": true}, {"/": "*"}]}}}]"#
        let file = LinkCheck.outcome(
            .success(FetchedFile(status: 200, contentType: "application/json", body: Array(body.utf8))), url: "u")
        let state = LinkCheck.judge(Self.subject, file: file, domain: "acme.example", now: Self.now, nextCheckAt: Self.now)
        #expect(state.status == .verified)
        #expect(state.problems.map(\.code) == ["dynamic_rules_exclude_path"])
        #expect(state.problems.first?.blocking == false)
    }

    @Test func aTransientFailureKeepsAVerifiedAppUntilItRepeatsThreeTimes() {
        let verified = LinkStateRecord(
            appID: "a1", domain: "acme.example", status: .verified, checkedAt: Self.now, nextCheckAt: Self.now, problems: [],
            coveredPaths: ["/cb"])
        let timeout = LinkCheck.outcome(.failure(.timeout("slow")), url: "u")
        var failures = 0
        var statuses: [LinkStatus] = []
        var delays: [Double] = []
        for _ in 0..<4 {
            let check = LinkCheck.decide(
                domain: "acme.example", subjects: [Self.subject], aasa: nil, assetLinks: timeout, previous: ["a1": verified],
                previousFailures: failures, now: Self.now, jitter: 0, leaseOwner: nil)
            failures = check.consecutiveTransientFailures
            statuses.append(check.states[0].status)
            delays.append(check.nextCheckAt.timeIntervalSince(Self.now))
        }
        #expect(statuses == [.verified, .verified, .notVerified, .notVerified])
        #expect(delays == [60, 300, 900, 3600])
    }

    @Test func aSuccessfulCheckIsDueAgainInADayWithinTheJitter() {
        let file = LinkCheck.outcome(.success(FetchedFile(status: 404, contentType: nil, body: [])), url: "u")
        let check = LinkCheck.decide(
            domain: "acme.example", subjects: [Self.subject], aasa: nil, assetLinks: file, previous: [:], previousFailures: 2,
            now: Self.now, jitter: 99_999, leaseOwner: "me")
        #expect(check.consecutiveTransientFailures == 0)
        #expect(check.nextCheckAt.timeIntervalSince(Self.now) == LinkCheck.dailySeconds + LinkCheck.jitterSeconds)
        #expect(check.states.map(\.status) == [.notVerified])
        #expect(check.assetlinksStatus == 404)
    }

    @Test func theLinkSummaryIsPendingThenFailingThenVerified() {
        func state(_ status: LinkStatus, _ domain: String) -> LinkStateRecord {
            LinkStateRecord(appID: "a1", domain: domain, status: status, checkedAt: nil, nextCheckAt: nil, problems: [], coveredPaths: [])
        }
        #expect(LinkSummary([]).status == .pending)
        #expect(LinkSummary([state(.verified, "a.example"), state(.pending, "b.example")]).status == .pending)
        #expect(LinkSummary([state(.verified, "a.example"), state(.notVerified, "b.example")]).status == .notVerified)
        #expect(LinkSummary([state(.verified, "a.example"), state(.verified, "b.example")]).status == .verified)
        #expect(LinkStatus.notVerified.rawValue == "not_verified")
    }

    @Test func theProductionLinkRuleNeedsAVerifiedAppAsWellAsTheDomain() {
        var facts = AppLinkFacts()
        facts.add(platform: .ios, domain: "acme.example", status: .verified, coveredPaths: ["/cb"])
        #expect(facts.linkVerified(host: "acme.example", path: "/cb", domainVerified: true, production: true))
        #expect(!facts.linkVerified(host: "acme.example", path: "/other", domainVerified: true, production: true))
        #expect(!facts.linkVerified(host: "acme.example", path: "/cb", domainVerified: false, production: true))
        #expect(facts.linkVerified(host: "acme.example", path: "/other", domainVerified: true, production: false))
        #expect(!facts.linkVerified(host: "acme.example", path: "/cb", domainVerified: false, production: false))
        facts.add(platform: .android, domain: "droid.example", status: .notVerified, coveredPaths: [])
        #expect(!facts.linkVerified(host: "droid.example", path: "/cb", domainVerified: true, production: true))
    }

    @Test func theTokenFileMustHoldTheTokenTrimmed() {
        let ok = Result<FetchedFile, FileFetchFailure>.success(
            FetchedFile(status: 200, contentType: "text/plain", body: Array(" zdv_abc\n".utf8)))
        #expect(DomainVerification.problem(ok, token: "zdv_abc", domain: "acme.example") == nil)
        #expect(DomainVerification.problem(ok, token: "zdv_abd", domain: "acme.example")?.contains("does not contain") == true)
        let missing = Result<FetchedFile, FileFetchFailure>.success(FetchedFile(status: 404, contentType: nil, body: []))
        #expect(DomainVerification.problem(missing, token: "zdv_abc", domain: "acme.example")?.contains("answered 404") == true)
    }
}
