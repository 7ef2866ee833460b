import Association
import Testing

/// Apple's query rules for `components` (docs/association.md#aasa-components), judged on the URL a callback
/// receives after a sign-in: its registered query, then `code`, `state` and `iss` (docs/association.md#callback-url).
/// Patterns are taken from Apple's documented examples where Apple gives one.
@Suite struct AASAQueryTests {
    func judge(_ components: String, _ callback: String) -> [Problem] {
        AASAJudge.judge(
            body: AASAJudgeTests.modern(components), contentType: "application/json", app: AASAJudgeTests.app,
            callback: LinkCallback(pathAndQuery: callback))
    }

    func covered(_ components: String, _ callback: String) -> Bool { judge(components, callback).isEmpty }

    @Test func aQueryItemPatternMatchesTheRegisteredItem() {
        #expect(covered(#"{"/": "/reset", "?": {"token": "*"}}"#, "/reset?token=abc"))
        #expect(covered(#"{"/": "/reset", "?": {"token": "abc"}}"#, "/reset?token=abc"))
        #expect(!covered(#"{"/": "/reset", "?": {"token": "abd"}}"#, "/reset?token=abc"))
    }

    /// Apple: "matches any URL whose path starts with /help/ and which has a query item with name
    /// 'articleNumber' and a value of exactly 4 characters".
    @Test(arguments: [
        ("/help/cb?articleNumber=1234", true),
        ("/help/cb?articleNumber=123", false),
        ("/help/cb?articleNumber=12345", false),
        ("/help/cb", false),
    ])
    func questionMarkMatchesExactlyOneCharacter(_ callback: String, _ expected: Bool) {
        #expect(covered(#"{"/": "/help/*", "?": {"articleNumber": "????"}}"#, callback) == expected)
    }

    /// Apple: query items with no value and absent query items match as the empty string.
    @Test func anAbsentOrValuelessItemMatchesAsTheEmptyString() {
        #expect(covered(#"{"?": {"cid": "*"}}"#, "/auth/callback"))
        #expect(!covered(#"{"?": {"articleName": "?*"}}"#, "/auth/callback"))
        #expect(covered(#"{"?": {"flag": ""}}"#, "/auth/callback?flag"))
        #expect(!covered(#"{"?": {"flag": "?*"}}"#, "/auth/callback?flag="))
    }

    @Test func itemsTheDictionaryDoesNotNameAreIgnored() {
        #expect(covered(#"{"/": "/reset", "?": {"token": "abc"}}"#, "/reset?lang=en&token=abc&x"))
    }

    /// Apple: when a name repeats, every instance must match.
    @Test func everyInstanceOfARepeatedItemMustMatch() {
        #expect(!covered(#"{"?": {"token": "abc"}}"#, "/reset?token=abc&token=xyz"))
        #expect(covered(#"{"?": {"token": "???"}}"#, "/reset?token=abc&token=xyz"))
    }

    @Test func itemNamesAndValuesArePercentDecodedBeforeMatching() {
        #expect(covered(#"{"?": {"token": "a b/c"}}"#, "/reset?token=a%20b%2Fc"))
        #expect(covered(#"{"?": {"next step": "1"}}"#, "/reset?next%20step=1"))
        #expect(!covered(#"{"?": {"token": "a%20b"}}"#, "/reset?token=a%20b"))
    }

    /// Apple's example: `{"/": "/help/website/*", "exclude": true}` before `{"/": "/help/*"}`.
    @Test func anExcludingRuleBeforeAnIncludingOneWins() {
        let rules = #"{"/": "/help/website/*", "exclude": true}, {"/": "/help/*"}"#
        #expect(covered(rules, "/help/cb"))
        #expect(codes(judge(rules, "/help/website/cb")) == [.pathNotCovered])
    }

    @Test func excludeAppliesToAQueryCondition() {
        let rules = #"{"/": "/reset", "?": {"token": "abc"}, "exclude": true}, {"/": "*"}"#
        #expect(
            judge(rules, "/reset?token=abc") == [
                Problem(
                    code: .pathNotCovered,
                    message:
                        "The callback path '/reset?token=abc' is excluded for ABCDE12345.com.acme.app by rule #1 of applinks.details[0]",
                    blocking: true)
            ])
        #expect(covered(rules, "/reset?token=xyz"))
    }

    /// Apple's example: `{"#": "no_universal_links", "exclude": true}` first; a callback has no fragment.
    @Test func aFragmentExclusionDoesNotReachACallback() {
        #expect(covered(##"{"#": "no_universal_links", "exclude": true}, {"/": "*"}"##, "/auth/callback"))
    }

    @Test func caseSensitiveFalseAppliesToQueryValues() {
        #expect(covered(#"{"?": {"token": "ABC"}, "caseSensitive": false}"#, "/reset?token=abc"))
        #expect(!covered(#"{"?": {"token": "ABC"}}"#, "/reset?token=abc"))
        #expect(covered(#"{"?": "X=1&*", "caseSensitive": false}"#, "/reset?x=1"))
    }

    /// A string `?` is a pattern over the whole query, which ends with the response's `code`, `state` and `iss`.
    @Test(arguments: [
        (#"{"?": "x=1&*"}"#, true),
        (#"{"?": "x=1&code=*"}"#, true),
        (#"{"?": "*&iss=?*"}"#, true),
        (#"{"?": "x=1"}"#, false),
        (#"{"?": "x=2&*"}"#, false),
        (#"{"?": "x=1&code=?"}"#, false),
    ])
    func aStringQueryPatternMatchesTheWholeQuery(_ component: String, _ expected: Bool) {
        #expect(covered(component, "/cb?x=1") == expected, "\(component)")
    }

    @Test func percentEncodedFalseDecodesTheWholeQuery() {
        #expect(covered(#"{"?": "q=café&*", "percentEncoded": false}"#, "/search?q=caf%C3%A9"))
        #expect(!covered(#"{"?": "q=café&*"}"#, "/search?q=caf%C3%A9"))
        #expect(covered(#"{"?": "q=caf%C3%A9&*"}"#, "/search?q=caf%C3%A9"))
    }

    /// The code, `state` and `iss` can hold any non-empty value, so a condition on them counts only when it holds
    /// for all; one that may exclude a sign-in counts as excluding.
    @Test func conditionsOnTheResponseMustHoldForEveryValue() {
        #expect(covered(#"{"?": {"code": "*", "state": "?*", "iss": "*"}}"#, "/auth/callback"))
        #expect(!covered(#"{"?": {"error": "?*"}}"#, "/auth/callback"))
        let partial = judge(#"{"?": {"code": "????"}}"#, "/auth/callback")
        #expect(codes(partial) == [.pathNotCovered])
        #expect(partial.first?.message.contains("rule #1 of applinks.details[0] matches only some sign-ins") == true)
        #expect(covered(#"{"?": {"state": "x*"}}, {"/": "/auth/*"}"#, "/auth/callback"))
        let excluded = judge(#"{"?": {"state": "x*"}, "exclude": true}, {"/": "*"}"#, "/auth/callback")
        #expect(codes(excluded) == [.pathNotCovered])
        #expect(excluded.first?.message.contains("for some sign-ins") == true)
    }
}
