// Fuzz target: the JSON decoder every JSON body meets (Encoding, `JSONValue.parse`, RFC 8259).
import Encoding

/// Equal as JSON: numbers by value (`1.0` is written back as `1`), a non-finite double (a number too large
/// for `Double`) as the `null` it is written as (docs on `JSONValue.parse`).
func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.int(let x), .double(let y)), (.double(let y), .int(let x)): return Double(x) == y
    case (.double(let x), .null) where !x.isFinite: return true
    case (.double(let x), .double(let y)): return x == y || (x.isNaN && y.isNaN)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(same)
    case (.object(let x), .object(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && same($0.1, $1.1) }
    default: return a == b
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? JSONValue.parse(bytes) {
        // What parses writes back as JSON that parses again to the same value.
        let written = JSONWriter.encode(value)
        guard let again = try? JSONValue.parse(written), same(value, again) else {
            fatalError("JSON round trip differs")
        }
    }
    _ = try? JSONValue.parse(bytes, maxDepth: 4)
    return 0
}
