import Encoding

/// Judges a fetched `assetlinks.json` for one registered Android app (docs/protocol.md#apps).
/// Rules: docs/association.md#assetlinks-statements, docs/association.md#assetlinks-relations,
/// docs/association.md#android-fingerprints, docs/association.md#android-package-names and
/// docs/association.md#android-verification; algorithm: docs/association.md#android-evaluation; messages:
/// docs/association.md#problem-messages.
public enum AssetLinksJudge {
    /// The relation App Links need (docs/association.md#assetlinks-relations); verification requires it.
    public static let handleAllURLs = "delegate_permission/common.handle_all_urls"

    /// Judges `body` (an HTTP 200 body; status, size and transport are the fetcher's) for `app`.
    ///
    /// Checks, in order:
    /// 1. `content_type` (blocking: Google requires `application/json`, docs/association.md#assetlinks-hosting) unless
    ///    the media type is `application/json`; parameters such as `; charset=utf-8` are accepted and case is ignored.
    /// 2. `not_json` when the body is HTML, empty, or not strict RFC 8259 JSON (the AOSP verifier parses
    ///    strictly, docs/association.md#android-verification); nothing else is checked then.
    /// 3. `package_missing` when the root is not an array (Android requires a statement list) or no statement
    ///    has a target with `namespace` exactly `android_app` and `package_name` exactly the package (AOSP
    ///    compares with `String.equals`). The message names near misses: another namespace spelling, another
    ///    letter case, a close or suffixed package (`.debug`), and `include` statements, which are not followed.
    /// 4. `relation_missing` when none of the package's statements lists
    ///    `delegate_permission/common.handle_all_urls` exactly (docs/association.md#assetlinks-relations: relations
    ///    match exactly).
    /// 5. `fingerprint_missing`, one problem per registered fingerprint absent from the union of
    ///    `sha256_cert_fingerprints` over the package's statements that carry that relation. Only the canonical
    ///    form counts (upper-case hex pairs joined by `:`), as on AOSP, which matches with `Set.contains`
    ///    (docs/association.md#android-fingerprints); a lower-case or colon-less copy is reported as "present but not
    ///    in canonical upper-case colon form".
    /// 6. `dynamic_rules_exclude_path` (a warning: Android 14 and older ignore the rules), one per callback in
    ///    `callbacks` that the package's Dynamic App Links rules do not let open the app on Android 15 and later
    ///    (docs/association.md#assetlinks-dynamic-rules): the first statement for the package with the relation
    ///    whose `relation_extensions` carries `dynamic_app_link_components` for it; the rules run in order over the
    ///    URL the callback receives (`ReceivedURL`), the first match wins, and a URL no rule matches is not
    ///    handled. Each rule may have `/`, `#`, `?` (a dictionary of query-item patterns) and `exclude`, matched as
    ///    `LinkRule` does (case-sensitive, the path as sent). A block that is not a non-empty array of such rules is
    ///    ignored, as Android ignores it.
    /// - Parameter callbacks: the environment's link callbacks on this domain.
    /// - Returns: the problems found; the app is verified when none is `blocking`.
    public static func judge(body: [UInt8], contentType: String?, app: AndroidApp, callbacks: [LinkCallback] = []) -> [Problem] {
        let file = AssociationFile.assetLinks
        var (problems, parsed) = BodyCheck.open(body, contentType: contentType, file: file)
        guard let root = parsed else { return problems }
        let package = app.packageName.value
        guard let statements = root.arrayValue else {
            var message =
                "Package \(package) is not listed: assetlinks.json must be a JSON array of statements ([…]); it is \(root.kindDescription)"
            if root["statements"] != nil {
                message += " with a 'statements' key, which is Digital Asset Links API output, not a statement list"
            }
            problems.append(Problem(code: .packageMissing, message: message, file: file))
            return problems
        }
        let candidates = statements.filter { statement in
            statement["target"]?["namespace"] == .string("android_app") && statement["target"]?["package_name"] == .string(package)
        }
        guard !candidates.isEmpty else {
            problems.append(Problem(code: .packageMissing, message: packageMissingMessage(statements, package: package), file: file))
            return problems
        }
        let withRelation = candidates.filter { $0["relation"]?.arrayValue?.contains(.string(handleAllURLs)) == true }
        guard !withRelation.isEmpty else {
            let found = candidates.flatMap { $0["relation"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            var message = "Package \(package) is listed, but not with relation \(handleAllURLs), so App Links won't open the app"
            message += found.isEmpty ? " (its statements list no relation)" : " (found: \(summary(found)))"
            problems.append(Problem(code: .relationMissing, message: message, file: file))
            return problems
        }
        let listed = withRelation.flatMap { $0["target"]?["sha256_cert_fingerprints"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        let exact = Set(listed)
        for fingerprint in app.fingerprints where !exact.contains(fingerprint.canonical) {
            var message = "Certificate \(fingerprint.canonical) is not listed for \(package) under \(handleAllURLs)"
            if let asFound = listed.first(where: { CertificateFingerprint.normalised($0) == fingerprint.canonical }) {
                message +=
                    ": it is present but not in canonical upper-case colon form (listed as \(quoted(asFound))), and Android compares fingerprints exactly"
            } else {
                message += "; builds signed with this certificate will not be verified"
            }
            problems.append(Problem(code: .fingerprintMissing, message: message, file: file))
        }
        if let rules = withRelation.lazy.compactMap(dynamicRules).first {
            for callback in callbacks {
                guard let message = dynamicRulesProblem(rules, callback: callback, package: package) else { continue }
                problems.append(Problem(code: .dynamicRulesExcludePath, message: message, file: file))
            }
        }
        return problems
    }

    /// A statement's Dynamic App Links rules for `handle_all_urls`, numbered from 1; `nil` when it has none or
    /// they are malformed (not a non-empty array, a rule that is not an object, a pattern that is not a string,
    /// a `?` that is not an object of strings, an `exclude` that is not a boolean), which Android ignores.
    static func dynamicRules(_ statement: JSONValue) -> [(number: Int, rule: LinkRule)]? {
        guard let components = statement["relation_extensions"]?[handleAllURLs]?["dynamic_app_link_components"]?.arrayValue,
            !components.isEmpty
        else { return nil }
        var rules: [(number: Int, rule: LinkRule)] = []
        for (index, component) in components.enumerated() {
            guard let rule = LinkRule(component, caseSensitive: true, percentEncoded: true, queryString: false) else { return nil }
            rules.append((index + 1, rule))
        }
        return rules
    }

    /// Why Android 15+ would not open the app at `callback` under `rules`, or `nil` when it would.
    static func dynamicRulesProblem(_ rules: [(number: Int, rule: LinkRule)], callback: LinkCallback, package: String) -> String? {
        let shown = quoted(callback.pathAndQuery)
        let place = "dynamic_app_link_components"
        let consequence = "Android 15 and later will open the browser instead of the app there (older versions ignore these rules)"
        switch RulesVerdict.firstMatch(rules, ReceivedURL(callback)) {
        case .handled:
            return nil
        case .excluded(let rule, let always):
            let some = always ? "" : " for some sign-ins (its query condition on code, state or iss matches some of their values)"
            return "The callback path \(shown) is excluded for \(package) by rule #\(rule) of \(place)\(some); \(consequence)"
        case .unmatched(let partly):
            var message = "No rule of \(place) for \(package) includes the callback path \(shown); \(consequence)"
            if let partly {
                message +=
                    "; rule #\(partly) matches only some sign-ins, because its query condition on code, state or iss does not accept every value"
            }
            return message
        }
    }

    /// Every `package#FINGERPRINT` pair the file lists, in order and without duplicates: statements whose
    /// `relation` contains `handle_all_urls` and whose target has namespace `android_app`, a string
    /// `package_name` and a `sha256_cert_fingerprints` array, counting only canonical fingerprints. Empty when
    /// the body is not strict JSON or its root is not an array. This is the `listed_apps` column of the
    /// real-file corpus's MANIFEST.tsv.
    public static func listedApps(body: [UInt8]) -> [(packageName: String, fingerprint: String)] {
        guard case .success(let root) = BodyCheck.decode(body, file: .assetLinks), let statements = root.arrayValue else { return [] }
        var seen: Set<String> = []
        var out: [(packageName: String, fingerprint: String)] = []
        for statement in statements where statement["relation"]?.arrayValue?.contains(.string(handleAllURLs)) == true {
            guard let target = statement["target"], target["namespace"] == .string("android_app"),
                let package = target["package_name"]?.stringValue,
                let fingerprints = target["sha256_cert_fingerprints"]?.arrayValue
            else { continue }
            for case .string(let fingerprint) in fingerprints
            where CertificateFingerprint.normalised(fingerprint) == fingerprint && seen.insert(package + "#" + fingerprint).inserted {
                out.append((package, fingerprint))
            }
        }
        return out
    }

    static func packageMissingMessage(_ statements: [JSONValue], package: String) -> String {
        var message = "Package \(package) is not listed in assetlinks.json"
        var packages: [String] = []
        var hints: [String] = []
        var includes = 0
        for (index, statement) in statements.enumerated() {
            if statement["include"] != nil { includes += 1 }
            guard let target = statement["target"], let found = target["package_name"]?.stringValue else { continue }
            let namespace = target["namespace"]
            if namespace == .string("android_app") {
                if !packages.contains(found) { packages.append(found) }
            } else if found == package {
                let shown = namespace?.stringValue.map(quoted) ?? "missing"
                hints.append("statement #\(index + 1) lists it with namespace \(shown); it must be exactly \"android_app\"")
            }
        }
        if let found = packages.first(where: { $0.lowercased() == package.lowercased() }) {
            hints.append("it is listed as \(quoted(found)); package names are case-sensitive")
        } else if let close = packages.first(where: { isNearMiss($0, package) }) {
            hints.append("the closest entry is \(quoted(close))")
        }
        if includes > 0 {
            hints.append("the file has \(includes) 'include' statement(s), which this check does not follow; list the app in this file")
        }
        if !hints.isEmpty { message += ": " + hints.joined(separator: "; ") }
        message += packages.isEmpty ? " (the file lists no Android app)" : " (the file lists: \(summary(packages)))"
        return message
    }
}
