import Encoding
import Testing

/// RFC 4648 §10 test vectors (padding omitted, as `otpauth://` URIs carry them).
@Suite struct Base32Tests {
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI"),
    ]

    @Test(arguments: vectors) func encodesAndDecodesRFC4648Vectors(plain: String, encoded: String) {
        #expect(Base32.encode(Array(plain.utf8)) == encoded)
        #expect(Base32.decode(encoded) == Array(plain.utf8))
        #expect(Base32.decode(encoded.lowercased()) == Array(plain.utf8))
    }

    @Test func refusesCharactersOutsideTheAlphabet() {
        #expect(Base32.decode("MZXW1") == nil)
        #expect(Base32.decode("MZ!W") == nil)
    }
}
