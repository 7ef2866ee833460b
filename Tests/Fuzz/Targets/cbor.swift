// Fuzz target: CBOR through libcbor's streaming decoder (`CBOR.decode`, `CBOR.decodeItem`) and COSE keys
// read from what decodes (`COSEKey(cbor:)`) (docs/passkeys.md, "CBOR" and "COSE keys").
import CBOR
import Encoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let item = try? CBOR.decodeItem(bytes[...]) {
        let (value, length) = item
        guard length >= 1, length <= bytes.count else { fatalError("item length") }
        let whole = try? CBOR.decode(bytes)
        // Compared by presence, not value: a NaN float is not equal to itself.
        if length == bytes.count, whole == nil { fatalError("decode refused what decodeItem read whole") }
        if length < bytes.count, whole != nil { fatalError("trailing bytes accepted") }
        if let key = try? COSEKey(cbor: value), (try? COSEKey(cbor: key.cbor)) != key { fatalError("COSE key round trip") }
    }
    return 0
}
