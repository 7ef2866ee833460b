import CBOR
import Encoding
import Testing

/// `CBOR.encode`: shortest heads (RFC 8949 §4.2.1), definite lengths, and what it writes decodes back.
@Suite struct CBOREncodeTests {
    @Test(arguments: [
        (CBORValue.unsigned(0), [UInt8]([0x00])), (.unsigned(23), [0x17]), (.unsigned(24), [0x18, 0x18]),
        (.unsigned(1000), [0x19, 0x03, 0xe8]), (.negative(0), [0x20]), (.negative(256), [0x39, 0x01, 0x00]),
        (.bytes([1, 2]), [0x42, 0x01, 0x02]), (.text("a"), [0x61, 0x61]), (.bool(true), [0xf5]), (.null, [0xf6]),
        (.map([.init(.int(1), .int(2)), .init(.int(3), .int(-7))]), [0xa2, 0x01, 0x02, 0x03, 0x26]),
        (.array([.unsigned(1), .array([])]), [0x82, 0x01, 0x80]),
    ])
    func encodesRFC8949Examples(value: CBORValue, bytes: [UInt8]) throws {
        #expect(CBOR.encode(value) == bytes)
        #expect(try CBOR.decode(bytes) == value)
    }

    @Test func refusesWhatIsNeverStored() {
        #expect(CBOR.encode(.float(1.5)) == nil)
        #expect(CBOR.encode(.map([.init(.int(1), .tagged(1, .unsigned(0)))])) == nil)
    }
}
