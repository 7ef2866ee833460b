import Authorize
import Testing

@testable import ZevAuthServer

/// The one table of what an error page tells the person (docs/protocol.md#error-pages): every code the
/// server can send has words of its own, and none of them is developer vocabulary.
@Suite struct PersonFacingErrorTests {
    static let developerWords = [
        "client_id", "redirect_uri", "code_challenge", "verifier", "state", "PKCE", "S256", "_", "token", "grant", "scheme",
    ]

    @Test(arguments: OAuthErrorCode.allCases)
    func everyCodeHasWordsForThePerson(code: OAuthErrorCode) {
        let words = PersonFacingErrors.table[code]
        #expect(words != nil, "\(code.rawValue) has no entry")
        for text in [words?.headline ?? "", words?.advice ?? ""] {
            #expect(text.hasSuffix("."), "\(code.rawValue): a sentence")
            for word in Self.developerWords { #expect(!text.contains(word), "\(code.rawValue) says \(word)") }
        }
        #expect(PersonFacingErrors.explanation(forWire: code.rawValue) == words)
    }

    @Test func anUnknownSpellingGetsTheFallback() {
        #expect(PersonFacingErrors.explanation(forWire: "something_new") == PersonFacingErrors.fallback)
    }

    @Test func thePageKeepsTheCodeAndDetailInsideTheDisclosure() {
        let response = Pages.error(
            status: 400, code: .invalidClient, wireCode: "invalid_client", description: "client_id is missing or unknown.")
        let html = String(decoding: response.body, as: UTF8.self)
        let disclosure = html.range(of: "<details><summary>Details for the app's developer</summary>")
        #expect(disclosure != nil)
        let before = disclosure.map { String(html[..<$0.lowerBound]) } ?? html
        #expect(!before.contains("client_id"))
        #expect(!before.contains("invalid_client"))
        #expect(before.contains("This app&#39;s sign-in link is not set up correctly."))
        #expect(html.contains("<p>Error code: <code>invalid_client</code></p>\n<p>client_id is missing or unknown.</p>"))
        #expect(response.status == 400)
    }
}
