import Encoding

// Association reads and writes JSON through Encoding's `JSONValue`: `JSONValue.parse` (strict RFC 8259) for
// fetched files and `JSONWriter` with `Format.pretty` for the generated ones (docs/architecture.md).

extension JSONValue {
    /// The association files' layout: two-space indentation, object members sorted by their UTF-8 bytes,
    /// `": "` between name and value, `/` and non-ASCII not escaped, and a final `"\n"`.
    func serialized() -> [UInt8] { JSONWriter.encode(self, capacity: 1024, format: .pretty) }
}

// MARK: - Body checks shared by both judges

/// The checks before any structure: the `Content-Type` and strict JSON (docs/association.md#fetch-stage).
enum BodyCheck {
    /// Why a body is not strict JSON, as a sentence for a `not_json` problem.
    struct NotJSON: Error {
        let message: String
    }

    /// `nil` when `contentType` is `application/json`, compared case-insensitively and ignoring parameters
    /// such as `; charset=utf-8` (RFC 9110 §8.3.1: type and subtype are case-insensitive); otherwise a sentence
    /// saying what was served.
    static func contentTypeMismatch(_ contentType: String?, file: AssociationFile) -> String? {
        guard let contentType else {
            return "\(file.rawValue) is served without a Content-Type header; serve it as application/json"
        }
        let mediaType = trimmed(String(contentType.split(separator: ";", omittingEmptySubsequences: false).first ?? "")).lowercased()
        if mediaType == "application/json" { return nil }
        let shown = quoted(contentType)
        switch file {
        case .assetLinks:
            return "assetlinks.json is served as \(shown); Google requires Content-Type: application/json"
        case .appleAppSiteAssociation:
            if mediaType == "application/pkcs7-mime" {
                return
                    "apple-app-site-association is served as signed PKCS#7 (\(shown)); signing has not been needed since iOS 9: serve plain JSON as application/json"
            }
            return
                "apple-app-site-association is served as \(shown); serve it as application/json (Apple's requirement for unsigned files); some validators reject other types"
        }
    }

    /// The start every judge shares: a `content_type` problem when the media type is wrong, then the
    /// strictly parsed root, or a `not_json` problem and no root.
    static func open(_ body: [UInt8], contentType: String?, file: AssociationFile) -> (problems: [Problem], root: JSONValue?) {
        var problems: [Problem] = []
        if let mismatch = contentTypeMismatch(contentType, file: file) {
            problems.append(Problem(code: .contentType, message: mismatch, file: file))
        }
        switch decode(body, file: file) {
        case .failure(let notJSON):
            problems.append(Problem(code: .notJSON, message: notJSON.message, file: file))
            return (problems, nil)
        case .success(let root):
            return (problems, root)
        }
    }

    /// Decodes `body` if it is strict RFC 8259 JSON (`JSONValue.parse`), else says why not.
    static func decode(_ body: [UInt8], file: AssociationFile) -> Result<JSONValue, NotJSON> {
        let name = file.rawValue
        let firstContent = body.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D })
        if firstContent == UInt8(ascii: "<") {
            return .failure(NotJSON(message: "\(name) is an HTML page, not JSON: a site fallback or error page answers this path"))
        }
        do {
            return .success(try JSONValue.parse(body))
        } catch {
            return .failure(NotJSON(message: "\(name) is not strict JSON: " + describe(error, in: body)))
        }
    }

    static func describe(_ error: JSONParseError, in body: [UInt8]) -> String {
        let offset = error.offset
        switch error.reason {
        case .byteOrderMark: return "the file starts with a UTF-8 byte order mark (BOM); remove it, strict JSON parsers reject it"
        case .invalidUTF8: return "the file is not valid UTF-8"
        case .emptyInput: return body.isEmpty ? "the file is empty" : "the file contains only whitespace"
        case .unexpectedEnd: return "the file ends in the middle of a value (a missing ']', '}' or '\"')"
        case .tooDeep: return "arrays and objects are nested more than 32 levels deep"
        case .duplicateKey(let name): return "an object repeats the key \(quoted(name))"
        case .trailingComma: return "a trailing comma at \(position(offset, in: body))"
        case .trailingData: return "more text follows the JSON value at \(position(offset, in: body))"
        case .invalidNumber: return "an invalid number at \(position(offset, in: body))"
        case .invalidEscape: return "an invalid escape sequence at \(position(offset, in: body))"
        case .loneSurrogate: return "an unpaired \\u surrogate escape at \(position(offset, in: body))"
        case .controlCharacterInString:
            return "an unescaped control character (a raw line break or tab) inside a string at \(position(offset, in: body))"
        case .unexpectedCharacter:
            let byte = offset < body.count ? body[offset] : 0
            let next = offset + 1 < body.count ? body[offset + 1] : 0
            let what: String
            if byte == UInt8(ascii: "/"), next == UInt8(ascii: "/") || next == UInt8(ascii: "*") {
                what = "a comment"
            } else if byte == UInt8(ascii: "'") {
                what = "a single quote"
            } else if byte == 0xE2, next == 0x80 {
                what = "a typographic (smart) quote"
            } else if byte == 0xC2, next == 0xA0 {
                what = "a non-breaking space"
            } else if byte >= 0x21, byte < 0x7F {
                what = "an unexpected '\(Character(Unicode.Scalar(byte)))'"
            } else {
                what = "an unexpected character"
            }
            return "\(what) at \(position(offset, in: body))"
        }
    }

    /// "line L, column C", both counted from 1; the column counts bytes.
    static func position(_ offset: Int, in body: [UInt8]) -> String {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, body.count) where body[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return "line \(line), column \(offset - lineStart + 1)"
    }
}

/// Quotes a value from a fetched file for a message: at most 100 characters (a whole fingerprint fits), control
/// characters shown as `?`.
func quoted(_ text: String) -> String {
    var view = String.UnicodeScalarView()
    for scalar in text.unicodeScalars.prefix(100) {
        view.append(scalar.value < 0x20 || scalar.value == 0x7F ? "?" : scalar)
    }
    return "'" + String(view) + (text.unicodeScalars.count > 100 ? "…'" : "'")
}
