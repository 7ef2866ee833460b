import Encoding
import Testing

@discardableResult
private func validate(_ text: String, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
    try JSONValue.parse(Array(text.utf8), maxDepth: maxDepth)
}

private func error(_ bytes: [UInt8], maxDepth: Int = 32) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// The reason a text is refused, with its offset where the case names one (`offset` nil: any).
private struct Rejection: Equatable {
    let reason: JSONParseError.Reason
    let offset: Int?

    static let byteOrderMark = Rejection(reason: .byteOrderMark, offset: nil)
    static let invalidUTF8 = Rejection(reason: .invalidUTF8, offset: nil)
    static let unexpectedEnd = Rejection(reason: .unexpectedEnd, offset: nil)
    static let tooDeep = Rejection(reason: .tooDeep, offset: nil)
    static let emptyInput = Rejection(reason: .emptyInput, offset: nil)
    static func duplicateKey(_ name: String) -> Rejection { Rejection(reason: .duplicateKey(name), offset: nil) }
    static func unexpectedCharacter(offset: Int) -> Rejection { Rejection(reason: .unexpectedCharacter, offset: offset) }
    static func trailingComma(offset: Int) -> Rejection { Rejection(reason: .trailingComma, offset: offset) }
    static func trailingData(offset: Int) -> Rejection { Rejection(reason: .trailingData, offset: offset) }
    static func invalidNumber(offset: Int) -> Rejection { Rejection(reason: .invalidNumber, offset: offset) }
    static func invalidEscape(offset: Int) -> Rejection { Rejection(reason: .invalidEscape, offset: offset) }
    static func loneSurrogate(offset: Int) -> Rejection { Rejection(reason: .loneSurrogate, offset: offset) }
    static func controlCharacterInString(offset: Int) -> Rejection { Rejection(reason: .controlCharacterInString, offset: offset) }
}

private func rejection(_ bytes: [UInt8], maxDepth: Int = 32) -> Rejection? {
    guard let error = error(bytes, maxDepth: maxDepth) else { return nil }
    return Rejection(reason: error.reason, offset: error.offset)
}

private func rejection(_ text: String, maxDepth: Int = 32) -> Rejection? {
    rejection(Array(text.utf8), maxDepth: maxDepth)
}

/// Compares reasons, and offsets where `expected` names one.
private func matches(_ actual: Rejection?, _ expected: Rejection) -> Bool {
    guard let actual else { return false }
    return actual.reason == expected.reason && (expected.offset == nil || expected.offset == actual.offset)
}

/// RFC 8259 as `JSONValue.parse` enforces it: every case the former validator's suite had, then values.
@Suite struct JSONParserTests {
    @Test(arguments: [
        #"{}"#,
        #"[]"#,
        #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
        " \t\r\n{ \"a\" : [ 1 , 2 ] } \t\r\n",
        #"[[[[{"deep":[{}]}]]]]"#,
        #""just a string""#,
        "0", "-0", "12", "-0.5e+10", "1E5", "3.25e-7", "0.0", "1e0",
        "true", "false", "null",
        #""escapes: \" \\ \/ \b \f \n \r \t \u00e9 \u20AC""#,
        #""surrogate pair: \ud83d\ude00""#,
        "\"raw unicode: é € 😀 中文\"",
        #"{"a":1,"A":2,"a ":3}"#,
        #"[{"a":1},{"a":1}]"#,
        #"{"\u0000":1,"":2}"#,
    ])
    func acceptsValidDocuments(_ text: String) throws {
        try validate(text)
    }

    @Test func rejectsByteOrderMark() {
        #expect(matches(rejection([0xEF, 0xBB, 0xBF] + Array("{}".utf8)), .byteOrderMark))
    }

    @Test func rejectsTrailingCommaInObject() {
        #expect(matches(rejection(#"{"a":1,}"#), .trailingComma(offset: 6)))
    }

    @Test func rejectsTrailingCommaInArray() {
        #expect(matches(rejection("[1,]"), .trailingComma(offset: 2)))
        #expect(matches(rejection("[1 , \n ]"), .trailingComma(offset: 3)))
    }

    @Test func rejectsComments() {
        #expect(matches(rejection("// c\n{}"), .unexpectedCharacter(offset: 0)))
        #expect(matches(rejection("/* */ {}"), .unexpectedCharacter(offset: 0)))
        #expect(matches(rejection("{} // c"), .trailingData(offset: 3)))
        #expect(matches(rejection("[1 /* two */, 2]"), .unexpectedCharacter(offset: 3)))
    }

    @Test func rejectsSingleQuotes() {
        #expect(matches(rejection("{'a':1}"), .unexpectedCharacter(offset: 1)))
        #expect(matches(rejection("['a']"), .unexpectedCharacter(offset: 1)))
    }

    @Test func rejectsLeadingZeros() {
        #expect(matches(rejection("01"), .invalidNumber(offset: 0)))
        #expect(matches(rejection("[-01]"), .invalidNumber(offset: 1)))
        #expect(matches(rejection("00"), .invalidNumber(offset: 0)))
    }

    @Test(arguments: ["-", "1.", ".5", "1e", "1e+", "+1", "-.5", "0x10"])
    func rejectsMalformedNumbers(_ text: String) {
        #expect(rejection(text) != nil)
    }

    @Test func rejectsNaNAndInfinity() {
        #expect(matches(rejection("NaN"), .unexpectedCharacter(offset: 0)))
        #expect(matches(rejection("Infinity"), .unexpectedCharacter(offset: 0)))
        #expect(matches(rejection("-Infinity"), .invalidNumber(offset: 0)))
        #expect(matches(rejection("[1,NaN]"), .unexpectedCharacter(offset: 3)))
    }

    @Test func rejectsMisspeltLiterals() {
        #expect(matches(rejection("tru"), .unexpectedEnd))
        #expect(matches(rejection("nul1"), .unexpectedCharacter(offset: 3)))
        #expect(matches(rejection("True"), .unexpectedCharacter(offset: 0)))
    }

    @Test func rejectsRawControlCharacterInString() {
        #expect(matches(rejection([0x22, 0x01, 0x22]), .controlCharacterInString(offset: 1)))
        #expect(matches(rejection("\"a\tb\""), .controlCharacterInString(offset: 2)))
        #expect(matches(rejection("\"line\nbreak\""), .controlCharacterInString(offset: 5)))
    }

    @Test func acceptsEscapedControlCharacter() throws {
        try validate(#""\u0001""#)
    }

    @Test(arguments: [#""\x41""#, #""\a""#, #""\'""#, #""\u12""#, #""\u12G4""#, #""\U0041""#])
    func rejectsInvalidEscapes(_ text: String) {
        #expect(matches(rejection(text), .invalidEscape(offset: 1)))
    }

    @Test func rejectsLoneSurrogates() {
        #expect(matches(rejection(#""\ud800""#), .loneSurrogate(offset: 1)))
        #expect(matches(rejection(#""\udc00""#), .loneSurrogate(offset: 1)))
        #expect(matches(rejection(#""\ud800x""#), .loneSurrogate(offset: 1)))
        #expect(matches(rejection(#""\ud800\u0041""#), .loneSurrogate(offset: 1)))
        #expect(matches(rejection(#""\ud800\ud800""#), .loneSurrogate(offset: 1)))
        #expect(matches(rejection(#""\ude00\ud83d""#), .loneSurrogate(offset: 1)))
    }

    @Test func rejectsDuplicateKeys() {
        #expect(matches(rejection(#"{"a":1,"a":2}"#), .duplicateKey("a")))
        #expect(matches(rejection(#"{"x":{"b":1,"c":2,"b":3}}"#), .duplicateKey("b")))
    }

    @Test func comparesKeysAfterUnescaping() {
        #expect(matches(rejection(#"{"a":1,"\u0061":2}"#), .duplicateKey("a")))
        #expect(matches(rejection(#"{"\/":1,"/":2}"#), .duplicateKey("/")))
        #expect(matches(rejection(#"{"😀":1,"\ud83d\ude00":2}"#), .duplicateKey("😀")))
    }

    @Test func treatsCanonicallyEquivalentKeysAsDuplicates() {
        // A decoded [String: …] would merge these two names, so the validator rejects the ambiguity.
        #expect(matches(rejection(#"{"\u00e9":1,"e\u0301":2}"#), .duplicateKey("é")))
    }

    @Test func stopsDeepNestingEarly() {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(matches(rejection(deep), .tooDeep))
        let deepObjects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(matches(rejection(deepObjects), .tooDeep))
    }

    @Test func enforcesMaxDepthExactly() throws {
        let atLimit = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        try validate(atLimit)
        let overLimit = "[" + atLimit + "]"
        #expect(matches(rejection(overLimit), .tooDeep))
        try validate(#"{"a":{"b":1}}"#, maxDepth: 2)
        #expect(matches(rejection(#"{"a":{"b":{}}}"#, maxDepth: 2), .tooDeep))
        try validate("1", maxDepth: 0)
    }

    @Test func rejectsTrailingData() {
        #expect(matches(rejection("{} x"), .trailingData(offset: 3)))
        #expect(matches(rejection("1 2"), .trailingData(offset: 2)))
        #expect(matches(rejection("{}{}"), .trailingData(offset: 2)))
        #expect(matches(rejection("{}\u{0C}"), .trailingData(offset: 2)))
        #expect(matches(rejection("[]\u{00A0}"), .trailingData(offset: 2)))
    }

    @Test func rejectsEmptyInput() {
        #expect(matches(rejection([]), .emptyInput))
        #expect(matches(rejection(" \n\t\r"), .emptyInput))
    }

    @Test func rejectsTruncatedDocuments() {
        #expect(matches(rejection("{"), .unexpectedEnd))
        #expect(matches(rejection(#"{"a""#), .unexpectedEnd))
        #expect(matches(rejection(#"{"a":"#), .unexpectedEnd))
        #expect(matches(rejection("[1,"), .unexpectedEnd))
        #expect(matches(rejection(#""abc"#), .unexpectedEnd))
        #expect(matches(rejection(#""\u00"#), .unexpectedEnd))
    }

    @Test func rejectsStructuralMistakes() {
        #expect(matches(rejection(#"{"a" 1}"#), .unexpectedCharacter(offset: 5)))
        #expect(matches(rejection("[1 2]"), .unexpectedCharacter(offset: 3)))
        #expect(matches(rejection("{1:2}"), .unexpectedCharacter(offset: 1)))
        #expect(matches(rejection("[1}"), .unexpectedCharacter(offset: 2)))
        #expect(matches(rejection("[,1]"), .unexpectedCharacter(offset: 1)))
        #expect(matches(rejection(#"{"a":1,,"b":2}"#), .unexpectedCharacter(offset: 7)))
        #expect(matches(rejection("]"), .unexpectedCharacter(offset: 0)))
    }

    @Test(
        arguments: [
            [0xC3, 0x28],  // truncated two-byte sequence
            [0x22, 0xC3, 0x28, 0x22],  // the same inside a string
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong three-byte
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate U+D800
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0x80, 0x22],  // stray continuation byte
            [0x22, 0xFF, 0x22],
            [0x22, 0xE2, 0x82, 0x22],  // truncated euro sign
        ] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(matches(rejection(bytes), .invalidUTF8))
    }
    // MARK: Values, beyond validity

    @Test func parsesValuesInDocumentOrder() throws {
        let value = try validate(#"{"b":[1,-2,3.5,true,null],"a":{"z":"y"},"":"\u00e9\ud83d\ude00\/"}"#)
        #expect(value == ["b": [1, -2, 3.5, true, nil], "a": ["z": "y"], "": "é😀/"])
        #expect(value["b"]?.arrayValue?.count == 5)
        #expect(value["a"]?["z"]?.stringValue == "y")
    }

    @Test func numbersFollowTheGrammarAndFitIntOrBecomeDouble() throws {
        #expect(try validate("0") == .int(0))
        #expect(try validate("-0") == .int(0))
        #expect(try validate("9223372036854775807") == .int(Int.max))
        #expect(try validate("-9223372036854775808") == .int(Int.min))
        #expect(try validate("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try validate("1.0") == .double(1))
        #expect(try validate("1e3") == .double(1000))
        #expect(try validate("-2.5E-3") == .double(-0.0025))
        #expect(try validate("1e400") == .double(.infinity))
        #expect(try validate("1.0").intValue == 1)
        #expect(try validate("1.5").intValue == nil)
        #expect(try validate("true").intValue == nil)
    }

    @Test func duplicateKeyNamesTheMemberAndItsOffset() throws {
        let refused = try #require(error(Array(#"{"a":1, "a":2}"#.utf8)))
        #expect(refused.reason == .duplicateKey("a"))
        #expect(refused.offset == 8)
        // Past the linear scan's reach, the set takes over.
        let many = (0..<20).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        try validate("{" + many + "}")
        #expect(matches(rejection("{" + many + #","k13":0}"#), .duplicateKey("k13")))
        #expect(matches(rejection("{" + many + #","k19":0}"#), .duplicateKey("k19")))
        // The same name in sibling objects is no duplicate.
        try validate(#"{"a":{"x":1},"b":{"x":1}}"#)
    }

    @Test func byteOrderMarkIsRefusedEvenBeforeWhitespace() {
        #expect(matches(rejection([0xEF, 0xBB, 0xBF, 0x20] + Array("[]".utf8)), .byteOrderMark))
        // U+FEFF inside a string is an ordinary character.
        #expect(rejection([0x22, 0xEF, 0xBB, 0xBF, 0x22]) == nil)
    }

    @Test func surrogatePairsDecodeToOneScalar() throws {
        #expect(try validate(#""\uD834\uDD1E""#) == .string("𝄞"))
        #expect(matches(rejection(#"["ok","\udfff"]"#), .loneSurrogate(offset: 7)))
    }

    @Test func depthCountsObjectsAndArraysAlike() throws {
        let mixed = String(repeating: #"{"a":["#, count: 16) + "1" + String(repeating: "]}", count: 16)
        try validate(mixed)
        #expect(matches(rejection("[" + mixed + "]"), .tooDeep))
    }

    @Test func invalidUTF8ReportsItsOffset() throws {
        let refused = try #require(error([0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D]))
        #expect(refused.reason == .invalidUTF8)
        #expect(refused.offset == 3)
        // A well-formed but misplaced character is a grammar error, not a UTF-8 one.
        #expect(matches(rejection("[\u{201C}a\u{201D}]"), .unexpectedCharacter(offset: 1)))
    }

    @Test func bigInputsParse() throws {
        let count = 50_000
        let text = "[" + (0..<count).map { "{\"i\":\($0),\"s\":\"v\($0)\"}" }.joined(separator: ",") + "]"
        let value = try validate(text)
        #expect(value.arrayValue?.count == count)
        #expect(value.arrayValue?.last?["i"] == .int(count - 1))
        let long = String(repeating: #"é\n"#, count: 200_000)
        #expect(try validate("\"" + long + "\"").stringValue?.count == 400_000)
    }

    @Test func errorsAreSentencesWithAnOffset() throws {
        let refused = try #require(error(Array("[1,]".utf8)))
        #expect(refused.sentence == "The JSON text is not valid: a trailing comma at byte 2.")
        let duplicate = try #require(error(Array(#"{"secret-name":1,"secret-name":2}"#.utf8)))
        #expect(!duplicate.sentence.contains("secret-name"))
    }

    @Test func writerOutputParsesBack() throws {
        let text: JSONValue = "a\"b\\c\n\u{01}\u{08}\u{0C}é😀/"
        let value: JSONValue = ["s": text, "n": [0, -1, 2.5, .int(Int.max)], "o": [:], "a": [], "t": true, "z": nil]
        #expect(try JSONValue.parse(JSONWriter.encode(value)) == value)
        let sorted: JSONValue = ["a": [], "n": [0, -1, 2.5, .int(Int.max)], "o": [:], "s": text, "t": true, "z": nil]
        #expect(try JSONValue.parse(JSONWriter.encode(value, format: .pretty)) == sorted)
    }

    @Test func prettyFormatIndentsSortsAndEndsWithALineFeed() {
        let value: JSONValue = ["b": [1, ["y": true, "x": []]], "a": [:]]
        let text = String(decoding: JSONWriter.encode(value, format: .pretty), as: UTF8.self)
        #expect(text == "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"x\": [],\n      \"y\": true\n    }\n  ]\n}\n")
    }
}
