import Authorize
import Foundation
import Testing

/// docs/protocol.md#pushed-requests: the start's checks at `POST /oauth2/par` and on a resumed pushed
/// request, the `require_pushed_authorization_requests` check, and reading a `request_uri` (RFC 9126).
@Suite struct PushedRequestTests {
    func query(_ pairs: [(name: String, value: String)]) -> StartQuery {
        StartQuery(pairs: pairs.map { StartQuery.Pair($0.name, $0.value) })
    }

    func decide(_ pairs: [(name: String, value: String)], _ endpoint: StartEndpoint, client: ClientEnvironment = development)
        -> StartDecision
    {
        StartValidator.decide(query(pairs), endpoint: endpoint) { $0 == "pk_test_dev" ? client : nil }
    }

    var requiring: ClientEnvironment {
        var client = development
        client.requiresPushedRequests = true
        return client
    }

    @Test func aPushedRequestPassesTheStartChecks() {
        guard case .proceed(let validated) = decide(startQuery(standard: true), .pushed) else {
            Issue.record("a valid pushed request was refused")
            return
        }
        #expect(validated.state.value == "xyz")
    }

    /// Every start check still runs, in order, at the PAR endpoint; only the status of `invalid_client`
    /// (RFC 9126 §2.3) and the `request_uri` check (§2.1) differ.
    @Test(arguments: [
        ("unknown client, 401", startQuery(["client_id": "pk_test_unknown"], standard: true), Outcome.show(.invalidClient, 401)),
        ("missing client, 401", startQuery(["client_id": nil], standard: true), .show(.invalidClient, 401)),
        ("repeated parameter", startQuery(standard: true) + [("state", "again")], .show(.invalidRequest, 400)),
        ("no redirect_uri", startQuery(["redirect_uri": nil], standard: true), .show(.redirectURIRequired, 400)),
        ("request_uri", startQuery(["request_uri": "urn:ietf:params:oauth:request_uri:abc"], standard: true), .redirect(.invalidRequest)),
        ("request", startQuery(["request": "a.b.c"], standard: true), .redirect(.requestNotSupported)),
        ("no state", startQuery(["state": nil], standard: true), .show(.invalidState, 400)),
        ("no response_type", startQuery(), .redirect(.invalidRequest)),
        ("no challenge", startQuery(["code_challenge": nil], standard: true), .redirect(.pkceRequired)),
        ("plain", startQuery(["code_challenge_method": "plain"], standard: true), .redirect(.pkceMethodUnsupported)),
    ])
    func pushedChecksKeepTheStartOrder(name: String, pairs: [(name: String, value: String)], expected: Outcome) {
        #expect(outcome(decide(pairs, .pushed)) == expected, "\(name)")
    }

    @Test func theAuthorizeEndpointStillRefusesAForeignRequestURI() {
        let foreign = startQuery(["request_uri": "https://rp.example/r"], standard: true)
        #expect(outcome(decide(foreign, .authorize)) == .redirect(.requestURINotSupported))
    }

    @Test func aClientThatRequiresPushedRequestsIsRefusedOnBothStartsAfterItsRedirectURI() {
        for endpoint in [StartEndpoint.authorize, .zevAuthStart] {
            let decision = decide(startQuery(standard: true), endpoint, client: requiring)
            guard case .redirect(let error, _, let state) = decision else {
                Issue.record("\(endpoint): \(decision)")
                continue
            }
            #expect(error.code == .invalidRequest)
            #expect(error.description.contains("pushed authorization requests"))
            #expect(state?.value == "xyz")
        }
        // The redirect URI is checked first: an unregistered one is still shown, never redirected.
        let unregistered = startQuery(["redirect_uri": "com.acme.other:/cb"], standard: true)
        #expect(outcome(decide(unregistered, .authorize, client: requiring)) == .show(.redirectURIMismatch, 400))
        for endpoint in [StartEndpoint.pushed, .pushedReference] {
            guard case .proceed = decide(startQuery(standard: true), endpoint, client: requiring) else {
                Issue.record("\(endpoint) refused a client that requires pushed requests")
                continue
            }
        }
    }

    @Test func onlyTheServersOwnRequestURIWithAClientIDIsAReference() {
        let ours = "urn:ietf:params:oauth:request_uri:abc"
        #expect(
            StartValidator.pushedReference(query([("client_id", "pk_test_dev"), ("request_uri", ours), ("state", "ignored")]))
                == .reference(clientID: "pk_test_dev", reference: "abc"))
        #expect(StartValidator.pushedReference(query([("client_id", "pk_test_dev"), ("request_uri", "https://rp.example/r")])) == .none)
        #expect(StartValidator.pushedReference(query([("request_uri", ours)])) == .none)
        #expect(
            StartValidator.pushedReference(query([("client_id", "pk_test_dev"), ("request_uri", "urn:ietf:params:oauth:request_uri:")]))
                == .none)
        #expect(
            StartValidator.pushedReference(query([("client_id", "pk_test_dev"), ("request_uri", ours), ("request_uri", ours)])) == .none)
    }

    @Test func storedParametersLeaveOutWhatDidNotDecode() {
        let parsed = StartValidator.parse(rawQuery: "client_id=pk_test_dev&login_hint=%FF&scope=openid+email")
        #expect(parsed.storableParameters == ["client_id": "pk_test_dev", "scope": "openid email"])
        #expect(StartQuery(stored: parsed.storableParameters).storableParameters == parsed.storableParameters)
    }

    @Test func onlyPublicClientsAuthenticateToday() {
        #expect(ClientAuthentication.checkPublicClient(parameterNames: ["client_id", "state"], authorizationScheme: nil) == nil)
        #expect(ClientAuthentication.checkPublicClient(parameterNames: ["client_id"], authorizationScheme: "bearer") == nil)
        for name in ["client_secret", "client_assertion", "client_assertion_type"] {
            #expect(
                ClientAuthentication.checkPublicClient(parameterNames: ["client_id", name], authorizationScheme: nil)?.code
                    == .invalidClient)
        }
        #expect(ClientAuthentication.checkPublicClient(parameterNames: ["client_id"], authorizationScheme: "basic")?.code == .invalidClient)
    }

    @Test func requestURIsCarryTheRegisteredPrefix() {
        #expect(PushedRequestURI.reference("urn:ietf:params:oauth:request_uri:xyz") == "xyz")
        #expect(PushedRequestURI.reference("URN:ietf:params:oauth:request_uri:xyz") == nil)
        #expect(PushedRequestURI.lifetimeSeconds == 60)
    }
}
