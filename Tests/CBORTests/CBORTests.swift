import CBOR
import Encoding
import Testing

/// Bytes from hex digits (test fixtures only).
func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// The reason `CBOR.decode` gives for `bytes`, or nil when it decodes.
func refusal(_ bytes: [UInt8]) -> CBORDecodingError.Reason? {
    do {
        _ = try CBOR.decode(bytes)
        return nil
    } catch {
        return error.reason
    }
}

/// libcbor's decoder under the limits of docs/passkeys.md ("CBOR"), with examples from RFC 8949
/// Appendix A.
@Suite struct CBORTests {
    @Test(arguments: [
        ("00", CBORValue.unsigned(0)),
        ("1864", .unsigned(100)),
        ("1bffffffffffffffff", .unsigned(UInt64.max)),
        ("20", .negative(0)),
        ("3903e7", .negative(999)),
        ("4401020304", .bytes([1, 2, 3, 4])),
        ("6449455446", .text("IETF")),
        ("62c3bc", .text("ü")),
        ("f4", .bool(false)),
        ("f5", .bool(true)),
        ("f6", .null),
        ("f7", .undefined),
        ("f93c00", .float(1.0)),
        ("fb3ff199999999999a", .float(1.1)),
        ("c11a514b67b0", .tagged(1, .unsigned(1_363_896_240))),
        ("8301820203820405", .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        ("80", .array([])),
        ("a0", .map([])),
        ("a201020304", .map([.init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .unsigned(4))])),
    ])
    func decodesRFC8949Examples(encoded: String, expected: CBORValue) throws {
        #expect(try CBOR.decode(hex(encoded)) == expected)
    }

    @Test func mapsKeepTheirOrderAndAnswerByKey() throws {
        let value = try CBOR.decode(hex("a3036141016142200a"))
        #expect(value == .map([.init(.unsigned(3), .text("A")), .init(.unsigned(1), .text("B")), .init(.negative(0), .unsigned(10))]))
        #expect(value[.int(-1)] == .unsigned(10))
        #expect(value[.int(2)] == nil)
        #expect(CBORValue.negative(6).integer == -7)
    }

    @Test func refusesBytesAfterTheItem() {
        #expect(refusal(hex("0000")) == .trailingBytes)
        #expect(refusal(hex("a0ff")) == .trailingBytes)
    }

    @Test func decodeItemLeavesWhatFollows() throws {
        let bytes = hex("a1010241ff")
        let (value, length) = try CBOR.decodeItem(bytes[...])
        #expect(value == .map([.init(.unsigned(1), .unsigned(2))]))
        #expect(length == 3)
        let (second, secondLength) = try CBOR.decodeItem(bytes[3...])
        #expect(second == .bytes([0xFF]))
        #expect(secondLength == 2)
    }

    @Test(arguments: [
        "5f42010243030405ff",  // indefinite byte string
        "7f657374726561646d696e67ff",  // indefinite text string
        "9f018202039f0405ffff",  // indefinite array
        "bf61610161629f0203ffff",  // indefinite map
        "ff",  // a lone break
    ])
    func refusesIndefiniteLengths(encoded: String) {
        #expect(refusal(hex(encoded)) == .indefiniteLength)
    }

    @Test func limitsNestingDepth() throws {
        let sixteen = [UInt8](repeating: 0x81, count: 15) + [0x80]
        #expect(refusal(sixteen) == nil)
        let seventeen = [UInt8](repeating: 0x81, count: 16) + [0x80]
        #expect(refusal(seventeen) == .tooDeep)
        #expect(refusal([UInt8](repeating: 0x81, count: 60_000) + [0x00]) == .tooDeep)
        #expect(refusal([UInt8](repeating: 0xC1, count: 17) + [0x00]) == .tooDeep)
    }

    @Test func refusesDuplicateMapKeys() {
        #expect(refusal(hex("a201020103")) == .duplicateMapKey)
        #expect(refusal(hex("a2616101616102")) == .duplicateMapKey)
        #expect(refusal(hex("a2820102008201020a")) == .duplicateMapKey)
        #expect(refusal(hex("a201022003")) == nil)
    }

    @Test(arguments: ["18", "19ff", "430102", "a2010203", "8301", "62c3", "c1"])
    func refusesTruncatedItems(encoded: String) {
        #expect(refusal(hex(encoded)) == .truncated)
    }

    @Test func refusesMalformedHeads() {
        #expect(refusal(hex("1c")) == .malformed)
        #expect(refusal(hex("fc")) == .malformed)
    }

    @Test func refusesTextThatIsNotUTF8() {
        #expect(refusal(hex("62c328")) == .invalidUTF8)
        #expect(refusal(hex("63eda080")) == .invalidUTF8)
    }

    @Test func refusesEmptyAndOversizedInput() throws {
        #expect(refusal([]) == .empty)
        let large = [0x5A, 0x00, 0x01, 0x00, 0x00] + [UInt8](repeating: 0, count: 65_536)
        #expect(refusal(large) == .tooLarge)
        let fits = [0x5A, 0x00, 0x00, 0xFF, 0xFB] + [UInt8](repeating: 7, count: 65_531)
        #expect(try CBOR.decode(fits) == .bytes([UInt8](repeating: 7, count: 65_531)))
    }

    @Test func errorsNameTheOffset() {
        do {
            _ = try CBOR.decode(hex("820102ff"))
            Issue.record("decoded trailing bytes")
        } catch {
            #expect(error == CBORDecodingError(.trailingBytes, offset: 3))
            #expect(error.description == "The CBOR data is not valid: trailingBytes at byte 3.")
        }
    }
}
