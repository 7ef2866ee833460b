import Association
import Foundation
import Testing

@Suite struct GeneratorTests {
    static let iosInput: [(app: IOSApp, callbackPaths: [String])] = [
        (iosApp("ABCDE12345", "com.acme.shop"), ["/auth/callback", "/shop/return", "/auth/callback"]),
        (iosApp("ABCDE12345", "com.acme.Admin"), ["/admin/callback"]),
        (iosApp("ABCDE12345", "com.acme.widget"), []),
    ]

    static let androidInput: [AndroidApp] = [
        androidApp("com.acme.shop", [sampleFingerprint(0x40), sampleFingerprint(0x10)]),
        androidApp("com.acme.admin", [sampleFingerprint(0xE0).lowercased()]),
    ]

    /// Set `ZEVAUTH_UPDATE_GOLDEN=1` to rewrite a golden file after an intended change (then review the diff).
    func compareWithGolden(_ generated: [UInt8], _ name: String) throws {
        let path = testDirectory.appendingPathComponent("Golden/\(name)")
        if ProcessInfo.processInfo.environment["ZEVAUTH_UPDATE_GOLDEN"] == "1" {
            try Data(generated).write(to: path)
        }
        let golden = [UInt8](try Data(contentsOf: path))
        #expect(generated == golden, "\(name) differs from its golden file")
    }

    @Test func aasaMatchesGoldenFile() throws {
        try compareWithGolden(try AssociationGenerator.appleAppSiteAssociation(Self.iosInput), "apple-app-site-association")
    }

    @Test func assetLinksMatchesGoldenFile() throws {
        try compareWithGolden(AssociationGenerator.assetLinks(Self.androidInput), "assetlinks.json")
    }

    @Test func emptyInputsGiveEmptyLists() throws {
        try compareWithGolden(try AssociationGenerator.appleAppSiteAssociation([]), "apple-app-site-association-empty")
        #expect(AssociationGenerator.assetLinks([]) == bytes("[]\n"))
    }

    @Test func outputDoesNotDependOnInputOrder() throws {
        let reversed = Array(Self.iosInput.reversed()).map { ($0.app, Array($0.callbackPaths.reversed())) }
        #expect(try AssociationGenerator.appleAppSiteAssociation(reversed) == AssociationGenerator.appleAppSiteAssociation(Self.iosInput))
        #expect(AssociationGenerator.assetLinks(Self.androidInput.reversed()) == AssociationGenerator.assetLinks(Self.androidInput))
    }

    @Test func neverEscapesSlashes() throws {
        let text = String(decoding: try AssociationGenerator.appleAppSiteAssociation(Self.iosInput), as: UTF8.self)
        #expect(text.contains("\"/auth/callback\""))
        #expect(!text.contains("\\/"))
        #expect(text.hasSuffix("}\n"))
    }

    @Test func refusesAnAASAOver128KB() {
        let paths = (0..<3000).map { "/callback/\($0)/" + String(repeating: "x", count: 30) }
        #expect(throws: GenerationError.self) {
            try AssociationGenerator.appleAppSiteAssociation([(iosApp("ABCDE12345", "com.acme.a"), paths)])
        }
        do {
            _ = try AssociationGenerator.appleAppSiteAssociation([(iosApp("ABCDE12345", "com.acme.a"), paths)])
        } catch {
            guard case .tooLarge(let size, let limit) = error else { return }
            #expect(limit == 131_072)
            #expect(size > limit)
            #expect(error.explanation == "it would be \(size) bytes, over the 131072 bytes Apple reads")
        }
    }

    @Test func generatedAASAVerifiesEveryAppAndPath() throws {
        let body = try AssociationGenerator.appleAppSiteAssociation(Self.iosInput)
        for (app, paths) in Self.iosInput {
            for path in paths {
                #expect(AASAJudge.judge(body: body, contentType: "application/json", app: app, callbackPath: path) == [])
            }
        }
        // An app with no callback on this domain is in webcredentials only, so a path cannot be covered for it.
        let widget = Self.iosInput[2].app
        #expect(codes(AASAJudge.judge(body: body, contentType: "application/json", app: widget, callbackPath: "/x")) == [.appIDMissing])
        // Another app's path is not covered for this one.
        let shop = Self.iosInput[0].app
        #expect(
            codes(AASAJudge.judge(body: body, contentType: "application/json", app: shop, callbackPath: "/admin/callback")) == [
                .pathNotCovered
            ])
    }

    @Test func generatedAssetLinksVerifiesEveryApp() {
        let body = AssociationGenerator.assetLinks(Self.androidInput)
        for app in Self.androidInput {
            #expect(AssetLinksJudge.judge(body: body, contentType: "application/json", app: app) == [])
        }
    }
}
