import Authorize
import Testing

/// A web client's remembered consent (docs/protocol.md, "Web clients: consent"): per scope set, and it
/// answers `prompt=none` whatever the kind of the client's redirect URI; native apps keep their rules.
@Suite struct WebClientConsentTests {
    @Test func aRememberedSetCoversItsSubsetsOnly() {
        let wide = GrantedScope(requested: "openid profile email")
        let narrow = GrantedScope(requested: "openid email")
        #expect(WebClientConsent.covers(remembered: [wide.value], requested: narrow))
        #expect(WebClientConsent.covers(remembered: [wide.value], requested: wide))
        #expect(!WebClientConsent.covers(remembered: [narrow.value], requested: wide))
        #expect(!WebClientConsent.covers(remembered: [], requested: .none))
        #expect(WebClientConsent.covers(remembered: [""], requested: .none))
        #expect(!WebClientConsent.covers(remembered: [""], requested: narrow))
        #expect(
            WebClientConsent.covers(remembered: [narrow.value, "openid profile"], requested: GrantedScope(requested: "openid profile")))
    }

    @Test func promptNoneIssuesForAWebClientWithRememberedConsentEvenOnALoopbackRedirect() {
        #expect(
            NoInteraction.decide(browserAccount: "u", hint: nil, redirectKind: .loopback, consentRemembered: true, webClient: true)
                == .issueCode)
        #expect(
            NoInteraction.decide(browserAccount: "u", hint: nil, redirectKind: .link, consentRemembered: true, webClient: true)
                == .issueCode)
        // Native apps: loopback and custom schemes always need the click.
        for kind in [RedirectKind.loopback, .customScheme] {
            guard
                case .refuse(let error) = NoInteraction.decide(browserAccount: "u", hint: nil, redirectKind: kind, consentRemembered: true)
            else {
                Issue.record("a native \(kind) redirect issued a code without a click")
                continue
            }
            #expect(error.code == .consentRequired)
        }
        guard
            case .refuse(let error) = NoInteraction.decide(
                browserAccount: "u", hint: nil, redirectKind: .link, consentRemembered: false, webClient: true)
        else {
            Issue.record("no remembered consent issued a code")
            return
        }
        #expect(error.code == .consentRequired)
    }
}
