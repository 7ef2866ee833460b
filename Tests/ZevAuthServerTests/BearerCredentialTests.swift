import HTTPServer
import Testing

@testable import ZevAuthServer

/// `Wire.bearer`: the credential of `Authorization: Bearer …` (RFC 6750 §2.1), trimmed of whitespace.
struct BearerCredentialTests {
    private static func bearer(_ fields: [(String, String)]) -> String? {
        Wire.bearer(HTTPRequest(method: "GET", path: "/v1/me", headers: HTTPHeaders(fields)))
    }

    @Test func readsTheCredentialOfOneBearerField() {
        #expect(Self.bearer([("Authorization", "Bearer zat_abc")]) == "zat_abc")
        #expect(Self.bearer([("Authorization", "bearer zat_abc")]) == "zat_abc")
        #expect(Self.bearer([("Authorization", "Basic zat_abc")]) == nil)
        #expect(Self.bearer([("Authorization", "Bearer")]) == nil)
        #expect(Self.bearer([("Authorization", "Bearer zat_a"), ("Authorization", "Bearer zat_b")]) == nil)
    }

    /// Whitespace around the credential is not part of it, whether ASCII (space, tab) or a Unicode space
    /// separator; whitespace inside it stays (and such a credential then matches no token).
    @Test func trimsWhitespaceAroundTheCredentialOnly() {
        #expect(Self.bearer([("Authorization", "Bearer   zat_abc\t")]) == "zat_abc")
        #expect(Self.bearer([("Authorization", "Bearer \u{00A0}zat_abc\u{2003}")]) == "zat_abc")
        #expect(Wire.trimmedOfWhitespace("zat_abc") == "zat_abc")
        #expect(Wire.trimmedOfWhitespace("\tzat abc ") == "zat abc")
        #expect(Wire.trimmedOfWhitespace("zat_é") == "zat_é")
        #expect(Wire.trimmedOfWhitespace(" \t ") == "")
        #expect(Self.bearer([("Authorization", "Bearer \t ")]) == nil)
    }
}
