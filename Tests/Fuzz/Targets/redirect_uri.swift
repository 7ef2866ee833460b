// Fuzz target: redirect URIs as registered and as sent at the start (Authorize, `RedirectURI.parse`,
// docs/protocol.md "Which redirect URIs are accepted").
import Authorize

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let uri) = RedirectURI.parse(text) {
        // A parsed URI is stable: parsing its own text again accepts it.
        guard case .success = RedirectURI.parse(uri.raw) else { fatalError("a parsed redirect URI does not parse again") }
    }
    return 0
}
