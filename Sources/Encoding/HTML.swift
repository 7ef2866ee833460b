/// Escaping for text placed into the server's HTML pages.
///
/// Source: OWASP XSS Prevention Cheat Sheet, rules 1 and 2; HTML Living Standard §13.1.2.6 (attribute
/// values). The five characters below are enough for element text and for attribute values that are
/// quoted (with `"` or `'`); they are not enough for unquoted attributes, URLs, `<script>` or CSS.
public enum HTML {
    /// Escapes `&` `<` `>` `"` `'` as `&amp;` `&lt;` `&gt;` `&quot;` `&#39;`; every other character is
    /// kept as is.
    /// - Parameter text: untrusted text, such as a client name or an error description.
    /// - Returns: the text, safe inside an element or a quoted attribute value.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
