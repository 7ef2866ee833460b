import Encoding
import Testing

@Suite struct Base64URLTests {
    /// RFC 4648 §10 test vectors, without `=` padding.
    static let rfc4648Vectors: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: rfc4648Vectors)
    func encodesRFC4648Vectors(_ plain: String, _ encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
    }

    @Test(arguments: rfc4648Vectors)
    func decodesRFC4648Vectors(_ plain: String, _ encoded: String) {
        #expect(Base64URL.decodeCanonical(encoded) == Array(plain.utf8))
    }

    @Test func usesURLSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decodeCanonical("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test func roundTripsEveryByteAndLength() {
        let bytes = (0...255).map { UInt8($0) }
        for length in 0...bytes.count {
            let slice = Array(bytes.prefix(length))
            #expect(Base64URL.decodeCanonical(Base64URL.encode(slice)) == slice)
        }
    }

    @Test(arguments: ["Zg==", "Zm8=", "+_-_", "/_-_", "Zm9v Yg", " Zm9v", "Zm9v\n", "Zm9vY", "Z", "Zm9v%67", "Zé"])
    func rejectsNonCanonicalInput(_ text: String) {
        #expect(Base64URL.decodeCanonical(text) == nil)
    }

    @Test func rejectsNonZeroTrailingBits() {
        #expect(Base64URL.decodeCanonical("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")?.count == 32)
        #expect(Base64URL.decodeCanonical("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN") == nil)
        #expect(Base64URL.decodeCanonical("Zg") == [0x66])
        #expect(Base64URL.decodeCanonical("Zh") == nil)
        #expect(Base64URL.decodeCanonical("Zm8") != nil)
        #expect(Base64URL.decodeCanonical("Zm9") == nil)
    }
}
