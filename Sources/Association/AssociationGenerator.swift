import Encoding

/// Why a file could not be generated.
public enum GenerationError: Error, Equatable, Sendable {
    /// The generated file would be `bytes` long, over `limit` (Apple ignores an AASA larger than 128 KB).
    case tooLarge(bytes: Int, limit: Int)

    /// What went wrong, in words for a person (never the case name).
    public var explanation: String {
        switch self {
        case .tooLarge(let bytes, let limit): "it would be \(bytes) bytes, over the \(limit) bytes Apple reads"
        }
    }
}

/// Builds a link domain's two association files, byte for byte deterministic
/// (docs/protocol.md#generated-files).
///
/// Output: UTF-8 without BOM, two-space indentation, object members sorted, arrays in a stable sorted order,
/// `/` not escaped, a final `"\n"`. The same apps in any order give the same bytes.
public enum AssociationGenerator {
    /// The relations each Android app is given: App Links and credential sharing (docs/association.md#assetlinks-relations).
    public static let androidRelations = [
        "delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds",
    ]

    /// The modern AASA (iOS 13+; docs/association.md#aasa-formats, TN3155: never mix `paths` and `components`):
    /// `{"applinks": {"details": [{"appIDs": ["T.b"], "components": [{"/": "/path"}, …]}, …]},
    ///   "webcredentials": {"apps": ["T.b", …]}}`.
    ///
    /// One `details` entry per app, sorted by App ID, whose components cover exactly that app's callback paths
    /// on this domain (sorted, duplicates removed). `?` and `#` are left at their default `*`, so the callback's
    /// query (`code`, `state`) never stops a match; `caseSensitive` and `percentEncoded` are left at their
    /// default `true`, so paths are matched exactly as registered. A path containing `*` is matched by Apple as a
    /// wildcard (Apple has no escape). An app listed twice has its paths merged; an app with no path on this
    /// domain gets no `details` entry but stays in `webcredentials.apps`, which lists every app (sorted), since
    /// https callbacks in `ASWebAuthenticationSession` are reported to need it (docs/association.md#aasa-webcredentials).
    /// - Returns: the file's bytes.
    /// - Throws: `GenerationError.tooLarge` when the file would exceed 131 072 bytes ("the uncompressed file
    ///   must be at most 128 KB", Apple's archived Universal Links guide, revision of 2016-04-01,
    ///   docs/association.md#aasa-hosting).
    public static func appleAppSiteAssociation(_ apps: [(app: IOSApp, callbackPaths: [String])]) throws(GenerationError) -> [UInt8] {
        var pathsByApp: [String: Set<String>] = [:]
        for entry in apps { pathsByApp[entry.app.appID, default: []].formUnion(entry.callbackPaths) }
        let appIDs = pathsByApp.keys.sorted(by: utf8Order)
        let details: [JSONValue] = appIDs.compactMap { appID in
            let paths = pathsByApp[appID, default: []].sorted(by: utf8Order)
            guard !paths.isEmpty else { return nil }
            return .object([
                ("appIDs", .array([.string(appID)])),
                ("components", .array(paths.map { .object([("/", .string($0))]) })),
            ])
        }
        let document = JSONValue.object([
            ("applinks", .object([("details", .array(details))])),
            ("webcredentials", .object([("apps", .array(appIDs.map(JSONValue.string)))])),
        ])
        let bytes = document.serialized()
        let limit = AssociationFile.appleAppSiteAssociation.maximumBytes
        guard bytes.count <= limit else { throw .tooLarge(bytes: bytes.count, limit: limit) }
        return bytes
    }

    /// `assetlinks.json`: a JSON array with one statement per Android app, sorted by package name:
    /// `{"relation": [handle_all_urls, get_login_creds], "target": {"namespace": "android_app",
    /// "package_name": P, "sha256_cert_fingerprints": [canonical, …]}}`
    /// (docs/association.md#assetlinks-statements, docs/association.md#android-fingerprints,
    /// docs/protocol.md#generated-files).
    ///
    /// Fingerprints are canonical (upper-case, colons), sorted and deduplicated; an app listed twice has its
    /// fingerprints merged; an app with no fingerprint is left out (an empty array can spoil the whole file on
    /// the AOSP verifier, docs/association.md#android-verification). Ten apps with five certificates each stay far
    /// below Android's 1 MiB.
    /// - Returns: the file's bytes.
    public static func assetLinks(_ apps: [AndroidApp]) -> [UInt8] {
        var fingerprintsByPackage: [String: Set<String>] = [:]
        for app in apps { fingerprintsByPackage[app.packageName.value, default: []].formUnion(app.fingerprints.map(\.canonical)) }
        let statements: [JSONValue] = fingerprintsByPackage.keys.sorted(by: utf8Order).compactMap { package in
            let fingerprints = fingerprintsByPackage[package, default: []].sorted(by: utf8Order)
            guard !fingerprints.isEmpty else { return nil }
            return .object([
                ("relation", .array(androidRelations.map(JSONValue.string))),
                (
                    "target",
                    .object([
                        ("namespace", .string("android_app")),
                        ("package_name", .string(package)),
                        ("sha256_cert_fingerprints", .array(fingerprints.map(JSONValue.string))),
                    ])
                ),
            ])
        }
        return JSONValue.array(statements).serialized()
    }
}

/// Orders strings by their UTF-8 bytes, independent of locale and Unicode normalisation.
func utf8Order(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}
