/// The one rule for text a request may carry into storage: every decoded request value (a query or form
/// field, a JSON string or member name) passes it at the edge where it is decoded, so no handler sees a
/// value the database would refuse.
///
/// PostgreSQL's `text` in a UTF8 database holds every Unicode scalar except U+0000 (it refuses the NUL
/// byte with SQLSTATE 22021). A Swift `String` is always valid UTF-8 and never holds a surrogate, so
/// U+0000 is the one scalar to refuse. See docs/protocol.md, "Text values".
public enum StorableText {
    /// Whether PostgreSQL can store `text` as it is.
    /// - Parameter text: a decoded value.
    /// - Returns: `false` when it holds U+0000.
    @inlinable public static func isStorable(_ text: String) -> Bool {
        !text.utf8.contains(0)
    }

    /// Whether PostgreSQL can store these decoded bytes as text (the same rule over UTF-8 bytes).
    @inlinable public static func isStorable<C: Collection>(utf8 bytes: C) -> Bool where C.Element == UInt8 {
        !bytes.contains(0)
    }
}
