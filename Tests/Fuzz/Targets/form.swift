// Fuzz target: `application/x-www-form-urlencoded` bodies and request queries (Encoding, `FormURLEncoding`).
import Encoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A body, as raw bytes.
    if let pairs = try? FormURLEncoding.decode(bytes: bytes) {
        // Re-encoding what decoded and decoding it again gives the same pairs.
        let encoded = FormURLEncoding.encode(pairs.map { ($0.name, $0.value) })
        guard let again = try? FormURLEncoding.decode(encoded),
            again.map(\.name) == pairs.map(\.name), again.map(\.value) == pairs.map(\.value)
        else { fatalError("form round trip differs") }
    }
    // A query, as the server reads it from the request target (a String of the target's bytes).
    _ = try? FormURLEncoding.decode(String(decoding: bytes, as: UTF8.self))
    _ = try? FormURLEncoding.decodeComponent(bytes)
    return 0
}
