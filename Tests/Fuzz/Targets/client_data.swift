// Fuzz target: `clientDataJSON` (`CollectedClientData`, WebAuthn Level 3 §5.8.1).
import Encoding
import WebAuthn

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let client = try? CollectedClientData(json: bytes) {
        // An accepted challenge is canonical base64url: it encodes back to what decodes to it.
        guard Base64URL.decodeCanonical(Base64URL.encode(client.challenge)) == client.challenge else { fatalError("challenge") }
        guard (try? JSONValue.parse(bytes)) != nil else { fatalError("accepted JSON that does not parse") }
    }
    return 0
}
