import Association
import Testing

/// Android 15+ Dynamic App Links rules in `relation_extensions` (docs/association.md#assetlinks-dynamic-rules): run
/// in order over the URL a callback receives, first match wins, a URL no rule matches is not handled; a callback
/// they do not hand to the app is a `dynamic_rules_exclude_path` warning.
@Suite struct DynamicAppLinksTests {
    static let fingerprint = sampleFingerprint(0x10)
    static let app = androidApp("com.acme.app", [fingerprint])

    static func file(_ rules: String, extensionRelation: String = AssetLinksJudge.handleAllURLs) -> String {
        #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": ["\#(fingerprint)"]}, "relation_extensions": {"\#(extensionRelation)": {"dynamic_app_link_components": \#(rules)}}}]"#
    }

    func judge(_ rules: String, _ callbacks: [String], extensionRelation: String = AssetLinksJudge.handleAllURLs) -> [Problem] {
        AssetLinksJudge.judge(
            body: bytes(Self.file(rules, extensionRelation: extensionRelation)), contentType: "application/json", app: Self.app,
            callbacks: callbacks.map { LinkCallback(pathAndQuery: $0) })
    }

    @Test func anExcludedCallbackIsAWarningThatDoesNotBlock() {
        let problems = judge(#"[{"/": "/policy/*", "exclude": true}, {"/": "*"}]"#, ["/policy/cb", "/auth/cb"])
        #expect(
            problems == [
                Problem(
                    code: .dynamicRulesExcludePath,
                    message:
                        "The callback path '/policy/cb' is excluded for com.acme.app by rule #1 of dynamic_app_link_components; Android 15 and later will open the browser instead of the app there (older versions ignore these rules)",
                    blocking: false)
            ])
        #expect(isVerified(problems))
    }

    @Test func theFirstMatchingRuleWins() {
        #expect(judge(#"[{"/": "/auth/*"}, {"/": "*", "exclude": true}]"#, ["/auth/cb"]) == [])
        #expect(codes(judge(#"[{"/": "*", "exclude": true}, {"/": "/auth/*"}]"#, ["/auth/cb"])) == [.dynamicRulesExcludePath])
    }

    @Test func aCallbackNoRuleMatchesIsNotHandled() {
        let problems = judge(#"[{"/": "/shop/*"}]"#, ["/auth/cb"])
        #expect(
            problems.map(\.message) == [
                "No rule of dynamic_app_link_components for com.acme.app includes the callback path '/auth/cb'; Android 15 and later will open the browser instead of the app there (older versions ignore these rules)"
            ])
        #expect(isVerified(problems))
    }

    @Test(arguments: [
        (#"[{"/": "/auth/c?"}]"#, true),
        (#"[{"/": "/auth/?"}]"#, false),
        (#"[{"/": "/auth/*b"}]"#, true),
        (#"[{"/": "/AUTH/*"}]"#, false),
        (##"[{"#": "nav", "exclude": true}, {"/": "*"}]"##, true),
        (##"[{"/": "/auth/cb", "#": "nav"}]"##, false),
    ])
    func pathAndFragmentPatterns(_ rules: String, _ handled: Bool) {
        #expect(judge(rules, ["/auth/cb"]).isEmpty == handled, "\(rules)")
    }

    @Test func queryParametersAreMatchedByName() {
        let rules = #"[{"/": "/auth/*", "?": {"flow": "app"}}]"#
        #expect(judge(rules, ["/auth/cb?flow=app"]) == [])
        #expect(codes(judge(rules, ["/auth/cb?flow=web", "/auth/cb"])) == [.dynamicRulesExcludePath, .dynamicRulesExcludePath])
        #expect(judge(#"[{"/": "/auth/*", "?": {"code": "*"}}]"#, ["/auth/cb"]) == [])
    }

    /// Android ignores a malformed block (and Android 14 and older every block), so the manifest decides.
    @Test(arguments: [
        #"[]"#, #"{"/": "*"}"#, #"[{"/": 5}]"#, #"[{"?": "flow=app"}]"#, #"[{"/": "/shop/*"}, "x"]"#,
        #"[{"/": "/shop/*", "exclude": "yes"}]"#,
    ])
    func malformedRulesAreIgnored(_ rules: String) {
        #expect(judge(rules, ["/auth/cb"]) == [])
    }

    @Test func onlyTheHandleAllURLsExtensionCounts() {
        #expect(
            judge(#"[{"/": "*", "exclude": true}]"#, ["/auth/cb"], extensionRelation: "delegate_permission/common.get_login_creds") == [])
    }
}
