import Association
import Foundation
import Testing

/// The files of `RealFiles/` (anonymised copies of real public files):
/// each is judged without a crash, and every app its MANIFEST.tsv row lists is judged listed.
@Suite struct RealFilesTests {
    struct Row: Sendable, CustomStringConvertible {
        let file: String
        let platform: String
        let validJSON: Bool
        let listed: [String]
        var description: String { file }
    }

    static let rows: [Row] = {
        let text = (try? String(contentsOf: testDirectory.appendingPathComponent("RealFiles/MANIFEST.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().map { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let listed = columns.count > 5 ? columns[5].split(separator: ",").map(String.init) : []
            return Row(file: columns[0], platform: columns[1], validJSON: columns[2] == "yes", listed: listed)
        }
    }()

    @Test func manifestHasEveryFile() {
        #expect(Self.rows.count == 140)
    }

    @Test(arguments: rows.filter { $0.platform == "ios" })
    func aasaFileIsJudged(_ row: Row) throws {
        let body = try fileBytes("RealFiles/\(row.file)")
        let probe = iosApp("ABCDE12345", "com.zevauth.probe")
        let problems = AASAJudge.judge(body: body, contentType: "application/json", app: probe, callbackPath: "/auth/callback")
        #expect(!problems.isEmpty)
        #expect(problems.contains { $0.code == .notJSON } == !row.validJSON)
        #expect(AASAJudge.listedAppIDs(body: body) == row.listed)
        for appID in row.listed {
            guard let dot = appID.firstIndex(of: "."),
                case .success(let team) = TeamID.parse(String(appID[..<dot])), team.value == appID[..<dot],
                case .success(let bundle) = BundleID.parse(String(appID[appID.index(after: dot)...]))
            else { continue }
            let app = IOSApp(teamID: team, bundleID: bundle)
            let verdict = AASAJudge.judge(body: body, contentType: "application/json", app: app, callbackPath: "/auth/callback")
            #expect(!verdict.contains { $0.code == .appIDMissing }, "\(appID): \(verdict)")
        }
    }

    @Test(arguments: rows.filter { $0.platform == "android" })
    func assetLinksFileIsJudged(_ row: Row) throws {
        let body = try fileBytes("RealFiles/\(row.file)")
        let probe = androidApp("com.zevauth.probe", [sampleFingerprint(0x33)])
        let problems = AssetLinksJudge.judge(body: body, contentType: "application/json", app: probe)
        #expect(!problems.isEmpty)
        #expect(problems.contains { $0.code == .notJSON } == !row.validJSON)
        #expect(AssetLinksJudge.listedApps(body: body).map { "\($0.packageName)#\($0.fingerprint)" } == row.listed)
        var byPackage: [String: [String]] = [:]
        for pair in row.listed {
            let parts = pair.split(separator: "#").map(String.init)
            byPackage[parts[0], default: []].append(parts[1])
        }
        for (package, fingerprints) in byPackage {
            let name = try PackageName.parse(package).get()
            let app = AndroidApp(packageName: name, fingerprints: try Fingerprints.parse(fingerprints).get())
            #expect(AssetLinksJudge.judge(body: body, contentType: "application/json", app: app) == [], "\(package)")
        }
    }

    @Test func mutatedFilesNeverCrashTheJudges() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        let ios = iosApp("ABCDE12345", "com.example.app")
        let android = androidApp("com.example.app", [sampleFingerprint(1)])
        let alphabet = Array("{}[]\",:*?#/ \\0123456789aeltrunNOT".utf8)
        for row in Self.rows {
            let original = try fileBytes("RealFiles/\(row.file)")
            for _ in 0..<30 {
                var body = original
                for _ in 0..<(1 + next() % 4) where !body.isEmpty {
                    let index = next() % body.count
                    switch next() % 3 {
                    case 0: body[index] = alphabet[next() % alphabet.count]
                    case 1: body.remove(at: index)
                    default: body.insert(alphabet[next() % alphabet.count], at: index)
                    }
                }
                _ = AASAJudge.judge(body: body, contentType: nil, app: ios, callbackPath: "/")
                _ = AssetLinksJudge.judge(body: body, contentType: nil, app: android)
                _ = AASAJudge.listedAppIDs(body: body)
                _ = AssetLinksJudge.listedApps(body: body)
            }
        }
    }
}
