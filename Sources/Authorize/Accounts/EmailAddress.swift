import Foundation

/// An email address as a ZevID account's login, parsed once at the edge (docs/protocol.md, "Email
/// addresses").
///
/// `typed` is what the person entered (trimmed), kept for display and for sending; `key` is the form under
/// which the address is unique and looked up:
/// - the local part in Unicode NFKC, case-folded (full Unicode case folding), then NFKC again so the key is
///   stable (`ａda` and `ADA` become `ada`, `ß` becomes `ss`);
/// - the domain converted to its ASCII (A-label) form by IDNA (UTS #46, nontransitional, STD3 rules) and
///   lower-cased (`Bücher.example` becomes `xn--bcher-kva.example`).
///
/// So `Ada@Bücher.example`, `ada@xn--bcher-kva.example` and `ａda@bücher.example` share one key.
public struct EmailAddress: Sendable, Equatable {
    /// The address as typed (surrounding spaces removed).
    public let typed: String
    /// The normalised form; unique across the deployment.
    public let key: String

    /// Which part of an address the rule refuses, for a message that names the right one.
    public enum Problem: Error, Sendable, Equatable {
        /// Not exactly one `@` with text on both sides, or more than 254 bytes.
        case shape
        /// The local part (before the `@`) holds a refused code point (`isRefused`).
        case localPart
        /// The domain holds a refused code point, or IDNA or the label rules refuse it.
        case domain

        /// What the admin API says after the field name (`email must be …`), a sentence without the address.
        public var explanation: String {
            switch self {
            case .shape: return "must be an email address: one @ between a local part and a domain, at most 254 bytes"
            case .localPart:
                return "must be an email address whose local part (before the @) has no space, control, invisible or unassigned character"
            case .domain: return "must be an email address whose domain is a valid (internationalised) domain name"
            }
        }
    }

    /// Parses an address, saying which part is refused. The server's edge calls it through
    /// `EmailAddress.parse(_:)` with IDNA's conversion (libidn2); the rule itself is here, in one place.
    ///
    /// - Parameters:
    ///   - text: the address as entered; surrounding spaces are ignored.
    ///   - domainToASCII: IDNA's UTS #46 ToASCII (nontransitional, STD3 rules), nil when IDNA refuses.
    /// - Returns: the address, or `.shape` (not exactly one `@`, an empty side, more than 254 bytes as typed
    ///   or once normalised),
    ///   `.localPart` or `.domain` (a whitespace, control, format, default-ignorable, private-use or unassigned
    ///   code point on that side; for the domain also one without a dot, with an empty label, or one IDNA
    ///   refuses). Each is answered as `invalid_request`.
    public static func parse(_ text: String, domainToASCII: (String) -> String?) -> Result<EmailAddress, Problem> {
        let typed = text.trimmingCharacters(in: .whitespaces)
        let parts = typed.split(separator: "@", omittingEmptySubsequences: false)
        guard typed.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return .failure(.shape) }
        guard !parts[0].unicodeScalars.contains(where: isRefused) else { return .failure(.localPart) }
        guard !parts[1].unicodeScalars.contains(where: isRefused) else { return .failure(.domain) }
        let local = foldedLocalPart(String(parts[0]))
        guard !local.isEmpty, !local.unicodeScalars.contains(where: isRefused) else { return .failure(.localPart) }
        guard let domain = asciiDomain(String(parts[1]), toASCII: domainToASCII) else { return .failure(.domain) }
        // RFC 5321 §4.5.3.1.3: the 254 bytes hold for the address as mail carries it, the A-label domain
        // included, which can be longer than the typed one; so the key stays a valid address, and
        // normalising a key gives the same key.
        let key = local + "@" + domain
        guard key.utf8.count <= 254 else { return .failure(.shape) }
        return .success(EmailAddress(typed: typed, key: key))
    }

    private init(typed: String, key: String) {
        self.typed = typed
        self.key = key
    }

    /// NFKC, full case folding, NFKC: the `NFKC_Casefold` shape of Unicode's identifier rules, through
    /// Foundation (ICU underneath), not a table of our own.
    public static func foldedLocalPart(_ local: String) -> String {
        local.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
    }

    /// The A-label form of a mail domain: IDNA's conversion, then at least two labels, none empty, the last
    /// not all digits (an IPv4 literal), at most 253 bytes. UTS #46 §2.3 treats the ideographic and fullwidth
    /// full stops (U+3002, U+FF0E, U+FF61) as label separators; they become `.` first.
    public static func asciiDomain(_ domain: String, toASCII: (String) -> String?) -> String? {
        let separated = String(String.UnicodeScalarView(domain.unicodeScalars.map { Self.labelSeparators.contains($0) ? "." : $0 }))
        guard let ascii = toASCII(separated), ascii.utf8.count <= 253 else { return nil }
        let labels = ascii.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), let last = labels.last,
            !last.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return ascii
    }

    private static let labelSeparators: Set<Unicode.Scalar> = ["\u{3002}", "\u{FF0E}", "\u{FF61}"]

    /// Code points no address may carry: whitespace, controls (NUL included), format characters (invisible,
    /// such as U+200B), default-ignorable code points (invisible too, though not all are format characters:
    /// U+034F COMBINING GRAPHEME JOINER, the variation selectors such as U+FE0F, U+3164 HANGUL FILLER, the soft
    /// hyphen; Unicode §5.21), private-use, surrogates and unassigned code points. Any of them would let two
    /// accounts look like one address.
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace || scalar.properties.isDefaultIgnorableCodePoint { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .privateUse, .surrogate, .unassigned: return true
        default: return false
        }
    }
}
