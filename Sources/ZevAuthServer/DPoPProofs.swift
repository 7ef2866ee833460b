import Authorize
import Crypto
import Foundation

/// The server's DPoP proof rules: `DPoPProofRules` with OpenSSL's signature check and SHA-256
/// (docs/dpop.md, "The proof").
enum DPoPProofs {
    /// OpenSSL's check of a proof's signature with its own `jwk` (`Crypto.verifyJWS`).
    static let checkSignature: DPoPSignatureCheck = { signature, signingInput, algorithm, key in
        guard let algorithm = Crypto.JWSAlgorithm(rawValue: algorithm.rawValue) else { return false }
        let jwk: Crypto.JWKPublicKey =
            switch key {
            case .ec(let x, let y): .p256(x: x, y: y)
            case .okp(let x): .ed25519(x: x)
            case .rsa(let n, let e): .rsa(n: n, e: e)
            }
        return Crypto.verifyJWS(signature, of: signingInput, algorithm: algorithm, key: jwk)
    }

    /// The rules with OpenSSL behind them.
    static let rules = DPoPProofRules(checkSignature: checkSignature, sha256: { Crypto.sha256($0) })
}
