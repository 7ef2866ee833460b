// Fuzz target: a `DPoP` header as it arrives (docs/dpop.md, "The proof"): `DPoPProofRules.parse` (the
// compact split, the header's `typ`, `alg` and `jwk`, the claims) before any signature check, then the
// whole rule set with a signature check that accepts everything, so the time, URL, `ath` and nonce rules
// meet every parsed proof; and `DPoPURL.normalised` on the raw text.
import Authorize
import Encoding
import Foundation

let rules = DPoPProofRules(checkSignature: { _, _, _, _ in true }, sha256: { Array($0.prefix(32)) })

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let parsed = try? DPoPProofRules.parse(text) {
        // A parsed proof has exactly three parts, so its signing input is the first two.
        guard parsed.signingInput.count < text.utf8.count else { fatalError("signing input longer than the proof") }
        guard parsed.key.fits(parsed.algorithm) else { fatalError("a key that does not fit its algorithm was parsed") }
        guard parsed.key.thumbprintInput.count < 2048 else { fatalError("a thumbprint input longer than any key") }
        let expectation = DPoPExpectation(method: parsed.method, url: parsed.url, accessToken: "zat_x")
        let now = Date(timeIntervalSince1970: Double(parsed.issuedAt))
        _ = try? rules.verify(text, expecting: expectation, nonce: .required(accepts: { $0 == "n" }), now: now)
    }
    if let normalised = DPoPURL.normalised(text), DPoPURL.normalised(normalised) != normalised {
        fatalError("normalising twice changes the URL")
    }
    return 0
}
