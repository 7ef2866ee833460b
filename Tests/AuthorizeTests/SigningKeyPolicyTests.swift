import Encoding
import Foundation
import Testing

@testable import Authorize

/// The signing keys' lifecycle rules and the JWS compact serialization, pure (docs/operations.md, "Signing
/// keys"; RFC 7515 §7.1).
@Suite struct SigningKeyPolicyTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func key(_ kid: String, _ algorithm: SigningAlgorithm, _ state: SigningKeyState, created: Date = t0, retires: Date? = nil)
        -> SigningKeyRecord
    {
        SigningKeyRecord(
            kid: kid, algorithm: algorithm, state: state, publicJWK: "{}", sealedPrivateKey: "", createdAt: created,
            activatesAt: state == .next ? SigningKeyPolicy.activatesAt(createdAt: created) : created, retiresAt: retires, revokedAt: nil)
    }

    var fresh: [SigningKeyRecord] {
        [key("rc", .rs256, .current), key("rn", .rs256, .next), key("ec", .es256, .current), key("en", .es256, .next)]
    }

    @Test func rotationWaitsUntilEveryNextKeyHasBeenPublishedForTheCacheTime() {
        #expect(SigningKeyPolicy.rotation(fresh, now: Self.t0) == .tooEarly(possibleAt: Self.t0.addingTimeInterval(300)))
        #expect(
            SigningKeyPolicy.rotation(fresh, now: Self.t0.addingTimeInterval(299)) == .tooEarly(possibleAt: Self.t0.addingTimeInterval(300))
        )
        // A younger next key on one algorithm holds back both, until its own time.
        var mixed = fresh
        mixed[3] = key("en", .es256, .next, created: Self.t0.addingTimeInterval(100))
        #expect(
            SigningKeyPolicy.rotation(mixed, now: Self.t0.addingTimeInterval(350)) == .tooEarly(possibleAt: Self.t0.addingTimeInterval(400))
        )
        #expect(
            SigningKeyPolicy.rotation(fresh, now: Self.t0.addingTimeInterval(300))
                == .rotate([
                    .init(algorithm: .rs256, promotedKID: "rn", retiredKID: "rc"),
                    .init(algorithm: .es256, promotedKID: "en", retiredKID: "ec"),
                ]))
    }

    @Test func rotationNeedsACurrentAndANextKeyForEveryAlgorithm() {
        #expect(SigningKeyPolicy.rotation(Array(fresh.prefix(3)), now: Self.t0.addingTimeInterval(1000)) == .incomplete)
        #expect(SigningKeyPolicy.missingStates([], algorithm: .rs256) == [.current, .next])
        #expect(SigningKeyPolicy.missingStates(fresh, algorithm: .es256) == [])
    }

    @Test func retiredKeysArePublishedUntilTheirLastTokenHasExpiredAndRevokedKeysNever() {
        let retiredAt = Self.t0
        let retired = key("rr", .rs256, .retired, retires: SigningKeyPolicy.retiresAt(retiredAt: retiredAt))
        #expect(retired.retiresAt == retiredAt.addingTimeInterval(3600))
        #expect(SigningKeyPolicy.isPublished(retired, now: retiredAt.addingTimeInterval(3599)))
        #expect(!SigningKeyPolicy.isPublished(retired, now: retiredAt.addingTimeInterval(3600)))
        #expect(!SigningKeyPolicy.isPublished(key("x", .es256, .revoked), now: Self.t0))
        let published = SigningKeyPolicy.published(fresh + [retired, key("x", .es256, .revoked)], now: Self.t0)
        #expect(published.map(\.kid) == ["rc", "rn", "rr", "ec", "en"])
    }

    @Test func theHeaderIsAlgKidTypInThatOrder() {
        #expect(
            String(decoding: JWS.protectedHeader(algorithm: .es256, keyID: "k1"), as: UTF8.self)
                == #"{"alg":"ES256","kid":"k1","typ":"JWT"}"#)
        let input = JWS.signingInput(header: Array("{}".utf8), payload: Array("{}".utf8))
        #expect(String(decoding: input, as: UTF8.self) == "e30.e30")
        #expect(JWS.compact(signingInput: input, signature: [0xFF]) == "e30.e30._w")
    }

    @Test func parseTakesACompactSerializationApartAndRefusesEverythingElse() throws {
        let header = JWS.protectedHeader(algorithm: .rs256, keyID: "k1")
        let input = JWS.signingInput(header: header, payload: Array(#"{"sub":"u"}"#.utf8))
        let parsed = try #require(JWS.parse(JWS.compact(signingInput: input, signature: [1, 2, 3])))
        #expect(parsed.algorithm == "RS256" && parsed.keyID == "k1")
        #expect(parsed.signingInput == input && parsed.signature == [1, 2, 3])
        #expect(parsed.payload == Array(#"{"sub":"u"}"#.utf8))
        func b(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
        func b(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
        let h = b(header)
        let one = b([1])
        var bad: [String] = ["", "a", "a.b", "a.b.c.d"]
        bad.append(h + "." + one + ".")
        bad.append(h + "." + one + ".AQ=")
        bad.append(b("[]") + ".e30.AQ")
        bad.append(b(#"{"kid":"k"}"#) + ".e30.AQ")
        bad.append(b(#"{"alg":"RS256","crit":["b64"]}"#) + ".e30.AQ")
        bad.append(h + ".e30.AR")
        for bad in bad {
            #expect(JWS.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func aHintReadsItsClaimsOnlyFromAnObjectForThisIssuer() throws {
        let payload = Array(#"{"iss":"https://a.example","sub":"u","aud":["pk_1","pk_2"],"iat":10,"exp":20,"sid":"s"}"#.utf8)
        let hint = try #require(IDTokenHint.fromVerifiedPayload(payload, issuer: "https://a.example"))
        #expect(hint.audience == ["pk_1", "pk_2"] && hint.sessionID == "s" && hint.expiresAt == Date(timeIntervalSince1970: 20))
        #expect(IDTokenHint.fromVerifiedPayload(payload, issuer: "https://b.example") == nil)
        for bad in [
            #"{"iss":"https://a.example","sub":"u","aud":7,"iat":10,"exp":20}"#,
            #"{"iss":"https://a.example","sub":"u","aud":[],"iat":10,"exp":20}"#,
            #"{"iss":"https://a.example","aud":"a","iat":10,"exp":20}"#,
            #"{"iss":"https://a.example","sub":"u","aud":"a","iat":"10","exp":20}"#,
            #"{"iss":"https://a.example","sub":"u","aud":"a","iat":10,"exp":20,"sid":1}"#, "[]", "not json",
        ] {
            #expect(IDTokenHint.fromVerifiedPayload(Array(bad.utf8), issuer: "https://a.example") == nil, "\(bad)")
        }
    }
}
