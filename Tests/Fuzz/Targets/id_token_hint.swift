// Fuzz target: an `id_token_hint` as it arrives in a start or logout URL (form-decoded), through the
// server's own parsing before any signature check: the JWS compact split and header (`JWS.parse`) and the
// claims read from a payload (`IDTokenHint.fromVerifiedPayload`); docs/protocol.md#id-token-hint-verification.
import Authorize
import Encoding

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = (try? FormURLEncoding.decodeComponent(bytes)) ?? String(decoding: bytes, as: UTF8.self)
    if let parsed = JWS.parse(text) {
        // A parsed JWS has exactly three parts, so its signing input is the first two.
        guard parsed.signingInput.count < text.utf8.count else { fatalError("signing input longer than the token") }
        _ = IDTokenHint.fromVerifiedPayload(parsed.payload, issuer: "https://auth.example.com")
    }
    // The bytes as a payload too: the claims reader meets whatever a key's owner signed.
    _ = IDTokenHint.fromVerifiedPayload(bytes, issuer: "https://auth.example.com")
    return 0
}
