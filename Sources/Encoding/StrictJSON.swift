/// A validating scanner for JSON exactly as RFC 8259 defines it, run before Foundation decodes.
///
/// Foundation's `JSONSerialization` and `JSONDecoder` on Linux accept a UTF-8 byte order mark and trailing
/// commas, and silently keep one of two duplicate keys. Request bodies and fetched association files must be
/// strict, so callers run `validate(_:maxDepth:)` first and decode only what passes.
///
/// Source: RFC 8259 §2 (grammar, whitespace), §4 (names SHOULD be unique: here they MUST be), §6 (numbers),
/// §7 (strings and escapes), §8.1 (UTF-8, "MUST NOT add a byte order mark"), §9 (parsers MAY limit depth).
public enum StrictJSON {
    /// Why a document was rejected. Offsets are zero-based byte offsets into the input.
    ///
    /// No case carries a string value from the document; `duplicateKey` carries only the member name.
    public enum Error: Swift.Error, Equatable, Sendable {
        /// The input starts with the UTF-8 byte order mark `EF BB BF` (RFC 8259 §8.1).
        case byteOrderMark
        /// The input is not well-formed UTF-8: overlong forms, encoded surrogates, code points above
        /// U+10FFFF, stray continuation bytes or truncated sequences (RFC 8259 §8.1, RFC 3629 §4).
        case invalidUTF8
        /// A byte that cannot start or continue the grammar here: comments, single quotes, `NaN`,
        /// `Infinity`, a misspelt literal, a missing `:` or `,`.
        case unexpectedCharacter(offset: Int)
        /// The input ends inside a value, string, array or object.
        case unexpectedEnd
        /// A `,` directly followed by `]` or `}`; the offset is that of the comma.
        case trailingComma(offset: Int)
        /// An object names the same member twice (compared after unescaping, with Swift `String`
        /// equality, so canonically equivalent names collide as they would in a decoded dictionary).
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the `maxDepth` given to `validate(_:maxDepth:)`.
        case tooDeep
        /// Something other than whitespace follows the top-level value; the offset is its first byte.
        case trailingData(offset: Int)
        /// The input is empty or only whitespace.
        case emptyInput
        /// A number outside the RFC 8259 §6 grammar (leading zero, `-` without digits, `1.`, `1e`);
        /// the offset is the number's first byte.
        case invalidNumber(offset: Int)
        /// A backslash not followed by one of `" \ / b f n r t u`, or `\u` without four hex digits;
        /// the offset is that of the backslash.
        case invalidEscape(offset: Int)
        /// A `\uD800`–`\uDFFF` escape that is not a high surrogate followed by a low one
        /// (RFC 8259 §8.2); the offset is that of the backslash.
        case loneSurrogate(offset: Int)
        /// An unescaped byte below 0x20 inside a string (RFC 8259 §7); the offset is that byte's.
        case controlCharacterInString(offset: Int)
    }

    /// Checks that `bytes` are one RFC 8259 JSON text with unique member names, or throws.
    ///
    /// Any value may be at the top level. Whitespace is only space, tab, LF and CR. The scan is
    /// iterative, so memory stays bounded by `maxDepth` whatever the input (`[[[[…` 100 000 deep stops at
    /// `maxDepth + 1`). Checks run in this order: empty input, byte order mark, UTF-8, grammar.
    /// - Parameters:
    ///   - bytes: the document, as received.
    ///   - maxDepth: the deepest allowed nesting of arrays and objects (a top-level `[]` is depth 1).
    /// - Throws: `StrictJSON.Error` naming the first problem found.
    public static func validate(_ bytes: [UInt8], maxDepth: Int = 32) throws(Error) {
        var scanner = Scanner(bytes: bytes, maxDepth: maxDepth)
        try scanner.run()
    }
}

extension StrictJSON {
    private struct Frame {
        var isObject: Bool
        var keys: Set<String> = []
    }

    private struct Scanner {
        let bytes: [UInt8]
        let maxDepth: Int
        var pos = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        mutating func run() throws(Error) {
            skipWhitespace()
            if pos == bytes.count { throw .emptyInput }
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { throw .byteOrderMark }
            guard Self.isValidUTF8(bytes) else { throw .invalidUTF8 }

            var stack: [Frame] = []
            value: while true {
                skipWhitespace()
                guard pos < bytes.count else { throw .unexpectedEnd }
                switch bytes[pos] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    // RFC 8259 §9: "An implementation may set limits on the maximum depth of nesting."
                    guard stack.count < maxDepth else { throw .tooDeep }
                    let isObject = bytes[pos] == UInt8(ascii: "{")
                    pos += 1
                    skipWhitespace()
                    let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if pos < bytes.count, bytes[pos] == close {
                        pos += 1
                    } else {
                        stack.append(Frame(isObject: isObject))
                        if isObject { try memberName(into: &stack[stack.count - 1]) }
                        continue value
                    }
                case UInt8(ascii: "\""):
                    _ = try string(collecting: false)
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    try number()
                case UInt8(ascii: "t"):
                    try literal("true")
                case UInt8(ascii: "f"):
                    try literal("false")
                case UInt8(ascii: "n"):
                    try literal("null")
                default:
                    throw .unexpectedCharacter(offset: pos)
                }

                // A value is complete: close containers or move to the next element.
                while let top = stack.last {
                    skipWhitespace()
                    guard pos < bytes.count else { throw .unexpectedEnd }
                    let byte = bytes[pos]
                    let close = top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                    if byte == close {
                        pos += 1
                        stack.removeLast()
                    } else if byte == UInt8(ascii: ",") {
                        let comma = pos
                        pos += 1
                        skipWhitespace()
                        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") || bytes[pos] == UInt8(ascii: "}") {
                            throw .trailingComma(offset: comma)
                        }
                        if top.isObject { try memberName(into: &stack[stack.count - 1]) }
                        continue value
                    } else {
                        throw .unexpectedCharacter(offset: pos)
                    }
                }
                break value
            }

            skipWhitespace()
            if pos < bytes.count { throw .trailingData(offset: pos) }
        }

        /// Scans `"name" :` and records the name in `frame`, rejecting a repeat.
        mutating func memberName(into frame: inout Frame) throws(Error) {
            skipWhitespace()
            guard pos < bytes.count else { throw .unexpectedEnd }
            guard bytes[pos] == UInt8(ascii: "\"") else { throw .unexpectedCharacter(offset: pos) }
            let name = try string(collecting: true)
            guard frame.keys.insert(name).inserted else { throw .duplicateKey(name) }
            skipWhitespace()
            guard pos < bytes.count else { throw .unexpectedEnd }
            guard bytes[pos] == UInt8(ascii: ":") else { throw .unexpectedCharacter(offset: pos) }
            pos += 1
        }

        /// Scans a string starting at the opening quote; returns its unescaped text when `collecting`.
        mutating func string(collecting: Bool) throws(Error) -> String {
            pos += 1
            var out: [UInt8] = []
            while pos < bytes.count {
                let byte = bytes[pos]
                switch byte {
                case UInt8(ascii: "\""):
                    pos += 1
                    return collecting ? String(decoding: out, as: UTF8.self) : ""
                case UInt8(ascii: "\\"):
                    let scalar = try escape()
                    if collecting { out.append(contentsOf: UTF8.encode(scalar)!) }
                case 0x00..<0x20:
                    // RFC 8259 §7: "All Unicode characters may be placed within the quotation marks,
                    // except for the characters that MUST be escaped: ... the control characters."
                    throw .controlCharacterInString(offset: pos)
                default:
                    // Multi-byte UTF-8 was validated up front and never contains `"` or `\`.
                    if collecting { out.append(byte) }
                    pos += 1
                }
            }
            throw .unexpectedEnd
        }

        /// Scans one escape starting at the backslash and returns the character it stands for.
        mutating func escape() throws(Error) -> Unicode.Scalar {
            let start = pos
            guard pos + 1 < bytes.count else { throw .unexpectedEnd }
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
                    guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                    else { throw .loneSurrogate(offset: start) }
                    let lowStart = pos
                    pos += 2
                    let low = try hex4(escapeStart: lowStart)
                    guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(offset: start) }
                    let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    return Unicode.Scalar(value)!
                case 0xDC00...0xDFFF:
                    throw .loneSurrogate(offset: start)
                default:
                    return Unicode.Scalar(unit)!
                }
            default:
                throw .invalidEscape(offset: start)
            }
        }

        /// Reads the four hex digits of a `\u` escape.
        mutating func hex4(escapeStart: Int) throws(Error) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard pos < bytes.count else { throw .unexpectedEnd }
                let byte = bytes[pos]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .invalidEscape(offset: escapeStart)
                }
                value = value << 4 | UInt32(digit)
                pos += 1
            }
            return value
        }

        /// RFC 8259 §6: `[ minus ] int [ frac ] [ exp ]`, `int = zero / ( digit1-9 *DIGIT )`.
        mutating func number() throws(Error) {
            let start = pos
            if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: start) }
            if bytes[pos] == UInt8(ascii: "0") {
                pos += 1
                // A leading zero may not be followed by more digits (`01`, `-00`).
                if pos < bytes.count, isDigit(bytes[pos]) { throw .invalidNumber(offset: start) }
            } else {
                skipDigits()
            }
            if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
                pos += 1
                guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: start) }
                skipDigits()
            }
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
                pos += 1
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
                guard pos < bytes.count, isDigit(bytes[pos]) else { throw .invalidNumber(offset: start) }
                skipDigits()
            }
        }

        mutating func literal(_ word: StaticString) throws(Error) {
            let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            for expected in text {
                guard pos < bytes.count else { throw .unexpectedEnd }
                guard bytes[pos] == expected else { throw .unexpectedCharacter(offset: pos) }
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

        /// Well-formed UTF-8 per the Unicode Standard, Table 3-7.
        static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
            var index = 0
            let count = bytes.count
            while index < count {
                let lead = bytes[index]
                if lead < 0x80 {
                    index += 1
                    continue
                }
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
                default: return false
                }
                guard index + length <= count, secondRange.contains(bytes[index + 1]) else { return false }
                for offset in 2..<max(length, 2) where !(0x80...0xBF).contains(bytes[index + offset]) {
                    return false
                }
                index += length
            }
            return true
        }
    }
}
