import Association
import Testing

@Suite struct FingerprintTests {
    static let canonical = sampleFingerprint(0xA0)
    static let plainHex = canonical.replacingOccurrences(of: ":", with: "")

    /// Pasted forms that must all come out as the same canonical value.
    static let accepted: [String] = [
        canonical,
        canonical.lowercased(),
        plainHex,
        plainHex.lowercased(),
        canonical.replacingOccurrences(of: ":", with: " "),
        "  \(canonical)\n",
        "SHA256: \(canonical)",
        "sha256 Fingerprint=\(canonical)",
        String(plainHex.prefix(10)) + ":" + String(plainHex.dropFirst(10)),
    ]

    @Test(arguments: accepted)
    func acceptsAnyPastedFormat(_ raw: String) throws {
        let parsed = try CertificateFingerprint.parse(raw, field: "f").get()
        #expect(parsed.canonical == Self.canonical)
    }

    static let refused: [(String, String)] = [
        (String(repeating: "AB:", count: 19) + "AB", "f is 20 bytes long: that is a SHA-1 fingerprint; paste the SHA-256 one."),
        (String(repeating: "ab", count: 16), "f is 16 bytes long: that is an MD5 fingerprint; paste the SHA-256 one."),
        (String(repeating: "AB", count: 31), "f is 31 bytes long: a SHA-256 fingerprint is 32 bytes (64 hex digits)."),
        (String(repeating: "AB", count: 33), "f is 33 bytes long: a SHA-256 fingerprint is 32 bytes (64 hex digits)."),
        (String(repeating: "A", count: 63), "f has 63 hex digits, an odd number: a SHA-256 fingerprint has 64 (32 bytes)."),
        ("", "f is empty: paste the certificate's SHA-256 fingerprint."),
        (" : : ", "f is empty: paste the certificate's SHA-256 fingerprint."),
        (
            String(repeating: "AG", count: 32),
            "f contains 'G': a fingerprint is hexadecimal digits (0-9, A-F), optionally separated by colons."
        ),
        (
            String(repeating: "AB-", count: 31) + "AB",
            "f contains '-': a fingerprint is hexadecimal digits (0-9, A-F), optionally separated by colons."
        ),
        (
            "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
            "f is the example from Google's documentation (14:6D:E9:…:44:E5), not your certificate's fingerprint."
        ),
        (
            "146de983c5730650d8eeb9952f34fc6416a08342e61dbea88a0496b23fcf44e5",
            "f is the example from Google's documentation (14:6D:E9:…:44:E5), not your certificate's fingerprint."
        ),
        (String(repeating: "00", count: 32), "f is all zeros: that is a placeholder, not a certificate's fingerprint."),
    ]

    @Test(arguments: refused)
    func refusesWithExactMessage(_ raw: String, _ message: String) {
        #expect(CertificateFingerprint.parse(raw, field: "f") == .failure(IdentifierProblem(field: "f", message: message)))
    }

    @Test func listNamesTheFieldOfEachEntry() {
        let sha1 = String(repeating: "AB:", count: 19) + "AB"
        #expect(
            Fingerprints.parse([Self.canonical, sha1])
                == .failure(
                    IdentifierProblem(
                        field: "sha256CertFingerprints[1]",
                        message: "sha256CertFingerprints[1] is 20 bytes long: that is a SHA-1 fingerprint; paste the SHA-256 one.")))
    }

    @Test func refusesDuplicatesAfterCanonicalisationNamingBothIndexes() {
        let other = sampleFingerprint(0x10)
        #expect(
            Fingerprints.parse([Self.canonical, other, Self.plainHex.lowercased()])
                == .failure(
                    IdentifierProblem(
                        field: "sha256CertFingerprints[2]",
                        message: "sha256CertFingerprints[2] is the same certificate as sha256CertFingerprints[0]; list each one once.")))
    }

    @Test func refusesAnEmptyList() {
        guard case .failure(let problem) = Fingerprints.parse([]) else {
            Issue.record("an empty list was accepted")
            return
        }
        #expect(problem.field == "sha256CertFingerprints")
    }

    @Test func acceptsSixFingerprintsLeavingTheLimitToPostgreSQL() throws {
        let six = (0..<6).map { sampleFingerprint(UInt8($0 * 40)) }
        #expect(try Fingerprints.parse(six).get().map(\.canonical) == six)
    }
}

@Suite struct TeamIDTests {
    @Test(arguments: [
        ("ABCDE12345", "ABCDE12345"), ("abcde12345", "ABCDE12345"), ("  9ja89qqlnq\t", "9JA89QQLNQ"), ("1234567890", "1234567890"),
    ])
    func acceptsAndUpperCases(_ raw: String, _ value: String) throws {
        #expect(try TeamID.parse(raw).get().value == value)
    }

    @Test(arguments: [
        ("ABCDE1234", "teamId is 9 characters long: a Team ID is exactly 10 letters or digits."),
        ("ABCDE123456", "teamId is 11 characters long: a Team ID is exactly 10 letters or digits."),
        ("ABCDE-1234", "teamId contains '-': a Team ID is 10 letters or digits (e.g. from Membership details)."),
        ("ABCDE 1234", "teamId contains a space: a Team ID is 10 letters or digits (e.g. from Membership details)."),
        ("ÄBCDE12345", "teamId contains U+00C4: a Team ID is 10 letters or digits (e.g. from Membership details)."),
        ("", "teamId is empty: enter the 10-character Team ID from Membership details."),
    ])
    func refuses(_ raw: String, _ message: String) {
        #expect(TeamID.parse(raw) == .failure(IdentifierProblem(field: "teamId", message: message)))
    }
}

@Suite struct BundleIDTests {
    @Test(arguments: ["com.acme.app", "Com.Acme.My-App", "app", "com.acme.app2.watchkitapp", "a" + String(repeating: "b", count: 154)])
    func acceptsAndKeepsCase(_ raw: String) throws {
        #expect(try BundleID.parse(" \(raw) ").get().value == raw)
    }

    @Test(arguments: [
        ("com.acme_app", "bundleId contains '_': only letters, digits, '-' and '.' are allowed."),
        ("com.acme app", "bundleId contains a space: only letters, digits, '-' and '.' are allowed."),
        ("com.acmé", "bundleId contains U+00E9: only letters, digits, '-' and '.' are allowed."),
        (".com.acme", "bundleId starts or ends with '.'."),
        ("com.acme.", "bundleId starts or ends with '.'."),
        ("com..acme", "bundleId contains an empty part ('..')."),
        ("", "bundleId is empty: enter the app's bundle identifier, e.g. com.acme.app."),
        (String(repeating: "a", count: 156), "bundleId is 156 characters long: at most 155 are allowed."),
        (
            "ABCDE12345.com.acme.app",
            "bundleId looks like a full App ID (Team ID ABCDE12345 followed by the bundle ID): enter only the bundle ID (com.acme.app); the Team ID goes in teamId."
        ),
    ])
    func refuses(_ raw: String, _ message: String) {
        #expect(BundleID.parse(raw) == .failure(IdentifierProblem(field: "bundleId", message: message)))
    }
}

@Suite struct PackageNameTests {
    @Test(arguments: ["com.acme.app", "io.ionic.starter", "example.amber1", "com.example.delta_128.twa", "Com.Acme.App", "a.b"])
    func accepts(_ raw: String) throws {
        #expect(try PackageName.parse(raw).get().value == raw)
    }

    static let rule = "package names need at least two segments, each starting with a letter; only letters, digits and _ are allowed"

    @Test(arguments: [
        ("acme", "packageName has a single segment: \(rule)."),
        ("com.1acme", "packageName segment 2 does not start with a letter: \(rule)."),
        ("com._acme", "packageName segment 2 does not start with a letter: \(rule)."),
        ("com..acme", "packageName has an empty segment: \(rule)."),
        ("com.acme.", "packageName has an empty segment: \(rule)."),
        ("com.acme-app", "packageName contains '-': \(rule)."),
        ("", "packageName is empty: enter the applicationId, e.g. com.acme.app."),
        ("a." + String(repeating: "b", count: 254), "packageName is 256 characters long: at most 255 are allowed."),
    ])
    func refuses(_ raw: String, _ message: String) {
        #expect(PackageName.parse(raw) == .failure(IdentifierProblem(field: "packageName", message: message)))
    }

    @Test func javaKeywordSegmentsAreAcceptedBecauseApplicationIdsAreNotJavaPackages() throws {
        #expect(try PackageName.parse("com.example.quartz141.final").get().value == "com.example.quartz141.final")
        #expect(try PackageName.parse("com.New.app").get().value == "com.New.app")
    }
}

@Suite struct ProblemCodeTests {
    @Test func blockingFollowsProductTable() {
        for code in ProblemCode.allCases {
            let aasa = code.blocksVerification(for: .appleAppSiteAssociation)
            let assetLinks = code.blocksVerification(for: .assetLinks)
            switch code {
            case .webcredentialsMissing, .dynamicRulesExcludePath: #expect(!aasa && !assetLinks)
            case .contentType: #expect(!aasa && assetLinks)
            default: #expect(aasa && assetLinks)
            }
        }
    }

    @Test func rawValuesAreTheContractCodes() {
        #expect(
            ProblemCode.allCases.map(\.rawValue) == [
                "file_missing", "redirected", "http_status", "tls_error", "timeout", "dns_error", "address_refused", "content_type",
                "too_large", "not_json", "app_id_missing", "path_not_covered", "package_missing", "fingerprint_missing",
                "relation_missing", "webcredentials_missing", "dynamic_rules_exclude_path",
            ])
    }
}
