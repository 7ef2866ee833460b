// Fuzz target: the client's `state` as it arrives in a query (form-decoded, then `OAuthState`,
// docs/protocol.md "state").
import Authorize
import Encoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let decoded = try? FormURLEncoding.decodeComponent(bytes), let state = OAuthState(decoded: decoded) {
        guard OAuthState.lengthRange.contains(state.value.unicodeScalars.count) else { fatalError("state length") }
    }
    _ = OAuthState(decoded: String(decoding: bytes, as: UTF8.self))
    return 0
}
