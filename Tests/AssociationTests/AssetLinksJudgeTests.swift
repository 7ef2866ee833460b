import Association
import Testing

@Suite struct AssetLinksJudgeTests {
    static let first = sampleFingerprint(0x10)
    static let second = sampleFingerprint(0x80)
    static let app = androidApp("com.acme.app", [first, second])
    static let relations = #"["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"]"#

    static func statement(
        _ package: String = "com.acme.app", fingerprints: [String], relation: String = relations, namespace: String = "android_app"
    )
        -> String
    {
        let list = fingerprints.map { "\"\($0)\"" }.joined(separator: ", ")
        return
            #"{"relation": \#(relation), "target": {"namespace": "\#(namespace)", "package_name": "\#(package)", "sha256_cert_fingerprints": [\#(list)]}}"#
    }

    func judge(_ text: String, contentType: String? = "application/json", app: AndroidApp = app) -> [Problem] {
        AssetLinksJudge.judge(body: bytes(text), contentType: contentType, app: app)
    }

    @Test func verifiesAFileListingEveryFingerprint() {
        #expect(judge("[\(Self.statement(fingerprints: [Self.second, Self.first]))]") == [])
    }

    @Test func fingerprintsMayBeSpreadOverStatements() {
        #expect(judge("[\(Self.statement(fingerprints: [Self.first])), \(Self.statement(fingerprints: [Self.second]))]") == [])
    }

    @Test(arguments: ["text/html", "application/octet-stream", nil])
    func wrongContentTypeBlocks(_ type: String?) {
        let problems = judge("[\(Self.statement(fingerprints: [Self.first, Self.second]))]", contentType: type)
        #expect(codes(problems) == [.contentType])
        #expect(problems.first?.blocking == true)
    }

    @Test func notJSONBlocks() {
        let problems = judge("\u{FEFF}[\(Self.statement(fingerprints: [Self.first, Self.second]))]")
        #expect(
            problems == [
                Problem(
                    code: .notJSON,
                    message:
                        "assetlinks.json is not strict JSON: the file starts with a UTF-8 byte order mark (BOM); remove it, strict JSON parsers reject it",
                    blocking: true)
            ])
        #expect(codes(judge("[\(Self.statement(fingerprints: [Self.first])),]")) == [.notJSON])
        #expect(codes(judge("<html>Not Found</html>")) == [.notJSON])
    }

    @Test func aBodyOfOnlyWhitespaceIsNotJSONAndSaysSo() {
        #expect(
            judge("\n") == [
                Problem(
                    code: .notJSON, message: "assetlinks.json is not strict JSON: the file contains only whitespace", blocking: true)
            ])
        #expect(judge("")[0].message == "assetlinks.json is not strict JSON: the file is empty")
    }

    @Test func namesEachAbsentFingerprint() {
        let problems = judge("[\(Self.statement(fingerprints: [sampleFingerprint(0x30)]))]")
        #expect(
            problems
                == [Self.first, Self.second].map {
                    Problem(
                        code: .fingerprintMissing,
                        message:
                            "Certificate \($0) is not listed for com.acme.app under delegate_permission/common.handle_all_urls; builds signed with this certificate will not be verified",
                        blocking: true)
                })
    }

    @Test(arguments: [
        first.lowercased(), first.replacingOccurrences(of: ":", with: ""), first.replacingOccurrences(of: ":", with: "").lowercased(),
    ])
    func aNonCanonicalFingerprintCountsAsAbsent(_ asWritten: String) {
        let problems = judge("[\(Self.statement(fingerprints: [asWritten, Self.second]))]")
        #expect(
            problems == [
                Problem(
                    code: .fingerprintMissing,
                    message:
                        "Certificate \(Self.first) is not listed for com.acme.app under delegate_permission/common.handle_all_urls: it is present but not in canonical upper-case colon form (listed as '\(asWritten)'), and Android compares fingerprints exactly",
                    blocking: true)
            ])
    }

    @Test func aStatementWithoutHandleAllURLsIsRelationMissing() {
        let problems = judge(
            #"[\#(Self.statement(fingerprints: [Self.first, Self.second], relation: #"["delegate_permission/common.get_login_creds"]"#))]"#)
        #expect(
            problems == [
                Problem(
                    code: .relationMissing,
                    message:
                        "Package com.acme.app is listed, but not with relation delegate_permission/common.handle_all_urls, so App Links won't open the app (found: 'delegate_permission/common.get_login_creds')",
                    blocking: true)
            ])
    }

    @Test func fingerprintsOnlyCountUnderHandleAllURLs() {
        let withoutRelation = Self.statement(fingerprints: [Self.second], relation: #"["delegate_permission/common.get_login_creds"]"#)
        let problems = judge("[\(Self.statement(fingerprints: [Self.first])), \(withoutRelation)]")
        #expect(codes(problems) == [.fingerprintMissing])
        #expect(problems.first?.message.contains(Self.second) == true)
    }

    @Test(arguments: [
        ("[]", "Package com.acme.app is not listed in assetlinks.json (the file lists no Android app)"),
        (
            "[\(statement("com.other.app", fingerprints: [first]))]",
            "Package com.acme.app is not listed in assetlinks.json (the file lists: 'com.other.app')"
        ),
        (
            "[\(statement("com.acme.App", fingerprints: [first]))]",
            "Package com.acme.app is not listed in assetlinks.json: it is listed as 'com.acme.App'; package names are case-sensitive (the file lists: 'com.acme.App')"
        ),
        (
            "[\(statement("com.acme.app.debug", fingerprints: [first]))]",
            "Package com.acme.app is not listed in assetlinks.json: the closest entry is 'com.acme.app.debug' (the file lists: 'com.acme.app.debug')"
        ),
        (
            "[\(statement(fingerprints: [first], namespace: "Android_app"))]",
            "Package com.acme.app is not listed in assetlinks.json: statement #1 lists it with namespace 'Android_app'; it must be exactly \"android_app\" (the file lists no Android app)"
        ),
        (
            #"[{"include": "https://example.test/more.json"}]"#,
            "Package com.acme.app is not listed in assetlinks.json: the file has 1 'include' statement(s), which this check does not follow; list the app in this file (the file lists no Android app)"
        ),
        (
            #"{"statements": []}"#,
            "Package com.acme.app is not listed: assetlinks.json must be a JSON array of statements ([…]); it is an object with a 'statements' key, which is Digital Asset Links API output, not a statement list"
        ),
        (
            "\"com.acme.app\"",
            "Package com.acme.app is not listed: assetlinks.json must be a JSON array of statements ([…]); it is a string"
        ),
    ])
    func packageMissingNamesNearMisses(_ text: String, _ message: String) {
        #expect(judge(text) == [Problem(code: .packageMissing, message: message, blocking: true)])
    }

    @Test(arguments: [
        #"[1, null, "x", [], {"relation": "delegate_permission/common.handle_all_urls", "target": []}, {"target": {"namespace": 3, "package_name": ["com.acme.app"]}}]"#,
        #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": "AA"}}]"#,
        #"[{"relation": [1, null], "target": {"namespace": "android_app", "package_name": "com.acme.app", "sha256_cert_fingerprints": [1, {}, null]}}]"#,
        #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "com.acme.app"}}]"#,
    ])
    func wrongTypesAreProblemsNotTraps(_ text: String) {
        let problems = judge(text)
        #expect(!problems.isEmpty)
        #expect(!isVerified(problems))
    }
}
