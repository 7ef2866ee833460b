import Crypto
import Encoding
import Foundation

/// The OpenID Foundation's OP test plans for a confidential web client (docs/protocol.md, "Web clients";
/// docs/conformance.md, "Web clients: the OpenID Foundation's modules"): the Config OP plan's discovery
/// checks, the Basic OP plan's modules, the token exchange once per authentication method, the Form Post
/// OP plan and the RP-Initiated Logout OP plan. Each check names the module it mirrors and asserts
/// ZevAuth's documented answer.
extension Suite {
    // MARK: Requests

    /// `/oauth2/authorize`'s parameters for `client`: `response_type=code`, `scope`, `state`, a fresh
    /// S256 challenge (RFC 9700 §2.1.1: a web client sends PKCE too), `nonce` unless it is nil, then `extra`
    /// (a name given there replaces the default). Returns the pairs and the verifier.
    func webAuthorizePairs(
        _ client: Options.WebClient, scope: String = "openid", nonce: String? = "conformance-nonce", state: String = "conformance-state",
        extra: [(String, String)] = []
    ) -> (pairs: [(String, String)], verifier: String) {
        let pkce = agent.pkce()
        var request = Start(
            path: authorizeEndpoint,
            pairs: [
                ("client_id", client.clientID), ("redirect_uri", client.redirectURI), ("response_type", "code"), ("scope", scope),
                ("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256"),
            ])
        if let nonce { request = request.setting("nonce", nonce) }
        for (name, value) in extra { request = request.setting(name, value) }
        return (request.pairs, pkce.verifier)
    }

    /// A code issued to a web client, and how to redeem it.
    struct WebIssued {
        let code: String
        let verifier: String
        let client: Options.WebClient
        let flow: Browser.Flow
    }

    /// Signs in through `/oauth2/authorize` as `client` (a GET, or a form POST when `post`) and returns the
    /// code of the redirect back, or throws when none came.
    func webIssue(
        _ client: Options.WebClient, scope: String = "openid", nonce: String? = "conformance-nonce", extra: [(String, String)] = [],
        post: Bool = false, browser: Browser
    ) throws(AgentError) -> WebIssued {
        let (pairs, verifier) = webAuthorizePairs(client, scope: scope, nonce: nonce, extra: extra)
        let flow =
            post
            ? try browser.signIn(startTarget: authorizeEndpoint, startForm: pairs)
            : try browser.signIn(startTarget: authorizeEndpoint + "?" + FormURLEncoding.encode(pairs))
        guard let back = flow.back(client.redirectURI), let code = back.value("code") else {
            throw .signInStopped(
                step: "the redirect back to the web client", seen: Verdicts.describe(flow.final, redirectURI: client.redirectURI))
        }
        redactor.register(code)
        return WebIssued(code: code, verifier: verifier, client: client, flow: flow)
    }

    /// `POST` to the token endpoint with `client`'s own authentication method (docs/protocol.md,
    /// "Client authentication at /oauth2/token"), or none when `authenticate` is false.
    func webToken(_ client: Options.WebClient, _ pairs: [(String, String)], authenticate: Bool = true, secret: String? = nil)
        throws(AgentError) -> Observed
    {
        var fields = pairs
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
        ]
        if authenticate {
            switch client.authMethod {
            case "client_secret_post":
                fields += [("client_id", client.clientID), ("client_secret", secret ?? client.secret ?? "")]
            case "private_key_jwt":
                fields += [
                    ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                    ("client_assertion", clientAssertion(client) ?? ""),
                ]
            default:
                headers.append(("Authorization", Self.basicAuthorization(client.clientID, secret ?? client.secret ?? "")))
            }
        }
        let observed = try agent.send(.post, tokenEndpoint, headers: headers, body: Array(FormURLEncoding.encode(fields).utf8))
        agent.remember(observed)
        if let idToken = observed.json?["id_token"] as? String { redactor.register(idToken) }
        return observed
    }

    /// The code's exchange at the token endpoint, authenticated as its client.
    func webExchange(_ issued: WebIssued) throws(AgentError) -> Observed {
        try webToken(
            issued.client,
            [
                ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", issued.client.redirectURI),
                ("code_verifier", issued.verifier),
            ])
    }

    /// `Authorization: Basic` of RFC 6749 §2.3.1: the id and the secret each form-encoded, then base64.
    static func basicAuthorization(_ id: String, _ secret: String) -> String {
        let pair = FormURLEncoding.percentEncodeUnreserved(id) + ":" + FormURLEncoding.percentEncodeUnreserved(secret)
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    /// A `private_key_jwt` client assertion (RFC 7523 §3, OpenID Connect Core §9): `iss` and `sub` the
    /// client, `aud` the token endpoint, a minute's lifetime, a fresh `jti`, signed by the client's key
    /// (ES256 for P-256, RS256 for RSA) with `Crypto`'s signer; nil when the key does not load.
    func clientAssertion(_ client: Options.WebClient, audience: String? = nil) -> String? {
        guard let pem = client.privateKeyPEM, let key = Self.signingKey(pem: pem) else { return nil }
        let now = Int(Date().timeIntervalSince1970)
        var header: [String: Any] = ["alg": key.type == .p256 ? "ES256" : "RS256", "typ": "JWT"]
        if let kid = client.keyID { header["kid"] = kid }
        let claims: [String: Any] = [
            "iss": client.clientID, "sub": client.clientID, "aud": audience ?? agent.url(tokenEndpoint), "iat": now, "exp": now + 60,
            "jti": Base64URL.encode((try? Crypto.randomBytes(16)) ?? []),
        ]
        guard let headerJSON = try? JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]),
            let claimsJSON = try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        else { return nil }
        let input = Base64URL.encode(Array(headerJSON)) + "." + Base64URL.encode(Array(claimsJSON))
        guard let signature = try? key.sign(Array(input.utf8)) else { return nil }
        let assertion = input + "." + Base64URL.encode(signature)
        redactor.register(assertion)
        return assertion
    }

    /// The private key of a PEM PKCS#8 block (P-256 first, then RSA), or nil.
    static func signingKey(pem: String) -> Crypto.SigningKey? {
        let body = pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: body) else { return nil }
        return (try? Crypto.SigningKey.load(pkcs8: Array(der), type: .p256))
            ?? (try? Crypto.SigningKey.load(pkcs8: Array(der), type: .rsa2048))
    }

    /// The public keys of the JWKS.
    func jwksKeys() throws(AgentError) -> [[String: Any]] {
        try agent.send(.get, "/.well-known/jwks.json", headers: [("Accept", "application/json")]).json?["keys"] as? [[String: Any]] ?? []
    }

    func userinfo(_ accessToken: String) throws(AgentError) -> Observed {
        try agent.send(.get, "/oauth2/userinfo", headers: [("Authorization", "Bearer \(accessToken)"), ("Accept", "application/json")])
    }

    // MARK: Running

    /// Every web client plan; one SKIP naming the missing option when no web client is known.
    func runWebClientPlans() {
        group("OpenID Connect Discovery 1.0 §3", "oidcc-config: discovery for web clients", webConfigChecks)
        guard let client = options.webClients.first else {
            record(
                "OpenID Connect Core §3.1", "web client modules (Basic, Form Post, RP-Initiated Logout OP)",
                .skip("no web client: give --web-client-id (or --dev-json with webClients)"))
            return
        }
        group("OpenID Connect Core §3.1", "web client: Basic OP modules") { () throws(AgentError) in try webBasicChecks(client) }
        for each in options.webClients {
            group("OpenID Connect Core §9", "web client: \(each.authMethod)") { () throws(AgentError) in try webAuthMethodChecks(each) }
        }
        group("OAuth 2.0 Form Post Response Mode §2", "web client: Form Post OP modules") { () throws(AgentError) in
            try webFormPostChecks(client)
        }
        group("OpenID Connect RP-Initiated Logout 1.0 §2", "web client: RP-Initiated Logout OP modules") { () throws(AgentError) in
            try webLogoutPlan(client)
        }
        if options.secretKey != nil {
            group("RFC 9700 §2.1.1", "web client with requirePkce false") { () throws(AgentError) in try webNoPKCEChecks(client) }
        } else {
            record(
                "RFC 9700 §2.1.1", "web client with requirePkce false", .skip("no --secret-key given (a throwaway client is registered)"))
        }
    }

    // MARK: Config OP

    func webConfigChecks() throws(AgentError) {
        let observed = try agent.send(.get, "/.well-known/openid-configuration", headers: [("Accept", "application/json")])
        guard let json = observed.json else {
            record(
                "OpenID Connect Discovery 1.0 §4", "oidcc-discovery-endpoint-verification: a JSON document",
                .fail(Verdicts.describe(observed)))
            return
        }
        let methods = Set(json["token_endpoint_auth_methods_supported"] as? [String] ?? [])
        record(
            "OpenID Connect Discovery 1.0 §3, RFC 8414 §2",
            "oidcc-config: token_endpoint_auth_methods_supported has client_secret_basic, client_secret_post, private_key_jwt",
            .expect(
                methods.isSuperset(of: ["client_secret_basic", "client_secret_post", "private_key_jwt"]),
                methods.sorted().joined(separator: " ")))
        let signing = json["token_endpoint_auth_signing_alg_values_supported"] as? [String] ?? []
        record(
            "OpenID Connect Discovery 1.0 §3",
            "oidcc-config: token_endpoint_auth_signing_alg_values_supported has RS256 and ES256, no none",
            .expect(signing.contains("RS256") && signing.contains("ES256") && !signing.contains("none"), "\(signing)"))
        let modes = json["response_modes_supported"] as? [String] ?? []
        record(
            "OpenID Connect Discovery 1.0 §3, OAuth 2.0 Form Post Response Mode §2",
            "oidcc-config: response_modes_supported has query and form_post",
            .expect(modes.contains("query") && modes.contains("form_post"), "\(modes)"))
        let types = json["response_types_supported"] as? [String] ?? []
        let grants = json["grant_types_supported"] as? [String] ?? []
        record(
            "OpenID Connect Discovery 1.0 §3",
            "oidcc-config: response_types_supported code, grant_types_supported authorization_code and refresh_token",
            .expect(
                types.contains("code") && grants.contains("authorization_code") && grants.contains("refresh_token"),
                "types=\(types) grants=\(grants)"))
        record(
            "OpenID Connect Discovery 1.0 §3", "oidcc-config: claims_parameter_supported true, request_parameter_supported false",
            .expect(
                json["claims_parameter_supported"] as? Bool == true && json["request_parameter_supported"] as? Bool == false,
                "claims_parameter_supported=\(json["claims_parameter_supported"].map { "\($0)" } ?? "none")"))
        let algorithms = json["id_token_signing_alg_values_supported"] as? [String] ?? []
        record(
            "OpenID Connect Discovery 1.0 §3", "oidcc-config: id_token_signing_alg_values_supported has RS256 (the suite's requirement)",
            .expect(algorithms.contains("RS256") && !algorithms.contains("none"), "\(algorithms)"))
        let keys = try jwksKeys()
        let usable = keys.filter { key in
            key["kid"] is String && key["use"] as? String == "sig" && key["d"] == nil && key["p"] == nil
                && ((key["kty"] as? String == "RSA" && key["n"] is String && key["e"] is String)
                    || (key["kty"] as? String == "EC" && key["crv"] as? String == "P-256" && key["x"] is String && key["y"] is String))
        }
        record(
            "RFC 7517 §4, OpenID Connect Discovery 1.0 §3",
            "oidcc-config: jwks_uri serves public signing keys only, each with kid and use sig",
            .expect(!keys.isEmpty && usable.count == keys.count, "\(usable.count) of \(keys.count) usable"))
    }

    // MARK: Basic OP

    func webBasicChecks(_ client: Options.WebClient) throws(AgentError) {
        let core = "OpenID Connect Core §3.1.2.1"
        let issuer = options.issuer
        let browser = Browser(agent: agent)
        let keys = try jwksKeys()

        // oidcc-server: the code flow end to end.
        let nonce = "conformance-nonce-\(UUID().uuidString)"
        let issued = try webIssue(client, nonce: nonce, browser: browser)
        let back = issued.flow.back(client.redirectURI)
        record(
            "RFC 9207 §2, OpenID Connect Core §3.1.2.5", "oidcc-server: code returned to the redirect URI with state and iss",
            .expect(
                back?.value("state") == "conformance-state" && back?.value("iss") == issuer,
                Verdicts.describe(issued.flow.final, redirectURI: client.redirectURI)))
        let answer = try webExchange(issued)
        let idToken = answer.json?["id_token"] as? String
        let claims = Self.jwtClaims(idToken)
        record(
            "OpenID Connect Core §3.1.3.3", "oidcc-server: token response 200 Bearer with access_token, id_token, no-store",
            .expect(
                answer.status == 200 && (answer.json?["token_type"] as? String)?.lowercased() == "bearer"
                    && answer.json?["access_token"] is String
                    && idToken != nil && answer.hasNoStore, Verdicts.describe(answer)))
        guard let idToken, let claims, let access = answer.json?["access_token"] as? String else { return }
        record(
            "OpenID Connect Core §3.1.3.7", "oidcc-server: ID token signed by the JWKS key its kid names",
            KeyVerdicts.signature(idToken, keys: keys))
        record(
            "OpenID Connect Core §3.1.3.7", "oidcc-server: ID token iss, aud and azp the web client, nonce as sent, at_hash",
            .expect(
                claims["iss"] as? String == issuer && claims["aud"] as? String == client.clientID
                    && claims["azp"] as? String == client.clientID
                    && claims["nonce"] as? String == nonce && claims["at_hash"] as? String == Self.atHash(access)
                    && claims["sub"] is String,
                "iss=\(claims["iss"] as? String ?? "none") aud is the client: \(claims["aud"] as? String == client.clientID)"))
        let sub = claims["sub"] as? String

        // oidcc-userinfo-get, -post-header, -post-body.
        let get = try userinfo(access)
        record(
            "OpenID Connect Core §5.3.1", "oidcc-userinfo-get: 200 with the ID token's sub",
            .expect(get.status == 200 && get.json?["sub"] as? String == sub, Verdicts.describe(get)))
        let header = try agent.send(.post, "/oauth2/userinfo", headers: [("Authorization", "Bearer \(access)")])
        record(
            "OpenID Connect Core §5.3.1, RFC 6750 §2.1", "oidcc-userinfo-post-header: 200 with the ID token's sub",
            .expect(header.status == 200 && header.json?["sub"] as? String == sub, Verdicts.describe(header)))
        let body = try agent.postForm("/oauth2/userinfo", [("access_token", access)])
        record(
            "OpenID Connect Core §5.3.1, RFC 6750 §2.2", "oidcc-userinfo-post-body: 200 with the ID token's sub",
            .expect(body.status == 200 && body.json?["sub"] as? String == sub, Verdicts.describe(body)))

        // oidcc-codereuse: the second exchange fails, and the tokens of the first are revoked.
        let reused = try webExchange(issued)
        let afterReuse = try userinfo(access)
        record(
            "OpenID Connect Core §3.1.3.2, RFC 6749 §4.1.2",
            "oidcc-codereuse: the second exchange → 400 invalid_grant, the first access token revoked",
            .expect(
                reused.status == 400 && reused.errorCode == "invalid_grant" && afterReuse.status == 401,
                "reuse \(Verdicts.describe(reused)), userinfo \(afterReuse.status)"))

        // oidcc-ensure-request-without-nonce-succeeds-for-code-flow.
        let noNonce = try webExchange(try webIssue(client, nonce: nil, browser: browser))
        let noNonceClaims = Self.jwtClaims(noNonce.json?["id_token"] as? String)
        record(
            core, "oidcc-ensure-request-without-nonce-succeeds-for-code-flow: a code and an ID token without nonce",
            .expect(noNonce.status == 200 && noNonceClaims != nil && noNonceClaims?["nonce"] == nil, Verdicts.describe(noNonce)))

        // oidcc-scope-profile, oidcc-scope-email, oidcc-scope-all (address and phone are not offered: ignored).
        for (module, scope, wantName, wantEmail) in [
            ("oidcc-scope-profile", "openid profile", true, false), ("oidcc-scope-email", "openid email", false, true),
            ("oidcc-scope-all", "openid profile email address phone", true, true),
        ] {
            let scoped = try webExchange(try webIssue(client, scope: scope, browser: browser))
            var info: Observed?
            if let token = scoped.json?["access_token"] as? String { info = try userinfo(token) }
            let name = info?.json?["name"] is String
            let email = (info?.json?["email"] as? String)?.lowercased() == options.email.lowercased()
            record(
                "OpenID Connect Core §5.4", "\(module): userinfo has the claims of \(scope)'s supported scopes and no others",
                .expect(
                    info?.status == 200 && name == wantName && email == wantEmail,
                    "\(Verdicts.describe(scoped)) scope=\(scoped.json?["scope"] as? String ?? "none") name=\(name) email=\(email)"))
        }

        // Parameters accepted and the code still issued.
        for (module, clause, extra) in [
            ("oidcc-display-page", core, [("display", "page")]), ("oidcc-display-popup", core, [("display", "popup")]),
            ("oidcc-ensure-request-with-unknown-parameter-succeeds", "OpenID Connect Core §3.1.2.1, RFC 6749 §3.1", [("extra", "foobar")]),
            ("oidcc-ui-locales", core, [("ui_locales", "se")]),
            ("oidcc-claims-locales", "OpenID Connect Core §5.2", [("claims_locales", "se")]),
            ("oidcc-ensure-request-with-acr-values-succeeds", core, [("acr_values", "1 2")]),
        ] {
            let coded = try webExchange(try webIssue(client, extra: extra, browser: browser))
            record(
                clause, "\(module): a code, exchanged for an ID token",
                .expect(coded.status == 200 && coded.json?["id_token"] is String, Verdicts.describe(coded)))
        }
        let otherOrder = try webExchange(try webIssue(client, scope: "email openid", browser: browser))
        record(
            core, "oidcc-ensure-other-scope-order-succeeds: scope \"email openid\" → a code and an ID token",
            .expect(otherOrder.status == 200 && otherOrder.json?["id_token"] is String, Verdicts.describe(otherOrder)))

        // oidcc-ensure-post-request-succeeds: the same request as a form POST.
        let posted = try webExchange(try webIssue(client, post: true, browser: browser))
        record(
            core, "oidcc-ensure-post-request-succeeds: POST /oauth2/authorize → a code and an ID token",
            .expect(posted.status == 200 && posted.json?["id_token"] is String, Verdicts.describe(posted)))

        // oidcc-prompt-none-logged-in, oidcc-id-token-hint: a signed-in browser with remembered consent.
        let silent = try browser.get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("prompt", "none")]).pairs))
        let silentBack = RedirectBack.find(in: silent, redirectURI: client.redirectURI)
        record(
            "OpenID Connect Core §3.1.2.6", "oidcc-prompt-none-logged-in: a code by a direct 303, no page",
            .expect(
                silent.status == 303 && silentBack?.value("code") != nil && silentBack?.value("iss") == issuer,
                Verdicts.describe(silent, redirectURI: client.redirectURI)))
        let hinted = try browser.get(
            authorizeEndpoint + "?"
                + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("prompt", "none"), ("id_token_hint", idToken)]).pairs))
        record(
            "OpenID Connect Core §3.1.2.1", "oidcc-id-token-hint: prompt=none with the signed-in account's ID token → a code",
            .expect(
                hinted.status == 303 && RedirectBack.find(in: hinted, redirectURI: client.redirectURI)?.value("code") != nil,
                Verdicts.describe(hinted, redirectURI: client.redirectURI)))

        // oidcc-max-age-10000: no new sign-in, auth_time in the ID token.
        let longAge = try webIssue(client, extra: [("max_age", "10000")], browser: browser)
        let longClaims = Self.jwtClaims(try webExchange(longAge).json?["id_token"] as? String)
        record(
            core, "oidcc-max-age-10000: no password asked, the ID token has auth_time of the first sign-in",
            .expect(
                longAge.flow.signInPostStatus == nil && longClaims?["auth_time"] as? Int == claims["auth_time"] as? Int
                    && longClaims?["auth_time"] != nil,
                "password asked: \(longAge.flow.signInPostStatus != nil)"))

        // oidcc-max-age-1: after 2 s the password is asked again and auth_time moves.
        agent.sleep(2)
        let shortAge = try webIssue(client, extra: [("max_age", "1")], browser: browser)
        let shortClaims = Self.jwtClaims(try webExchange(shortAge).json?["id_token"] as? String)
        record(
            core, "oidcc-max-age-1: the password is asked again and the ID token's auth_time is the new sign-in",
            .expect(
                shortAge.flow.signInPostStatus != nil && (shortClaims?["auth_time"] as? Int ?? 0) > (claims["auth_time"] as? Int ?? .max),
                "password asked: \(shortAge.flow.signInPostStatus != nil)"))

        // oidcc-prompt-login: the password is asked although the browser is signed in.
        let login = try webIssue(client, extra: [("prompt", "login")], browser: browser)
        record(
            core, "oidcc-prompt-login: the password is asked again, then a code",
            .expect(login.flow.signInPostStatus != nil, "password asked: \(login.flow.signInPostStatus != nil)"))

        // oidcc-prompt-none-not-logged-in: a fresh browser.
        let signedOut = try Browser(agent: agent).get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("prompt", "none")]).pairs))
        record(
            "OpenID Connect Core §3.1.2.6", "oidcc-prompt-none-not-logged-in: login_required by a 303 with state and iss",
            Verdicts.redirectedError(
                signedOut, redirectURI: client.redirectURI, error: "login_required", state: "conformance-state", issuer: issuer))

        // oidcc-login-hint: the sign-in page is pre-filled with the hinted email.
        let hintBrowser = Browser(agent: agent)
        var page = try hintBrowser.get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("login_hint", options.email)]).pairs))
        for _ in 0..<3 where (300..<400).contains(page.status) {
            guard let location = page.header("Location"), location.hasPrefix("/") || location.hasPrefix(issuer + "/") else { break }
            page = try hintBrowser.get(location)
        }
        let prefilled = page.isHTML && String(decoding: page.body, as: UTF8.self).contains("value=\"\(HTML.escape(options.email))\"")
        record(
            core, "oidcc-login-hint: the sign-in page's email field holds the hint",
            .expect(prefilled, "\(page.status) prefilled=\(prefilled)"))

        // oidcc-ensure-registered-redirect-uri and oidcc-ensure-redirect-uri-in-authorization-request: shown, never redirected.
        let unregistered = client.redirectURI + "/unregistered"
        let wrong = try Browser(agent: agent).get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("redirect_uri", unregistered)]).pairs),
            accept: "application/json")
        // At /oauth2/authorize the RFC code comes first and the product code leads error_description.
        record(
            "OpenID Connect Core §3.1.2.1, RFC 6749 §4.1.2.1",
            "oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri → shown invalid_request beginning redirect_uri_mismatch",
            .expect(
                wrong.status == 400 && wrong.header("Location") == nil && wrong.errorCode == "invalid_request"
                    && Verdicts.leadingCode(wrong.json?["error_description"] as? String) == "redirect_uri_mismatch",
                Verdicts.describe(wrong)))
        let missing = try Browser(agent: agent).get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client).pairs.filter { $0.0 != "redirect_uri" }),
            accept: "application/json")
        record(
            "OpenID Connect Core §3.1.2.1",
            "oidcc-ensure-redirect-uri-in-authorization-request: no redirect_uri → shown 400, never redirected",
            .expect(missing.status == 400 && missing.header("Location") == nil && missing.errorCode != nil, Verdicts.describe(missing)))

        // oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: rejected as unsupported.
        let object =
            Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "."
            + Base64URL.encode(Array(#"{"response_type":"code","scope":"openid"}"#.utf8)) + "."
        let request = try browser.get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("request", object)]).pairs))
        record(
            "OpenID Connect Core §6.1",
            "oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: request_not_supported, redirected",
            Verdicts.redirectedError(
                request, redirectURI: client.redirectURI, error: "request_not_supported", state: "conformance-state", issuer: issuer))

        // oidcc-claims-essential: accepted; claims come only with the scopes that grant them.
        let essential = #"{"userinfo":{"name":{"essential":true}}}"#
        for (scope, wantName) in [("openid", false), ("openid profile", true)] {
            let granted = try webExchange(try webIssue(client, scope: scope, extra: [("claims", essential)], browser: browser))
            var info: Observed?
            if let token = granted.json?["access_token"] as? String { info = try userinfo(token) }
            let name = info?.json?["name"] is String
            record(
                "OpenID Connect Core §5.5",
                "oidcc-claims-essential: scope \(scope), essential name → userinfo 200 \(wantName ? "with" : "without") name",
                .expect(
                    info?.status == 200 && info?.json?["sub"] is String && name == wantName, "\(Verdicts.describe(granted)) name=\(name)"))
        }
        let badClaims = try browser.get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("claims", "[1]")]).pairs))
        record(
            "OpenID Connect Core §5.5", "claims not a JSON object → invalid_request, redirected",
            Verdicts.redirectedError(
                badClaims, redirectURI: client.redirectURI, error: "invalid_request", state: "conformance-state", issuer: issuer))

        // oidcc-refresh-token: the refresh grant authenticates the client.
        let offline = try webExchange(try webIssue(client, scope: "openid offline_access", browser: browser))
        guard let refreshToken = offline.json?["refresh_token"] as? String else {
            record("OpenID Connect Core §12", "oidcc-refresh-token: a refresh token", .fail(Verdicts.describe(offline)))
            return
        }
        let anonymous = try webToken(
            client, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client.clientID)], authenticate: false)
        record(
            "OpenID Connect Core §12.1, RFC 6749 §6",
            "oidcc-refresh-token: refresh without the client's authentication → 401 invalid_client",
            Verdicts.jsonError(anonymous, status: 401, error: "invalid_client"))
        let refreshed = try webToken(client, [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        let refreshedClaims = Self.jwtClaims(refreshed.json?["id_token"] as? String)
        record(
            "OpenID Connect Core §12.2", "oidcc-refresh-token: 200 with new tokens and an ID token of the same sub and aud",
            .expect(
                refreshed.status == 200 && refreshed.json?["refresh_token"] as? String != refreshToken
                    && refreshedClaims?["sub"] as? String == sub
                    && refreshedClaims?["aud"] as? String == client.clientID, Verdicts.describe(refreshed)))

        if options.slow {
            // oidcc-codereuse-30seconds: a code reused 30 s later fails, and the first tokens are revoked.
            let late = try webIssue(client, browser: browser)
            let first = try webExchange(late)
            agent.sleep(30)
            let again = try webExchange(late)
            let firstAccess = first.json?["access_token"] as? String ?? ""
            let revoked = try userinfo(firstAccess)
            record(
                "OpenID Connect Core §3.1.3.2",
                "oidcc-codereuse-30seconds: reused after 30 s → invalid_grant, the first access token revoked",
                .expect(
                    again.errorCode == "invalid_grant" && revoked.status == 401,
                    "reuse \(Verdicts.describe(again)), userinfo \(revoked.status)"))
        } else {
            record("OpenID Connect Core §3.1.3.2", "oidcc-codereuse-30seconds", .skip("only with --slow (waits 30 s)"))
        }
    }

    // MARK: Token endpoint authentication, once per method

    func webAuthMethodChecks(_ client: Options.WebClient) throws(AgentError) {
        let module: String
        let clause: String
        switch client.authMethod {
        case "client_secret_post": (module, clause) = ("oidcc-server-client-secret-post", "OpenID Connect Core §9, RFC 6749 §2.3.1")
        case "private_key_jwt":
            (module, clause) = ("oidcc-server [client_auth_type=private_key_jwt]", "OpenID Connect Core §9, RFC 7523 §3")
        default: (module, clause) = ("oidcc-client-secret-basic", "OpenID Connect Core §9, RFC 6749 §2.3.1")
        }
        let issued = try webIssue(client, browser: Browser(agent: agent))
        // A wrong credential first: answered 401 invalid_client, and the code is left alone.
        let wrong: Observed
        if client.authMethod == "private_key_jwt" {
            var tampered = clientAssertion(client) ?? ""
            tampered = String(tampered.dropLast(4)) + (tampered.hasSuffix("AAAA") ? "BBBB" : "AAAA")
            wrong = try webToken(
                client,
                [
                    ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", client.redirectURI),
                    ("code_verifier", issued.verifier), ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                    ("client_assertion", tampered),
                ], authenticate: false)
        } else {
            wrong = try webToken(
                client,
                [
                    ("grant_type", "authorization_code"), ("code", issued.code), ("redirect_uri", client.redirectURI),
                    ("code_verifier", issued.verifier),
                ],
                secret: "zcs_" + String(repeating: "W", count: 43))
        }
        record(
            clause, "\(module): a wrong \(client.authMethod == "private_key_jwt" ? "signature" : "secret") → 401 invalid_client",
            Verdicts.jsonError(wrong, status: 401, error: "invalid_client"))
        let answer = try webExchange(issued)
        let claims = Self.jwtClaims(answer.json?["id_token"] as? String)
        record(
            clause, "\(module): the code exchanged with \(client.authMethod) → 200 with an ID token for this client",
            .expect(answer.status == 200 && claims?["aud"] as? String == client.clientID, Verdicts.describe(answer)))
        if client.authMethod == "private_key_jwt", let assertion = clientAssertion(client) {
            // The same assertion twice: its jti is accepted once (RFC 7523 §3 item 7).
            let fields: [(String, String)] = [
                ("grant_type", "refresh_token"), ("refresh_token", answer.json?["refresh_token"] as? String ?? ""),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"), ("client_assertion", assertion),
            ]
            let first = try webToken(client, fields, authenticate: false)
            var replayFields = fields
            replayFields[1].1 = first.json?["refresh_token"] as? String ?? ""
            let replay = try webToken(client, replayFields, authenticate: false)
            record(
                clause, "\(module): a client assertion's jti is accepted once → the replay is 401 invalid_client",
                .expect(
                    first.status == 200 && replay.status == 401 && replay.errorCode == "invalid_client",
                    "first \(first.status), replay \(Verdicts.describe(replay))"))
        }
    }

    // MARK: Form Post OP

    func webFormPostChecks(_ client: Options.WebClient) throws(AgentError) {
        let issuer = options.issuer
        let clause = "OAuth 2.0 Form Post Response Mode §2"
        let browser = Browser(agent: agent)
        let (pairs, verifier) = webAuthorizePairs(client, extra: [("response_mode", "form_post")])
        let flow = try browser.signIn(startTarget: authorizeEndpoint + "?" + FormURLEncoding.encode(pairs))
        let answer = FormPostAnswer.parse(flow.final)
        record(
            clause, "oidcc-server [response_mode=form_post]: a 200 page whose POST form's action is the redirect URI",
            .expect(answer?.action == client.redirectURI, Verdicts.describe(flow.final)))
        record(
            "RFC 9207 §2, \(clause)", "oidcc-server [response_mode=form_post]: hidden code, state and iss, and no Location",
            .expect(
                answer?.value("code") != nil && answer?.value("state") == "conformance-state" && answer?.value("iss") == issuer
                    && flow.final.header("Location") == nil, answer.map { "fields \($0.fields.map(\.name).sorted())" } ?? "no form"))
        let csp = flow.final.header("Content-Security-Policy") ?? ""
        record(
            "protocol.md#form-post", "form_post page: no-store, and a Content-Security-Policy without inline script",
            .expect(
                flow.final.hasNoStore && csp.contains("script-src") && !csp.contains("unsafe-inline"),
                csp.isEmpty ? "no CSP" : "CSP present"))
        guard let code = answer?.value("code") else { return }
        redactor.register(code)
        let exchanged = try webExchange(WebIssued(code: code, verifier: verifier, client: client, flow: flow))
        record(
            clause, "oidcc-server [response_mode=form_post]: the posted code exchanged → 200 with an ID token",
            .expect(exchanged.status == 200 && exchanged.json?["id_token"] is String, Verdicts.describe(exchanged)))
        // A remembered consent still answers by the form (no page, no redirect).
        let silent = try browser.get(
            authorizeEndpoint + "?"
                + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("response_mode", "form_post"), ("prompt", "none")]).pairs))
        let silentAnswer = FormPostAnswer.parse(silent)
        record(
            clause, "oidcc-prompt-none-logged-in [response_mode=form_post]: the code by the form",
            .expect(silentAnswer?.value("code") != nil && silentAnswer?.action == client.redirectURI, Verdicts.describe(silent)))
        let signedOut = try Browser(agent: agent).get(
            authorizeEndpoint + "?"
                + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("response_mode", "form_post"), ("prompt", "none")]).pairs))
        let error = FormPostAnswer.parse(signedOut)
        record(
            clause, "oidcc-prompt-none-not-logged-in [response_mode=form_post]: login_required with state and iss by the form",
            .expect(
                error?.value("error") == "login_required" && error?.value("state") == "conformance-state" && error?.value("iss") == issuer
                    && error?.value("code") == nil, Verdicts.describe(signedOut)))
        let posted = try Browser(agent: agent).post(
            authorizeEndpoint, webAuthorizePairs(client, extra: [("response_mode", "form_post"), ("prompt", "none")]).pairs)
        record(
            clause, "oidcc-ensure-post-request-succeeds [response_mode=form_post]: a POSTed start answers by the form too",
            .expect(FormPostAnswer.parse(posted)?.value("error") == "login_required", Verdicts.describe(posted)))
    }

    // MARK: RP-Initiated Logout OP

    /// The plan needs a registered `post_logout_redirect_uri`: the client's own, or a throwaway web client
    /// registered with the secret key and deleted afterwards.
    func webLogoutPlan(_ client: Options.WebClient) throws(AgentError) {
        if client.postLogoutRedirectURI != nil {
            try webLogoutChecks(client)
            return
        }
        guard let secretKey = options.secretKey else {
            record(
                "OpenID Connect RP-Initiated Logout 1.0 §2", "RP-Initiated Logout OP modules",
                .skip("the web client has no post-logout redirect URI: give --web-client-post-logout-redirect-uri or --secret-key"))
            return
        }
        let logoutURI = (client.redirectURI.split(separator: "?").first.map(String.init) ?? client.redirectURI) + "/logged-out"
        guard let made = try throwawayWebClient(like: client, secretKey: secretKey, fields: ["postLogoutRedirectUris": [logoutURI]])
        else { return }
        defer { deleteWebClient(made.id, secretKey: secretKey) }
        var logoutClient = made.client
        logoutClient.postLogoutRedirectURI = logoutURI
        try webLogoutChecks(logoutClient)
    }

    /// Registers a throwaway `client_secret_basic` web client with `client`'s redirect URI and `fields`
    /// (`POST /v1/admin/clients` with the secret key); records one FAIL and answers nil when refused.
    func throwawayWebClient(like client: Options.WebClient, secretKey: String, fields: [String: Any]) throws(AgentError) -> (
        client: Options.WebClient, id: String
    )? {
        var body: [String: Any] = [
            "name": "zevauth-conformance fixture", "redirectUris": [client.redirectURI], "tokenEndpointAuthMethod": "client_secret_basic",
        ]
        body.merge(fields) { $1 }
        let created = try agent.postJSON("/v1/admin/clients", body, bearer: secretKey)
        agent.remember(created)
        guard created.status == 201, let id = created.json?["clientId"] as? String, let secret = created.json?["clientSecret"] as? String
        else {
            record("protocol.md#web-client-registration", "fixture: a throwaway web client → 201", .fail(Verdicts.describe(created)))
            return nil
        }
        redactor.register(secret)
        return (Options.WebClient(clientID: id, authMethod: "client_secret_basic", redirectURI: client.redirectURI, secret: secret), id)
    }

    func deleteWebClient(_ id: String, secretKey: String) {
        _ = try? agent.send(.delete, "/v1/admin/clients/\(id)", headers: [("Authorization", "Bearer \(secretKey)")])
    }

    // MARK: A client with requirePkce false (the official suite sends no PKCE)

    /// The OpenID Foundation's modules send no PKCE (but `oidcc-ensure-request-with-valid-pkce-succeeds`): a
    /// client registered for them has `requirePkce` false, and the start then needs an OpenID request with a
    /// `nonce` (docs/protocol.md, "The start for a web client"; RFC 9700 §2.1.1).
    func webNoPKCEChecks(_ client: Options.WebClient) throws(AgentError) {
        guard let secretKey = options.secretKey else { return }
        guard let made = try throwawayWebClient(like: client, secretKey: secretKey, fields: ["requirePkce": false]) else { return }
        defer { deleteWebClient(made.id, secretKey: secretKey) }
        let relaxed = made.client
        let issuer = options.issuer
        let clause = "RFC 9700 §2.1.1, protocol.md#web-client-start"
        let withNonce = webAuthorizePairs(relaxed).pairs.filter { !$0.0.hasPrefix("code_challenge") }
        let flow = try Browser(agent: agent).signIn(startTarget: authorizeEndpoint + "?" + FormURLEncoding.encode(withNonce))
        let code = flow.back(relaxed.redirectURI)?.value("code")
        if let code { redactor.register(code) }
        let answer = try webToken(
            relaxed, [("grant_type", "authorization_code"), ("code", code ?? ""), ("redirect_uri", relaxed.redirectURI)])
        let claims = Self.jwtClaims(answer.json?["id_token"] as? String)
        record(
            clause, "oidcc-server [no PKCE, requirePkce false]: an OpenID request with a nonce → a code, exchanged without code_verifier",
            .expect(code != nil && answer.status == 200 && claims?["nonce"] as? String == "conformance-nonce", Verdicts.describe(answer)))
        let noNonce = try Browser(agent: agent).get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(withNonce.filter { $0.0 != "nonce" }))
        record(
            clause,
            "oidcc-ensure-request-without-nonce-succeeds-for-code-flow [no PKCE]: refused invalid_request beginning pkce_required, redirected",
            Verdicts.redirectedError(
                noNonce, redirectURI: relaxed.redirectURI, error: "invalid_request", state: "conformance-state", issuer: issuer,
                descriptionPrefix: "pkce_required"))
    }

    /// A browser signed in to `client`, and the ID token of that sign-in.
    private func signInWebClient(_ client: Options.WebClient) throws(AgentError) -> (browser: Browser, idToken: String) {
        let browser = Browser(agent: agent)
        let answer = try webExchange(try webIssue(client, browser: browser))
        guard let idToken = answer.json?["id_token"] as? String else {
            throw .signInStopped(step: "the web client's exchange", seen: Verdicts.describe(answer))
        }
        return (browser, idToken)
    }

    /// Whether `browser` is still signed in: a `prompt=none` start gets a code rather than `login_required`.
    private func stillSignedIn(_ browser: Browser, _ client: Options.WebClient) throws(AgentError) -> Bool {
        let answer = try browser.get(
            authorizeEndpoint + "?" + FormURLEncoding.encode(webAuthorizePairs(client, extra: [("prompt", "none")]).pairs))
        return RedirectBack.find(in: answer, redirectURI: client.redirectURI)?.value("code") != nil
    }

    private func logout(_ browser: Browser, _ pairs: [(String, String)]) throws(AgentError) -> Observed {
        try browser.get("/oauth2/logout" + (pairs.isEmpty ? "" : "?" + FormURLEncoding.encode(pairs)))
    }

    /// Confirms a logout confirmation page, or nil when `page` is not one.
    private func confirm(_ browser: Browser, _ page: Observed) throws(AgentError) -> Observed? {
        guard page.status == 200, page.isHTML, let form = HTMLForm.first(in: String(decoding: page.body, as: UTF8.self)),
            form.action == "/oauth2/logout", form.hidden.contains(where: { $0.0 == "csrf" })
        else { return nil }
        return try browser.post(form.action, form.hidden)
    }

    func webLogoutChecks(_ client: Options.WebClient) throws(AgentError) {
        guard let logoutURI = client.postLogoutRedirectURI else { return }
        let clause = "OpenID Connect RP-Initiated Logout 1.0 §2"
        let back = "OpenID Connect RP-Initiated Logout 1.0 §3"

        // oidcc-rp-initiated-logout: a valid hint for the signed-in account, no page, 303 with state only.
        var (browser, idToken) = try signInWebClient(client)
        let done = try logout(browser, [("id_token_hint", idToken), ("post_logout_redirect_uri", logoutURI), ("state", "bye")])
        let target = RedirectBack.find(in: done, redirectURI: logoutURI)
        var signedIn = try stillSignedIn(browser, client)
        record(
            back, "oidcc-rp-initiated-logout: 303 to post_logout_redirect_uri with state only, the browser signed out",
            .expect(
                done.status == 303 && target?.parameters.map(\.name) == ["state"] && target?.value("state") == "bye" && !signedIn,
                Verdicts.describe(done)))

        // ...-bad-post-logout-redirect-uri and ...-query-added-to-post-logout-redirect-uri: shown, never followed.
        (browser, idToken) = try signInWebClient(client)
        for (module, uri) in [
            ("oidcc-rp-initiated-logout-bad-post-logout-redirect-uri", logoutURI + "/unregistered"),
            (
                "oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri",
                logoutURI + (logoutURI.contains("?") ? "&" : "?") + "foo=bar"
            ),
        ] {
            let refused = try logout(browser, [("id_token_hint", idToken), ("post_logout_redirect_uri", uri), ("state", "bye")])
            signedIn = try stillSignedIn(browser, client)
            record(
                back, "\(module): a 400 page, not redirected, the browser still signed in",
                .expect(
                    refused.status == 400 && refused.header("Location") == nil && signedIn, Verdicts.describe(refused)))
        }

        // ...-modified-id-token-hint (the hint changed to alg none), ...-bad-id-token-hint (signed by another key)
        // and ...-no-id-token-hint: without a hint this server verifies, post_logout_redirect_uri names no client
        // (docs/protocol.md, "RP-initiated logout"): a 400 page, never followed.
        var hints: [(String, String?)] = []
        let parts = idToken.split(separator: ".").map(String.init)
        if parts.count == 3 {
            hints.append(
                (
                    "oidcc-rp-initiated-logout-modified-id-token-hint",
                    Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
                ))
        }
        if parts.count == 3, let key = options.webClients.compactMap({ $0.privateKeyPEM.flatMap(Self.signingKey) }).first,
            let signature = try? key.sign(Array((Base64URL.encode(Array(#"{"alg":"ES256","kid":"other"}"#.utf8)) + "." + parts[1]).utf8))
        {
            let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"other"}"#.utf8))
            hints.append(("oidcc-rp-initiated-logout-bad-id-token-hint", header + "." + parts[1] + "." + Base64URL.encode(signature)))
        }
        hints.append(("oidcc-rp-initiated-logout-no-id-token-hint", nil))
        for (module, hint) in hints {
            var pairs: [(String, String)] = [("post_logout_redirect_uri", logoutURI), ("state", "bye")]
            if let hint { pairs.insert(("id_token_hint", hint), at: 0) }
            let refused = try logout(browser, pairs)
            signedIn = try stillSignedIn(browser, client)
            record(
                clause, "\(module): a 400 page, not redirected, the browser still signed in",
                .expect(refused.status == 400 && refused.header("Location") == nil && signedIn, Verdicts.describe(refused)))
        }

        // ...-no-state: 303 to exactly the registered URI, nothing added.
        let noState = try logout(browser, [("id_token_hint", idToken), ("post_logout_redirect_uri", logoutURI)])
        record(
            back, "oidcc-rp-initiated-logout-no-state: 303 to exactly post_logout_redirect_uri",
            .expect(noState.status == 303 && noState.header("Location") == logoutURI, Verdicts.describe(noState)))

        // ...-no-post-logout-redirect-uri: signed out, a page, no redirect.
        (browser, idToken) = try signInWebClient(client)
        let noRedirect = try logout(browser, [("id_token_hint", idToken)])
        signedIn = try stillSignedIn(browser, client)
        record(
            clause, "oidcc-rp-initiated-logout-no-post-logout-redirect-uri: a 200 signed-out page, no redirect, the browser signed out",
            .expect(
                noRedirect.status == 200 && noRedirect.header("Location") == nil && !signedIn, Verdicts.describe(noRedirect)))

        // No hint but client_id (RP-Initiated Logout §2): the person confirms, then 303 with state.
        (browser, idToken) = try signInWebClient(client)
        let asked = try logout(browser, [("client_id", client.clientID), ("post_logout_redirect_uri", logoutURI), ("state", "bye")])
        let confirmed = try confirm(browser, asked)
        signedIn = try stillSignedIn(browser, client)
        record(
            "OpenID Connect RP-Initiated Logout 1.0 §6",
            "logout with client_id and no id_token_hint: a confirmation page, then 303 with state",
            .expect(
                confirmed?.status == 303 && confirmed.flatMap { RedirectBack.find(in: $0, redirectURI: logoutURI) }?.value("state") == "bye"
                    && !signedIn, Verdicts.describe(confirmed ?? asked)))

        // ...-no-params and ...-only-state: a confirmation page, then signed out with nowhere to return.
        let bare: [(String, [(String, String)])] = [
            ("oidcc-rp-initiated-logout-no-params", []), ("oidcc-rp-initiated-logout-only-state", [("state", "bye")]),
        ]
        for (module, pairs) in bare {
            (browser, idToken) = try signInWebClient(client)
            let page = try logout(browser, pairs)
            let ended = try confirm(browser, page)
            signedIn = try stillSignedIn(browser, client)
            record(
                "OpenID Connect RP-Initiated Logout 1.0 §6", "\(module): a confirmation page, then a signed-out page, no redirect",
                .expect(
                    ended?.status == 200 && ended?.header("Location") == nil && !signedIn,
                    Verdicts.describe(ended ?? page)))
        }
    }
}

/// An OAuth 2.0 Form Post Response Mode answer (§2): a 200 HTML page whose first form is `method="post"`,
/// with its action (the redirect URI) and its hidden fields, the response parameters.
struct FormPostAnswer {
    /// The form's action, HTML-unescaped.
    let action: String
    /// The hidden fields, in order, HTML-unescaped.
    let fields: [(name: String, value: String)]

    /// The first value of `name`.
    func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// The answer of `observed`, or nil when it is not a 200 HTML page with a POST form.
    static func parse(_ observed: Observed) -> FormPostAnswer? {
        guard observed.status == 200, observed.isHTML, let form = HTMLForm.first(in: String(decoding: observed.body, as: UTF8.self)),
            form.method == "post", !form.action.isEmpty
        else { return nil }
        return FormPostAnswer(action: form.action, fields: form.hidden.map { (name: $0.0, value: $0.1) })
    }
}
