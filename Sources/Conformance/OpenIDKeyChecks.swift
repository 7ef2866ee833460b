import Crypto
import Encoding
import Fetch
import Foundation

/// The JWKS checks (docs/protocol.md#jwks): what a relying party needs from `ISSUER/.well-known/jwks.json`
/// to verify the server's ID tokens. Each verdict is pure, over the observed answer.
enum KeyVerdicts {
    /// 200 JSON with a non-empty `keys` array of objects (RFC 7517 §5).
    static func served(_ observed: Observed) -> Outcome {
        let keys = observed.json?["keys"] as? [[String: Any]]
        return .expect(
            observed.status == 200 && observed.isJSON && !(keys ?? []).isEmpty,
            Verdicts.describe(observed) + (keys.map { ", \($0.count) keys" } ?? ", no keys array"))
    }

    /// `Cache-Control: public, max-age=300` (docs/protocol.md#jwks): the cache time rotation waits for.
    static func cacheHeader(_ observed: Observed) -> Outcome {
        let value = observed.header("Cache-Control") ?? "none"
        return .expect(value == "public, max-age=300", "Cache-Control: \(value)")
    }

    /// Every key has a `kid` and no two share one (RFC 7517 §4.5).
    static func uniqueKids(_ keys: [[String: Any]]) -> Outcome {
        let kids = keys.compactMap { $0["kid"] as? String }
        return .expect(
            kids.count == keys.count && Set(kids).count == kids.count,
            "\(kids.count) kids of \(keys.count) keys, \(Set(kids).count) distinct")
    }

    /// Every key says `use: "sig"` and an `alg` of RS256 or ES256 matching its `kty` (RFC 7517 §4.2, §4.4).
    static func useAndAlg(_ keys: [[String: Any]]) -> Outcome {
        let wrong = keys.filter { key in
            let pair = (key["kty"] as? String, key["alg"] as? String)
            return key["use"] as? String != "sig" || !(pair == ("RSA", "RS256") || pair == ("EC", "ES256"))
        }
        return .expect(wrong.isEmpty, wrong.isEmpty ? "every key: use sig, RS256/RSA or ES256/EC" : "\(wrong.count) keys otherwise")
    }

    /// RSA moduli of 2048 bits or more with an exponent (RFC 7518 §3.3, §6.3.1); canonical base64url.
    static func rsaSizes(_ keys: [[String: Any]]) -> Outcome {
        let rsa = keys.filter { $0["kty"] as? String == "RSA" }
        let bits = rsa.map { key -> Int in
            guard let n = Base64URL.decodeCanonical(key["n"] as? String ?? ""), let first = n.first, first != 0,
                Base64URL.decodeCanonical(key["e"] as? String ?? "")?.isEmpty == false
            else { return 0 }
            return n.count * 8 - first.leadingZeroBitCount
        }
        return .expect(!rsa.isEmpty && bits.allSatisfy { $0 >= 2048 }, "RSA modulus bits: \(bits.map(String.init).joined(separator: ", "))")
    }

    /// EC keys on P-256 with 32-byte `x` and `y` (RFC 7518 §3.4, §6.2.1).
    static func ecCurves(_ keys: [[String: Any]]) -> Outcome {
        let ec = keys.filter { $0["kty"] as? String == "EC" }
        let good = ec.filter { key in
            key["crv"] as? String == "P-256" && Base64URL.decodeCanonical(key["x"] as? String ?? "")?.count == 32
                && Base64URL.decodeCanonical(key["y"] as? String ?? "")?.count == 32
        }
        return .expect(!ec.isEmpty && good.count == ec.count, "\(good.count) of \(ec.count) EC keys on P-256 with 32-byte coordinates")
    }

    /// No private member (RFC 7518 §6.2.2, §6.3.2: `d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`).
    static func noPrivateMembers(_ keys: [[String: Any]]) -> Outcome {
        let names: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        let leaking = keys.filter { !names.isDisjoint(with: $0.keys) }
        return .expect(leaking.isEmpty, leaking.isEmpty ? "public members only" : "\(leaking.count) keys carry private members")
    }

    /// Both algorithms published, each with its current and its next key (docs/protocol.md#jwks).
    static func bothAlgorithmsWithANextKey(_ keys: [[String: Any]]) -> Outcome {
        let rs = keys.filter { $0["alg"] as? String == "RS256" }.count
        let es = keys.filter { $0["alg"] as? String == "ES256" }.count
        return .expect(rs >= 2 && es >= 2, "RS256: \(rs) keys, ES256: \(es) keys")
    }

    /// The JWS's signature verifies with the published key its header's `kid` names, under that key's own
    /// `alg` (RFC 7515 §5.2; OpenID Connect Core §3.1.3.7 steps 6–7): another key's signature, an unknown
    /// kid or an `alg` other than the key's fails.
    static func signature(_ compact: String, keys: [[String: Any]]) -> Outcome {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decodeCanonical(String(parts[0])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let signature = Base64URL.decodeCanonical(String(parts[2]))
        else { return .fail("not a JWS compact serialization") }
        let kid = header["kid"] as? String
        guard let jwk = keys.first(where: { kid != nil && $0["kid"] as? String == kid }) else {
            return .fail(kid == nil ? "no kid in the header" : "the kid is not in the JWKS")
        }
        guard let alg = header["alg"] as? String, alg == jwk["alg"] as? String else {
            return .fail("header alg \(header["alg"] as? String ?? "none"), key alg \(jwk["alg"] as? String ?? "none")")
        }
        func bytes(_ name: String) -> [UInt8] { Base64URL.decodeCanonical(jwk[name] as? String ?? "") ?? [] }
        let parameters: Crypto.PublicKeyParameters =
            alg == "RS256" ? .rsa(n: bytes("n"), e: bytes("e")) : .p256(x: bytes("x"), y: bytes("y"))
        guard alg == "RS256" || alg == "ES256", let key = Crypto.VerifyingKey(parameters) else {
            return .fail("the JWKS key for this kid cannot be read as \(alg)")
        }
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        return .expect(key.verify(signature, of: signed), "\(alg) signature with the key its kid names")
    }
}

extension Suite {
    /// `GET /.well-known/jwks.json`: the shape, the kids, the key sizes and curves, `use`/`alg`, no private
    /// member, the cache header.
    func openIDKeyChecks() throws(AgentError) {
        let observed = try agent.send(.get, "/.well-known/jwks.json", headers: [("Accept", "application/json")])
        record("RFC 7517 §5", "jwks: served at /.well-known/jwks.json as a JSON key set", KeyVerdicts.served(observed))
        record("protocol.md#jwks", "jwks: Cache-Control public, max-age=300", KeyVerdicts.cacheHeader(observed))
        guard let keys = observed.json?["keys"] as? [[String: Any]], !keys.isEmpty else { return }
        record("RFC 7517 §4.5", "jwks: every key has a kid, none repeated", KeyVerdicts.uniqueKids(keys))
        record("RFC 7517 §4.2, §4.4", "jwks: use sig and alg RS256 or ES256 on every key", KeyVerdicts.useAndAlg(keys))
        record("RFC 7518 §3.3", "jwks: RSA keys of 2048 bits or more", KeyVerdicts.rsaSizes(keys))
        record("RFC 7518 §3.4", "jwks: EC keys on P-256", KeyVerdicts.ecCurves(keys))
        record("RFC 7518 §6.3.2", "jwks: no private key member", KeyVerdicts.noPrivateMembers(keys))
        record("protocol.md#jwks", "jwks: each algorithm's current and next key published", KeyVerdicts.bothAlgorithmsWithANextKey(keys))
    }
}
