import Crypto
import Encoding
import Foundation

/// The OpenID Connect checks (docs/protocol.md, "OpenID Connect"): discovery, the nonce rule, the ID
/// token's claims, `auth_time` and `at_hash` on the exchange and a refresh, the ID tokens' signatures
/// against the JWKS (`KeyVerdicts.signature`), and userinfo's answers.
extension Suite {
    /// The payload of a JWS compact serialization, without verifying it.
    static func jwtClaims(_ compact: String?) -> [String: Any]? {
        guard let parts = compact?.split(separator: ".", omittingEmptySubsequences: false), parts.count == 3,
            let payload = Base64URL.decodeCanonical(String(parts[1]))
        else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
    }

    /// `at_hash` of an access token (OpenID Connect Core §3.3.2.11).
    static func atHash(_ accessToken: String) -> String { Base64URL.encode(Crypto.sha256(Array(accessToken.utf8)).prefix(16)) }

    func openIDChecks() throws(AgentError) {
        try openIDDiscoveryChecks()
        let json = "application/json"
        // The nonce rule, after the redirect URI is trusted: redirected with state and iss.
        let long = start(challenge: agent.pkce().challenge).setting("nonce", String(repeating: "n", count: 513))
        record(
            "OpenID Connect Core §3.1.2.1",
            "start: a nonce over 512 characters → invalid_request beginning invalid_nonce, redirected with state and iss",
            Verdicts.redirectedError(
                try browser.get(long.target()), redirectURI: options.redirectURI, error: "invalid_request", state: "conformance-state",
                issuer: options.issuer, descriptionPrefix: "invalid_nonce"))
        var standard = long
        standard.path = authorizeEndpoint
        standard.pairs.append(("response_type", "code"))
        record(
            "OpenID Connect Core §3.1.2.6, protocol.md#authorize-errors",
            "authorize: the same nonce → invalid_request beginning invalid_nonce, redirected",
            Verdicts.redirectedError(
                try browser.get(standard.target()), redirectURI: options.redirectURI, error: "invalid_request",
                state: "conformance-state", issuer: options.issuer, descriptionPrefix: "invalid_nonce"))

        // UserInfo without a token, and with a session that was not granted openid.
        let anonymous = try agent.send(.get, "/oauth2/userinfo", headers: [("Accept", json)])
        record(
            "RFC 6750 §3.1", "userinfo: no token → 401 with WWW-Authenticate: Bearer and no error code",
            .expect(
                anonymous.status == 401 && anonymous.header("WWW-Authenticate") == "Bearer",
                Verdicts.describe(anonymous) + " WWW-Authenticate=\(anonymous.header("WWW-Authenticate") ?? "none")"))
        let plain = try exchange(try issue())
        if let plainTokens = tokens(plain) {
            let scope = (plain.json?["session"] as? [String: Any])?["scope"] as? String
            record(
                "RFC 6749 §5.1", "exchange without scope: session.scope is \"\" and no idToken",
                .expect(
                    scope == "" && (plain.json?["session"] as? [String: Any])?["idToken"] == nil,
                    "scope=\(scope.map { "\"\($0)\"" } ?? "none")"))
            let forbidden = try agent.send(.get, "/oauth2/userinfo", headers: [("Authorization", "Bearer \(plainTokens.access)")])
            record(
                "RFC 6750 §3.1", "userinfo: a token without openid → 403 insufficient_scope",
                .expect(
                    forbidden.status == 403 && forbidden.header("WWW-Authenticate") == "Bearer error=\"insufficient_scope\"",
                    Verdicts.describe(forbidden)))
            let refreshAsBearer = try agent.send(.get, "/oauth2/userinfo", headers: [("Authorization", "Bearer \(plainTokens.refresh)")])
            record(
                "RFC 6750 §3.1", "userinfo: a refresh token → 401 invalid_token",
                .expect(
                    refreshAsBearer.status == 401 && refreshAsBearer.header("WWW-Authenticate") == "Bearer error=\"invalid_token\"",
                    Verdicts.describe(refreshAsBearer)))
        }
        try openIDTokenChecks()
    }

    func openIDDiscoveryChecks() throws(AgentError) {
        let accept = [("Accept", "application/json")]
        let openid = try agent.send(.get, "/.well-known/openid-configuration", headers: accept)
        let oauth = try agent.send(.get, "/.well-known/oauth-authorization-server", headers: accept)
        record(
            "OpenID Connect Discovery 1.0 §4", "discovery: served at /.well-known/openid-configuration as JSON",
            .expect(openid.status == 200 && openid.json != nil, Verdicts.describe(openid)))
        guard let json = openid.json else { return }
        record(
            "RFC 8414 §3", "discovery: the same document at both well-known paths", .expect(openid.body == oauth.body, "\(oauth.status)"))
        record(
            "OpenID Connect Discovery 1.0 §4.3", "discovery: issuer identical to the deployment's issuer",
            .expect(json["issuer"] as? String == options.issuer, json["issuer"] as? String ?? "no issuer"))
        let required = [
            "issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported", "subject_types_supported",
            "id_token_signing_alg_values_supported", "userinfo_endpoint", "scopes_supported", "claims_supported",
        ]
        let missing = required.filter { json[$0] == nil }
        record(
            "OpenID Connect Discovery 1.0 §3", "discovery: every field AppAuth and the section require",
            .expect(missing.isEmpty, missing.isEmpty ? "all present" : "missing \(missing.joined(separator: ", "))"))
        let endSession = json["end_session_endpoint"] as? String
        record(
            "OpenID Connect RP-Initiated Logout 1.0 §2.1", "discovery: end_session_endpoint is the issuer's /oauth2/logout",
            .expect(endSession == options.issuer + "/oauth2/logout", endSession ?? "no end_session_endpoint"))
        let algorithms = json["id_token_signing_alg_values_supported"] as? [String] ?? []
        let scopes = json["scopes_supported"] as? [String] ?? []
        record(
            "OpenID Connect Discovery 1.0 §3", "discovery: RS256 and ES256 signing, the openid scope, public subjects",
            .expect(
                algorithms.contains("RS256") && algorithms.contains("ES256") && scopes.contains("openid")
                    && json["subject_types_supported"] as? [String] == ["public"],
                "algs=\(algorithms) scopes=\(scopes)"))
        record(
            "OpenID Connect Discovery 1.0 §3", "discovery: request and request_uri not supported, the claims parameter supported",
            .expect(
                json["request_parameter_supported"] as? Bool == false && json["request_uri_parameter_supported"] as? Bool == false
                    && json["claims_parameter_supported"] as? Bool == true, "as advertised"))
        record(
            "protocol.md#openid-discovery", "discovery: Cache-Control public, max-age=300",
            .expect(openid.header("Cache-Control") == "public, max-age=300", openid.header("Cache-Control") ?? "none"))
    }

    func openIDTokenChecks() throws(AgentError) {
        let nonce = "conformance nonce é✓ \(UUID().uuidString)"
        let pair = agent.pkce()
        let request = start(challenge: pair.challenge).setting("scope", "openid profile email unknown").setting("nonce", nonce)
        let flow = try browser.signIn(startTarget: request.target())
        guard let back = flow.back(options.redirectURI), let code = back.value("code") else {
            throw .signInStopped(
                step: "the redirect back to the app", seen: Verdicts.describe(flow.final, redirectURI: options.redirectURI))
        }
        redactor.register(code)
        // Two seconds between the sign-in and the exchange, so an auth_time taken at the exchange shows.
        agent.sleep(2)
        let answer = try exchange(code: code, verifier: pair.verifier, redirectURI: options.redirectURI, key: options.clientID)
        if answer.status == 503 {
            record("OpenID Connect Core §3.1.3.3", "exchange of an OpenID code: an ID token", .skip("503: the server has no signing keys"))
            return
        }
        let session = answer.json?["session"] as? [String: Any]
        record(
            "RFC 6749 §5.1", "exchange: session.scope is the granted scope in the list's order, unknown values ignored",
            .expect(session?["scope"] as? String == "openid profile email", "scope=\(session?["scope"] as? String ?? "none")"))
        guard let tokens = tokens(answer), let idToken = session?["idToken"] as? String, let claims = Self.jwtClaims(idToken) else {
            record(
                "OpenID Connect Core §3.1.3.3", "exchange of an OpenID code: an ID token",
                .fail(Verdicts.describe(answer) + " without idToken"))
            return
        }
        redactor.register(idToken)
        let jwks =
            try agent.send(.get, "/.well-known/jwks.json", headers: [("Accept", "application/json")]).json?["keys"] as? [[String: Any]]
            ?? []
        record(
            "RFC 7515 §5.2, OpenID Connect Core §3.1.3.7", "ID token: signed by the JWKS key its kid names, with that key's alg",
            KeyVerdicts.signature(idToken, keys: jwks))
        let iat = claims["iat"] as? Int ?? 0
        record(
            "OpenID Connect Core §2", "ID token: iss, aud and azp (the client id), sub, exp = iat + 3600",
            .expect(
                claims["iss"] as? String == options.issuer && claims["aud"] as? String == options.clientID
                    && claims["azp"] as? String == options.clientID && claims["sub"] is String && claims["exp"] as? Int == iat + 3600,
                "iss=\(claims["iss"] as? String ?? "none")"))
        record(
            "OpenID Connect Core §3.1.3.7", "ID token: iat within 600 s of this client's clock",
            .expect(abs(Double(iat) - Date().timeIntervalSince1970) <= 600, "iat=\(iat)"))
        record(
            "OpenID Connect Core §3.1.2.1", "ID token: nonce exactly as sent",
            .expect(claims["nonce"] as? String == nonce, claims["nonce"] == nil ? "no nonce" : "nonce differs"))
        record(
            "OpenID Connect Core §3.3.2.11", "ID token: at_hash of the access token issued with it",
            .expect(claims["at_hash"] as? String == Self.atHash(tokens.access), claims["at_hash"] == nil ? "no at_hash" : "at_hash differs")
        )
        let authTime = claims["auth_time"] as? Int
        record(
            "OpenID Connect Core §2", "ID token: auth_time is when the person authenticated, at least 2 s before the exchange's iat",
            .expect(authTime.map { $0 + 2 <= iat } == true, "auth_time=\(authTime.map(String.init) ?? "none") iat=\(iat)"))
        let amr = claims["amr"] as? [String] ?? []
        record(
            "OpenID Connect Core §2, RFC 8176", "ID token: auth_time, amr with pwd, sid the session's id",
            .expect(
                claims["auth_time"] is Int && amr.first == "pwd" && claims["sid"] as? String == session?["id"] as? String, "amr=\(amr)"))
        record(
            "OpenID Connect Core §5.4", "ID token: the profile and email claims of the granted scope",
            .expect(
                (claims["email"] as? String)?.lowercased() == options.email.lowercased() && claims["name"] is String
                    && claims["email_verified"] is Bool, "email and name"))

        let info = try agent.send(.get, "/oauth2/userinfo", headers: [("Authorization", "Bearer \(tokens.access)")])
        record(
            "OpenID Connect Core §5.3.2", "userinfo: 200 with the ID token's sub and no-store",
            .expect(
                info.status == 200 && info.json?["sub"] as? String == claims["sub"] as? String
                    && info.header("Cache-Control") == "no-store",
                Verdicts.describe(info)))
        let form = try agent.send(
            .post, "/oauth2/userinfo", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array(FormURLEncoding.encode([("access_token", tokens.access)]).utf8))
        record("RFC 6750 §2.2", "userinfo: the token as a form field on POST", .expect(form.status == 200, Verdicts.describe(form)))

        let refreshed = try refresh(tokens.refresh)
        let refreshedSession = refreshed.json?["session"] as? [String: Any]
        let nextToken = refreshedSession?["idToken"] as? String
        let next = Self.jwtClaims(nextToken)
        record(
            "RFC 7515 §5.2, OpenID Connect Core §12.2", "refresh: the new ID token signed by the JWKS key its kid names",
            nextToken.map { KeyVerdicts.signature($0, keys: jwks) } ?? .fail(Verdicts.describe(refreshed) + " without idToken"))
        record(
            "OpenID Connect Core §12.2", "refresh: a new ID token, same sid, at_hash of the new access token, no nonce",
            .expect(
                next?["sid"] as? String == claims["sid"] as? String && next?["nonce"] == nil
                    && next?["at_hash"] as? String == (refreshedSession?["accessToken"] as? String).map(Self.atHash),
                Verdicts.describe(refreshed)))
    }
}
