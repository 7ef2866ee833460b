import Association
import Foundation
import Testing

/// The folder of this test target, found from this file's path (no SwiftPM resources).
let testDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

func fileBytes(_ relative: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: testDirectory.appendingPathComponent(relative)))
}

/// 32 bytes `start, start+1, …` as canonical hex: a well-formed fingerprint that is nobody's certificate.
func sampleFingerprint(_ start: UInt8) -> String {
    (0..<32).map { index in
        let byte = start &+ UInt8(index)
        let hex = String(byte, radix: 16, uppercase: true)
        return hex.count == 1 ? "0" + hex : hex
    }.joined(separator: ":")
}

func iosApp(_ team: String, _ bundle: String) -> IOSApp {
    IOSApp(teamID: try! TeamID.parse(team).get(), bundleID: try! BundleID.parse(bundle).get())
}

func androidApp(_ package: String, _ fingerprints: [String]) -> AndroidApp {
    AndroidApp(packageName: try! PackageName.parse(package).get(), fingerprints: try! Fingerprints.parse(fingerprints).get())
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func codes(_ problems: [Problem]) -> [ProblemCode] { problems.map(\.code) }

func isVerified(_ problems: [Problem]) -> Bool { !problems.contains(where: \.blocking) }
