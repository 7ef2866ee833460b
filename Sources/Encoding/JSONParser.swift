/// Why a JSON text was refused: what went wrong (`reason`), where (`offset`, a zero-based byte offset into
/// the input) and a sentence saying so (`sentence`).
///
/// No case carries a string value from the document except `duplicateKey`, which carries the member name.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The rule of RFC 8259 the input broke.
    public enum Reason: Equatable, Sendable {
        /// The input starts with the UTF-8 byte order mark `EF BB BF` (RFC 8259 §8.1).
        case byteOrderMark
        /// Bytes that are not well-formed UTF-8: overlong forms, encoded surrogates, code points above
        /// U+10FFFF, stray continuation bytes or truncated sequences (RFC 8259 §8.1, RFC 3629 §4).
        case invalidUTF8
        /// A byte that cannot start or continue the grammar here: comments, single quotes, `NaN`,
        /// `Infinity`, a misspelt literal, a missing `:` or `,`.
        case unexpectedCharacter
        /// The input ends inside a value, string, array or object (the offset is the input's length).
        case unexpectedEnd
        /// A `,` directly followed by `]` or `}`; the offset is that of the comma.
        case trailingComma
        /// An object names the same member twice, compared after unescaping with Swift `String` equality
        /// (canonically equivalent names collide, as they would in a dictionary); the offset is the
        /// second name's opening quote.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the parser's `maxDepth`; the offset is the bracket that
        /// goes one level too deep.
        case tooDeep
        /// Something other than whitespace follows the top-level value; the offset is its first byte.
        case trailingData
        /// The input is empty or only whitespace.
        case emptyInput
        /// A number outside the RFC 8259 §6 grammar (leading zero, `-` without digits, `1.`, `1e`);
        /// the offset is the number's first byte.
        case invalidNumber
        /// A backslash not followed by one of `" \ / b f n r t u`, or `\u` without four hex digits;
        /// the offset is that of the backslash.
        case invalidEscape
        /// A `\uD800`–`\uDFFF` escape that is not a high surrogate followed by a low one
        /// (RFC 8259 §8.2); the offset is that of the first backslash.
        case loneSurrogate
        /// An unescaped byte below 0x20 inside a string (RFC 8259 §7); the offset is that byte's.
        case controlCharacterInString
    }

    /// What rule was broken.
    public let reason: Reason
    /// The zero-based byte offset of the problem in the input.
    public let offset: Int

    /// Creates an error; the parser is the only producer outside tests.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The problem as a sentence fragment without the position, e.g. "a trailing comma".
    public var problem: String {
        switch reason {
        case .byteOrderMark: "the text starts with a UTF-8 byte order mark"
        case .invalidUTF8: "the text is not valid UTF-8"
        case .unexpectedCharacter: "an unexpected character"
        case .unexpectedEnd: "the text ends in the middle of a value"
        case .trailingComma: "a trailing comma"
        case .duplicateKey: "an object repeats a member name"
        case .tooDeep: "arrays and objects nested too deep"
        case .trailingData: "more text after the JSON value"
        case .emptyInput: "the text is empty"
        case .invalidNumber: "an invalid number"
        case .invalidEscape: "an invalid escape sequence"
        case .loneSurrogate: "an unpaired \\u surrogate escape"
        case .controlCharacterInString: "an unescaped control character inside a string"
        }
    }

    /// A sentence for a log line or a message: the problem and its byte offset. It never quotes the input.
    public var sentence: String { "The JSON text is not valid: \(problem) at byte \(offset)." }

    public var description: String { sentence }
}

extension JSONValue {
    /// Parses `bytes` as exactly one JSON text (RFC 8259), in one pass, into a `JSONValue`.
    ///
    /// Strict where Foundation's parsers are lenient: no byte order mark (§8.1), no comments, no trailing
    /// commas, whitespace only space, tab, LF and CR (§2), numbers per the §6 grammar (no leading zeros,
    /// no `NaN`), strings per §7 (control characters escaped, only the listed escapes, surrogate escapes in
    /// high-low pairs, §8.2), well-formed UTF-8 (§8.1), and member names unique within an object (§4 says
    /// SHOULD; here it is MUST, since a decoded dictionary would silently keep one of two). Any value may
    /// be at the top level.
    ///
    /// Numbers: an integer (no fraction, no exponent) that fits `Int` is `.int`; any other number is
    /// `.double` (the nearest `Double`; one too large for `Double` is infinite, written back as `null`).
    /// Objects keep their members in document order.
    ///
    /// Checks run in this order: empty input, byte order mark, then the grammar from the first byte, so
    /// the error reported is the first problem in the text.
    /// - Parameters:
    ///   - bytes: the text, as received.
    ///   - maxDepth: the deepest allowed nesting of arrays and objects (a top-level `[]` is depth 1);
    ///     RFC 8259 §9 lets parsers limit it. At most 512 (recursion is bounded by it).
    /// - Throws: `JSONParseError` naming the first problem found.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: min(max(maxDepth, 0), 512))
        return try parser.document()
    }

    /// Parses the UTF-8 of `text`; see `parse(_:maxDepth:)`.
    public static func parse(_ text: String, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// The recursive-descent parser behind `JSONValue.parse`. Recursion depth is bounded by `maxDepth`.
private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var pos = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func document() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        if pos == bytes.count { throw JSONParseError(.emptyInput, offset: 0) }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { throw JSONParseError(.byteOrderMark, offset: 0) }
        let root = try value(depth: 0)
        skipWhitespace()
        if pos < bytes.count { throw JSONParseError(badByteReason(at: pos, otherwise: .trailingData), offset: pos) }
        return root
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos)
        }
    }

    /// `{` … `}`, starting at the brace; `depth` counts this object.
    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        // RFC 8259 §9: "An implementation may set limits on the maximum depth of nesting."
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, offset: pos) }
        pos += 1
        var members: [(String, JSONValue)] = []
        var names: Set<String> = []
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            guard bytes[pos] == UInt8(ascii: "\"") else {
                throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos)
            }
            let nameStart = pos
            let name = try string()
            // A linear scan is cheaper than hashing for the few members request bodies have.
            let repeated: Bool
            if members.count < 8 {
                repeated = members.contains { $0.0 == name }
            } else {
                if names.isEmpty { names = Set(members.map(\.0)) }
                repeated = !names.insert(name).inserted
            }
            if repeated { throw JSONParseError(.duplicateKey(name), offset: nameStart) }
            skipWhitespace()
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            guard bytes[pos] == UInt8(ascii: ":") else {
                throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos)
            }
            pos += 1
            members.append((name, try value(depth: depth)))
            skipWhitespace()
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            switch bytes[pos] {
            case UInt8(ascii: "}"):
                pos += 1
                return .object(members)
            case UInt8(ascii: ","):
                try comma()
            default:
                throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos)
            }
        }
    }

    /// `[` … `]`, starting at the bracket; `depth` counts this array.
    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, offset: pos) }
        pos += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            switch bytes[pos] {
            case UInt8(ascii: "]"):
                pos += 1
                return .array(elements)
            case UInt8(ascii: ","):
                try comma()
            default:
                throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos)
            }
        }
    }

    /// Consumes a `,` and refuses a `]` or `}` right after it.
    mutating func comma() throws(JSONParseError) {
        let at = pos
        pos += 1
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") || bytes[pos] == UInt8(ascii: "}") {
            throw JSONParseError(.trailingComma, offset: at)
        }
    }

    /// A string starting at its opening quote, unescaped; UTF-8 is checked as it is read.
    mutating func string() throws(JSONParseError) -> String {
        pos += 1
        let start = pos
        // Fast path: printable ASCII with no escape is copied in one go.
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                pos += 1
                return String(decoding: bytes[start..<pos - 1], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            pos += 1
        }
        var out = Array(bytes[start..<pos])
        while pos < bytes.count {
            let byte = bytes[pos]
            switch byte {
            case UInt8(ascii: "\""):
                pos += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                let scalar = try escape()
                out.append(contentsOf: UTF8.encode(scalar)!)
            case 0x00..<0x20:
                // RFC 8259 §7: control characters MUST be escaped.
                throw JSONParseError(.controlCharacterInString, offset: pos)
            case 0x80...:
                let length = utf8SequenceLength(at: pos)
                guard length > 0 else { throw JSONParseError(.invalidUTF8, offset: pos) }
                out.append(contentsOf: bytes[pos..<pos + length])
                pos += length
            default:
                out.append(byte)
                pos += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, offset: pos)
    }

    /// One escape starting at the backslash; returns the character it stands for.
    mutating func escape() throws(JSONParseError) -> Unicode.Scalar {
        let start = pos
        guard pos + 1 < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: bytes.count) }
        let kind = bytes[pos + 1]
        pos += 2
        switch kind {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4(escapeStart: start)
            switch unit {
            case 0xD800...0xDBFF:
                // RFC 8259 §8.2: a lone surrogate is not a character; require `\uDC00`–`\uDFFF` next.
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(.loneSurrogate, offset: start)
                }
                let lowStart = pos
                pos += 2
                let low = try hex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate, offset: start) }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            case 0xDC00...0xDFFF:
                throw JSONParseError(.loneSurrogate, offset: start)
            default:
                return Unicode.Scalar(unit)!
            }
        default:
            throw JSONParseError(.invalidEscape, offset: start)
        }
    }

    /// The four hex digits of a `\u` escape.
    mutating func hex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            let byte = bytes[pos]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidEscape, offset: escapeStart)
            }
            value = value << 4 | UInt32(digit)
            pos += 1
        }
        return value
    }

    /// RFC 8259 §6: `[ minus ] int [ frac ] [ exp ]`, `int = zero / ( digit1-9 *DIGIT )`.
    mutating func number() throws(JSONParseError) -> JSONValue {
        let start = pos
        var integral = true
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, offset: start) }
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            // A leading zero may not be followed by more digits (`01`, `-00`).
            if pos < bytes.count, isDigit(bytes[pos]) { throw JSONParseError(.invalidNumber, offset: start) }
        } else {
            skipDigits()
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            integral = false
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, offset: start) }
            skipDigits()
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            integral = false
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw JSONParseError(.invalidNumber, offset: start) }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if integral, let value = Int(text) { return .int(value) }
        // The grammar above is a subset of what `Double(_:)` reads, so this never fails.
        return .double(Double(text) ?? .nan)
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in text {
            guard pos < bytes.count else { throw JSONParseError(.unexpectedEnd, offset: pos) }
            guard bytes[pos] == expected else { throw JSONParseError(badByteReason(at: pos, otherwise: .unexpectedCharacter), offset: pos) }
            pos += 1
        }
    }

    mutating func skipDigits() {
        while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
    }

    /// RFC 8259 §2: `ws = *( %x20 / %x09 / %x0A / %x0D )`.
    mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// `invalidUTF8` when the byte at `index` starts no well-formed UTF-8 sequence, else `otherwise`
    /// (a misplaced but well-formed character, such as a typographic quote, is a grammar error).
    func badByteReason(at index: Int, otherwise: JSONParseError.Reason) -> JSONParseError.Reason {
        bytes[index] >= 0x80 && utf8SequenceLength(at: index) == 0 ? .invalidUTF8 : otherwise
    }

    /// The length of the well-formed UTF-8 sequence of two to four bytes at `index` (Unicode Standard,
    /// Table 3-7), or 0 when the bytes there are not one.
    func utf8SequenceLength(at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: return 0
        }
        guard index + length <= bytes.count, secondRange.contains(bytes[index + 1]) else { return 0 }
        for offset in 2..<max(length, 2) where !(0x80...0xBF).contains(bytes[index + offset]) { return 0 }
        return length
    }
}
