import Encoding
import Testing

private func pairs(_ raw: String) throws(FormURLEncoding.DecodingError) -> [String] {
    try FormURLEncoding.decode(raw).map { "\($0.name)=\($0.value)" }
}

@Suite struct FormURLEncodingTests {
    @Test func decodesPlusAsSpace() throws {
        #expect(try pairs("q=a+b") == ["q=a b"])
    }

    @Test func decodesEscapedPlusAsPlus() throws {
        #expect(try pairs("q=a%2Bb&r=%2b") == ["q=a+b", "r=+"])
    }

    @Test func keepsDuplicatesInOrder() throws {
        #expect(try pairs("a=1&b=2&a=3&a=1") == ["a=1", "b=2", "a=3", "a=1"])
    }

    @Test func skipsEmptySegmentsAndTreatsBareNamesAsEmptyValues() throws {
        #expect(try pairs("a=1&&b&=x&c=") == ["a=1", "b=", "=x", "c="])
        #expect(try pairs("") == [])
    }

    @Test func splitsOnFirstEqualsOnly() throws {
        #expect(try pairs("state=a=b%3Dc") == ["state=a=b=c"])
    }

    @Test(arguments: ["a=%G1", "a=%4", "a=%", "a=%%41", "%zz=1", "a=%4G"])
    func rejectsMalformedPercentEscapes(_ raw: String) {
        #expect(throws: FormURLEncoding.DecodingError.malformedPercentEscape) { try FormURLEncoding.decode(raw) }
    }

    @Test(arguments: ["a=%C3%28", "a=%FF", "a=%ED%A0%80", "%C0%AF=1"])
    func rejectsInvalidUTF8(_ raw: String) {
        #expect(throws: FormURLEncoding.DecodingError.invalidUTF8) { try FormURLEncoding.decode(raw) }
    }

    @Test(arguments: ["a=%00", "a=x%00y", "%00=1", "a=\u{0}", "a=1&b=%00"])
    func rejectsNULWhichNoFieldAccepts(_ raw: String) {
        #expect(throws: FormURLEncoding.DecodingError.nulCharacter) { try FormURLEncoding.decode(raw) }
    }

    @Test func storableTextRefusesOnlyNUL() {
        #expect(StorableText.isStorable("é\u{1}\u{7F}\u{FFFF}\u{10FFFF}"))
        #expect(!StorableText.isStorable("a\u{0}"))
        #expect(!StorableText.isStorable(utf8: [0x61, 0x00]))
    }

    @Test func percentEncodesEverythingButUnreserved() {
        #expect(FormURLEncoding.percentEncodeUnreserved("a b&c=d+e%f#g") == "a%20b%26c%3Dd%2Be%25f%23g")
        #expect(FormURLEncoding.percentEncodeUnreserved("AZaz09-._~") == "AZaz09-._~")
        #expect(FormURLEncoding.percentEncodeUnreserved("é/?") == "%C3%A9%2F%3F")
    }

    @Test func roundTripsNonASCII() throws {
        let value = "café 😀 中文 + & = % #"
        let encoded = FormURLEncoding.encode([("state", value), ("x", "")])
        #expect(encoded.utf8.allSatisfy { $0 < 0x80 })
        let decoded = try FormURLEncoding.decode(encoded)
        #expect(decoded.count == 2)
        #expect(decoded[0].name == "state" && decoded[0].value == value)
        #expect(decoded[1].name == "x" && decoded[1].value == "")
    }

    @Test func rawBytesThatAreNotUTF8AreRefusedAsTheirEscapeIs() throws {
        #expect(throws: FormURLEncoding.DecodingError.invalidUTF8) { try FormURLEncoding.decode(bytes: Array("a=x".utf8) + [0xFF, 0xFE]) }
        #expect(throws: FormURLEncoding.DecodingError.invalidUTF8) { try FormURLEncoding.decode(bytes: [0xFF] + Array("=1".utf8)) }
        #expect(throws: FormURLEncoding.DecodingError.invalidUTF8) { try FormURLEncoding.decode(bytes: Array("a=%FF".utf8)) }
        let decoded = try FormURLEncoding.decode(bytes: Array("a=".utf8) + [0xC3, 0xA9] + Array("&b=%C3%A9".utf8))
        #expect(decoded.map(\.value) == ["\u{E9}", "\u{E9}"])
    }
}
