// Fuzz target: the email normaliser (Authorize, `EmailAddress.parse`) with the real IDNA conversion
// (libidn2, through the IDNA module), as sign-up, sign-in and the admin API call it.
import Authorize
import IDNA

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if case .success(let address) = EmailAddress.parse(text, domainToASCII: IDNA.toASCII) {
        // A normalised address normalises to itself.
        guard case .success(let again) = EmailAddress.parse(address.key, domainToASCII: IDNA.toASCII),
            again.key == address.key
        else { fatalError("email normalisation is not idempotent") }
    }
    return 0
}
