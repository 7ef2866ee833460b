import Authorize
import Encoding
import Foundation
import Testing

/// docs/protocol.md, "OpenID Connect": the pure parts — the granted scope, the nonce rule and its place in
/// the start's order, and the ID token's claims (at_hash, order, optional claims).
@Suite struct OpenIDClaimsTests {
    @Test(
        arguments: [
            (nil, ""), ("", ""), ("openid", "openid"), ("profile email", ""), ("offline_access", ""),
            ("email profile openid", "openid profile email"), ("openid  foo bar offline_access", "openid offline_access"),
            ("OPENID profile", ""), ("openid openid email", "openid email"),
        ] as [(String?, String)])
    func theGrantedScopeIsInTheListsOrderAndNeedsOpenID(requested: String?, granted: String) {
        #expect(GrantedScope(requested: requested).value == granted)
    }

    @Test func aNonceFollowsTheStateRules() {
        #expect(Nonce(decoded: "") == nil)
        #expect(Nonce(decoded: String(repeating: "n", count: 512))?.value.count == 512)
        #expect(Nonce(decoded: String(repeating: "n", count: 513)) == nil)
        #expect(Nonce(decoded: "a\u{0}b") == nil)
        #expect(Nonce(decoded: "a\u{85}b") == nil)
        #expect(Nonce(decoded: "any printable ☃ text")?.value == "any printable ☃ text")
    }

    @Test func theNonceIsCheckedAfterPKCEAndRedirected() {
        let long = decide(startQuery(["nonce": String(repeating: "n", count: 513)]))
        #expect(outcome(long) == .redirect(.invalidRequest))
        if case .redirect(let error, _, _) = long { #expect(error.description.hasPrefix("invalid_nonce")) }
        #expect(outcome(decide(startQuery(["nonce": "x", "code_challenge": nil]))) == .redirect(.pkceRequired))
        #expect(
            outcome(decide(startQuery(["nonce": String(repeating: "n", count: 513), "state": nil]))) == .show(.invalidState, 400))
        guard case .proceed(let request) = decide(startQuery(["nonce": "abc", "scope": "openid email x"])) else {
            Issue.record("expected to proceed")
            return
        }
        #expect(request.nonce?.value == "abc")
        #expect(request.scope.value == "openid email")
        // An empty nonce counts as missing (docs/protocol.md#empty-parameter).
        guard case .proceed(let empty) = decide(startQuery(["nonce": ""])) else {
            Issue.record("expected to proceed")
            return
        }
        #expect(empty.nonce == nil)
        #expect(empty.scope == .none)
    }

    static func session(scope: String, nonce: String?, methods: AuthenticationMethods, image: String?) -> IssuedSession {
        IssuedSession(
            sessionID: "sid-1", accessExpiresAt: Date(timeIntervalSince1970: 2_000), expiresAt: Date(timeIntervalSince1970: 9_000),
            idleExpiresAt: Date(timeIntervalSince1970: 8_000),
            user: SessionUser(id: "user-1", email: "pat@example.com", name: "Pat \"P\"", imageURL: image),
            grant: SessionGrant(
                scope: GrantedScope(requested: scope), nonce: nonce, methods: methods, authTime: Date(timeIntervalSince1970: 900),
                profileUpdatedAt: Date(timeIntervalSince1970: 100)))
    }

    @Test func theClaimsAreWrittenOnceInAFixedOrder() {
        let full = IDTokenClaims(
            issuer: "https://id.example.com", clientID: "pk_test_x",
            session: Self.session(scope: "openid profile email", nonce: "n\"1", methods: .passwordAndTOTP, image: "https://i/p.png"),
            accessTokenHash: "AH", now: Date(timeIntervalSince1970: 1_000))
        #expect(
            String(decoding: full.bytes, as: UTF8.self)
                == #"{"iss":"https://id.example.com","sub":"user-1","aud":"pk_test_x","azp":"pk_test_x","iat":1000,"exp":4600,"#
                + #""auth_time":900,"nonce":"n\"1","amr":["pwd","otp","mfa"],"sid":"sid-1","at_hash":"AH","name":"Pat \"P\"","#
                + #""picture":"https://i/p.png","updated_at":100,"email":"pat@example.com","email_verified":false}"#)
        let bare = IDTokenClaims(
            issuer: "https://id.example.com", clientID: "pk_test_x",
            session: Self.session(scope: "openid", nonce: nil, methods: .passwordAndRecoveryCode, image: nil), accessTokenHash: "AH",
            now: Date(timeIntervalSince1970: 1_000))
        #expect(
            String(decoding: bare.bytes, as: UTF8.self)
                == #"{"iss":"https://id.example.com","sub":"user-1","aud":"pk_test_x","azp":"pk_test_x","iat":1000,"exp":4600,"#
                + #""auth_time":900,"amr":["pwd","mfa"],"sid":"sid-1","at_hash":"AH"}"#)
    }

    @Test func theMethodsOfASecondFactor() {
        #expect(AuthenticationMethods(secondFactor: SecondFactorCode("123456")) == .passwordAndTOTP)
        #expect(AuthenticationMethods(secondFactor: SecondFactorCode("zrc_ABCDE-FGHIJ")) == .passwordAndRecoveryCode)
        #expect(AuthenticationMethods(stored: nil).values == ["pwd"])
        #expect(AuthenticationMethods(stored: "pwd otp mfa").values == ["pwd", "otp", "mfa"])
    }
}
