import Foundation
import Synchronization

/// The outcome of one check.
public enum Verdict: String, Sendable, Codable, CaseIterable {
    case pass = "PASS"
    case fail = "FAIL"
    case skip = "SKIP"
}

/// A verdict with what was seen: a status, an error code, a header's presence — never a secret.
public struct Outcome: Sendable, Equatable {
    /// PASS, FAIL or SKIP.
    public let verdict: Verdict
    /// What was observed, e.g. `400 pkce_verification_failed`, or why the check was skipped.
    public let seen: String

    /// A passing outcome.
    public static func pass(_ seen: String) -> Outcome { Outcome(verdict: .pass, seen: seen) }
    /// A failing outcome.
    public static func fail(_ seen: String) -> Outcome { Outcome(verdict: .fail, seen: seen) }
    /// A skipped check and why.
    public static func skip(_ why: String) -> Outcome { Outcome(verdict: .skip, seen: why) }

    /// PASS when `condition`, FAIL otherwise, with the same description.
    public static func expect(_ condition: Bool, _ seen: String) -> Outcome { condition ? .pass(seen) : .fail(seen) }
}

/// One reported check: its clause (`RFC 7636 §4.6`, `protocol.md#exchange-replay`), a title, and the outcome.
public struct CheckResult: Sendable, Equatable, Codable {
    /// The rule checked: an RFC section or a docs/protocol.md anchor.
    public let clause: String
    /// What the check proves, e.g. `pkce: wrong verifier is refused`.
    public let title: String
    /// PASS, FAIL or SKIP.
    public let verdict: Verdict
    /// What was seen (or why skipped).
    public let seen: String

    /// A result.
    public init(clause: String, title: String, outcome: Outcome) {
        self.clause = clause
        self.title = title
        self.verdict = outcome.verdict
        self.seen = outcome.seen
    }
}

/// Removes secrets from every line the client prints: each value registered with ``register(_:)`` (codes,
/// tokens, verifiers, the password, keys, the TOTP secret), and anything shaped like a credential the
/// server mints (`hoc_…`, `zat_…`, `zrt_…`, `sk_test_…`, `sk_live_…`, `zop_…`, `zbs_…`, `zbb_…`, `zrc_…`).
/// Publishable keys (`pk_…`) are not secret (docs/protocol.md#publishable-key) and stay.
public final class Redactor: Sendable {
    private let secrets = Mutex<Set<String>>([])

    /// The replacement text.
    public static let mask = "[redacted]"
    /// Prefixes of minted credentials that are always masked.
    public static let credentialPrefixes = ["hoc_", "zat_", "zrt_", "sk_test_", "sk_live_", "zop_", "zbs_", "zbb_", "zrc_", "zdv_"]

    /// An empty redactor.
    public init() {}

    /// Remembers a secret; values shorter than 6 characters are ignored (they would mask ordinary words).
    public func register(_ secret: String?) {
        guard let secret, secret.count >= 6 else { return }
        secrets.withLock { _ = $0.insert(secret) }
    }

    /// `text` with every registered secret and every credential-shaped word replaced by ``mask``.
    public func scrub(_ text: String) -> String {
        var out = text
        // Longest first, so a secret containing another is masked whole.
        for secret in secrets.withLock({ $0 }).sorted(by: { $0.count > $1.count }) {
            out = out.replacingOccurrences(of: secret, with: Self.mask)
            let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret
            if encoded != secret { out = out.replacingOccurrences(of: encoded, with: Self.mask) }
        }
        return Self.scrubCredentialShapes(out)
    }

    /// Masks words that start with a minted-credential prefix followed by 8 or more token characters.
    public static func scrubCredentialShapes(_ text: String) -> String {
        var out = ""
        var index = text.startIndex
        outer: while index < text.endIndex {
            for prefix in credentialPrefixes where text[index...].hasPrefix(prefix) {
                let boundary = index == text.startIndex || !isTokenCharacter(text[text.index(before: index)])
                var end = text.index(index, offsetBy: prefix.count)
                var length = 0
                while end < text.endIndex, isTokenCharacter(text[end]) {
                    end = text.index(after: end)
                    length += 1
                }
                if boundary && length >= 8 {
                    out += mask
                    index = end
                    continue outer
                }
            }
            out.append(text[index])
            index = text.index(after: index)
        }
        return out
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_")
    }
}

/// Formats results: one line per check, the closing count, JSON and JUnit XML. Every string goes through
/// the ``Redactor`` first.
public struct ReportFormatter: Sendable {
    /// The redactor applied to every output string.
    public let redactor: Redactor

    /// A formatter that scrubs with `redactor`.
    public init(redactor: Redactor) {
        self.redactor = redactor
    }

    /// `PASS  RFC 7636 §4.6  pkce: wrong verifier is refused (400 pkce_verification_failed)`.
    public func line(_ result: CheckResult) -> String {
        redactor.scrub("\(result.verdict.rawValue)  \(result.clause)  \(result.title) (\(result.seen))")
    }

    /// Counts of each verdict.
    public static func counts(_ results: [CheckResult]) -> (passed: Int, failed: Int, skipped: Int) {
        (
            results.filter { $0.verdict == .pass }.count, results.filter { $0.verdict == .fail }.count,
            results.filter { $0.verdict == .skip }.count
        )
    }

    /// Exactly `N passed, N failed, N skipped`.
    public static func closingLine(_ results: [CheckResult]) -> String {
        let c = counts(results)
        return "\(c.passed) passed, \(c.failed) failed, \(c.skipped) skipped"
    }

    /// `{"results":[{"verdict","clause","title","seen"}…],"passed","failed","skipped"}`, keys sorted.
    public func json(_ results: [CheckResult]) -> String {
        let c = Self.counts(results)
        let object: [String: Any] = [
            "results": results.map {
                [
                    "verdict": $0.verdict.rawValue, "clause": redactor.scrub($0.clause), "title": redactor.scrub($0.title),
                    "seen": redactor.scrub($0.seen),
                ]
            },
            "passed": c.passed, "failed": c.failed, "skipped": c.skipped,
        ]
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A JUnit XML report: one `testsuite`, one `testcase` per check (`classname` = clause, `name` = title),
    /// `<failure message="seen"/>` or `<skipped message="why"/>`.
    public func junit(_ results: [CheckResult]) -> String {
        let c = Self.counts(results)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuite name=\"zevauth-conformance\" tests=\"\(results.count)\" failures=\"\(c.failed)\" skipped=\"\(c.skipped)\">\n"
        for result in results {
            let clause = Self.xmlEscape(redactor.scrub(result.clause))
            let title = Self.xmlEscape(redactor.scrub(result.title))
            let seen = Self.xmlEscape(redactor.scrub(result.seen))
            switch result.verdict {
            case .pass:
                xml += "  <testcase classname=\"\(clause)\" name=\"\(title)\"><system-out>\(seen)</system-out></testcase>\n"
            case .fail:
                xml += "  <testcase classname=\"\(clause)\" name=\"\(title)\"><failure message=\"\(seen)\"/></testcase>\n"
            case .skip:
                xml += "  <testcase classname=\"\(clause)\" name=\"\(title)\"><skipped message=\"\(seen)\"/></testcase>\n"
            }
        }
        xml += "</testsuite>\n"
        return xml
    }

    /// Escapes `& < > " '` and drops characters XML 1.0 cannot carry.
    public static func xmlEscape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
