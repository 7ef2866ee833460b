import Foundation

/// The sender of outbound mail, parsed once from `ZEVAUTH_SMTP_FROM` (docs/operations.md, "Outbound email"):
/// a plain address (`no-reply@example.com`) or an RFC 5322 section 3.4 name-addr
/// (`ZevAuth <no-reply@example.com>`, `"Zev, Auth" <no-reply@example.com>`). ``headerValue`` is the `From:`
/// header; ``address`` alone is the SMTP envelope sender (`MAIL FROM`, RFC 5321 section 4.1.1.2).
public struct MailFrom: Sendable, Equatable {
    /// The display name as a person reads it (quotes and quoted-pairs removed, words joined by one space);
    /// nil for a plain address or an empty name.
    public let displayName: String?
    /// The bare address (`local@domain`, printable ASCII without `<` or `>`).
    public let address: String
    /// The `From:` header's value: the name-addr, 7-bit. A name that is not ASCII is one or more RFC 2047
    /// encoded-words (`=?UTF-8?B?…?=`); an ASCII name is a phrase of atoms or one quoted-string. A plain
    /// address is sent with ``defaultDisplayName``.
    public let headerValue: String

    /// The name a plain address is sent with: the name the messages sign with.
    public static let defaultDisplayName = "ZevID"

    /// The configured value's one error sentence for an address that cannot be used.
    static let expected =
        "must be a plain address such as no-reply@example.com or a name and an address such as ZevAuth <no-reply@example.com>"

    /// Parses `value` (surrounding spaces ignored).
    /// - Throws: `SMTPConfigurationError` for `ZEVAUTH_SMTP_FROM` naming what is wrong (never the value): a
    ///   line break or another control character, a list (`,`) or a second `<address>`, an unterminated
    ///   quote or `<`, text after the `>`, a name with characters that must be quoted, an address that is not
    ///   `local@domain` in printable ASCII, or a header line longer than RFC 5322 section 2.1.1's 998 octets.
    public init(parsing value: String) throws(SMTPConfigurationError) {
        func refuse(_ message: String) -> SMTPConfigurationError {
            SMTPConfigurationError(key: "ZEVAUTH_SMTP_FROM", message: message)
        }
        let scalars = Array(value.unicodeScalars)
        // A line break would end the header and start another one (header injection).
        if scalars.contains(where: { $0 == "\r" || $0 == "\n" }) { throw refuse("must be one line (it contains a line break)") }
        if scalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            throw refuse("must not contain a control character")
        }
        // The structure outside quoted-strings: where `<` and `>` are, and whether a `,` separates a list.
        var opens: [Int] = []
        var closes: [Int] = []
        var index = 0
        while index < scalars.count {
            switch scalars[index] {
            case "\"":
                guard let end = Self.endOfQuotedString(scalars, from: index) else {
                    throw refuse("has an unterminated quoted display name (a \" without its closing \")")
                }
                index = end
            case "\\": index += 1
            case ",": throw refuse("must name one address, not a list")
            case "<": opens.append(index)
            case ">": closes.append(index)
            default: break
            }
            index += 1
        }
        if opens.count > 1 || closes.count > 1 { throw refuse("must name one address, not two") }
        guard let open = opens.first else {
            if !closes.isEmpty { throw refuse("has a > without its <") }
            let plain = value.trimmingCharacters(in: .whitespaces)
            guard Self.isPlainAddress(plain) else { throw refuse(Self.expected) }
            self.init(displayName: nil, address: plain)
            try check(length: refuse)
            return
        }
        guard let close = closes.first, close > open else { throw refuse("has an unterminated < (an address without its closing >)") }
        guard scalars[(close + 1)...].allSatisfy({ $0 == " " || $0 == "\t" }) else { throw refuse("has text after the address's >") }
        let address = String(String.UnicodeScalarView(scalars[(open + 1)..<close]))
        guard Self.isPlainAddress(address) else { throw refuse(Self.expected) }
        guard let words = Self.phrase(Array(scalars[..<open])) else {
            throw refuse("has a display name with characters that must be in double quotes, such as ; : @ ( ) [ ] \\")
        }
        self.init(displayName: words.isEmpty ? nil : words.joined(separator: " "), address: address)
        try check(length: refuse)
    }

    private init(displayName: String?, address: String) {
        self.displayName = displayName
        self.address = address
        self.headerValue = Self.encode(displayName ?? Self.defaultDisplayName) + " <\(address)>"
    }

    private func check(length refuse: (String) -> SMTPConfigurationError) throws(SMTPConfigurationError) {
        // RFC 5322 section 2.1.1: a line MUST be no more than 998 characters, without the CRLF.
        if "From: ".utf8.count + headerValue.utf8.count > 998 { throw refuse("is too long for one header line") }
    }

    /// Today's plain-address rule: exactly one `@` with something on each side, printable ASCII
    /// (0x21-0x7E) other than `<` and `>`.
    static func isPlainAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "<" && $0 != ">" }
    }

    /// RFC 5322 section 3.2.3 atext, plus any non-ASCII character (it is encoded on output).
    static func isAtomText(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x80 { return true }
        if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) { return true }
        return "!#$%&'*+-/=?^_`{|}~".unicodeScalars.contains(scalar)
    }

    /// The index of the `"` that closes the quoted-string opening at `start`, or nil when none does.
    static func endOfQuotedString(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var index = start + 1
        while index < scalars.count {
            if scalars[index] == "\\" {
                index += 2
                continue
            }
            if scalars[index] == "\"" { return index }
            index += 1
        }
        return nil
    }

    /// The words of an RFC 5322 phrase (`1*word`, a word being an atom or a quoted-string; a `.` inside an
    /// atom is accepted as obs-phrase, section 4.1, for names such as `Example Inc.`), decoded, or nil when
    /// a character may not stand outside quotes. Empty quoted-strings add no word.
    static func phrase(_ scalars: [Unicode.Scalar]) -> [String]? {
        var words: [String] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" {
                index += 1
            } else if scalar == "\"" {
                guard let end = endOfQuotedString(scalars, from: index) else { return nil }
                var word = String.UnicodeScalarView()
                var inner = index + 1
                while inner < end {
                    if scalars[inner] == "\\" { inner += 1 }
                    word.append(scalars[inner])
                    inner += 1
                }
                let text = String(word)
                if !text.trimmingCharacters(in: .whitespaces).isEmpty { words.append(text) }
                index = end + 1
            } else {
                var word = String.UnicodeScalarView()
                while index < scalars.count, isAtomText(scalars[index]) || scalars[index] == "." {
                    word.append(scalars[index])
                    index += 1
                }
                guard !word.isEmpty else { return nil }
                words.append(String(word))
            }
        }
        return words
    }

    /// `name` as header text: atoms when every word is one, else a quoted-string (`\` and `"` escaped), and
    /// RFC 2047 encoded-words when it is not ASCII.
    static func encode(_ name: String) -> String {
        if name.unicodeScalars.contains(where: { $0.value >= 0x80 }) { return encodedWords(name) }
        let words = name.split(separator: " ", omittingEmptySubsequences: false)
        if words.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(isAtomText) }) { return name }
        return "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// RFC 2047 "B" encoded-words in UTF-8, separated by a space. Section 2: an encoded-word is at most 75
    /// characters, so each carries at most 45 bytes (60 base64 characters plus `=?UTF-8?B?` and `?=`);
    /// section 5: each holds whole characters. Section 6.2: the space between adjacent encoded-words is
    /// ignored when they are decoded, so the name comes back unchanged.
    static func encodedWords(_ name: String) -> String {
        var chunks: [[UInt8]] = [[]]
        for character in name {
            let bytes = Array(String(character).utf8)
            if let last = chunks.last, !last.isEmpty, last.count + bytes.count > 45 { chunks.append([]) }
            chunks[chunks.count - 1] += bytes
        }
        return chunks.map { "=?UTF-8?B?" + Data($0).base64EncodedString() + "?=" }.joined(separator: " ")
    }
}
