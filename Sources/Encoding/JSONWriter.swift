/// A value that writes itself as JSON (RFC 8259) into a `JSONWriter`, in one pass, with no intermediate
/// tree and no Foundation. Response bodies are types conforming to it; `JSONValue` covers the rest.
public protocol JSONEncodable {
    /// Appends exactly one JSON value to `writer`.
    func encode(to writer: inout JSONWriter)
}

/// Appends JSON text (RFC 8259) to a byte buffer: UTF-8, `/` not escaped, `"` and `\` escaped, control
/// characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, every other scalar written as itself.
/// By default (`Format.compact`) there is no insignificant whitespace and members keep their order;
/// `Format.pretty` is the layout of files people read (the association files).
///
/// A writer cannot fail: every `JSONEncodable` value has a JSON form (non-finite numbers are written as
/// `null`, RFC 8259 §6 having no form for them).
public struct JSONWriter: Sendable {
    /// How the text is laid out. Both layouts are the same JSON value; only whitespace and member order
    /// differ.
    public struct Format: Sendable, Equatable {
        /// Spaces per nesting level; 0 writes no insignificant whitespace at all. When positive, every
        /// member and element of a non-empty container is on its own line, and names are followed by `": "`.
        public var indent: Int
        /// Whether `JSONValue` objects are written with their members sorted by the UTF-8 bytes of their
        /// names (deterministic files whatever order they were built in). Typed values keep their order.
        public var sortsKeys: Bool
        /// Whether the text ends with a line feed (as a text file does).
        public var finalNewline: Bool

        /// Creates a layout.
        public init(indent: Int, sortsKeys: Bool, finalNewline: Bool) {
            self.indent = indent
            self.sortsKeys = sortsKeys
            self.finalNewline = finalNewline
        }

        /// No whitespace, members in the order written: every response body.
        public static let compact = Format(indent: 0, sortsKeys: false, finalNewline: false)
        /// Two-space indentation, `": "`, members sorted bytewise, a final line feed: the association files
        /// (docs/association.md).
        public static let pretty = Format(indent: 2, sortsKeys: true, finalNewline: true)
    }

    /// The JSON text written so far, as UTF-8 bytes.
    public private(set) var bytes: [UInt8]
    /// The layout this writer produces.
    public let format: Format
    /// How many containers enclose the value being written (for indentation).
    fileprivate var depth = 0

    /// An empty writer; `capacity` is a hint in bytes.
    public init(capacity: Int = 256, format: Format = .compact) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.format = format
    }

    /// `value` encoded alone, as UTF-8 bytes, in `format` (compact unless told).
    public static func encode(_ value: some JSONEncodable, capacity: Int = 256, format: Format = .compact) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity, format: format)
        value.encode(to: &writer)
        if format.finalNewline { writer.bytes.append(0x0A) }
        return writer.bytes
    }

    /// A line break and the indentation of `level`, when the format indents.
    fileprivate mutating func newline(level: Int) {
        guard format.indent > 0 else { return }
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(0x20, count: format.indent * level))
    }

    /// Writes `null`.
    public mutating func null() { bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
    }

    /// Writes an integer in decimal.
    public mutating func number(_ value: Int) {
        if value == 0 {
            bytes.append(0x30)
            return
        }
        var magnitude = value.magnitude
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        while magnitude > 0 {
            digits.append(UInt8(truncatingIfNeeded: magnitude % 10) + 0x30)
            magnitude /= 10
        }
        if value < 0 { bytes.append(0x2D) }
        bytes.append(contentsOf: digits.reversed())
    }

    /// Writes a floating-point number in Swift's shortest round-tripping form; integral values without a
    /// fraction (`2`, not `2.0`); non-finite values as `null`.
    public mutating func number(_ value: Double) {
        guard value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 1e15 {
            number(Int(value))
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    /// Writes a JSON string literal (RFC 8259 §7).
    public mutating func string(_ value: String) {
        bytes.append(0x22)
        let utf8 = value.utf8
        // Fast path: most strings need no escape at all.
        if utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
                case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
                case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
                case 0x08: bytes.append(contentsOf: [0x5C, 0x62])
                case 0x0C: bytes.append(contentsOf: [0x5C, 0x66])
                case ..<0x20:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(0x22)
    }

    /// Writes an object; `body` writes its members through `JSONObjectWriter`, in the order they appear
    /// on the wire.
    public mutating func object(_ body: (inout JSONObjectWriter) -> Void) {
        bytes.append(0x7B)
        depth += 1
        var members = JSONObjectWriter(writer: self)
        bytes = []
        body(&members)
        let wroteMembers = !members.first
        self = members.writer
        depth -= 1
        if wroteMembers { newline(level: depth) }
        bytes.append(0x7D)
    }

    /// Writes an array of `elements`, each through its own encoding.
    public mutating func array<S: Sequence>(_ elements: S) where S.Element: JSONEncodable {
        bytes.append(0x5B)
        depth += 1
        var first = true
        for element in elements {
            if !first { bytes.append(0x2C) }
            first = false
            newline(level: depth)
            element.encode(to: &self)
        }
        depth -= 1
        if !first { newline(level: depth) }
        bytes.append(0x5D)
    }

    /// Appends bytes that are already one complete JSON value (e.g. a document encoded once at start-up).
    /// - Precondition: `json` is valid JSON text; nothing checks it.
    public mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }
}

/// Writes the members of one JSON object; see `JSONWriter.object(_:)`.
public struct JSONObjectWriter {
    fileprivate var writer: JSONWriter
    fileprivate var first = true

    fileprivate init(writer: JSONWriter) { self.writer = writer }

    /// Writes `"name": value`. A nil optional is written as `null`; use `fieldIfPresent` to leave it out.
    public mutating func field(_ name: String, _ value: some JSONEncodable) {
        key(name)
        value.encode(to: &writer)
    }

    /// Writes `"name": value` only when `value` is not nil.
    public mutating func fieldIfPresent(_ name: String, _ value: (some JSONEncodable)?) {
        guard let value else { return }
        field(name, value)
    }

    /// Writes `"name":` followed by whatever `body` writes (exactly one value).
    public mutating func field(_ name: String, writing body: (inout JSONWriter) -> Void) {
        key(name)
        body(&writer)
    }

    private mutating func key(_ name: String) {
        if !first { writer.raw([0x2C]) }
        first = false
        writer.newline(level: writer.depth)
        writer.string(name)
        if writer.format.indent > 0 { writer.raw([0x3A, 0x20]) } else { writer.raw([0x3A]) }
    }
}

extension String: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.string(self) }
}

extension Substring: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.string(String(self)) }
}

extension Int: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.number(self) }
}

extension Int64: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.number(Int(self)) }
}

extension Double: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.number(self) }
}

extension Bool: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.bool(self) }
}

extension Optional: JSONEncodable where Wrapped: JSONEncodable {
    /// `null` for nil.
    public func encode(to writer: inout JSONWriter) {
        switch self {
        case .none: writer.null()
        case .some(let value): value.encode(to: &writer)
        }
    }
}

extension Array: JSONEncodable where Element: JSONEncodable {
    public func encode(to writer: inout JSONWriter) { writer.array(self) }
}

/// A JSON value as a tree, for bodies that are not worth a type of their own. Objects keep their members in
/// the order given (a literal's order), so the output is deterministic.
public enum JSONValue: Sendable, Equatable, JSONEncodable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// Members in order; a name appears at most once (writers keep it so; the parser refuses duplicates).
    case object([(String, JSONValue)])

    public func encode(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.bool(value)
        case .int(let value): writer.number(value)
        case .double(let value): writer.number(value)
        case .string(let value): writer.string(value)
        case .array(let elements): writer.array(elements)
        case .object(let members):
            let ordered =
                writer.format.sortsKeys ? members.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) } : members
            writer.object { object in
                for (name, value) in ordered { object.field(name, value) }
            }
        }
    }

    /// The member named `name` of an object (the first, though parsed objects never repeat one); nil for
    /// a missing member or a value that is not an object.
    public subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == name }?.1
    }

    /// The text of a string, else nil.
    public var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    /// The elements of an array, else nil.
    public var arrayValue: [JSONValue]? { if case .array(let elements) = self { elements } else { nil } }
    /// The members of an object in order, else nil.
    public var objectValue: [(String, JSONValue)]? { if case .object(let members) = self { members } else { nil } }
    /// The value of a boolean, else nil (a number is never a boolean).
    public var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    /// The value of a whole number: an `.int`, or a `.double` with no fraction that fits `Int` (`2.0`,
    /// `1e3`); nil for anything else, booleans included.
    public var intValue: Int? {
        switch self {
        case .int(let value): value
        case .double(let value): Int(exactly: value)
        default: nil
        }
    }
    /// Whether this is an object.
    public var isObject: Bool { if case .object = self { true } else { false } }
    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// "an object", "an array", "a string", "a number", "a boolean" or "null", for messages.
    public var kindDescription: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .int, .double: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// `value` as JSON, or `.null` when nil.
    public static func from(_ value: (some JSONEncodable & Sendable)?) -> JSONValue {
        guard let value else { return .null }
        if let value = value as? JSONValue { return value }
        if let value = value as? String { return .string(value) }
        if let value = value as? Int { return .int(value) }
        if let value = value as? Bool { return .bool(value) }
        if let value = value as? Double { return .double(value) }
        return .null
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
}

/// Timestamps on the wire: RFC 3339 §5.6 in UTC with whole seconds, `2026-11-30T11:16:16Z`. The one formatter
/// every JSON body and page uses (docs/protocol.md, "Conventions").
public enum Timestamp {
    /// `secondsSinceEpoch` (Unix time, rounded down by the caller) as `YYYY-MM-DDThh:mm:ssZ`.
    /// Years outside 0000–9999 are clamped to that range's ends (never reached by a real timestamp).
    public static func rfc3339(secondsSinceEpoch: Int64) -> String {
        let clamped = min(max(secondsSinceEpoch, -62_167_219_200), 253_402_300_799)
        let days = clamped >= 0 ? clamped / 86_400 : (clamped - 86_399) / 86_400
        let secondOfDay = Int(clamped - days * 86_400)
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        var out: [UInt8] = []
        out.reserveCapacity(20)
        func two(_ value: Int) { out.append(UInt8(value / 10) + 0x30); out.append(UInt8(value % 10) + 0x30) }
        two(year / 100)
        two(year % 100)
        out.append(0x2D)
        two(month)
        out.append(0x2D)
        two(day)
        out.append(0x54)
        two(secondOfDay / 3600)
        out.append(0x3A)
        two(secondOfDay / 60 % 60)
        out.append(0x3A)
        two(secondOfDay % 60)
        out.append(0x5A)
        return String(decoding: out, as: UTF8.self)
    }
}
