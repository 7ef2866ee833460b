import Foundation
import Testing

@testable import Conformance

/// The pure parts of the conformance client: verdicts, redirect parsing, options, output and redaction.
@Suite struct VerdictTests {
    let redirect = "http://127.0.0.1:5000/cb"
    let issuer = "https://auth.example"

    func location(_ query: String) -> Observed { Observed(status: 303, headers: [("Location", "\(redirect)?\(query)")]) }

    @Test func shownErrorNeedsStatusCodeAndNoRedirect() {
        let json = Observed(status: 400, headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_state"}"#)
        #expect(Verdicts.shownError(json, status: 400, error: "invalid_state").verdict == .pass)
        #expect(Verdicts.shownError(json, status: 403, error: "invalid_state").verdict == .fail)
        #expect(Verdicts.shownError(json, status: 400, error: "invalid_client").verdict == .fail)
        let html = Observed(
            status: 400, headers: [("Content-Type", "text/html")], body: "<p>Error code: <code>redirect_uri_mismatch</code></p>")
        #expect(Verdicts.shownError(html, status: 400, error: "redirect_uri_mismatch").verdict == .pass)
        let redirected = Observed(status: 400, headers: [("Location", redirect + "?error=invalid_state")], body: "")
        #expect(Verdicts.shownError(redirected, status: 400, error: "invalid_state").verdict == .fail)
    }

    @Test func redirectedErrorNeedsStateAndIss() {
        let good = location("error=pkce_required&state=a%20b&iss=https%3A%2F%2Fauth.example")
        #expect(
            Verdicts.redirectedError(good, redirectURI: redirect, error: "pkce_required", state: "a b", issuer: issuer).verdict == .pass)
        let noIss = location("error=pkce_required&state=a%20b")
        #expect(
            Verdicts.redirectedError(noIss, redirectURI: redirect, error: "pkce_required", state: "a b", issuer: issuer).seen.contains(
                "no iss"))
        let changedState = location("error=pkce_required&state=a%2Bb&iss=https%3A%2F%2Fauth.example")
        #expect(
            Verdicts.redirectedError(changedState, redirectURI: redirect, error: "pkce_required", state: "a b", issuer: issuer).verdict
                == .fail)
        let wrongCode = location("error=invalid_request&state=a%20b&iss=https%3A%2F%2Fauth.example")
        #expect(
            Verdicts.redirectedError(wrongCode, redirectURI: redirect, error: "pkce_required", state: "a b", issuer: issuer).verdict
                == .fail)
        let elsewhere = Observed(status: 303, headers: [("Location", "http://127.0.0.1:5000/other?error=pkce_required")])
        #expect(
            Verdicts.redirectedError(elsewhere, redirectURI: redirect, error: "pkce_required", state: "a b", issuer: issuer).verdict
                == .fail)
    }

    @Test func aRefusedRequestObjectWithoutAnOuterStateMustNotInventOne() {
        let good = location("error=request_not_supported&error_description=request_not_supported%3A%20x&iss=https%3A%2F%2Fauth.example")
        let pass = Verdicts.redirectedError(
            good, redirectURI: redirect, error: "request_not_supported", state: nil, issuer: issuer,
            descriptionPrefix: "request_not_supported")
        #expect(pass.verdict == .pass)
        #expect(pass.seen.contains("no state"))
        let invented = location("error=request_not_supported&state=inside&iss=https%3A%2F%2Fauth.example")
        let fail = Verdicts.redirectedError(invented, redirectURI: redirect, error: "request_not_supported", state: nil, issuer: issuer)
        #expect(fail.verdict == .fail)
        #expect(fail.seen.contains("a state came back though none was expected"))
        let shown = Observed(status: 400, headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_state"}"#)
        #expect(
            Verdicts.redirectedError(shown, redirectURI: redirect, error: "request_not_supported", state: nil, issuer: issuer).verdict
                == .fail)
    }

    @Test func standardErrorsCarryTheProductCodeFirst() {
        let observed = location(
            "error=invalid_request&error_description=pkce_required%3A%20send%20a%20challenge&state=s&iss=https%3A%2F%2Fauth.example")
        let pass = Verdicts.redirectedError(
            observed, redirectURI: redirect, error: "invalid_request", state: "s", issuer: issuer, descriptionPrefix: "pkce_required")
        #expect(pass.verdict == .pass)
        let fail = Verdicts.redirectedError(
            observed, redirectURI: redirect, error: "invalid_request", state: "s", issuer: issuer,
            descriptionPrefix: "pkce_method_unsupported")
        #expect(fail.verdict == .fail)
        #expect(Verdicts.leadingCode("pkce_verification_failed: the verifier does not match") == "pkce_verification_failed")
        #expect(Verdicts.leadingCode("The verifier does not match") == nil)
    }

    @Test func loopbackErrorsMustBeA303NotAHeldPage() {
        let page = Observed(
            status: 200, headers: [("Content-Type", "text/html")],
            body: #"<a class="button" href="\#(redirect)?error=pkce_required&amp;state=s&amp;iss=https%3A%2F%2Fauth.example">Return</a>"#)
        let back = RedirectBack.find(in: page, redirectURI: redirect)
        #expect(back?.delivery == .heldPage)
        #expect(back?.value("state") == "s")
        #expect(Verdicts.redirectedError(page, redirectURI: redirect, error: "pkce_required", state: "s", issuer: issuer).verdict == .fail)
        let scheme = "com.acme.app:/cb"
        let held = Observed(
            status: 200, headers: [("Content-Type", "text/html")],
            body: #"<a href="com.acme.app:/cb?error=pkce_required&amp;state=s&amp;iss=https%3A%2F%2Fauth.example">Return</a>"#)
        #expect(Verdicts.redirectedError(held, redirectURI: scheme, error: "pkce_required", state: "s", issuer: issuer).verdict == .pass)
    }

    @Test func stateMustBeReencodedWithOnlyUnreservedBare() {
        let state = "a b+c/é"
        #expect(Verdicts.stateEncoding(rawQuery: "code=x&state=a%20b%2Bc%2F%C3%A9&iss=y", state: state).verdict == .pass)
        #expect(Verdicts.stateEncoding(rawQuery: "code=x&state=a%20b%2bc%2f%c3%a9", state: state).verdict == .pass)
        #expect(Verdicts.stateEncoding(rawQuery: "code=x&state=a+b%2Bc%2F%C3%A9", state: state).verdict == .fail)
        #expect(Verdicts.stateEncoding(rawQuery: "code=x&state=a%20b%2Bc/%C3%A9", state: state).verdict == .fail)
        #expect(Verdicts.stateEncoding(rawQuery: "code=x", state: state).verdict == .fail)
    }

    @Test func successRedirectNeverDescribesTheCode() {
        let observed = location("code=hoc_SECRETSECRETSECRET&state=s&iss=https%3A%2F%2Fauth.example")
        let verdicts = Verdicts.successRedirect(observed, redirectURI: redirect, state: "s", issuer: issuer)
        #expect(verdicts.codeReturned.verdict == .pass)
        #expect(verdicts.iss.verdict == .pass)
        #expect(verdicts.state.verdict == .pass)
        #expect(!verdicts.codeReturned.seen.contains("hoc_"))
        let noIss = Verdicts.successRedirect(location("code=hoc_x&state=s"), redirectURI: redirect, state: "s", issuer: issuer)
        #expect(noIss.iss.verdict == .fail)
    }

    @Test func exactlyOneOfTheConcurrentExchangesWins() {
        let ok = Observed(status: 200, headers: [("Content-Type", "application/json")], body: "{}")
        let grant = Observed(status: 400, headers: [("Content-Type", "application/json")], body: #"{"error":"invalid_grant"}"#)
        #expect(Verdicts.concurrentExchanges([ok] + Array(repeating: grant, count: 15)).verdict == .pass)
        #expect(Verdicts.concurrentExchanges([ok, ok] + Array(repeating: grant, count: 14)).verdict == .fail)
        #expect(Verdicts.concurrentExchanges(Array(repeating: grant, count: 16)).verdict == .fail)
    }

    @Test func noStoreIsADirectiveNotASubstring() {
        #expect(Verdicts.noStore(Observed(status: 200, headers: [("Cache-Control", "private, no-store")])).verdict == .pass)
        #expect(Verdicts.noStore(Observed(status: 200, headers: [("Cache-Control", "no-store-ish")])).verdict == .fail)
        #expect(Verdicts.noStore(Observed(status: 200)).verdict == .fail)
    }

    @Test func metadataMustNotAdvertisePlain() {
        #expect(Verdicts.metadataPKCE(["code_challenge_methods_supported": ["S256"]]).verdict == .pass)
        #expect(Verdicts.metadataPKCE(["code_challenge_methods_supported": ["plain", "S256"]]).verdict == .fail)
        #expect(Verdicts.metadataPKCE([:]).verdict == .fail)
        #expect(Verdicts.metadataIss(["authorization_response_iss_parameter_supported": true]).verdict == .pass)
        #expect(Verdicts.metadataIss([:]).verdict == .fail)
    }

    @Test func sessionShapeNamesWhatIsMissing() {
        let good =
            #"{"session":{"id":"s","accessToken":"a","refreshToken":"r","tokenType":"Bearer","expiresIn":900,"expiresAt":"2026-01-01T00:00:00Z","idleExpiresAt":"2026-01-01T00:00:00Z"},"user":{"id":"u","email":"e","name":"n","imageUrl":null}}"#
        #expect(Verdicts.sessionShape(Observed(status: 200, body: good)).verdict == .pass)
        let bad = Verdicts.sessionShape(Observed(status: 200, body: #"{"session":{"id":"s"},"user":{}}"#))
        #expect(bad.verdict == .fail)
        #expect(bad.seen.contains("session.accessToken"))
    }

    @Test func loopbackPortsAreReplaced() {
        #expect(Verdicts.withPort("http://127.0.0.1/cb", 5) == "http://127.0.0.1:5/cb")
        #expect(Verdicts.withPort("http://127.0.0.1:80/cb?x=1", 6) == "http://127.0.0.1:6/cb?x=1")
        #expect(Verdicts.withPort("http://[::1]/cb", 7) == "http://[::1]:7/cb")
        #expect(Verdicts.withPort("com.acme.app:/cb", 7) == nil)
    }

    @Test func readsDevJSONAndLetsFlagsWin() throws {
        let dev =
            #"{"issuer":"http://127.0.0.1:8080/","operatorToken":"zop_1234567890","development":{"publishableKey":"pk_test_a","secretKey":"sk_test_b"},"production":{"publishableKey":"pk_live_c","secretKey":"sk_live_d"},"user":{"email":"a@b.test","password":"pw-0123456789"},"callbacks":["com.x.y:/cb","http://127.0.0.1/callback"]}"#
        let options = try Options.parse(["--dev-json", "dev.json", "--email", "other@b.test", "--slow"]) { _ in Data(dev.utf8) }
        #expect(options.issuer == "http://127.0.0.1:8080")
        #expect(options.clientID == "pk_test_a")
        #expect(options.redirectURI == "http://127.0.0.1/callback")
        #expect(options.email == "other@b.test")
        #expect(options.productionClientID == "pk_live_c")
        #expect(options.secretKey == "sk_test_b")
        #expect(options.slow)
        #expect(throws: Options.Problem.self) { try Options.parse(["--issuer", "http://x"]) }
        #expect(throws: Options.Problem.self) { try Options.parse(["--bogus"]) }
    }

    @Test func linesAndTheClosingCountHaveTheDocumentedShape() {
        let results = [
            CheckResult(clause: "RFC 7636 §4.6", title: "pkce: wrong verifier is refused", outcome: .pass("400 pkce_verification_failed")),
            CheckResult(clause: "protocol.md#exchange-replay", title: "replay", outcome: .fail("200")),
            CheckResult(clause: "RFC 7662 §2", title: "introspection", outcome: .skip("no --secret-key given")),
        ]
        let formatter = ReportFormatter(redactor: Redactor())
        #expect(formatter.line(results[0]) == "PASS  RFC 7636 §4.6  pkce: wrong verifier is refused (400 pkce_verification_failed)")
        #expect(ReportFormatter.closingLine(results) == "1 passed, 1 failed, 1 skipped")
        let json = try? JSONSerialization.jsonObject(with: Data(formatter.json(results).utf8)) as? [String: Any]
        #expect(json?["failed"] as? Int == 1)
        #expect((json?["results"] as? [[String: Any]])?.first?["verdict"] as? String == "PASS")
        let junit = formatter.junit(results)
        #expect(junit.contains(#"<testsuite name="zevauth-conformance" tests="3" failures="1" skipped="1">"#))
        #expect(junit.contains(#"<failure message="200"/>"#))
        #expect(ReportFormatter.xmlEscape("a<b & \"c\"\u{01}") == "a&lt;b &amp; &quot;c&quot;")
    }

    @Test func nothingSecretSurvivesFormatting() {
        let redactor = Redactor()
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        redactor.register(verifier)
        redactor.register("correct horse battery")
        let leaky = CheckResult(
            clause: "RFC 7636 §4.6", title: "leak",
            outcome: .fail(
                "verifier \(verifier), password correct horse battery, code hoc_abcdefghijklmnop, token zat_ABCDEFGHIJKL, key sk_live_QWERTYUIOPAS, client pk_test_visible"
            ))
        let formatter = ReportFormatter(redactor: redactor)
        for output in [formatter.line(leaky), formatter.json([leaky]), formatter.junit([leaky])] {
            for secret in [verifier, "correct horse battery", "hoc_abcdefghijklmnop", "zat_ABCDEFGHIJKL", "sk_live_QWERTYUIOPAS"] {
                #expect(!output.contains(secret))
            }
            #expect(output.contains("pk_test_visible"))
        }
        let encoded = "state%3Dcorrect%20horse%20battery"
        #expect(!redactor.scrub(encoded).contains("horse"))
    }
}
