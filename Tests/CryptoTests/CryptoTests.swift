import Crypto
import Encoding
import Testing

private func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

@Suite struct CryptoTests {
    @Test func sha256MatchesFIPSVectors() {
        #expect(
            Crypto.hex(Crypto.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Crypto.hex(Crypto.sha256([UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Crypto.hexSHA256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacSHA256MatchesRFC4231Case1() {
        let mac = Crypto.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Crypto.hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func hmacSHA256MatchesRFC4231Case2() {
        let mac = Crypto.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Crypto.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test(arguments: [1, 16, 32, 64, 1000])
    func randomBytesHaveTheRequestedLength(_ count: Int) throws {
        #expect(try Crypto.randomBytes(count).count == count)
    }

    @Test func randomBytesDoNotRepeat() throws {
        var seen: Set<[UInt8]> = []
        for _ in 0..<1000 { seen.insert(try Crypto.randomBytes(16)) }
        #expect(seen.count == 1000)
    }

    @Test func mintedTokensArePrefixPlus43Base64URLCharacters() throws {
        let token = try Crypto.mintToken(prefix: "hoc_")
        #expect(token.hasPrefix("hoc_"))
        let body = String(token.dropFirst(4))
        #expect(body.count == 43)
        #expect(Base64URL.decodeCanonical(body)?.count == 32)
        #expect(try Crypto.mintToken(prefix: "hoc_") != token)
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(Crypto.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(Crypto.constantTimeEquals([UInt8](), [UInt8]()))
        #expect(!Crypto.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!Crypto.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!Crypto.constantTimeEquals([UInt8](), [0] as [UInt8]))
    }

    @Test func pkceS256MatchesRFC7636AppendixB() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(Base64URL.encode(Crypto.sha256(Array(verifier.utf8))) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func hexIsLowerCase() {
        #expect(Crypto.hex(bytes(hex: "00ff10ab")) == "00ff10ab")
        #expect(Crypto.hex([0xAB, 0xCD]) == "abcd")
    }
}
