internal import CIDN2
import Foundation

/// Internationalised domain names through libidn2, the only module that touches it.
public enum IDNA {
    /// The ASCII (A-label) form of a domain name under Unicode UTS #46 nontransitional processing with the
    /// STD3 ASCII rules (letters, digits and hyphens only), as libidn2's `idn2_to_ascii_8z` computes it:
    /// `Bücher.example` → `xn--bcher-kva.example`. UTS #46 maps case, so the result is lower case; labels
    /// already in ASCII are kept (lower-cased).
    ///
    /// - Parameter domain: a domain name in any Unicode spelling, without a trailing dot.
    /// - Returns: the A-label form, or nil when IDNA refuses the name (a disallowed code point, a label
    ///   longer than 63 bytes, a bad hyphen or Bidi rule, a malformed `xn--` label, …).
    public static func toASCII(_ domain: String) -> String? {
        guard !domain.isEmpty, !domain.utf8.contains(0) else { return nil }
        // The STD3 rules allow only letters, digits, `-` and `.` among ASCII code points, also after the
        // compatibility mapping (a fullwidth `＿` is `_`). libidn2 2.3 drops such a code point instead of
        // refusing it (`exa_mple.com` would become `example.com`), so they are refused here first.
        let mapped = domain.precomposedStringWithCompatibilityMapping
        guard mapped.unicodeScalars.allSatisfy({ !$0.isASCII || Self.isSTD3ASCII($0) }) else { return nil }
        var output: UnsafeMutablePointer<CChar>? = nil
        let flags = Int32(IDN2_NONTRANSITIONAL.rawValue | IDN2_USE_STD3_ASCII_RULES.rawValue)
        let status = idn2_to_ascii_8z(domain, &output, flags)
        defer { if let output { idn2_free(output) } }
        guard status == Int32(IDN2_OK.rawValue), let output else { return nil }
        return String(cString: output).lowercased()
    }

    /// Letters, digits, hyphen and the label separator: the ASCII code points the STD3 rules allow.
    private static func isSTD3ASCII(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".": true
        default: false
        }
    }
}
