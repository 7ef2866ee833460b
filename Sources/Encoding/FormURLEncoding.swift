/// `application/x-www-form-urlencoded` decoding and RFC 3986 percent-encoding.
///
/// Source: WHATWG URL Standard §5.1 (application/x-www-form-urlencoded parsing), RFC 3986 §2.1 and §2.3.
/// The query of `GET /v1/auth/zevid/start` and every form body are decoded here, so that `+` is a space
/// and a value comes back to the client with the same decoded content (docs/protocol.md#state).
public enum FormURLEncoding {
    /// Why a query string or form body could not be decoded.
    public enum DecodingError: Error, Equatable, Sendable {
        /// A `%` not followed by two hexadecimal digits.
        case malformedPercentEscape
        /// The decoded bytes are not valid UTF-8.
        case invalidUTF8
        /// A decoded name or value holds U+0000 (`%00`), which no field accepts (`StorableText`).
        case nulCharacter
    }

    /// Decodes `a=1&b=2+3` into ordered pairs, keeping duplicates and their order.
    ///
    /// Empty segments (`a=1&&b=2`) are skipped; a segment without `=` is a name with an empty value.
    /// `+` decodes to a space and `%XX` to the byte `XX`; the result must be valid UTF-8 without U+0000
    /// (`StorableText`: every request value is checked here, before any handler or SQL sees it).
    /// - Parameter raw: the query without the leading `?`, or the body, exactly as sent.
    /// - Returns: the `(name, value)` pairs in order.
    /// - Throws: `DecodingError` for a malformed escape, invalid UTF-8 or U+0000 (the caller answers
    ///   `invalid_request`, RFC 6749 §4.1.2.1).
    public static func decode(_ raw: String) throws(DecodingError) -> [(name: String, value: String)] {
        try decode(bytes: raw.utf8)
    }

    /// Decodes a body (or query) as received, byte for byte, into ordered pairs, as `decode(_:)` does.
    ///
    /// Every form body is decoded from its bytes here, never through a `String` first: turning the body into
    /// a `String` would replace a raw byte that is not UTF-8 (`\xFF`, not percent-encoded) with U+FFFD and
    /// the form would be read as something the client never sent. Here such a byte stays a byte, and a
    /// name or value whose bytes (raw or `%XX`-decoded) are not valid UTF-8 throws `invalidUTF8`.
    /// - Parameter bytes: the body or query without the leading `?`, exactly as sent.
    /// - Returns: the `(name, value)` pairs in order.
    /// - Throws: `DecodingError` for a malformed escape, invalid UTF-8 or U+0000.
    public static func decode<C: Collection>(bytes: C) throws(DecodingError) -> [(name: String, value: String)]
    where C.Element == UInt8 {
        var pairs: [(name: String, value: String)] = []
        for segment in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let bytes = Array(segment)
            if let eq = bytes.firstIndex(of: UInt8(ascii: "=")) {
                pairs.append((try decodeComponent(bytes[..<eq]), try decodeComponent(bytes[(eq + 1)...])))
            } else {
                pairs.append((try decodeComponent(bytes[...]), ""))
            }
        }
        return pairs
    }

    /// Decodes one name or value: `+` → space, `%XX` → byte, then UTF-8 without U+0000.
    /// - Throws: `DecodingError`.
    public static func decodeComponent<C: Collection>(_ bytes: C) throws(DecodingError) -> String
    where C.Element == UInt8 {
        try decodeComponent(ArraySlice(bytes))
    }

    /// `decodeComponent(_:)` for the slices the form and query parsers cut (the generic form, called from
    /// another module, would run unspecialised on every byte).
    /// - Throws: `DecodingError`.
    public static func decodeComponent(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> String {
        // Nothing to decode (no `+`, no `%`): the bytes are the value, once checked.
        if !bytes.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) {
            guard let string = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
            guard StorableText.isStorable(utf8: bytes) else { throw .nulCharacter }
            return string
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard bytes.endIndex - index >= 2, let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1])
                else { throw .malformedPercentEscape }
                index += 2
                out.append(high << 4 | low)
            default:
                out.append(byte)
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw .invalidUTF8 }
        guard StorableText.isStorable(utf8: out) else { throw .nulCharacter }
        return string
    }

    /// Percent-encodes a string leaving only RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`) bare;
    /// a space becomes `%20`. Used for every value the server puts into a redirect's query.
    /// - Parameter value: any string.
    /// - Returns: the encoded string (upper-case hex digits).
    public static func percentEncodeUnreserved(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hexDigits[Int(byte & 0x0F)]))
            }
        }
        return out
    }

    /// Encodes ordered pairs as a query string (`a=1&b=x%20y`), every name and value through
    /// `percentEncodeUnreserved(_:)`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncodeUnreserved($0.0) + "=" + percentEncodeUnreserved($0.1) }.joined(separator: "&")
    }

    /// RFC 3986 §2.3 unreserved: `ALPHA / DIGIT / "-" / "." / "_" / "~"`.
    @inlinable public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// The value of one hexadecimal digit of a `%XX` escape (RFC 3986 §2.1: either case), or nil.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
