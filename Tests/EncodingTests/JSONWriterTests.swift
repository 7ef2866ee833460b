import Encoding
import Testing

@Suite struct JSONWriterTests {
    @Test func writesStringsNumbersAndObjectsInOrder() {
        let value: JSONValue = ["b": "x\"\\\n\u{01}é/", "a": 42, "c": [true, nil, -7], "d": 1.5]
        #expect(String(decoding: JSONWriter.encode(value), as: UTF8.self) == #"{"b":"x\"\\\n\u0001é/","a":42,"c":[true,null,-7],"d":1.5}"#)
    }

    @Test func timestampsAreRFC3339UTCWithSeconds() {
        #expect(Timestamp.rfc3339(secondsSinceEpoch: 0) == "1970-01-01T00:00:00Z")
        #expect(Timestamp.rfc3339(secondsSinceEpoch: 1_796_037_376) == "2026-11-30T11:16:16Z")
        #expect(Timestamp.rfc3339(secondsSinceEpoch: 951_782_400) == "2000-02-29T00:00:00Z")
        #expect(Timestamp.rfc3339(secondsSinceEpoch: -1) == "1969-12-31T23:59:59Z")
    }
}
