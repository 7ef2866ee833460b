import Encoding
import Testing

private func validate(_ text: String, maxDepth: Int = 32) throws(StrictJSON.Error) {
    try StrictJSON.validate(Array(text.utf8), maxDepth: maxDepth)
}

private func rejection(_ bytes: [UInt8], maxDepth: Int = 32) -> StrictJSON.Error? {
    do {
        try StrictJSON.validate(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

private func rejection(_ text: String, maxDepth: Int = 32) -> StrictJSON.Error? {
    rejection(Array(text.utf8), maxDepth: maxDepth)
}

@Suite struct StrictJSONTests {
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
        #expect(rejection([0xEF, 0xBB, 0xBF] + Array("{}".utf8)) == .byteOrderMark)
    }

    @Test func rejectsTrailingCommaInObject() {
        #expect(rejection(#"{"a":1,}"#) == .trailingComma(offset: 6))
    }

    @Test func rejectsTrailingCommaInArray() {
        #expect(rejection("[1,]") == .trailingComma(offset: 2))
        #expect(rejection("[1 , \n ]") == .trailingComma(offset: 3))
    }

    @Test func rejectsComments() {
        #expect(rejection("// c\n{}") == .unexpectedCharacter(offset: 0))
        #expect(rejection("/* */ {}") == .unexpectedCharacter(offset: 0))
        #expect(rejection("{} // c") == .trailingData(offset: 3))
        #expect(rejection("[1 /* two */, 2]") == .unexpectedCharacter(offset: 3))
    }

    @Test func rejectsSingleQuotes() {
        #expect(rejection("{'a':1}") == .unexpectedCharacter(offset: 1))
        #expect(rejection("['a']") == .unexpectedCharacter(offset: 1))
    }

    @Test func rejectsLeadingZeros() {
        #expect(rejection("01") == .invalidNumber(offset: 0))
        #expect(rejection("[-01]") == .invalidNumber(offset: 1))
        #expect(rejection("00") == .invalidNumber(offset: 0))
    }

    @Test(arguments: ["-", "1.", ".5", "1e", "1e+", "+1", "-.5", "0x10"])
    func rejectsMalformedNumbers(_ text: String) {
        #expect(rejection(text) != nil)
    }

    @Test func rejectsNaNAndInfinity() {
        #expect(rejection("NaN") == .unexpectedCharacter(offset: 0))
        #expect(rejection("Infinity") == .unexpectedCharacter(offset: 0))
        #expect(rejection("-Infinity") == .invalidNumber(offset: 0))
        #expect(rejection("[1,NaN]") == .unexpectedCharacter(offset: 3))
    }

    @Test func rejectsMisspeltLiterals() {
        #expect(rejection("tru") == .unexpectedEnd)
        #expect(rejection("nul1") == .unexpectedCharacter(offset: 3))
        #expect(rejection("True") == .unexpectedCharacter(offset: 0))
    }

    @Test func rejectsRawControlCharacterInString() {
        #expect(rejection([0x22, 0x01, 0x22]) == .controlCharacterInString(offset: 1))
        #expect(rejection("\"a\tb\"") == .controlCharacterInString(offset: 2))
        #expect(rejection("\"line\nbreak\"") == .controlCharacterInString(offset: 5))
    }

    @Test func acceptsEscapedControlCharacter() throws {
        try validate(#""\u0001""#)
    }

    @Test(arguments: [#""\x41""#, #""\a""#, #""\'""#, #""\u12""#, #""\u12G4""#, #""\U0041""#])
    func rejectsInvalidEscapes(_ text: String) {
        #expect(rejection(text) == .invalidEscape(offset: 1))
    }

    @Test func rejectsLoneSurrogates() {
        #expect(rejection(#""\ud800""#) == .loneSurrogate(offset: 1))
        #expect(rejection(#""\udc00""#) == .loneSurrogate(offset: 1))
        #expect(rejection(#""\ud800x""#) == .loneSurrogate(offset: 1))
        #expect(rejection(#""\ud800\u0041""#) == .loneSurrogate(offset: 1))
        #expect(rejection(#""\ud800\ud800""#) == .loneSurrogate(offset: 1))
        #expect(rejection(#""\ude00\ud83d""#) == .loneSurrogate(offset: 1))
    }

    @Test func rejectsDuplicateKeys() {
        #expect(rejection(#"{"a":1,"a":2}"#) == .duplicateKey("a"))
        #expect(rejection(#"{"x":{"b":1,"c":2,"b":3}}"#) == .duplicateKey("b"))
    }

    @Test func comparesKeysAfterUnescaping() {
        #expect(rejection(#"{"a":1,"\u0061":2}"#) == .duplicateKey("a"))
        #expect(rejection(#"{"\/":1,"/":2}"#) == .duplicateKey("/"))
        #expect(rejection(#"{"😀":1,"\ud83d\ude00":2}"#) == .duplicateKey("😀"))
    }

    @Test func treatsCanonicallyEquivalentKeysAsDuplicates() {
        // A decoded [String: …] would merge these two names, so the validator rejects the ambiguity.
        #expect(rejection(#"{"\u00e9":1,"e\u0301":2}"#) == .duplicateKey("é"))
    }

    @Test func stopsDeepNestingEarly() {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(rejection(deep) == .tooDeep)
        let deepObjects = Array(String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(rejection(deepObjects) == .tooDeep)
    }

    @Test func enforcesMaxDepthExactly() throws {
        let atLimit = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        try validate(atLimit)
        let overLimit = "[" + atLimit + "]"
        #expect(rejection(overLimit) == .tooDeep)
        try validate(#"{"a":{"b":1}}"#, maxDepth: 2)
        #expect(rejection(#"{"a":{"b":{}}}"#, maxDepth: 2) == .tooDeep)
        try validate("1", maxDepth: 0)
    }

    @Test func rejectsTrailingData() {
        #expect(rejection("{} x") == .trailingData(offset: 3))
        #expect(rejection("1 2") == .trailingData(offset: 2))
        #expect(rejection("{}{}") == .trailingData(offset: 2))
        #expect(rejection("{}\u{0C}") == .trailingData(offset: 2))
        #expect(rejection("[]\u{00A0}") == .trailingData(offset: 2))
    }

    @Test func rejectsEmptyInput() {
        #expect(rejection([]) == .emptyInput)
        #expect(rejection(" \n\t\r") == .emptyInput)
    }

    @Test func rejectsTruncatedDocuments() {
        #expect(rejection("{") == .unexpectedEnd)
        #expect(rejection(#"{"a""#) == .unexpectedEnd)
        #expect(rejection(#"{"a":"#) == .unexpectedEnd)
        #expect(rejection("[1,") == .unexpectedEnd)
        #expect(rejection(#""abc"#) == .unexpectedEnd)
        #expect(rejection(#""\u00"#) == .unexpectedEnd)
    }

    @Test func rejectsStructuralMistakes() {
        #expect(rejection(#"{"a" 1}"#) == .unexpectedCharacter(offset: 5))
        #expect(rejection("[1 2]") == .unexpectedCharacter(offset: 3))
        #expect(rejection("{1:2}") == .unexpectedCharacter(offset: 1))
        #expect(rejection("[1}") == .unexpectedCharacter(offset: 2))
        #expect(rejection("[,1]") == .unexpectedCharacter(offset: 1))
        #expect(rejection(#"{"a":1,,"b":2}"#) == .unexpectedCharacter(offset: 7))
        #expect(rejection("]") == .unexpectedCharacter(offset: 0))
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
        #expect(rejection(bytes) == .invalidUTF8)
    }
}
