import Encoding

/// Judges a fetched `apple-app-site-association` for one registered iOS app and one callback path
/// (docs/protocol.md#apps; formats docs/association.md#aasa-formats, algorithm docs/association.md#ios-evaluation,
/// messages docs/association.md#problem-messages).
///
/// Read formats: the modern `applinks.details[]` with `appIDs` (or `appID`) and `components`; the legacy
/// `appID` with `paths` (`*`, `?`, `NOT ` exclusions); and the oldest `details` object keyed by App ID.
/// App IDs are compared exactly, as written.
public enum AASAJudge {
    /// Judges `body` (an HTTP 200 body; status, size and transport are the fetcher's) for `app` and the path of
    /// its link callback on this domain.
    ///
    /// Checks, in order, each adding at most one problem:
    /// 1. `content_type` (a warning: Apple's current pages do not require `application/json`,
    ///    docs/association.md#aasa-hosting) unless the media type is `application/json`; parameters such as
    ///    `; charset=utf-8` are accepted and case is ignored (RFC 9110 §8.3.1).
    /// 2. `not_json` when the body is HTML, empty, or not strict RFC 8259 JSON (`JSONValue.parse`: a BOM,
    ///    comments, trailing commas, smart quotes, duplicate keys, nesting over 32); nothing else is checked then.
    /// 3. `app_id_missing` unless `app.appID` appears exactly in some `applinks.details` entry, with near misses
    ///    in the message: another letter case, spaces around it, the same bundle ID under another prefix, a
    ///    close bundle ID under the same team, no Team ID prefix, or listed only in `webcredentials.apps`.
    /// 4. `path_not_covered` unless the URL the app receives at `callback` after a sign-in (its path, its
    ///    registered query plus `code`, `state` and `iss`, no fragment: `ReceivedURL`) is matched by a rule of an
    ///    entry listing the app, and that rule is not an exclusion. Rules are tried in order, entry after entry, and
    ///    the first match wins (docs/association.md#aasa-formats). Components follow Apple's rules, decided in
    ///    `LinkRule` (docs/association.md#aasa-components): `/` against the path, `#` against the empty fragment,
    ///    `?` as a pattern over the whole query or a dictionary of query-item patterns (an absent item matches as
    ///    the empty string; items not named are ignored; every item of a name must match). `code`, `state` and
    ///    `iss` can hold any non-empty value, so a condition on them counts only when it holds for every value; one
    ///    that excludes some values counts as excluding. Wildcards: `*` any run of characters, `?` exactly one.
    ///    `caseSensitive` and `percentEncoded` (default `true`) come from the component, else the entry's
    ///    `defaults`, else `applinks.defaults`. Substitution variables (`$(alpha)`…) are not expanded. Legacy `paths`
    ///    match the path only, case-sensitively, a `NOT ` prefix excluding. An entry with both `components` and
    ///    `paths` (which TN3155 forbids) is read by its `components`.
    /// 5. `webcredentials_missing` (a warning) unless `webcredentials.apps` lists `app.appID` exactly.
    /// - Returns: the problems found; the app is verified when none is `blocking`.
    public static func judge(body: [UInt8], contentType: String?, app: IOSApp, callback: LinkCallback) -> [Problem] {
        let file = AssociationFile.appleAppSiteAssociation
        var (problems, parsed) = BodyCheck.open(body, contentType: contentType, file: file)
        guard let root = parsed else { return problems }
        let appID = app.appID
        let document = Document(root)
        if let appLevel = appLevelProblem(document, app: app, callback: callback) {
            problems.append(Problem(code: appLevel.code, message: appLevel.message, file: file))
        }
        if let webcredentials = webcredentialsProblem(document, appID: appID) {
            problems.append(Problem(code: .webcredentialsMissing, message: webcredentials, file: file))
        }
        return problems
    }

    /// `judge` for a callback with no query.
    public static func judge(body: [UInt8], contentType: String?, app: IOSApp, callbackPath: String) -> [Problem] {
        judge(body: body, contentType: contentType, app: app, callback: LinkCallback(path: callbackPath))
    }

    /// Every App ID `applinks.details` lists, as written, in order of appearance and without duplicates:
    /// non-empty strings from `appID` (when a string) and `appIDs[]`, or the keys of a `details` object. Empty
    /// when the body is not strict JSON or has no such entries. This is the `listed_apps` column of the real-file
    /// corpus's MANIFEST.tsv.
    public static func listedAppIDs(body: [UInt8]) -> [String] {
        guard case .success(let root) = BodyCheck.decode(body, file: .appleAppSiteAssociation) else { return [] }
        return Document(root).listedAppIDs
    }

    // MARK: - Structure

    struct Entry {
        let label: String
        let ids: [String]
        let value: JSONValue
    }

    struct Document {
        let root: JSONValue
        /// Why no entries could be read, when that is so.
        var structureProblem: String?
        var entries: [Entry] = []

        init(_ root: JSONValue) {
            self.root = root
            guard root.isObject else {
                structureProblem = "apple-app-site-association must be a JSON object; it is \(root.kindDescription)"
                return
            }
            guard let applinks = root["applinks"] else {
                structureProblem = "the file has no 'applinks' section, so no app can open universal links on this domain"
                return
            }
            guard applinks.isObject else {
                structureProblem = "'applinks' is \(applinks.kindDescription), not an object"
                return
            }
            switch applinks["details"] {
            case .array(let items)?:
                for (index, item) in items.enumerated() {
                    var ids: [String] = []
                    if let single = item["appID"]?.stringValue { ids.append(single) }
                    for id in item["appIDs"]?.arrayValue ?? [] { if let text = id.stringValue { ids.append(text) } }
                    entries.append(Entry(label: "applinks.details[\(index)]", ids: ids, value: item))
                }
            case .object(let members)?:
                for (name, value) in members {
                    entries.append(Entry(label: "applinks.details[\(quoted(name))]", ids: [name], value: value))
                }
            case let other?:
                structureProblem = "'applinks.details' is \(other.kindDescription), not an array"
            case nil:
                structureProblem = "'applinks' has no 'details' array"
            }
        }

        var listedAppIDs: [String] {
            var seen: Set<String> = []
            var out: [String] = []
            for id in entries.flatMap(\.ids) where !id.isEmpty && seen.insert(id).inserted { out.append(id) }
            return out
        }

        var webcredentialApps: [String]? {
            root["webcredentials"]?["apps"]?.arrayValue?.compactMap(\.stringValue)
        }

        var defaults: JSONValue? { root["applinks"]?["defaults"] }
    }

    // MARK: - App ID and path

    static func appLevelProblem(_ document: Document, app: IOSApp, callback: LinkCallback) -> (code: ProblemCode, message: String)? {
        let appID = app.appID
        let listing = document.entries.filter { $0.ids.contains(appID) }
        guard !listing.isEmpty else {
            return (.appIDMissing, appIDMissingMessage(document, app: app))
        }
        let shown = quoted(callback.pathAndQuery)
        var firstExclusion: String?
        var firstPartial: String?
        for entry in listing {
            switch evaluate(entry, callback: callback, domainDefaults: document.defaults) {
            case .covered: return nil
            case .excluded(let rule, let always):
                if firstExclusion == nil {
                    firstExclusion =
                        "rule #\(rule) of \(entry.label)"
                        + (always ? "" : " for some sign-ins (its query condition on code, state or iss matches some of their values)")
                }
            case .noMatch(let partly):
                if firstPartial == nil, let partly { firstPartial = "rule #\(partly) of \(entry.label)" }
            }
        }
        let where_ = listing.map(\.label).joined(separator: ", ")
        if let firstExclusion {
            return (.pathNotCovered, "The callback path \(shown) is excluded for \(appID) by \(firstExclusion)")
        }
        let hasRules = listing.contains { ($0.value["components"]?.arrayValue ?? $0.value["paths"]?.arrayValue) != nil }
        if !hasRules {
            return (
                .pathNotCovered,
                "App \(appID) is listed in \(where_), but that entry has no 'components' (or 'paths'), so no URL opens the app"
            )
        }
        var message = "The callback path \(shown) is not matched by any rule for \(appID) in \(where_)"
        if let firstPartial {
            message +=
                "; \(firstPartial) matches only some sign-ins, because its query condition on code, state or iss does not accept every value"
        }
        return (.pathNotCovered, message)
    }

    static func appIDMissingMessage(_ document: Document, app: IOSApp) -> String {
        let appID = app.appID
        var message = "App \(appID) is not listed in applinks.details"
        if let structure = document.structureProblem {
            message = "App \(appID) is not listed: \(structure)"
        }
        let listed = document.listedAppIDs
        var hints: [String] = []
        let lowered = appID.lowercased()
        if let found = listed.first(where: { $0.lowercased() == lowered }) {
            hints.append("it is listed as \(quoted(found)), in a different letter case; use the exact App ID")
        }
        if let found = listed.first(where: { $0 != appID && trimmed($0) == appID }) {
            hints.append("it is listed with spaces around it (\(quoted(found)))")
        }
        let bundle = app.bundleID.value
        for found in listed {
            guard let dot = found.firstIndex(of: ".") else { continue }
            let prefix = found[..<dot]
            if found[found.index(after: dot)...] == bundle, trimmed(String(prefix)).lowercased() != app.teamID.value.lowercased() {
                hints.append(
                    "bundle \(bundle) is listed under prefix \(quoted(String(prefix))), but the registered Team ID is \(app.teamID.value)")
                break
            }
        }
        if listed.contains(bundle) {
            hints.append("bundle \(bundle) is listed without the Team ID prefix; list it as \(appID)")
        }
        if hints.isEmpty {
            let teamPrefix = app.teamID.value + "."
            let close = listed.filter { $0.hasPrefix(teamPrefix) }.first { isNearMiss(String($0.dropFirst(teamPrefix.count)), bundle) }
            if let close { hints.append("the closest entry is \(quoted(close)); check the bundle ID") }
        }
        if document.webcredentialApps?.contains(appID) == true {
            hints.append("it is listed in webcredentials.apps only, which does not enable universal links")
        }
        if !hints.isEmpty { message += ": " + hints.joined(separator: "; ") }
        message += listed.isEmpty ? " (applinks.details lists no app)" : " (the file lists: \(summary(listed)))"
        return message
    }

    enum Outcome {
        case covered
        /// `always: false` when the rule's query condition names `code`, `state` or `iss` and so excludes some
        /// sign-ins only.
        case excluded(rule: Int, always: Bool)
        /// `partly`: an including rule that matches some sign-ins only.
        case noMatch(partly: Int?)
    }

    static func evaluate(_ entry: Entry, callback: LinkCallback, domainDefaults: JSONValue?) -> Outcome {
        if let components = entry.value["components"]?.arrayValue {
            let entryDefaults = entry.value["defaults"]
            var rules: [(number: Int, rule: LinkRule)] = []
            for (index, component) in components.enumerated() {
                func flag(_ key: String) -> Bool {
                    component[key]?.boolValue ?? entryDefaults?[key]?.boolValue ?? domainDefaults?[key]?.boolValue ?? true
                }
                guard
                    let rule = LinkRule(
                        component, caseSensitive: flag("caseSensitive"), percentEncoded: flag("percentEncoded"), queryString: true)
                else { continue }
                rules.append((index + 1, rule))
            }
            switch RulesVerdict.firstMatch(rules, ReceivedURL(callback)) {
            case .handled: return .covered
            case .excluded(let rule, let always): return .excluded(rule: rule, always: always)
            case .unmatched(let partly): return .noMatch(partly: partly)
            }
        }
        if let paths = entry.value["paths"]?.arrayValue {
            for (index, item) in paths.enumerated() {
                guard var pattern = item.stringValue else { continue }
                let exclude = pattern.hasPrefix("NOT ")
                if exclude { pattern = String(pattern.dropFirst(4)) }
                if Wildcard.matches(pattern, callback.path) { return exclude ? .excluded(rule: index + 1, always: true) : .covered }
            }
        }
        return .noMatch(partly: nil)
    }

    // MARK: - webcredentials

    static func webcredentialsProblem(_ document: Document, appID: String) -> String? {
        guard let apps = document.webcredentialApps else {
            return "The file has no 'webcredentials.apps' list, so \(appID) cannot use passkeys or saved passwords for this domain"
        }
        if apps.contains(appID) { return nil }
        var message = "App \(appID) is not listed in webcredentials.apps (passkeys and AutoFill for this domain won't work in the app)"
        if let found = apps.first(where: { $0.lowercased() == appID.lowercased() }) {
            message += "; it is listed as \(quoted(found)), in a different letter case"
        }
        return message
    }
}

// MARK: - Helpers

/// Whether two identifiers are close: within edit distance 2, or one is the other plus a `.suffix`
/// (`.dev`, `.debug`, …), compared ignoring case (docs/association.md#ios-evaluation,
/// docs/association.md#android-evaluation).
func isNearMiss(_ found: String, _ wanted: String) -> Bool {
    let a = found.lowercased()
    let b = wanted.lowercased()
    if a == b { return true }
    if a.hasPrefix(b + ".") || b.hasPrefix(a + ".") { return true }
    return editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars), limit: 2) <= 2
}

/// Levenshtein distance, giving up (returning `limit + 1`) when the lengths differ by more than `limit` or the
/// strings are long.
func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
    if abs(a.count - b.count) > limit || a.count > 300 || b.count > 300 { return limit + 1 }
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + [Int](repeating: 0, count: b.count)
        for j in 1...max(b.count, 1) where !b.isEmpty {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return a.isEmpty ? b.count : previous[b.count]
}

/// Up to ten quoted items, then "and N more".
func summary(_ items: [String]) -> String {
    let shown = items.prefix(10).map(quoted).joined(separator: ", ")
    return items.count > 10 ? "\(shown) and \(items.count - 10) more" : shown
}
