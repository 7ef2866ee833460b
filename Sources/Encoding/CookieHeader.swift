/// The `Cookie` request header (RFC 6265 §5.4 `cookie-string`): `name=value` pairs separated by `;`.
public enum CookieHeader {
    /// The cookies of a request's `Cookie` fields, in one map. A pair without `=` is skipped, and a name
    /// sent more than once with different values is left out: the order a browser sends same-named cookies
    /// in says nothing about who set them, so a planted one must not win by coming first
    /// (docs/decisions.md, "Ambiguous cookies").
    /// - Parameter fields: the values of every `Cookie` header field, in the order received.
    /// - Returns: name → value, both exactly as sent (no decoding); never a name or value holding `;`.
    public static func pairs(_ fields: [String]) -> [String: String] {
        var result: [String: String] = [:]
        var ambiguous: Set<String> = []
        for header in fields {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard let eq = trimmed.firstIndex(of: "=") else { continue }
                let name = String(trimmed[..<eq])
                let value = String(trimmed[trimmed.index(after: eq)...])
                if let seen = result[name], seen != value { ambiguous.insert(name) } else { result[name] = value }
            }
        }
        for name in ambiguous { result[name] = nil }
        return result
    }
}
