/// An ordered multi-map of HTTP header fields with case-insensitive names.
///
/// Field names compare case-insensitively (RFC 9110 §5.1); order and repeated fields are kept as received,
/// because some fields may legitimately repeat (RFC 9110 §5.3). Values are stored as given; the server
/// validates response fields before they reach the wire.
public struct HTTPHeaders: Sendable, Sequence {
    /// One field: its name as given and its value.
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    /// An empty header map.
    public init() {
        fields = []
    }

    /// A header map holding `pairs` (name, value) in order; repeated names are kept.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of the field called `name` (case-insensitive), or `nil` when absent.
    public subscript(name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Every value of the field called `name` (case-insensitive), in order; empty when absent.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any existing fields of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` (case-insensitive) with a single field appended at the end.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field called `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// The number of fields, counting repeats.
    public var count: Int { fields.count }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// ASCII case-insensitive comparison: field names are tokens (RFC 9110 §5.1), so no Unicode folding.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        let x = a.utf8
        let y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    static func asciiLower(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
