import Foundation
import Testing

@testable import Fetch

/// `ZEVAUTH_SMTP_FROM`: a plain address or an RFC 5322 name-addr, sent as a 7-bit `From:` header with the
/// bare address as the envelope sender (docs/operations.md, "Outbound email").
@Suite struct MailFromTests {
    static let mustBeQuoted = "has a display name with characters that must be in double quotes, such as ; : @ ( ) [ ] \\"

    @Test(
        arguments: [
            // (configured, display name, address, From header)
            ("no-reply@example.com", nil, "no-reply@example.com", "ZevID <no-reply@example.com>"),
            ("  no-reply@example.com ", nil, "no-reply@example.com", "ZevID <no-reply@example.com>"),
            ("ZevAuth <no-reply@example.com>", "ZevAuth", "no-reply@example.com", "ZevAuth <no-reply@example.com>"),
            ("Zev  Auth\t<no-reply@example.com>", "Zev Auth", "no-reply@example.com", "Zev Auth <no-reply@example.com>"),
            ("<no-reply@example.com>", nil, "no-reply@example.com", "ZevID <no-reply@example.com>"),
            ("\"\" <no-reply@example.com>", nil, "no-reply@example.com", "ZevID <no-reply@example.com>"),
            ("\"ZevAuth\" <no-reply@example.com>", "ZevAuth", "no-reply@example.com", "ZevAuth <no-reply@example.com>"),
            ("\"Zev, Auth\" <no-reply@example.com>", "Zev, Auth", "no-reply@example.com", "\"Zev, Auth\" <no-reply@example.com>"),
            ("\"Zev <Auth>\" <id@example.com>", "Zev <Auth>", "id@example.com", "\"Zev <Auth>\" <id@example.com>"),
            (#""Say \"hi\"" <id@example.com>"#, "Say \"hi\"", "id@example.com", #""Say \"hi\"" <id@example.com>"#),
            ("Example Inc. <id@example.com>", "Example Inc.", "id@example.com", "\"Example Inc.\" <id@example.com>"),
            ("Zév Auth <no-reply@example.com>", "Zév Auth", "no-reply@example.com", "=?UTF-8?B?WsOpdiBBdXRo?= <no-reply@example.com>"),
            ("\"Zév, Auth\" <id@example.com>", "Zév, Auth", "id@example.com", "=?UTF-8?B?WsOpdiwgQXV0aA==?= <id@example.com>"),
        ] as [(String, String?, String, String)])
    func acceptedForms(configured: String, displayName: String?, address: String, header: String) throws {
        let from = try MailFrom(parsing: configured)
        #expect(from.displayName == displayName)
        #expect(from.address == address)
        #expect(from.headerValue == header)
    }

    @Test func aLongNonASCIINameIsSeveralEncodedWordsOfWholeCharacters() throws {
        let name = String(repeating: "Zé", count: 40)
        let from = try MailFrom(parsing: name + " <id@example.com>")
        let words = from.headerValue.split(separator: " ").dropLast()
        #expect(words.count == 3)
        var decoded: [UInt8] = []
        for word in words {
            // RFC 2047 section 2: at most 75 characters each.
            #expect(word.count <= 75)
            #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="))
            let bytes = try #require(Data(base64Encoded: String(word.dropFirst(10).dropLast(2))))
            // Section 5: each encoded-word holds whole characters.
            #expect(String(bytes: bytes, encoding: .utf8) != nil)
            decoded += bytes
        }
        #expect(String(decoding: decoded, as: UTF8.self) == name)
        #expect(from.headerValue.unicodeScalars.allSatisfy { $0.value < 0x80 })
    }

    @Test(arguments: [
        ("ZevAuth <no-reply@example.com>\r\nBcc: victim@example.com", "must be one line (it contains a line break)"),
        ("no-reply@example.com\n", "must be one line (it contains a line break)"),
        ("ZevAuth\r <no-reply@example.com>", "must be one line (it contains a line break)"),
        ("Zev\u{0}Auth <no-reply@example.com>", "must not contain a control character"),
        ("a@example.com, b@example.com", "must name one address, not a list"),
        ("A <a@example.com>, B <b@example.com>", "must name one address, not a list"),
        ("A <a@example.com> B <b@example.com>", "must name one address, not two"),
        ("<a@example.com><b@example.com>", "must name one address, not two"),
        ("\"ZevAuth <no-reply@example.com>", "has an unterminated quoted display name (a \" without its closing \")"),
        (#""ZevAuth\" <no-reply@example.com>"#, "has an unterminated quoted display name (a \" without its closing \")"),
        ("ZevAuth <no-reply@example.com", "has an unterminated < (an address without its closing >)"),
        ("ZevAuth no-reply@example.com>", "has a > without its <"),
        ("ZevAuth <no-reply@example.com> (ops)", "has text after the address's >"),
        ("Zev@Auth <no-reply@example.com>", Self.mustBeQuoted),
        ("ZevAuth (ops) <no-reply@example.com>", Self.mustBeQuoted),
        ("ZevAuth <no-reply>", MailFrom.expected),
        ("ZevAuth <a@b@example.com>", MailFrom.expected),
        ("ZevAuth <>", MailFrom.expected),
        ("ZevAuth", MailFrom.expected),
        ("\"ZevAuth\" no-reply@example.com", MailFrom.expected),
        ("no-reply@exämple.com", MailFrom.expected),
        ("", MailFrom.expected),
        (String(repeating: "a", count: 990) + "@example.com", "is too long for one header line"),
    ])
    func refusedFormsNameTheVariable(configured: String, message: String) {
        #expect(throws: SMTPConfigurationError(key: "ZEVAUTH_SMTP_FROM", message: message)) { try MailFrom(parsing: configured) }
    }

    @Test func theRelayConfigurationSendsTheBareAddressAsEnvelopeSender() throws {
        let smtp = try SMTPConfiguration(url: "smtp://relay.example:587", from: "ZevAuth <no-reply@example.com>")
        #expect(smtp.from.address == "no-reply@example.com")
        #expect(smtp.from.headerValue == "ZevAuth <no-reply@example.com>")
        #expect(throws: SMTPConfigurationError.self) { try SMTPConfiguration(url: "smtp://relay.example", from: "a@b, c@d") }
    }
}
