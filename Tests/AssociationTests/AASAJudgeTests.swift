import Association
import Testing

@Suite struct AASAJudgeTests {
    static let app = iosApp("ABCDE12345", "com.acme.app")
    static let json = "application/json"

    static func modern(_ components: String, appIDs: String = "\"ABCDE12345.com.acme.app\"") -> [UInt8] {
        bytes(
            """
            {"applinks": {"details": [{"appIDs": [\(appIDs)], "components": [\(components)]}]},
             "webcredentials": {"apps": [\(appIDs)]}}
            """)
    }

    func judge(_ body: [UInt8], path: String = "/auth/callback", contentType: String? = json, app: IOSApp = app) -> [Problem] {
        AASAJudge.judge(body: body, contentType: contentType, app: app, callbackPath: path)
    }

    @Test func verifiesAModernFile() {
        #expect(judge(Self.modern(#"{"/": "/auth/*"}"#)) == [])
    }

    // MARK: content_type

    @Test(arguments: ["application/json", "application/json; charset=utf-8", "Application/JSON ;charset=UTF-8"])
    func acceptsJSONMediaType(_ type: String) {
        #expect(judge(Self.modern(#"{"/": "*"}"#), contentType: type) == [])
    }

    @Test(arguments: [("text/plain", "served as 'text/plain'"), ("application/pkcs7-mime", "signed PKCS#7")])
    func wrongContentTypeIsOnlyAWarning(_ type: String, _ says: String) throws {
        let problems = judge(Self.modern(#"{"/": "*"}"#), contentType: type)
        #expect(codes(problems) == [.contentType])
        #expect(problems[0].blocking == false)
        #expect(problems[0].message.contains(says))
        #expect(isVerified(problems))
    }

    @Test func missingContentTypeIsAWarning() {
        let problems = judge(Self.modern(#"{"/": "*"}"#), contentType: nil)
        #expect(
            problems == [
                Problem(
                    code: .contentType,
                    message: "apple-app-site-association is served without a Content-Type header; serve it as application/json",
                    blocking: false)
            ])
    }

    // MARK: not_json

    static let notJSON: [(String, String)] = [
        ("\u{FEFF}{\"applinks\": {}}", "the file starts with a UTF-8 byte order mark (BOM)"),
        ("{\n  // universal links\n  \"applinks\": {}}", "a comment at line 2, column 3"),
        ("{\"applinks\": {\"details\": [],}}", "a trailing comma at line 1, column 28"),
        ("<!doctype html><html><body>Not found</body></html>", "is an HTML page, not JSON"),
        ("", "apple-app-site-association is not strict JSON: the file is empty"),
        ("\n", "apple-app-site-association is not strict JSON: the file contains only whitespace"),
        (" \t\r\n ", "apple-app-site-association is not strict JSON: the file contains only whitespace"),
        ("{\"applinks\": {\u{201C}details\u{201D}: []}}", "a typographic (smart) quote at line 1, column 15"),
        ("{\"a\": 1, \"a\": 2}", "an object repeats the key 'a'"),
        (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "nested more than 32 levels deep"),
        ("{\"applinks\": {}} x", "more text follows the JSON value at line 1, column 18"),
    ]

    @Test(arguments: notJSON)
    func refusesWhatIsNotStrictJSON(_ text: String, _ says: String) {
        let problems = judge(bytes(text))
        #expect(codes(problems) == [.notJSON])
        #expect(problems.first?.blocking == true)
        #expect(problems.first?.message.contains(says) == true, "\(problems.first?.message ?? "")")
    }

    // MARK: app_id_missing and near misses

    @Test(arguments: [
        (
            "\"XYZ9876543.com.other.app\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details (the file lists: 'XYZ9876543.com.other.app')"
        ),
        (
            "\"abcde12345.com.acme.app\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: it is listed as 'abcde12345.com.acme.app', in a different letter case; use the exact App ID (the file lists: 'abcde12345.com.acme.app')"
        ),
        (
            "\"ABCDE12345.com.acme.App\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: it is listed as 'ABCDE12345.com.acme.App', in a different letter case; use the exact App ID (the file lists: 'ABCDE12345.com.acme.App')"
        ),
        (
            "\"ZZZZZ99999.com.acme.app\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: bundle com.acme.app is listed under prefix 'ZZZZZ99999', but the registered Team ID is ABCDE12345 (the file lists: 'ZZZZZ99999.com.acme.app')"
        ),
        (
            "\"ABCDE12345.com.acme.app.dev\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: the closest entry is 'ABCDE12345.com.acme.app.dev'; check the bundle ID (the file lists: 'ABCDE12345.com.acme.app.dev')"
        ),
        (
            "\"com.acme.app\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: bundle com.acme.app is listed without the Team ID prefix; list it as ABCDE12345.com.acme.app (the file lists: 'com.acme.app')"
        ),
        (
            "\" ABCDE12345.com.acme.app\"",
            "App ABCDE12345.com.acme.app is not listed in applinks.details: it is listed with spaces around it (' ABCDE12345.com.acme.app') (the file lists: ' ABCDE12345.com.acme.app')"
        ),
    ])
    func namesNearMisses(_ listed: String, _ message: String) {
        let problems = judge(Self.modern(#"{"/": "*"}"#, appIDs: listed))
        #expect(problems.first == Problem(code: .appIDMissing, message: message, blocking: true))
        #expect(codes(problems) == [.appIDMissing, .webcredentialsMissing])
    }

    @Test func saysWhenTheAppIsInWebcredentialsOnly() {
        let body = bytes(#"{"applinks": {"details": []}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#)
        #expect(
            judge(body) == [
                Problem(
                    code: .appIDMissing,
                    message:
                        "App ABCDE12345.com.acme.app is not listed in applinks.details: it is listed in webcredentials.apps only, which does not enable universal links (applinks.details lists no app)",
                    blocking: true)
            ])
    }

    @Test(arguments: [
        ("[]", "apple-app-site-association must be a JSON object; it is an array"),
        ("{\"webcredentials\": {\"apps\": []}}", "the file has no 'applinks' section"),
        ("{\"applinks\": []}", "'applinks' is an array, not an object"),
        ("{\"applinks\": {\"apps\": []}}", "'applinks' has no 'details' array"),
        ("{\"applinks\": {\"details\": \"ABCDE12345.com.acme.app\"}}", "'applinks.details' is a string, not an array"),
    ])
    func structureProblemsAreAppIDMissing(_ text: String, _ says: String) {
        let problems = judge(bytes(text))
        #expect(problems.first?.code == .appIDMissing)
        #expect(problems.first?.message.contains(says) == true, "\(problems.first?.message ?? "")")
    }

    // MARK: path_not_covered and Apple's matching rules

    @Test func namesAPathNoRuleMatches() {
        #expect(
            judge(Self.modern(#"{"/": "/shop/*"}"#)) == [
                Problem(
                    code: .pathNotCovered,
                    message:
                        "The callback path '/auth/callback' is not matched by any rule for ABCDE12345.com.acme.app in applinks.details[0]",
                    blocking: true)
            ])
    }

    @Test func anExcludingComponentBeforeWins() {
        let problems = judge(Self.modern(#"{"/": "/auth/*", "exclude": true}, {"/": "*"}"#))
        #expect(
            problems == [
                Problem(
                    code: .pathNotCovered,
                    message: "The callback path '/auth/callback' is excluded for ABCDE12345.com.acme.app by rule #1 of applinks.details[0]",
                    blocking: true)
            ])
    }

    @Test func anExcludingComponentAfterAMatchIsNotReached() {
        #expect(judge(Self.modern(#"{"/": "/auth/callback"}, {"/": "*", "exclude": true}"#)) == [])
    }

    @Test func aComponentWithoutPatternsMatchesEverything() {
        #expect(codes(judge(Self.modern(#"{"/": "/shop"}, {"exclude": true, "comment": "nothing else"}"#))) == [.pathNotCovered])
    }

    @Test(arguments: [
        (#"{"/": "/auth/callback"}"#, true),
        (#"{"/": "/auth/?allback"}"#, true),
        (#"{"/": "/auth/?"}"#, false),
        (#"{"/": "/auth/?*"}"#, true),
        (#"{"/": "/auth/*k"}"#, true),
        (#"{"/": "/auth"}"#, false),
        (#"{"/": "/Auth/Callback"}"#, false),
        (#"{"/": "/Auth/Callback", "caseSensitive": false}"#, true),
        (##"{"/": "/auth/callback", "#": "*"}"##, true),
        (##"{"/": "/auth/callback", "#": "no_universal_links"}"##, false),
        (#"{"/": "/auth/callback", "?": "*"}"#, true),
        (#"{"/": "/auth/callback", "?": {"code": "*", "state": "?*"}}"#, true),
        (#"{"/": "/auth/callback", "?": {"ref": "*"}}"#, true),
        (#"{"/": "/auth/callback", "?": {"ref": "?*"}}"#, false),
        (#"{"/": "/auth/callback", "?": {"code": "????"}}"#, false),
        (#"{"/": "/auth/callback", "?": "debug=1"}"#, false),
        (#"{"/": 42}"#, false),
        (#"{"/": "/auth/callback", "exclude": "yes"}"#, false),
    ])
    func followsApplesComponentRules(_ component: String, _ covered: Bool) {
        let problems = judge(Self.modern(component))
        #expect(problems.isEmpty == covered, "\(component): \(problems)")
    }

    @Test func appliesDefaultsFromEntryAndDomain() {
        let entry = bytes(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "defaults": {"caseSensitive": false}, "components": [{"/": "/AUTH/*"}]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#
        )
        #expect(judge(entry) == [])
        let domain = bytes(
            #"{"applinks": {"defaults": {"caseSensitive": false}, "details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "/AUTH/*"}]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#
        )
        #expect(judge(domain) == [])
        let overridden = bytes(
            #"{"applinks": {"defaults": {"caseSensitive": false}, "details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "/AUTH/*", "caseSensitive": true}]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#
        )
        #expect(codes(judge(overridden)) == [.pathNotCovered])
    }

    @Test func percentEncodedFalseMatchesTheDecodedPath() {
        let body = Self.modern(#"{"/": "/café/*", "percentEncoded": false}"#)
        #expect(judge(body, path: "/caf%C3%A9/callback") == [])
        #expect(codes(judge(Self.modern(#"{"/": "/café/*"}"#), path: "/caf%C3%A9/callback")) == [.pathNotCovered])
    }

    @Test func anEntryWithoutRulesSaysSo() {
        let body = bytes(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#
        )
        #expect(
            judge(body) == [
                Problem(
                    code: .pathNotCovered,
                    message:
                        "App ABCDE12345.com.acme.app is listed in applinks.details[0], but that entry has no 'components' (or 'paths'), so no URL opens the app",
                    blocking: true)
            ])
    }

    @Test func laterEntriesAreTriedWhenAnEarlierOneDoesNotMatch() {
        let body = bytes(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "/shop"}]}, {"appID": "ABCDE12345.com.acme.app", "paths": ["/auth/*"]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.app"]}}"#
        )
        #expect(judge(body) == [])
    }

    // MARK: legacy formats

    static let legacy = bytes(
        #"{"applinks": {"apps": [], "details": [{"appID": "OTHERTEAM1.com.other", "paths": ["*"]}, {"appID": "ABCDE12345.com.acme.app", "paths": ["NOT /auth/admin/*", "/auth/*", "NOT /auth/callback"]}]}}"#
    )

    @Test func readsLegacyAppIDAndPaths() {
        #expect(codes(judge(Self.legacy)) == [.webcredentialsMissing])
        #expect(isVerified(judge(Self.legacy)))
    }

    @Test func legacyNotExclusionWinsWhenFirst() {
        let problems = judge(Self.legacy, path: "/auth/admin/callback")
        #expect(
            problems.first
                == Problem(
                    code: .pathNotCovered,
                    message:
                        "The callback path '/auth/admin/callback' is excluded for ABCDE12345.com.acme.app by rule #1 of applinks.details[1]",
                    blocking: true))
    }

    @Test func legacyPathsIgnoreNothingButThePath() {
        #expect(codes(judge(Self.legacy, path: "/other")) == [.pathNotCovered, .webcredentialsMissing])
    }

    @Test func readsDetailsKeyedByAppID() {
        let body = bytes(
            #"{"applinks": {"apps": [], "details": {"OTHERTEAM1.com.other": {"paths": ["/x"]}, "ABCDE12345.com.acme.app": {"paths": ["/auth/*"]}}}}"#
        )
        #expect(codes(judge(body)) == [.webcredentialsMissing])
        #expect(AASAJudge.listedAppIDs(body: body) == ["OTHERTEAM1.com.other", "ABCDE12345.com.acme.app"])
        let excluded = bytes(#"{"applinks": {"details": {"ABCDE12345.com.acme.app": {"paths": ["NOT /auth/*", "*"]}}}}"#)
        #expect(
            judge(excluded).first?.message
                == "The callback path '/auth/callback' is excluded for ABCDE12345.com.acme.app by rule #1 of applinks.details['ABCDE12345.com.acme.app']"
        )
    }

    // MARK: webcredentials_missing

    @Test func missingWebcredentialsIsAWarning() {
        let noSection = bytes(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "*"}]}]}}"#)
        let problems = judge(noSection)
        #expect(
            problems == [
                Problem(
                    code: .webcredentialsMissing,
                    message:
                        "The file has no 'webcredentials.apps' list, so ABCDE12345.com.acme.app cannot use passkeys or saved passwords for this domain",
                    blocking: false)
            ])
        let otherApp = bytes(
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "*"}]}]}, "webcredentials": {"apps": ["ABCDE12345.com.acme.other"]}}"#
        )
        #expect(
            judge(otherApp).first?.message
                == "App ABCDE12345.com.acme.app is not listed in webcredentials.apps (passkeys and AutoFill for this domain won't work in the app)"
        )
    }

    // MARK: robustness

    @Test(arguments: [
        #"{"applinks": {"details": [{"appIDs": "ABCDE12345.com.acme.app", "components": {"/": 1}}, 5, null, [], {"appID": ["x"], "paths": [1, null, {}]}]}}"#,
        ##"{"applinks": {"defaults": [], "details": [{"appIDs": ["ABCDE12345.com.acme.app", 7], "defaults": 3, "components": [1, "x", {"/": [], "?": 3, "#": {}}]}]}}"##,
        #"{"applinks": {"details": {"ABCDE12345.com.acme.app": 12}}, "webcredentials": {"apps": "all"}}"#,
        #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.acme.app"], "components": [{"/": "*", "caseSensitive": 1e999, "percentEncoded": null}]}]}, "n": -123456789012345678901234567890e-99999}"#,
        #"[1e400, -0.0, "\ud83d\ude00", "\u0000"]"#,
    ])
    func wrongTypesAreProblemsNotTraps(_ text: String) {
        let problems = judge(bytes(text))
        #expect(problems.allSatisfy { !$0.message.isEmpty })
    }
}
