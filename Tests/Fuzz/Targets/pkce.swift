// Fuzz target: PKCE `code_verifier` and `code_challenge` (PKCE, RFC 7636 §4.1, §4.2).
import Encoding
import PKCE

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    if let verifier = CodeVerifier(text) {
        guard CodeVerifier.lengthRange.contains(verifier.value.count) else { fatalError("verifier length") }
    }
    if let challenge = CodeChallenge(text), challenge.digest.count != 32 { fatalError("challenge digest") }
    _ = Base64URL.decodeCanonical(text)
    return 0
}
