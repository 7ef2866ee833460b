// Fuzz target: WebAuthn authenticator data (`AuthenticatorData`, WebAuthn Level 3 §6.1) and attestation
// objects (`AttestationObject`, §6.5), with libcbor's decoder as in production.
import CBOR
import Encoding
import WebAuthn

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let parsed = try? AuthenticatorData(bytes, decodeCBORItem: CBOR.decodeItem) {
        guard parsed.bytes == bytes, parsed.rpIDHash.count == 32 else { fatalError("authenticator data fields") }
        if (parsed.attestedCredential != nil) != parsed.flags.contains(.attestedCredentialData) { fatalError("AT flag") }
        if (parsed.extensions != nil) != parsed.flags.contains(.extensionData) { fatalError("ED flag") }
        if let credential = parsed.attestedCredential, credential.aaguid.count != 16 { fatalError("AAGUID length") }
    }
    if let attestation = try? AttestationObject(bytes, decodeCBORItem: CBOR.decodeItem),
        attestation.authenticatorData.bytes.count < 37
    {
        fatalError("short authData accepted")
    }
    return 0
}
