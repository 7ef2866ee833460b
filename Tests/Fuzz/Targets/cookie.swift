// Fuzz target: the `Cookie` request header (Encoding, `CookieHeader.pairs`, RFC 6265 §5.4). Lines of the
// input are separate `Cookie` fields.
import Encoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let pairs = CookieHeader.pairs(fields)
    for (name, value) in pairs where name.contains(";") || value.contains(";") {
        fatalError("a cookie pair holds the separator: \(name)=\(value)")
    }
    return 0
}
