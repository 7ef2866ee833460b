import Testing

@testable import Conformance

/// The JWKS verdicts of `zevauth-conformance` on hand-made key sets: each rule can fail.
@Suite struct KeyVerdictTests {
    static var rsa: [String: Any] {
        [
            "kty": "RSA", "kid": "r1", "use": "sig", "alg": "RS256", "n": "w" + String(repeating: "A", count: 341), "e": "AQAB",
        ]
    }
    static var ec: [String: Any] {
        [
            "kty": "EC", "kid": "e1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": String(repeating: "A", count: 43),
            "y": String(repeating: "B", count: 42) + "A",
        ]
    }

    @Test func aGoodSetPasses() {
        let keys = [Self.rsa, Self.ec]
        #expect(KeyVerdicts.uniqueKids(keys).verdict == .pass)
        #expect(KeyVerdicts.useAndAlg(keys).verdict == .pass)
        #expect(KeyVerdicts.rsaSizes(keys).verdict == .pass)
        #expect(KeyVerdicts.ecCurves(keys).verdict == .pass)
        #expect(KeyVerdicts.noPrivateMembers(keys).verdict == .pass)
        #expect(KeyVerdicts.cacheHeader(Observed(status: 200, headers: [("Cache-Control", "public, max-age=300")])).verdict == .pass)
    }

    @Test func eachBrokenRuleFails() {
        var small = Self.rsa
        small["n"] = "w" + String(repeating: "A", count: 169)
        #expect(KeyVerdicts.rsaSizes([small]).verdict == .fail)
        var curve = Self.ec
        curve["crv"] = "P-384"
        #expect(KeyVerdicts.ecCurves([curve]).verdict == .fail)
        var encryption = Self.rsa
        encryption["use"] = "enc"
        #expect(KeyVerdicts.useAndAlg([encryption]).verdict == .fail)
        var mismatched = Self.ec
        mismatched["alg"] = "RS256"
        #expect(KeyVerdicts.useAndAlg([mismatched]).verdict == .fail)
        var leaking = Self.ec
        leaking["d"] = "AA"
        #expect(KeyVerdicts.noPrivateMembers([leaking]).verdict == .fail)
        #expect(KeyVerdicts.uniqueKids([Self.rsa, Self.rsa]).verdict == .fail)
        #expect(KeyVerdicts.bothAlgorithmsWithANextKey([Self.rsa, Self.ec]).verdict == .fail)
        #expect(KeyVerdicts.cacheHeader(Observed(status: 200, headers: [("Cache-Control", "no-store")])).verdict == .fail)
    }
}
