import Crypto
import Testing

/// RFC 6238 Appendix B (SHA-1 rows), AES-256-GCM sealing, and HMAC-SHA-1.
@Suite struct TOTPAndAESGCMTests {
    /// The SHA-1 seed of RFC 6238 Appendix B: the ASCII string "12345678901234567890".
    static let seed = Array("12345678901234567890".utf8)

    /// (Unix time, the 8-digit TOTP of Appendix B's SHA-1 column).
    static let vectors: [(Double, String)] = [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
        (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ]

    @Test(arguments: vectors) func matchesAppendixBWithEightDigits(time: Double, expected: String) {
        #expect(TOTP.code(secret: Self.seed, step: TOTP.step(atUnixSeconds: time), digits: 8) == expected)
    }

    @Test(arguments: vectors) func truncatesToSixDigitsForTheProduct(time: Double, expected: String) {
        // Six digits are the same dynamic truncation modulo 10^6: the last six of the eight.
        #expect(TOTP.code(secret: Self.seed, step: TOTP.step(atUnixSeconds: time)) == String(expected.suffix(6)))
    }

    @Test func acceptsOneStepOfDriftAndNoMore() {
        let time = 1_111_111_111.0
        let step = TOTP.step(atUnixSeconds: time)
        for offset in [-1, 0, 1] as [Int64] {
            let code = TOTP.code(secret: Self.seed, step: step + offset)
            #expect(TOTP.matchingStep(secret: Self.seed, code: code, atUnixSeconds: time) == step + offset)
        }
        for offset in [-2, 2] as [Int64] {
            let code = TOTP.code(secret: Self.seed, step: step + offset)
            #expect(TOTP.matchingStep(secret: Self.seed, code: code, atUnixSeconds: time) == nil)
        }
        #expect(TOTP.matchingStep(secret: Self.seed, code: "12345", atUnixSeconds: time) == nil)
        #expect(TOTP.matchingStep(secret: Self.seed, code: "12345a", atUnixSeconds: time) == nil)
    }

    @Test func hmacSHA1MatchesRFC2202() {
        // RFC 2202 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mac = Crypto.hmacSHA1(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Crypto.hex(mac) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
    }

    @Test func aesGCMRoundTripsAndUsesAFreshNonce() throws {
        let key = try Crypto.randomBytes(32)
        let secret = Array("a TOTP secret of twenty".utf8)
        let first = try Crypto.aesGCMSeal(key: key, plaintext: secret, associatedData: Array("user-1".utf8))
        let second = try Crypto.aesGCMSeal(key: key, plaintext: secret, associatedData: Array("user-1".utf8))
        #expect(first.count == 12 + secret.count + 16)
        #expect(first != second)
        #expect(try Crypto.aesGCMOpen(key: key, sealed: first, associatedData: Array("user-1".utf8)) == secret)
        #expect(try Crypto.aesGCMOpen(key: key, sealed: second, associatedData: Array("user-1".utf8)) == secret)
    }

    @Test func aesGCMDetectsTamperingWrongKeyAndWrongAssociatedData() throws {
        let key = try Crypto.randomBytes(32)
        let sealed = try Crypto.aesGCMSeal(key: key, plaintext: Array("secret".utf8), associatedData: Array("user-1".utf8))
        for index in [0, 12, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: Crypto.SealError.authenticationFailed) {
                try Crypto.aesGCMOpen(key: key, sealed: tampered, associatedData: Array("user-1".utf8))
            }
        }
        #expect(throws: Crypto.SealError.authenticationFailed) {
            try Crypto.aesGCMOpen(key: key, sealed: sealed, associatedData: Array("user-2".utf8))
        }
        #expect(throws: Crypto.SealError.authenticationFailed) {
            try Crypto.aesGCMOpen(key: try Crypto.randomBytes(32), sealed: sealed, associatedData: Array("user-1".utf8))
        }
        #expect(throws: Crypto.SealError.authenticationFailed) {
            try Crypto.aesGCMOpen(key: key, sealed: Array(sealed.prefix(20)), associatedData: [])
        }
        #expect(throws: Crypto.SealError.badKey) {
            try Crypto.aesGCMSeal(key: Array(key.prefix(16)), plaintext: [1], associatedData: [])
        }
    }
}
