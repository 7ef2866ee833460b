import Authorize
import Testing

@Suite struct OAuthStateTests {
    @Test(arguments: [
        ("", false),
        ("a", true),
        (String(repeating: "a", count: 512), true),
        (String(repeating: "a", count: 513), false),
        (String(repeating: "😀", count: 512), true),  // each emoji is one scalar
        (String(repeating: "😀", count: 513), false),
        ("a\u{0}b", false),
        ("a\tb", false),
        ("a\nb", false),
        ("a\u{7F}b", false),  // DEL
        ("a\u{85}b", false),  // C1 control NEL
        ("a\u{9F}b", false),  // last C1 control
        ("a\u{A0}b", true),  // no-break space is Zs, not Cc
        ("a\u{200B}b", true),  // zero-width space is Cf, allowed
        ("a b&c=d+e%f#g", true),
    ])
    func stateLengthAndControls(value: String, valid: Bool) {
        #expect((OAuthState(decoded: value) != nil) == valid)
    }

    @Test func emojiWithModifiersCountsScalarsNotCharacters() {
        // "👍🏽" is one Character but two scalars: 256 of them are 512 scalars, 257 are 514.
        #expect(OAuthState(decoded: String(repeating: "👍🏽", count: 256)) != nil)
        #expect(OAuthState(decoded: String(repeating: "👍🏽", count: 257)) == nil)
    }

    @Test func stateIsReEncodedWithOnlyUnreservedCharactersBare() throws {
        let state = try #require(OAuthState(decoded: "a b&c=d+e%f#g"))
        let location = redirectLocation(
            base: uri("com.acme.app:/callback"),
            parameters: successRedirectParameters(code: "hoc_abc", state: state, issuer: "https://id.example"))
        #expect(location == "com.acme.app:/callback?code=hoc_abc&state=a%20b%26c%3Dd%2Be%25f%23g&iss=https%3A%2F%2Fid.example")
    }

    @Test func nonASCIIStateIsPercentEncodedAsUTF8() throws {
        let state = try #require(OAuthState(decoded: "é😀~"))
        let location = redirectLocation(
            base: uri("http://127.0.0.1:5000/cb"),
            parameters: successRedirectParameters(code: "c", state: state, issuer: "i"))
        #expect(location == "http://127.0.0.1:5000/cb?code=c&state=%C3%A9%F0%9F%98%80~&iss=i")
    }
}

@Suite struct RedirectLocationTests {
    @Test(arguments: [
        ("https://acme.com/cb", "https://acme.com/cb?a=1"),
        ("https://acme.com/cb?x=y", "https://acme.com/cb?x=y&a=1"),
        ("https://acme.com/cb?", "https://acme.com/cb?a=1"),
        ("com.acme.app:/cb?v=2", "com.acme.app:/cb?v=2&a=1"),
    ])
    func appendsToAnExistingQuery(base: String, expected: String) {
        #expect(redirectLocation(base: uri(base), parameters: [("a", "1")]) == expected)
    }

    @Test func errorParametersInOrderWithStateAndIssuer() throws {
        let error = OAuthError(.accessDenied, "The person declined.")
        let state = try #require(OAuthState(decoded: "s"))
        let pairs = errorRedirectParameters(error, state: state, issuer: "https://id.example", surface: .zevAuth)
        #expect(pairs.map(\.0) == ["error", "error_description", "state", "iss"])
        #expect(pairs.map(\.1) == ["access_denied", "The person declined.", "s", "https://id.example"])
        let withoutState = errorRedirectParameters(error, state: nil, issuer: "i", surface: .zevAuth)
        #expect(withoutState.map(\.0) == ["error", "error_description", "iss"])
    }
}

@Suite struct OAuthErrorTests {
    @Test func rawValuesAreTheWireCodes() {
        #expect(
            OAuthErrorCode.allCases.map(\.rawValue) == [
                "invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type", "unsupported_response_type",
                "access_denied", "invalid_state", "redirect_uri_required", "redirect_uri_mismatch",
                "custom_scheme_not_allowed", "native_redirect_not_verified", "loopback_redirect_not_allowed",
                "pkce_required", "pkce_method_unsupported", "invalid_code_challenge", "pkce_verification_failed",
                "reauthentication_required", "native_app_limit", "native_app_team_mismatch", "server_error",
                "temporarily_unavailable", "invalid_token", "forbidden", "not_found", "conflict",
                "login_required", "consent_required", "interaction_required", "request_not_supported",
                "request_uri_not_supported", "invalid_request_uri", "invalid_nonce", "insufficient_scope",
                "invalid_dpop_proof", "use_dpop_nonce",
            ])
    }

    @Test(arguments: [
        // docs/protocol.md#error-codes: the native-app errors.
        (OAuthErrorCode.pkceMethodUnsupported, 400), (.invalidCodeChallenge, 400), (.pkceRequired, 400),
        (.invalidState, 400), (.nativeRedirectNotVerified, 403), (.customSchemeNotAllowed, 403),
        (.pkceVerificationFailed, 400), (.redirectURIRequired, 400), (.redirectURIMismatch, 400),
        (.reauthenticationRequired, 401), (.nativeAppLimit, 400), (.nativeAppTeamMismatch, 400),
        // docs/protocol.md#error-codes: the RFC and admin errors.
        (.invalidClient, 401), (.invalidRequest, 400), (.invalidGrant, 400), (.loopbackRedirectNotAllowed, 403),
        (.unsupportedResponseType, 400), (.unsupportedGrantType, 400), (.invalidToken, 401), (.forbidden, 403),
        (.notFound, 404), (.conflict, 409), (.accessDenied, 403), (.serverError, 500), (.temporarilyUnavailable, 503),
        // OpenID Connect Core §3.1.2.6 (redirected; 400 when answered directly).
        (.loginRequired, 400), (.consentRequired, 400), (.interactionRequired, 400), (.requestNotSupported, 400),
        (.requestURINotSupported, 400), (.invalidRequestURI, 400),
        // RFC 9449 §5 and §8 at the token endpoint (a resource answers 401 itself, docs/dpop.md).
        (.invalidDPoPProof, 400), (.useDPoPNonce, 400),
    ])
    func statusComesFromTheContract(code: OAuthErrorCode, status: Int) {
        #expect(code.httpStatus == status)
        #expect(OAuthError(code, "x").status == status)
    }

    @Test func explicitStatusOverridesTheTable() {
        #expect(OAuthError(.invalidClient, "x", status: 400).status == 400)
    }

    @Test(arguments: [
        (OAuthErrorCode.pkceRequired, StandardEndpoint.authorize, OAuthErrorCode.invalidRequest),
        (.pkceMethodUnsupported, .authorize, .invalidRequest),
        (.invalidCodeChallenge, .authorize, .invalidRequest),
        (.invalidState, .authorize, .invalidRequest),
        (.unsupportedResponseType, .authorize, .unsupportedResponseType),
        (.accessDenied, .authorize, .accessDenied),
        (.serverError, .authorize, .serverError),
        (.loginRequired, .authorize, .loginRequired),
        (.consentRequired, .authorize, .consentRequired),
        (.requestURINotSupported, .authorize, .requestURINotSupported),
        (.invalidRequestURI, .authorize, .invalidRequestURI),
        (.redirectURIRequired, .token, .invalidGrant),
        (.redirectURIMismatch, .token, .invalidGrant),
        (.pkceVerificationFailed, .token, .invalidGrant),
        (.reauthenticationRequired, .token, .invalidGrant),
        (.invalidGrant, .token, .invalidGrant),
        (.invalidClient, .token, .invalidClient),
        (.invalidToken, .token, .invalidClient),
        (.unsupportedGrantType, .token, .unsupportedGrantType),
        (.invalidRequest, .token, .invalidRequest),
    ])
    func standardEndpointsUseRFCCodes(code: OAuthErrorCode, endpoint: StandardEndpoint, rfc: OAuthErrorCode) {
        #expect(code.rfcCode(at: endpoint) == rfc)
        let error = OAuthError(code, "Details.")
        #expect(error.wireError(on: .standard(endpoint)) == rfc.rawValue)
        #expect(error.wireDescription(on: .standard(endpoint)) == code.rawValue + ": Details.")
        #expect(error.wireError(on: .zevAuth) == code.rawValue)
        #expect(error.wireDescription(on: .zevAuth) == "Details.")
    }

    @Test func everyRFCCodeOnAStandardEndpointIsAnRFC6749Code() {
        let rfc6749: Set<OAuthErrorCode> = [
            .invalidRequest, .invalidClient, .invalidGrant, .unsupportedGrantType, .unsupportedResponseType,
            .accessDenied, .serverError, .temporarilyUnavailable,
        ]
        // OpenID Connect Core §3.1.2.6 and §6.2 add their authorization error codes to RFC 6749's.
        let openID: Set<OAuthErrorCode> = [
            .loginRequired, .consentRequired, .interactionRequired, .requestNotSupported, .requestURINotSupported,
            .invalidRequestURI,
        ]
        // RFC 9449 §5 and §8 add the DPoP codes to the token endpoint's.
        let dpop: Set<OAuthErrorCode> = [.invalidDPoPProof, .useDPoPNonce]
        for code in OAuthErrorCode.allCases {
            #expect(rfc6749.union(openID).contains(code.rfcCode(at: .authorize)), "\(code)")
            #expect(rfc6749.union(dpop).contains(code.rfcCode(at: .token)), "\(code)")
        }
    }
}
