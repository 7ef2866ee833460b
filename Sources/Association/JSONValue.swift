import Encoding

/// A decoded JSON value. Objects keep member order (the order of `details` keyed by App ID matters); numbers
/// keep their text, since no rule here reads a number's value; booleans stay distinct from numbers.
enum JSONValue: Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    var arrayValue: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    var isObject: Bool { if case .object = self { true } else { false } }

    /// "an object", "an array", … for messages.
    var kindDescription: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

// MARK: - Decoding

extension JSONValue {
    /// Decodes a document `StrictJSON.validate` accepted. Returns `nil` on anything unexpected instead of
    /// trapping; recursion depth is bounded by the validator's `maxDepth`.
    static func decode(validated bytes: [UInt8]) -> JSONValue? {
        var reader = Reader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        return reader.pos == bytes.count ? value : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var pos = 0

        mutating func skipWhitespace() {
            while pos < bytes.count, bytes[pos] == 0x20 || bytes[pos] == 0x09 || bytes[pos] == 0x0A || bytes[pos] == 0x0D { pos += 1 }
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth <= 64 else { return nil }
            skipWhitespace()
            guard pos < bytes.count else { return nil }
            switch bytes[pos] {
            case UInt8(ascii: "{"):
                pos += 1
                var members: [(key: String, value: JSONValue)] = []
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
                    pos += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    guard let key = string() else { return nil }
                    skipWhitespace()
                    guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { return nil }
                    pos += 1
                    guard let member = value(depth: depth + 1) else { return nil }
                    members.append((key, member))
                    skipWhitespace()
                    guard pos < bytes.count else { return nil }
                    if bytes[pos] == UInt8(ascii: ",") {
                        pos += 1
                    } else if bytes[pos] == UInt8(ascii: "}") {
                        pos += 1
                        return .object(members)
                    } else {
                        return nil
                    }
                }
            case UInt8(ascii: "["):
                pos += 1
                var items: [JSONValue] = []
                skipWhitespace()
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
                    pos += 1
                    return .array(items)
                }
                while true {
                    guard let item = value(depth: depth + 1) else { return nil }
                    items.append(item)
                    skipWhitespace()
                    guard pos < bytes.count else { return nil }
                    if bytes[pos] == UInt8(ascii: ",") {
                        pos += 1
                    } else if bytes[pos] == UInt8(ascii: "]") {
                        pos += 1
                        return .array(items)
                    } else {
                        return nil
                    }
                }
            case UInt8(ascii: "\""):
                return string().map(JSONValue.string)
            case UInt8(ascii: "t"):
                return literal("true", .bool(true))
            case UInt8(ascii: "f"):
                return literal("false", .bool(false))
            case UInt8(ascii: "n"):
                return literal("null", .null)
            default:
                let start = pos
                while pos < bytes.count, Self.isNumberByte(bytes[pos]) { pos += 1 }
                guard pos > start else { return nil }
                return .number(String(decoding: bytes[start..<pos], as: UTF8.self))
            }
        }

        static func isNumberByte(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }

        mutating func literal(_ word: String, _ result: JSONValue) -> JSONValue? {
            let utf8 = Array(word.utf8)
            guard pos + utf8.count <= bytes.count, Array(bytes[pos..<pos + utf8.count]) == utf8 else { return nil }
            pos += utf8.count
            return result
        }

        mutating func string() -> String? {
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { return nil }
            pos += 1
            var out: [UInt8] = []
            while pos < bytes.count {
                let byte = bytes[pos]
                if byte == UInt8(ascii: "\"") {
                    pos += 1
                    return String(decoding: out, as: UTF8.self)
                }
                if byte != UInt8(ascii: "\\") {
                    out.append(byte)
                    pos += 1
                    continue
                }
                guard pos + 1 < bytes.count else { return nil }
                let kind = bytes[pos + 1]
                pos += 2
                switch kind {
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var unit = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                            return nil
                        }
                        pos += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(unit), let encoded = UTF8.encode(scalar) else { return nil }
                    out.append(contentsOf: encoded)
                default: out.append(kind)  // `"`, `\` and `/` stand for themselves.
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard pos + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let digit = hexValue(Unicode.Scalar(bytes[pos])) else { return nil }
                value = value << 4 | UInt32(digit)
                pos += 1
            }
            return value
        }
    }
}

// MARK: - Writing

extension JSONValue {
    /// Deterministic pretty-printed UTF-8: two-space indentation, object members sorted by their UTF-8 bytes,
    /// `": "` between name and value, `/` and non-ASCII not escaped, and a final `"\n"`.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        write(into: &out, indent: 0)
        out.append(0x0A)
        return out
    }

    private func write(into out: inout [UInt8], indent: Int) {
        switch self {
        case .object(let members):
            if members.isEmpty {
                out += Array("{}".utf8)
                return
            }
            let sorted = members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            out += Array("{\n".utf8)
            for (index, member) in sorted.enumerated() {
                out += [UInt8](repeating: 0x20, count: indent + 2)
                Self.writeString(member.key, into: &out)
                out += Array(": ".utf8)
                member.value.write(into: &out, indent: indent + 2)
                out += Array((index + 1 < sorted.count ? ",\n" : "\n").utf8)
            }
            out += [UInt8](repeating: 0x20, count: indent)
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            if items.isEmpty {
                out += Array("[]".utf8)
                return
            }
            out += Array("[\n".utf8)
            for (index, item) in items.enumerated() {
                out += [UInt8](repeating: 0x20, count: indent + 2)
                item.write(into: &out, indent: indent + 2)
                out += Array((index + 1 < items.count ? ",\n" : "\n").utf8)
            }
            out += [UInt8](repeating: 0x20, count: indent)
            out.append(UInt8(ascii: "]"))
        case .string(let text): Self.writeString(text, into: &out)
        case .number(let text): out += Array(text.utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
    }

    /// RFC 8259 §7: escapes `"`, `\` and control characters only.
    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: - Body checks shared by both judges

/// The checks before any structure: the `Content-Type` and strict JSON (docs/association.md#fetch-stage).
enum BodyCheck {
    /// Why a body is not strict JSON, as a sentence for a `not_json` problem.
    struct NotJSON: Error {
        let message: String
    }

    /// `nil` when `contentType` is `application/json`, compared case-insensitively and ignoring parameters
    /// such as `; charset=utf-8` (RFC 9110 §8.3.1: type and subtype are case-insensitive); otherwise a sentence
    /// saying what was served.
    static func contentTypeMismatch(_ contentType: String?, file: AssociationFile) -> String? {
        guard let contentType else {
            return "\(file.rawValue) is served without a Content-Type header; serve it as application/json"
        }
        let mediaType = trimmed(String(contentType.split(separator: ";", omittingEmptySubsequences: false).first ?? "")).lowercased()
        if mediaType == "application/json" { return nil }
        let shown = quoted(contentType)
        switch file {
        case .assetLinks:
            return "assetlinks.json is served as \(shown); Google requires Content-Type: application/json"
        case .appleAppSiteAssociation:
            if mediaType == "application/pkcs7-mime" {
                return
                    "apple-app-site-association is served as signed PKCS#7 (\(shown)); signing has not been needed since iOS 9: serve plain JSON as application/json"
            }
            return
                "apple-app-site-association is served as \(shown); serve it as application/json (Apple's requirement for unsigned files); some validators reject other types"
        }
    }

    /// The start every judge shares: a `content_type` problem when the media type is wrong, then the
    /// strictly parsed root, or a `not_json` problem and no root.
    static func open(_ body: [UInt8], contentType: String?, file: AssociationFile) -> (problems: [Problem], root: JSONValue?) {
        var problems: [Problem] = []
        if let mismatch = contentTypeMismatch(contentType, file: file) {
            problems.append(Problem(code: .contentType, message: mismatch, file: file))
        }
        switch decode(body, file: file) {
        case .failure(let notJSON):
            problems.append(Problem(code: .notJSON, message: notJSON.message, file: file))
            return (problems, nil)
        case .success(let root):
            return (problems, root)
        }
    }

    /// Decodes `body` if it is strict RFC 8259 JSON (`StrictJSON.validate`), else says why not.
    static func decode(_ body: [UInt8], file: AssociationFile) -> Result<JSONValue, NotJSON> {
        let name = file.rawValue
        let firstContent = body.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D })
        if firstContent == UInt8(ascii: "<") {
            return .failure(NotJSON(message: "\(name) is an HTML page, not JSON: a site fallback or error page answers this path"))
        }
        do {
            try StrictJSON.validate(body)
        } catch {
            return .failure(NotJSON(message: "\(name) is not strict JSON: " + describe(error, in: body)))
        }
        guard let value = JSONValue.decode(validated: body) else {
            return .failure(NotJSON(message: "\(name) is not strict JSON: it could not be decoded"))
        }
        return .success(value)
    }

    static func describe(_ error: StrictJSON.Error, in body: [UInt8]) -> String {
        switch error {
        case .byteOrderMark: return "the file starts with a UTF-8 byte order mark (BOM); remove it, strict JSON parsers reject it"
        case .invalidUTF8: return "the file is not valid UTF-8"
        case .emptyInput: return "the file is empty"
        case .unexpectedEnd: return "the file ends in the middle of a value (a missing ']', '}' or '\"')"
        case .tooDeep: return "arrays and objects are nested more than 32 levels deep"
        case .duplicateKey(let name): return "an object repeats the key \(quoted(name))"
        case .trailingComma(let offset): return "a trailing comma at \(position(offset, in: body))"
        case .trailingData(let offset): return "more text follows the JSON value at \(position(offset, in: body))"
        case .invalidNumber(let offset): return "an invalid number at \(position(offset, in: body))"
        case .invalidEscape(let offset): return "an invalid escape sequence at \(position(offset, in: body))"
        case .loneSurrogate(let offset): return "an unpaired \\u surrogate escape at \(position(offset, in: body))"
        case .controlCharacterInString(let offset):
            return "an unescaped control character (a raw line break or tab) inside a string at \(position(offset, in: body))"
        case .unexpectedCharacter(let offset):
            let byte = offset < body.count ? body[offset] : 0
            let next = offset + 1 < body.count ? body[offset + 1] : 0
            let what: String
            if byte == UInt8(ascii: "/"), next == UInt8(ascii: "/") || next == UInt8(ascii: "*") {
                what = "a comment"
            } else if byte == UInt8(ascii: "'") {
                what = "a single quote"
            } else if byte == 0xE2, next == 0x80 {
                what = "a typographic (smart) quote"
            } else if byte == 0xC2, next == 0xA0 {
                what = "a non-breaking space"
            } else if byte >= 0x21, byte < 0x7F {
                what = "an unexpected '\(Character(Unicode.Scalar(byte)))'"
            } else {
                what = "an unexpected character"
            }
            return "\(what) at \(position(offset, in: body))"
        }
    }

    /// "line L, column C", both counted from 1; the column counts bytes.
    static func position(_ offset: Int, in body: [UInt8]) -> String {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, body.count) where body[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(offset - lineStart + 1)"
    }
}

/// Quotes a value from a fetched file for a message: at most 100 characters (a whole fingerprint fits), control
/// characters shown as `?`.
func quoted(_ text: String) -> String {
    var view = String.UnicodeScalarView()
    for scalar in text.unicodeScalars.prefix(100) {
        view.append(scalar.value < 0x20 || scalar.value == 0x7F ? "?" : scalar)
    }
    return "'" + String(view) + (text.unicodeScalars.count > 100 ? "…'" : "'")
}
