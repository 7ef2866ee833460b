import Dispatch
import Encoding
import Fetch
import Foundation
import Synchronization

/// Every check the conformance client runs against a deployment, grouped by area, each citing its clause.
/// A group stops at the first answer it cannot work with and reports that as one FAIL (or SKIP for a 429).
public final class Suite {
    let options: Options
    let agent: Agent
    let redactor: Redactor
    let browser: Browser
    private(set) var results: [CheckResult] = []
    /// Called with each result as it is recorded (the executable prints lines as they come).
    var onResult: (CheckResult) -> Void = { _ in }

    static let startPath = "/v1/auth/zevid/start"
    static let exchangePath = "/v1/auth/handoff/exchange"
    /// Reserved, percent, plus, space, non-ASCII (BMP and astral) and a quote: every encoding trap at once.
    static let trickyState = "a b+c&d=e%f#g?h/i;j,k:l@m$n!o'p(q)r*s ~é✓日本𝄞\""

    /// A suite over `agent`'s deployment.
    public init(options: Options, agent: Agent) {
        self.options = options
        self.agent = agent
        self.redactor = agent.redactor
        self.browser = Browser(agent: agent)
    }

    // MARK: Recording

    func record(_ clause: String, _ title: String, _ outcome: Outcome) {
        let result = CheckResult(clause: clause, title: title, outcome: outcome)
        results.append(result)
        onResult(result)
    }

    /// Runs `body`; an ``AgentError`` becomes one result under the group's clause and title.
    func group(_ clause: String, _ title: String, _ body: () throws(AgentError) -> Void) {
        do {
            try body()
        } catch {
            switch error {
            case .rateLimited(let retryAfter, let attempts):
                record(
                    clause, title,
                    .skip("rate limited: 429 after \(attempts) tries" + (retryAfter.map { ", Retry-After \($0) s" } ?? ", no Retry-After")))
            case .transport(let why):
                record(clause, title, .fail("no answer: \(why)"))
            case .signInStopped(let step, let seen):
                record(clause, title, .fail("the scripted sign-in stopped at \(step): \(seen)"))
            }
        }
    }

    // MARK: Building requests

    struct Start {
        var path = Suite.startPath
        var pairs: [(String, String)]

        func target() -> String { path + "?" + FormURLEncoding.encode(pairs) }

        func removing(_ name: String) -> Start {
            var copy = self
            copy.pairs.removeAll { $0.0 == name }
            return copy
        }

        func setting(_ name: String, _ value: String) -> Start {
            var copy = self
            if let index = copy.pairs.firstIndex(where: { $0.0 == name }) {
                copy.pairs[index].1 = value
            } else {
                copy.pairs.append((name, value))
            }
            return copy
        }
    }

    func start(clientID: String? = nil, redirectURI: String? = nil, state: String = "conformance-state", challenge: String) -> Start {
        Start(pairs: [
            ("client_id", clientID ?? options.clientID), ("redirect_uri", redirectURI ?? options.redirectURI), ("state", state),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ])
    }

    /// An issued code: what is needed to exchange it, and what the sign-in saw.
    struct Issued {
        let code: String
        let verifier: String
        let redirectURI: String
        let state: String
        let flow: Browser.Flow
    }

    /// Signs in through `start` and returns the code, or throws when no code came back.
    func issue(redirectURI: String? = nil, state: String = "conformance-state", standard: Bool = false, browser: Browser? = nil)
        throws(AgentError)
        -> Issued
    {
        let redirect = redirectURI ?? options.redirectURI
        let pair = agent.pkce()
        var request = start(redirectURI: redirect, state: state, challenge: pair.challenge)
        if standard {
            request.path = authorizeEndpoint
            request.pairs.append(("response_type", "code"))
        }
        let flow = try (browser ?? self.browser).signIn(startTarget: request.target())
        guard let back = flow.back(redirect), let code = back.value("code") else {
            throw .signInStopped(step: "the redirect back to the app", seen: Verdicts.describe(flow.final, redirectURI: redirect))
        }
        redactor.register(code)
        return Issued(code: code, verifier: pair.verifier, redirectURI: redirect, state: state, flow: flow)
    }

    /// `POST /v1/auth/handoff/exchange`; `nil` fields are left out.
    func exchange(code: String?, verifier: String?, redirectURI: String?, key: String?) throws(AgentError) -> Observed {
        var body: [String: Any] = [:]
        if let code { body["code"] = code }
        if let verifier { body["codeVerifier"] = verifier }
        if let redirectURI { body["redirectUri"] = redirectURI }
        let observed = try agent.postJSON(Self.exchangePath, body, bearer: key)
        agent.remember(observed)
        return observed
    }

    func exchange(_ issued: Issued, verifier: String? = nil, redirectURI: String? = nil) throws(AgentError) -> Observed {
        try exchange(
            code: issued.code, verifier: verifier ?? issued.verifier, redirectURI: redirectURI ?? issued.redirectURI, key: options.clientID)
    }

    /// The access and refresh tokens of a session answer.
    func tokens(_ observed: Observed) -> (access: String, refresh: String)? {
        guard let session = observed.json?["session"] as? [String: Any], let access = session["accessToken"] as? String,
            let refresh = session["refreshToken"] as? String
        else { return nil }
        return (access, refresh)
    }

    func sessionStatus(_ accessToken: String) throws(AgentError) -> Observed {
        try agent.send(.get, "/v1/auth/session", headers: [("Authorization", "Bearer \(accessToken)"), ("Accept", "application/json")])
    }

    func refresh(_ refreshToken: String, key: String? = nil) throws(AgentError) -> Observed {
        let observed = try agent.postJSON("/v1/auth/session/refresh", ["refreshToken": refreshToken], bearer: key ?? options.clientID)
        agent.remember(observed)
        return observed
    }

    /// A random port from the dynamic range (RFC 6335 §6), never the registered URI's.
    func randomPort() -> Int { Int.random(in: 49_152...65_535) }

    // MARK: Endpoints from metadata (behaviour must match what is advertised)

    private(set) var authorizeEndpoint = "/oauth2/authorize"
    private(set) var tokenEndpoint = "/oauth2/token"
    private(set) var revocationEndpoint = "/oauth2/revoke"
    private(set) var introspectionEndpoint = "/oauth2/introspect"

    // MARK: Running

    /// Runs every group in order and returns the results.
    public func run(onResult: @escaping (CheckResult) -> Void = { _ in }) -> [CheckResult] {
        self.onResult = onResult
        group("RFC 8414 §3", "metadata", metadataChecks)
        group("protocol.md#round-trip", "sign-in, exchange and session", roundTripChecks)
        group("protocol.md#start-order", "start errors shown to the person", shownStartErrors)
        group("protocol.md#start-order", "start errors redirected with state and iss", redirectedStartErrors)
        group("RFC 8252 §7.3", "loopback on any port", loopbackChecks)
        group("protocol.md#exchange", "exchange errors in order", exchangeErrors)
        group("protocol.md#exchange", "single use and replay", replayChecks)
        group("protocol.md#exchange", "16 concurrent exchanges of one code", concurrencyCheck)
        group("protocol.md#sessions", "refresh rotation and reuse", refreshChecks)
        group("RFC 7009 §2", "revocation", revokeChecks)
        group("protocol.md#standard-surface", "/oauth2 endpoints", standardChecks)
        group("OpenID Connect Core §3.1.2.1", "prompt, max_age and RP-initiated logout", openIDPromptLogoutChecks)
        group("protocol.md#jwks", "OpenID signing keys (JWKS)", openIDKeyChecks)
        group("protocol.md#openid", "OpenID Connect: discovery, nonce, ID token claims, userinfo", openIDChecks)
        runWebClientPlans()
        if options.secretKey != nil {
            group("RFC 7662 §2", "introspection", introspectionChecks)
        } else {
            record("RFC 7662 §2", "introspection", .skip("no --secret-key given"))
        }
        if options.productionClientID != nil {
            group("protocol.md#redirect-kinds", "production refusals", productionChecks)
        } else {
            record("protocol.md#redirect-kinds", "production refusals", .skip("no --production-client-id given"))
        }
        if options.operatorToken != nil {
            group("protocol.md#admin-api", "throwaway fixtures", fixtureChecks)
        } else {
            record("protocol.md#admin-api", "registration refusals and held redirects", .skip("no --operator-token given"))
        }
        if options.associationHosts.isEmpty {
            record("protocol.md#served-files", "served association files", .skip("no --association-host given"))
        } else {
            group("protocol.md#served-files", "served association files", associationChecks)
        }
        if options.slow {
            group("RFC 6749 §4.1.2", "code lifetime", slowChecks)
        } else {
            record("RFC 6749 §4.1.2", "code: expires 60 s after issue", .skip("only with --slow (waits 61 s)"))
        }
        return results
    }

    // MARK: Metadata

    func metadataChecks() throws(AgentError) {
        let observed = try agent.send(.get, "/.well-known/oauth-authorization-server", headers: [("Accept", "application/json")])
        record("RFC 8414 §3", "metadata: served at /.well-known/oauth-authorization-server as JSON", Verdicts.metadataServed(observed))
        guard let json = observed.json else { return }
        record(
            "RFC 8414 §3.3", "metadata: issuer identical to the deployment's issuer", Verdicts.metadataIssuer(json, issuer: options.issuer))
        record(
            "RFC 7636 §7.2, RFC 9700 §2.1.1", "metadata: code_challenge_methods_supported is exactly S256 (no plain)",
            Verdicts.metadataPKCE(json))
        record("RFC 8414 §2", "metadata: response type, grants and client authentication", Verdicts.metadataCapabilities(json))
        record("RFC 8414 §2", "metadata: endpoints under the issuer", Verdicts.metadataEndpoints(json, issuer: options.issuer))
        record("RFC 9207 §3", "metadata: authorization_response_iss_parameter_supported", Verdicts.metadataIss(json))
        if let value = json["authorization_endpoint"] as? String, value.hasPrefix(options.issuer + "/") { authorizeEndpoint = value }
        if let value = json["token_endpoint"] as? String, value.hasPrefix(options.issuer + "/") { tokenEndpoint = value }
        if let value = json["revocation_endpoint"] as? String, value.hasPrefix(options.issuer + "/") { revocationEndpoint = value }
        if let value = json["introspection_endpoint"] as? String, value.hasPrefix(options.issuer + "/") { introspectionEndpoint = value }
        // Behaviour must match the advertisement: plain is refused at the start.
        let pair = agent.pkce()
        let plain = start(challenge: pair.verifier).setting("code_challenge_method", "plain")
        let answer = try browser.get(plain.target())
        record(
            "RFC 7636 §7.2", "metadata matches behaviour: plain is refused at the start",
            Verdicts.redirectedError(
                answer, redirectURI: options.redirectURI, error: "pkce_method_unsupported", state: "conformance-state",
                issuer: options.issuer))
    }

    // MARK: Round trip

    func roundTripChecks() throws(AgentError) {
        let pair = agent.pkce()
        let request = start(state: Self.trickyState, challenge: pair.challenge)
        let flow = try browser.signIn(startTarget: request.target())
        if let status = flow.signInPostStatus {
            record("RFC 9700 §4.12", "sign-in form: the POST answers 303, never 307", .expect(status == 303, "\(status)"))
        } else {
            record("RFC 9700 §4.12", "sign-in form: the POST answers 303, never 307", .skip("the browser was already signed in"))
        }
        if let framing = flow.signInPageFramingDenied {
            record(
                "RFC 9700 §4.16", "sign-in page: framing forbidden (X-Frame-Options DENY or frame-ancestors 'none')",
                .expect(framing, framing ? "framing denied" : "no framing protection"))
        }
        let verdicts = Verdicts.successRedirect(
            flow.final, redirectURI: options.redirectURI, state: Self.trickyState, issuer: options.issuer)
        record("protocol.md#redirect-back", "sign-in: redirected back to the redirect URI with a code", verdicts.codeReturned)
        record("RFC 9207 §2", "sign-in: iss on the success redirect", verdicts.iss)
        record("RFC 6749 §4.1.2", "state: round trip with reserved and non-ASCII characters", verdicts.state)
        guard let back = flow.back(options.redirectURI), let code = back.value("code") else { return }
        redactor.register(code)
        record(
            "protocol.md#state", "state: re-encoded with only unreserved characters bare",
            Verdicts.stateEncoding(rawQuery: back.rawQuery, state: Self.trickyState))

        let answer = try exchange(code: code, verifier: pair.verifier, redirectURI: options.redirectURI, key: options.clientID)
        record("protocol.md#exchange", "exchange: 200 with the session and the user", Verdicts.sessionShape(answer))
        record("RFC 6749 §5.1", "exchange: Cache-Control no-store on the 200", Verdicts.noStore(answer))
        guard let answerTokens = tokens(answer) else { return }
        let session = try sessionStatus(answerTokens.access)
        let email = (session.json?["user"] as? [String: Any])?["email"] as? String
        record(
            "protocol.md#sessions", "GET /v1/auth/session: 200 with the signed-in user",
            .expect(
                session.status == 200 && email?.lowercased() == options.email.lowercased(),
                Verdicts.describe(session) + (email == nil ? " without user.email" : "")))
        let anonymous = try agent.send(.get, "/v1/auth/session", headers: [("Accept", "application/json")])
        record(
            "protocol.md#sessions", "GET /v1/auth/session: 401 without an access token",
            .expect(anonymous.status == 401, Verdicts.describe(anonymous)))
        let bogus = try sessionStatus("zat_" + String(repeating: "A", count: 43))
        record(
            "protocol.md#sessions", "GET /v1/auth/session: 401 for an unknown access token",
            .expect(bogus.status == 401, Verdicts.describe(bogus)))
    }

    // MARK: Start errors

    func shownStartErrors() throws(AgentError) {
        let challenge = agent.pkce().challenge
        let base = start(challenge: challenge)
        let json = "application/json"
        func shown(_ clause: String, _ title: String, _ request: Start, status: Int, error: String) throws(AgentError) {
            let observed = try browser.get(request.target(), accept: json)
            record(clause, title, Verdicts.shownError(observed, status: status, error: error))
        }
        var twice = base
        twice.pairs.append(("state", "second"))
        try shown(
            "RFC 6749 §3.1", "start: a parameter given twice → 400 invalid_request, shown", twice, status: 400, error: "invalid_request")
        try shown(
            "RFC 6749 §4.1.2.1", "start: client_id missing → 400 invalid_client, shown", base.removing("client_id"), status: 400,
            error: "invalid_client")
        try shown(
            "RFC 6749 §4.1.2.1", "start: client_id unknown → 400 invalid_client, shown",
            base.setting("client_id", "pk_test_" + String(repeating: "Z", count: 43)), status: 400, error: "invalid_client")
        try shown(
            "RFC 6749 §3.1.2.4", "start: redirect_uri missing → 400 redirect_uri_required, shown", base.removing("redirect_uri"),
            status: 400,
            error: "redirect_uri_required")
        let variants: [(String, String)] = [
            ("another path", options.redirectURI + "-other"),
            ("an added query", options.redirectURI + (options.redirectURI.contains("?") ? "&" : "?") + "x=1"),
            ("a fragment", options.redirectURI + "#f"),
            ("plain http off loopback", "http://conformance.example/callback"),
        ]
        for (what, uri) in variants {
            try shown(
                "RFC 8252 §8.4, RFC 9700 §4.1.3", "start: redirect_uri with \(what) → 400 redirect_uri_mismatch, shown",
                base.setting("redirect_uri", uri), status: 400, error: "redirect_uri_mismatch")
        }
        if options.redirectURI.hasPrefix("http://127.0.0.1") {
            let other = "http://localhost" + options.redirectURI.dropFirst("http://127.0.0.1".count)
            try shown(
                "protocol.md#loopback-matching", "start: 127.0.0.1 and localhost are different hosts → 400 redirect_uri_mismatch",
                base.setting("redirect_uri", other), status: 400, error: "redirect_uri_mismatch")
        }
        try shown(
            "protocol.md#state", "start: state missing → 400 invalid_state, shown", base.removing("state"), status: 400,
            error: "invalid_state")
        try shown(
            "RFC 6749 §3.1", "start: state empty counts as missing → 400 invalid_state", base.setting("state", ""), status: 400,
            error: "invalid_state")
        try shown(
            "protocol.md#state", "start: state of 513 characters → 400 invalid_state",
            base.setting("state", String(repeating: "s", count: 513)),
            status: 400, error: "invalid_state")
        try shown(
            "protocol.md#state", "start: state with a C0 control → 400 invalid_state", base.setting("state", "a\u{01}b"), status: 400,
            error: "invalid_state")
        try shown(
            "protocol.md#state", "start: state with a C1 control → 400 invalid_state", base.setting("state", "a\u{85}b"), status: 400,
            error: "invalid_state")
        let invalidUTF8 = base.path + "?" + FormURLEncoding.encode(base.removing("state").pairs) + "&state=%FF%FE"
        let utf8Answer = try browser.get(invalidUTF8, accept: json)
        record(
            "protocol.md#state", "start: state that is not UTF-8 → 400 invalid_state",
            Verdicts.shownError(utf8Answer, status: 400, error: "invalid_state"))
        let longest = try browser.get(base.setting("state", String(repeating: "é", count: 512)).target())
        record(
            "protocol.md#state", "start: state of 512 non-ASCII characters is accepted",
            Verdicts.startProceeds(longest, issuer: options.issuer, redirectURI: options.redirectURI))

        // Order (docs/protocol.md#start-order).
        var duplicateFirst = base.setting("client_id", "pk_test_unknown").removing("redirect_uri")
        duplicateFirst.pairs.append(("code_challenge", challenge))
        try shown(
            "protocol.md#start-check-1", "start order: a repeated parameter wins over an unknown client", duplicateFirst, status: 400,
            error: "invalid_request")
        try shown(
            "protocol.md#start-check-2", "start order: an unknown client wins over a missing redirect_uri",
            base.setting("client_id", "pk_test_unknown").removing("redirect_uri"), status: 400, error: "invalid_client")
        try shown(
            "protocol.md#start-check-3", "start order: an unregistered redirect_uri wins over a missing state",
            base.setting("redirect_uri", options.redirectURI + "-other").removing("state"), status: 400, error: "redirect_uri_mismatch")
        let objectFirst = try browser.get(
            base.removing("state").removing("code_challenge").setting("request", "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6ImluIn0.").target())
        record(
            "protocol.md#start-check-4", "start order: a request object wins over a missing state (redirected, no state)",
            Verdicts.redirectedError(
                objectFirst, redirectURI: options.redirectURI, error: "request_not_supported", state: nil, issuer: options.issuer))
        try shown(
            "protocol.md#start-check-5", "start order: a missing state is shown, not redirected, even without PKCE",
            base.removing("state").removing("code_challenge"), status: 400, error: "invalid_state")

        // A person's browser gets a page, not JSON, and no redirect.
        let page = try browser.get(base.setting("redirect_uri", options.redirectURI + "-other").target())
        record(
            "RFC 6749 §4.1.2.1", "start: a shown error is an HTML page for a browser, with no Location",
            .expect(
                page.status == 400 && page.isHTML && page.header("Location") == nil,
                Verdicts.describe(page) + (page.header("Location") == nil ? ", no Location" : ", with Location")))
    }

    func redirectedStartErrors() throws(AgentError) {
        let pair = agent.pkce()
        let state = "st ✓/+&"
        let base = start(state: state, challenge: pair.challenge)
        func redirected(_ clause: String, _ title: String, _ request: Start, error: String) throws(AgentError) {
            let observed = try browser.get(request.target())
            record(
                clause, title,
                Verdicts.redirectedError(observed, redirectURI: options.redirectURI, error: error, state: state, issuer: options.issuer))
        }
        try redirected(
            "RFC 7636 §4.4.1, RFC 9700 §2.1.1", "pkce: code_challenge missing → pkce_required, redirected", base.removing("code_challenge"),
            error: "pkce_required")
        try redirected(
            "RFC 6749 §3.1", "pkce: empty code_challenge counts as missing → pkce_required", base.setting("code_challenge", ""),
            error: "pkce_required")
        try redirected(
            "RFC 7636 §4.3", "pkce: code_challenge_method missing is not plain → pkce_method_unsupported",
            base.removing("code_challenge_method"),
            error: "pkce_method_unsupported")
        try redirected(
            "RFC 7636 §7.2", "pkce: code_challenge_method=plain → pkce_method_unsupported", base.setting("code_challenge_method", "plain"),
            error: "pkce_method_unsupported")
        try redirected(
            "protocol.md#start-check-6", "pkce: code_challenge_method=s256 (case) → pkce_method_unsupported",
            base.setting("code_challenge_method", "s256"),
            error: "pkce_method_unsupported")
        try redirected(
            "RFC 7636 §4.2", "pkce: a 42-character challenge → invalid_code_challenge",
            base.setting("code_challenge", String(pair.challenge.dropLast())),
            error: "invalid_code_challenge")
        try redirected(
            "RFC 7636 §4.2", "pkce: a padded challenge → invalid_code_challenge", base.setting("code_challenge", pair.challenge + "="),
            error: "invalid_code_challenge")
        var nonCanonical = Array(pair.challenge)
        // The 43rd character carries 4 bits of the hash and 2 zero bits: set one of the zero bits.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        if let last = alphabet.firstIndex(of: nonCanonical[42]) { nonCanonical[42] = alphabet[(last & ~3) | 1] }
        try redirected(
            "RFC 7636 §4.2", "pkce: a challenge with non-zero trailing bits → invalid_code_challenge",
            base.setting("code_challenge", String(nonCanonical)), error: "invalid_code_challenge")
    }

    // MARK: Loopback

    func loopbackChecks() throws(AgentError) {
        guard Verdicts.isLoopback(options.redirectURI), let withRandom = Verdicts.withPort(options.redirectURI, randomPort()) else {
            record("RFC 8252 §7.3", "loopback: any port accepted", .skip("the redirect URI is not a loopback one"))
            return
        }
        let issued = try issue(redirectURI: withRandom)
        record(
            "RFC 8252 §7.3", "loopback: a random port is accepted and the code returns to that port",
            .pass(Verdicts.describe(issued.flow.final, redirectURI: withRandom)))
        var otherPort = randomPort()
        while withRandom.hasSuffix(":\(otherPort)") || withRandom.contains(":\(otherPort)/") { otherPort = randomPort() }
        let mismatched = try exchange(issued, redirectURI: Verdicts.withPort(options.redirectURI, otherPort))
        record(
            "RFC 6749 §4.1.3, protocol.md#exchange-row-5", "exchange: the same loopback path on another port → 400 redirect_uri_mismatch",
            Verdicts.jsonError(mismatched, status: 400, error: "redirect_uri_mismatch"))
        let second = try issue(redirectURI: withRandom)
        let ok = try exchange(second)
        record("RFC 8252 §7.3", "loopback: the exchange with the same port succeeds", .expect(ok.status == 200, Verdicts.describe(ok)))
        if let issuedTokens = tokens(ok) {
            _ = try agent.postJSON("/v1/auth/session/revoke", ["token": issuedTokens.refresh], bearer: options.clientID)
        }
    }

    // MARK: Exchange errors

    func exchangeErrors() throws(AgentError) {
        let unknownCode = "hoc_" + String(repeating: "Q", count: 43)
        let noKey = try exchange(code: unknownCode, verifier: agent.pkce().verifier, redirectURI: options.redirectURI, key: nil)
        record(
            "protocol.md#exchange-row-1", "exchange: no publishable key → 401 invalid_client",
            Verdicts.jsonError(noKey, status: 401, error: "invalid_client"))
        record("RFC 6749 §5.1, protocol.md#exchange", "exchange: Cache-Control no-store on a 401", Verdicts.noStore(noKey))
        let unknownKey = try exchange(
            code: unknownCode, verifier: agent.pkce().verifier, redirectURI: options.redirectURI,
            key: "pk_test_" + String(repeating: "Z", count: 43))
        record(
            "protocol.md#exchange-row-1", "exchange: unknown publishable key → 401 invalid_client",
            Verdicts.jsonError(unknownKey, status: 401, error: "invalid_client"))
        let orderOne = try agent.postRaw(Self.exchangePath, Array("not json".utf8), bearer: nil)
        record(
            "protocol.md#exchange-checks", "exchange order: no key wins over a broken body",
            Verdicts.jsonError(orderOne, status: 401, error: "invalid_client"))
        let bodies: [(String, [UInt8])] = [
            ("not JSON", Array("code=hoc_x".utf8)),
            ("a trailing comma", Array("{\"code\":\"\(unknownCode)\",}".utf8)),
            ("a byte order mark", [0xEF, 0xBB, 0xBF] + Array("{\"code\":\"\(unknownCode)\"}".utf8)),
            ("code as a number", Array("{\"code\":1,\"codeVerifier\":\"x\",\"redirectUri\":\"y\"}".utf8)),
            ("a JSON array", Array("[]".utf8)),
        ]
        for (what, body) in bodies {
            let observed = try agent.postRaw(Self.exchangePath, body, bearer: options.clientID)
            record(
                "protocol.md#exchange-row-2", "exchange: body with \(what) → 400 invalid_request",
                Verdicts.jsonError(observed, status: 400, error: "invalid_request"))
        }
        let unknown = try exchange(
            code: unknownCode, verifier: agent.pkce().verifier, redirectURI: options.redirectURI, key: options.clientID)
        record(
            "RFC 6749 §5.2, protocol.md#exchange-row-3", "exchange: unknown code → 400 invalid_grant",
            Verdicts.jsonError(unknown, status: 400, error: "invalid_grant"))
        record("RFC 6749 §5.1, protocol.md#exchange", "exchange: Cache-Control no-store on a 400", Verdicts.noStore(unknown))
        let unknownNoRedirect = try exchange(code: unknownCode, verifier: nil, redirectURI: nil, key: options.clientID)
        record(
            "protocol.md#exchange-checks", "exchange order: an unknown code wins over a missing redirectUri",
            Verdicts.jsonError(unknownNoRedirect, status: 400, error: "invalid_grant"))

        // Rows 4–6 each consume a code.
        let missingRedirect = try issue()
        let r4 = try exchange(
            code: missingRedirect.code, verifier: "wrong-" + String(repeating: "v", count: 40), redirectURI: nil, key: options.clientID)
        record(
            "protocol.md#exchange-row-4", "exchange: redirectUri missing → 400 redirect_uri_required (before the verifier)",
            Verdicts.jsonError(r4, status: 400, error: "redirect_uri_required"))
        let consumed = try exchange(missingRedirect)
        record(
            "protocol.md#exchange", "exchange: a code is consumed even when a later check failed → 400 invalid_grant",
            Verdicts.jsonError(consumed, status: 400, error: "invalid_grant"))

        let wrongRedirect = try issue()
        let other = Verdicts.withPort(options.redirectURI, 1) == nil ? options.redirectURI + "-other" : options.redirectURI + "-other"
        let r5 = try exchange(wrongRedirect, verifier: String(repeating: "w", count: 43), redirectURI: other)
        record(
            "RFC 6749 §4.1.3, protocol.md#exchange-row-5",
            "exchange: another redirectUri → 400 redirect_uri_mismatch (before the verifier)",
            Verdicts.jsonError(r5, status: 400, error: "redirect_uri_mismatch"))

        let verifierCases: [(String, String, Any?)] = [
            ("RFC 7636 §4.5", "missing", nil),
            ("protocol.md#exchange-row-6", "null", NSNull()),
            ("RFC 7636 §4.1", "42 characters", String(repeating: "a", count: 42)),
            ("RFC 7636 §4.1", "with characters outside the unreserved set", String(repeating: "a", count: 42) + "+"),
        ]
        for (clause, what, value) in verifierCases {
            let issued = try issue()
            var body: [String: Any] = ["code": issued.code, "redirectUri": issued.redirectURI]
            if let value { body["codeVerifier"] = value }
            let observed = try agent.postJSON(Self.exchangePath, body, bearer: options.clientID)
            agent.remember(observed)
            record(
                clause, "pkce: codeVerifier \(what) → 400 pkce_verification_failed",
                Verdicts.jsonError(observed, status: 400, error: "pkce_verification_failed"))
        }
        let wrongVerifier = try issue()
        let r6 = try exchange(wrongVerifier, verifier: agent.pkce().verifier)
        record(
            "RFC 7636 §4.6", "pkce: wrong verifier is refused → 400 pkce_verification_failed",
            Verdicts.jsonError(r6, status: 400, error: "pkce_verification_failed"))
        let afterWrong = try exchange(wrongVerifier)
        record(
            "RFC 7636 §4.6, protocol.md#exchange", "pkce: after a wrong verifier the right one no longer works → 400 invalid_grant",
            Verdicts.jsonError(afterWrong, status: 400, error: "invalid_grant"))
    }

    // MARK: Replay

    func replayChecks() throws(AgentError) {
        let issued = try issue()
        let first = try exchange(issued)
        guard first.status == 200, let firstTokens = tokens(first) else {
            record("protocol.md#exchange", "replay: first exchange", .fail(Verdicts.describe(first)))
            return
        }
        let replay = try exchange(issued)
        record(
            "RFC 6749 §4.1.2, protocol.md#exchange", "code: single use → the same code again is 400 invalid_grant",
            Verdicts.jsonError(replay, status: 400, error: "invalid_grant"))
        let after = try sessionStatus(firstTokens.access)
        let refreshed = try refresh(firstTokens.refresh)
        record(
            "RFC 6749 §4.1.2, protocol.md#exchange-replay", "replay: a valid replay revokes the session the code produced",
            .expect(
                after.status == 401 && refreshed.status == 400 && refreshed.errorCode == "invalid_grant",
                "GET /v1/auth/session \(after.status), refresh \(Verdicts.describe(refreshed))"))

        let second = try issue()
        let ok = try exchange(second)
        guard let live = tokens(ok) else {
            record("OAuth 2.1 §7.5.2", "replay: an invalid replay leaves the session alone", .fail("exchange \(Verdicts.describe(ok))"))
            return
        }
        let invalidReplay = try exchange(second, verifier: agent.pkce().verifier)
        let still = try sessionStatus(live.access)
        record(
            "OAuth 2.1 §7.5.2, protocol.md#exchange-replay",
            "replay: a replay with a wrong verifier is refused and does not end the session",
            .expect(
                invalidReplay.status == 400 && invalidReplay.errorCode == "invalid_grant" && still.status == 200,
                "replay \(Verdicts.describe(invalidReplay)), then GET /v1/auth/session \(still.status)"))
        if options.productionClientID != nil {
            let otherEnvironment = try exchange(
                code: second.code, verifier: second.verifier, redirectURI: second.redirectURI, key: options.productionClientID)
            let stillAfter = try sessionStatus(live.access)
            record(
                "protocol.md#exchange-row-3", "replay: a replay with another environment's key does not end the session",
                .expect(
                    otherEnvironment.status == 400 && stillAfter.status == 200,
                    "replay \(Verdicts.describe(otherEnvironment)), then session \(stillAfter.status)"))
        }
        _ = try agent.postJSON("/v1/auth/session/revoke", ["token": live.refresh], bearer: options.clientID)
    }

    // MARK: Concurrency

    func concurrencyCheck() throws(AgentError) {
        let issued = try issue()
        let count = 16
        let answers = Mutex<[Result<Observed, AgentError>]>([])
        let agent = self.agent
        let key = options.clientID
        let body: [String: Any] = ["code": issued.code, "codeVerifier": issued.verifier, "redirectUri": issued.redirectURI]
        let bytes = Array((try? JSONSerialization.data(withJSONObject: body)) ?? Data())
        DispatchQueue.concurrentPerform(iterations: count) { _ in
            let result: Result<Observed, AgentError>
            do {
                result = .success(try agent.postRaw(Suite.exchangePath, bytes, bearer: key))
            } catch let error as AgentError {
                result = .failure(error)
            } catch {
                result = .failure(.transport("unexpected error"))
            }
            answers.withLock { $0.append(result) }
        }
        var observed: [Observed] = []
        for answer in answers.withLock({ $0 }) {
            switch answer {
            case .success(let value):
                agent.remember(value)
                observed.append(value)
            case .failure(let error): throw error
            }
        }
        record(
            "protocol.md#exchange", "code: 16 concurrent exchanges of one code → exactly one 200", Verdicts.concurrentExchanges(observed))
        if let winner = observed.first(where: { $0.status == 200 }).flatMap(tokens) {
            let after = try sessionStatus(winner.access)
            record(
                "protocol.md#exchange-replay", "code: the concurrent valid replays revoked the winner's session",
                .expect(after.status == 401, "GET /v1/auth/session \(after.status)"))
        }
    }

    // MARK: Refresh

    func readReuseGrace() -> Int? {
        guard let secretKey = options.secretKey,
            let observed = try? agent.send(
                .get, "/v1/admin/settings", headers: [("Authorization", "Bearer \(secretKey)"), ("Accept", "application/json")])
        else { return nil }
        return (observed.json?["refreshReuseGraceSeconds"] as? NSNumber)?.intValue
    }

    func refreshChecks() throws(AgentError) {
        let issued = try issue()
        let first = try exchange(issued)
        guard let pair1 = tokens(first) else {
            record("protocol.md#sessions", "refresh: needs a session", .fail("exchange \(Verdicts.describe(first))"))
            return
        }
        let second = try refresh(pair1.refresh)
        record(
            "RFC 9700 §4.14.2, protocol.md#sessions", "refresh: 200 with a new pair in the exchange's shape", Verdicts.sessionShape(second))
        record("RFC 6749 §5.1", "refresh: Cache-Control no-store on the 200", Verdicts.noStore(second))
        guard let pair2 = tokens(second) else { return }
        record(
            "RFC 9700 §4.14.2", "refresh: both tokens rotate",
            .expect(
                pair2.refresh != pair1.refresh && pair2.access != pair1.access,
                pair2.refresh != pair1.refresh ? "new refresh and access tokens" : "the same refresh token came back"))
        let noKey = try agent.postJSON("/v1/auth/session/refresh", ["refreshToken": pair2.refresh], bearer: nil)
        record(
            "protocol.md#sessions", "refresh: no publishable key → 401 invalid_client",
            Verdicts.jsonError(noKey, status: 401, error: "invalid_client"))
        let garbage = try refresh("zrt_" + String(repeating: "R", count: 43))
        record(
            "protocol.md#sessions", "refresh: unknown refresh token → 400 invalid_grant",
            Verdicts.jsonError(garbage, status: 400, error: "invalid_grant"))

        let grace = readReuseGrace()
        if let grace, grace > 0 {
            record(
                "RFC 9700 §4.14.2", "refresh: reuse of a rotated token revokes the session",
                .skip("the environment's refreshReuseGraceSeconds is \(grace); reuse within it is allowed"))
            return
        }
        let reuse = try refresh(pair1.refresh)
        var seen = "reuse \(Verdicts.describe(reuse))"
        if reuse.status == 200 && grace == nil {
            seen += " (if the environment has a reuse grace, pass --secret-key so the client can read it)"
        }
        record(
            "RFC 9700 §4.14.2, protocol.md#sessions", "refresh: reuse of a rotated token → 400 invalid_grant",
            Verdicts.jsonError(reuse, status: 400, error: "invalid_grant").withSeen(seen))
        let newest = try refresh(pair2.refresh)
        let access = try sessionStatus(pair2.access)
        record(
            "RFC 9700 §4.14.2, protocol.md#sessions", "refresh: reuse revoked the whole session (newest token and access token dead)",
            .expect(
                newest.status == 400 && newest.errorCode == "invalid_grant" && access.status == 401,
                "newest refresh \(Verdicts.describe(newest)), GET /v1/auth/session \(access.status)"))
    }

    // MARK: Revoke

    func revokeChecks() throws(AgentError) {
        let garbage = try agent.postJSON(
            "/v1/auth/session/revoke", ["token": "zrt_" + String(repeating: "G", count: 43)], bearer: options.clientID)
        record("RFC 7009 §2.2", "revoke: an unknown token → 200", .expect(garbage.status == 200, Verdicts.describe(garbage)))
        let issued = try issue()
        guard let pair = tokens(try exchange(issued)) else {
            record("RFC 7009 §2.1", "revoke: needs a session", .fail("the exchange did not answer a session"))
            return
        }
        let revoked = try agent.postJSON("/v1/auth/session/revoke", ["token": pair.refresh], bearer: options.clientID)
        let access = try sessionStatus(pair.access)
        let refreshed = try refresh(pair.refresh)
        record(
            "RFC 7009 §2.1, protocol.md#sessions", "revoke: the refresh token → 200, the session ends (access 401, refresh invalid_grant)",
            .expect(
                revoked.status == 200 && access.status == 401 && refreshed.status == 400 && refreshed.errorCode == "invalid_grant",
                "revoke \(revoked.status), GET /v1/auth/session \(access.status), refresh \(Verdicts.describe(refreshed))"))
        let again = try agent.postJSON("/v1/auth/session/revoke", ["token": pair.access], bearer: options.clientID)
        record("RFC 7009 §2.2", "revoke: an already-revoked token → 200", .expect(again.status == 200, Verdicts.describe(again)))

        let byAccess = try issue()
        guard let pair2 = tokens(try exchange(byAccess)) else { return }
        let viaAccess = try agent.postJSON("/v1/auth/session/revoke", ["token": pair2.access], bearer: options.clientID)
        let after = try sessionStatus(pair2.access)
        record(
            "protocol.md#sessions", "revoke: the access token → 200 and the session ends",
            .expect(viaAccess.status == 200 && after.status == 401, "revoke \(viaAccess.status), GET /v1/auth/session \(after.status)"))
    }

    // MARK: Standard OAuth surface

    func standardChecks() throws(AgentError) {
        let pair = agent.pkce()
        let state = "std-state é"
        var base = start(state: state, challenge: pair.challenge)
        base.path = authorizeEndpoint
        base.pairs.append(("response_type", "code"))
        func redirected(_ clause: String, _ title: String, _ request: Start, error: String, prefix: String?) throws(AgentError) {
            let observed = try browser.get(request.target())
            record(
                clause, title,
                Verdicts.redirectedError(
                    observed, redirectURI: options.redirectURI, error: error, state: state, issuer: options.issuer,
                    descriptionPrefix: prefix))
        }
        try redirected(
            "RFC 6749 §4.1.2.1", "/oauth2/authorize: response_type missing → invalid_request", base.removing("response_type"),
            error: "invalid_request", prefix: nil)
        try redirected(
            "RFC 6749 §4.1.2.1, RFC 9700 §2.1.2", "/oauth2/authorize: response_type=token → unsupported_response_type",
            base.setting("response_type", "token"),
            error: "unsupported_response_type", prefix: nil)
        try redirected(
            "RFC 7636 §4.4.1", "/oauth2/authorize: no challenge → invalid_request with pkce_required first",
            base.removing("code_challenge"),
            error: "invalid_request", prefix: "pkce_required")
        try redirected(
            "RFC 7636 §4.4.1", "/oauth2/authorize: plain → invalid_request with pkce_method_unsupported first",
            base.setting("code_challenge_method", "plain"), error: "invalid_request", prefix: "pkce_method_unsupported")
        let shown = try browser.get(base.setting("redirect_uri", options.redirectURI + "-other").target(), accept: "application/json")
        record(
            "RFC 6749 §4.1.2.1", "/oauth2/authorize: unregistered redirect_uri is shown, never redirected",
            .expect(shown.status == 400 && shown.header("Location") == nil, Verdicts.describe(shown)))

        // Both grants at /oauth2/token.
        let issued = try issue(standard: true)
        let granted = try agent.postForm(
            tokenEndpoint,
            [
                ("grant_type", "authorization_code"), ("code", issued.code), ("code_verifier", issued.verifier),
                ("redirect_uri", issued.redirectURI), ("client_id", options.clientID),
            ])
        agent.remember(granted)
        record("RFC 6749 §5.1", "/oauth2/token authorization_code: 200 with the RFC token response", Verdicts.tokenShape(granted))
        record("RFC 6749 §5.1", "/oauth2/token: Cache-Control no-store on the 200", Verdicts.noStore(granted))
        if let refreshToken = granted.json?["refresh_token"] as? String {
            let refreshed = try agent.postForm(
                tokenEndpoint, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", options.clientID)])
            agent.remember(refreshed)
            record("RFC 6749 §6", "/oauth2/token refresh_token: 200 with a rotated pair", Verdicts.tokenShape(refreshed))
            let reused = try agent.postForm(
                tokenEndpoint, [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", options.clientID)])
            if let grace = readReuseGrace(), grace > 0 {
                record(
                    "RFC 9700 §4.14.2", "/oauth2/token: reuse of a rotated refresh token → invalid_grant",
                    .skip("refreshReuseGraceSeconds is \(grace)"))
            } else {
                record(
                    "RFC 9700 §4.14.2", "/oauth2/token: reuse of a rotated refresh token → invalid_grant",
                    Verdicts.jsonError(reused, status: 400, error: "invalid_grant"))
            }
        }
        // A code from the product start works at /oauth2/token (and is then single use on either).
        let fromStart = try issue()
        let crossed = try agent.postForm(
            tokenEndpoint,
            [
                ("grant_type", "authorization_code"), ("code", fromStart.code), ("code_verifier", agent.pkce().verifier),
                ("redirect_uri", fromStart.redirectURI), ("client_id", options.clientID),
            ])
        record(
            "RFC 6749 §5.2, protocol.md#standard-surface",
            "/oauth2/token: wrong verifier → invalid_grant with pkce_verification_failed first",
            Verdicts.jsonError(crossed, status: 400, error: "invalid_grant", descriptionPrefix: "pkce_verification_failed"))
        let fromAuthorize = try issue(standard: true)
        let onProduct = try exchange(fromAuthorize)
        record(
            "protocol.md#standard-surface", "a code from /oauth2/authorize works at /v1/auth/handoff/exchange",
            .expect(onProduct.status == 200, Verdicts.describe(onProduct)))
        if let issuedTokens = tokens(onProduct) {
            _ = try agent.postJSON("/v1/auth/session/revoke", ["token": issuedTokens.refresh], bearer: options.clientID)
        }

        let unsupported = try agent.postForm(
            tokenEndpoint, [("grant_type", "password"), ("username", "x"), ("password", "y"), ("client_id", options.clientID)])
        record(
            "RFC 6749 §5.2, RFC 9700 §2.4", "/oauth2/token: grant_type=password → unsupported_grant_type",
            Verdicts.jsonError(unsupported, status: 400, error: "unsupported_grant_type"))
        let noClient = try agent.postForm(tokenEndpoint, [("grant_type", "authorization_code"), ("code", "hoc_x"), ("code_verifier", "v")])
        record(
            "RFC 6749 §5.2", "/oauth2/token: no client_id → 401 invalid_client",
            Verdicts.jsonError(noClient, status: 401, error: "invalid_client"))
        let repeated = try agent.postForm(
            tokenEndpoint, [("grant_type", "authorization_code"), ("grant_type", "authorization_code"), ("client_id", options.clientID)])
        record(
            "RFC 6749 §3.2", "/oauth2/token: a repeated parameter → invalid_request",
            Verdicts.jsonError(repeated, status: 400, error: "invalid_request"))
        let unknownCode = try agent.postForm(
            tokenEndpoint,
            [
                ("grant_type", "authorization_code"), ("code", "hoc_" + String(repeating: "U", count: 43)),
                ("code_verifier", agent.pkce().verifier),
                ("redirect_uri", options.redirectURI), ("client_id", options.clientID),
            ])
        record(
            "RFC 6749 §5.2", "/oauth2/token: unknown code → invalid_grant",
            Verdicts.jsonError(unknownCode, status: 400, error: "invalid_grant"))
        record("RFC 6749 §5.1", "/oauth2/token: Cache-Control no-store on an error", Verdicts.noStore(unknownCode))

        let revokeGarbage = try agent.postForm(
            revocationEndpoint, [("token", "zrt_" + String(repeating: "X", count: 43)), ("client_id", options.clientID)])
        record(
            "RFC 7009 §2.2", "/oauth2/revoke: an unknown token → 200",
            .expect(revokeGarbage.status == 200, Verdicts.describe(revokeGarbage)))
        let another = try issue()
        if let pair = tokens(try exchange(another)) {
            let revoked = try agent.postForm(
                revocationEndpoint, [("token", pair.refresh), ("token_type_hint", "refresh_token"), ("client_id", options.clientID)])
            let after = try agent.postForm(
                tokenEndpoint, [("grant_type", "refresh_token"), ("refresh_token", pair.refresh), ("client_id", options.clientID)])
            record(
                "RFC 7009 §2.1", "/oauth2/revoke: the refresh token → 200, then the refresh grant is invalid_grant",
                .expect(
                    revoked.status == 200 && after.status == 400 && after.errorCode == "invalid_grant",
                    "revoke \(revoked.status), refresh \(Verdicts.describe(after))"))
        }
    }

    // MARK: Introspection

    /// `active` of an introspection answer as `true`/`false`/`missing` (never the token).
    static func active(_ observed: Observed) -> String {
        guard let value = observed.json?["active"] else { return "missing" }
        return (value as? Bool).map { $0 ? "true" : "false" } ?? "not a boolean"
    }

    func introspectionChecks() throws(AgentError) {
        guard let secretKey = options.secretKey else { return }
        let issued = try issue()
        guard let pair = tokens(try exchange(issued)) else { return }
        func introspect(_ token: String, key: String?) throws(AgentError) -> Observed {
            try agent.postForm(introspectionEndpoint, [("token", token)], bearer: key)
        }
        let live = try introspect(pair.access, key: secretKey)
        record(
            "RFC 7662 §2.2", "introspection: a live access token is active",
            .expect(
                live.status == 200 && live.json?["active"] as? Bool == true,
                "\(live.status) active=\(Self.active(live))"))
        let refreshToken = try introspect(pair.refresh, key: secretKey)
        record(
            "RFC 7662 §2.2", "introspection: a refresh token is not an active access token",
            .expect(
                refreshToken.json?["active"] as? Bool == false,
                "\(refreshToken.status) active=\(Self.active(refreshToken))"))
        let garbage = try introspect("zat_" + String(repeating: "I", count: 43), key: secretKey)
        record(
            "RFC 7662 §2.2", "introspection: an unknown token → active false",
            .expect(
                garbage.status == 200 && garbage.json?["active"] as? Bool == false,
                "\(garbage.status) active=\(Self.active(garbage))"))
        let anonymous = try introspect(pair.access, key: nil)
        record(
            "RFC 7662 §2.1", "introspection: no secret key → 401 invalid_client",
            Verdicts.jsonError(anonymous, status: 401, error: "invalid_client"))
        let withPublishable = try introspect(pair.access, key: options.clientID)
        record(
            "RFC 7662 §2.1", "introspection: a publishable key is not enough → 401",
            .expect(withPublishable.status == 401, Verdicts.describe(withPublishable)))
        _ = try agent.postJSON("/v1/auth/session/revoke", ["token": pair.refresh], bearer: options.clientID)
        let revoked = try introspect(pair.access, key: secretKey)
        record(
            "RFC 7662 §2.2", "introspection: a revoked session's access token → active false",
            .expect(
                revoked.json?["active"] as? Bool == false,
                "\(revoked.status) active=\(Self.active(revoked))"))
    }

    // MARK: Production

    func productionChecks() throws(AgentError) {
        guard let production = options.productionClientID else { return }
        let pair = agent.pkce()
        let observed = try browser.get(start(clientID: production, challenge: pair.challenge).target(), accept: "application/json")
        let expected: Set<String> =
            Verdicts.isLoopback(options.redirectURI)
            ? ["loopback_redirect_not_allowed", "redirect_uri_mismatch"]
            : ["custom_scheme_not_allowed", "native_redirect_not_verified", "redirect_uri_mismatch"]
        let isCustom = !options.redirectURI.hasPrefix("http")
        if Verdicts.isLoopback(options.redirectURI) || isCustom {
            record(
                "protocol.md#redirect-kinds", "production: the development callback is refused, shown and never redirected",
                .expect(
                    (400..<500).contains(observed.status) && observed.header("Location") == nil
                        && expected.contains(observed.errorCode ?? ""),
                    Verdicts.describe(observed)))
        }
        let issued = try issue()
        let crossed = try exchange(code: issued.code, verifier: issued.verifier, redirectURI: issued.redirectURI, key: production)
        record(
            "protocol.md#exchange-row-3", "exchange: a development code with the production key → 400 invalid_grant",
            Verdicts.jsonError(crossed, status: 400, error: "invalid_grant"))
        let stillUnused = try exchange(issued)
        record(
            "protocol.md#exchange-row-3", "exchange: that code stays unused and works with its own key",
            .expect(stillUnused.status == 200, Verdicts.describe(stillUnused)))
        if let issuedTokens = tokens(stillUnused) {
            let crossRefresh = try refresh(issuedTokens.refresh, key: production)
            record(
                "protocol.md#sessions", "refresh: another environment's key → 400 invalid_grant",
                Verdicts.jsonError(crossRefresh, status: 400, error: "invalid_grant"))
            _ = try agent.postJSON("/v1/auth/session/revoke", ["token": issuedTokens.refresh], bearer: options.clientID)
        }
    }

    // MARK: Fixtures (operator token)

    func fixtureChecks() throws(AgentError) {
        guard let operatorToken = options.operatorToken else { return }
        let created = try agent.postJSON("/v1/admin/projects", ["name": "zevauth-conformance fixture"], bearer: operatorToken)
        agent.remember(created)
        guard created.status == 201, let json = created.json, let development = json["development"] as? [String: Any],
            let production = json["production"] as? [String: Any], let devKey = development["publishableKey"] as? String,
            let devSecret = development["secretKey"] as? String, let prodKey = production["publishableKey"] as? String,
            let prodSecret = production["secretKey"] as? String
        else {
            record("protocol.md#admin-api", "fixtures: create a throwaway project", .fail(Verdicts.describe(created)))
            return
        }
        record("protocol.md#admin-api", "fixtures: POST /v1/admin/projects → 201 with both environments' keys", .pass("201"))
        func register(_ uri: String, _ secret: String) throws(AgentError) -> Observed {
            try agent.postJSON("/v1/admin/callbacks", ["uri": uri], bearer: secret)
        }
        let refused: [(String, String, String)] = [
            ("RFC 8252 §8.4", "a private-use scheme without a period", "myapp:/callback"),
            ("RFC 9700 §2.6", "http off loopback", "http://conformance.example/callback"),
            ("RFC 6749 §3.1.2", "a fragment", "com.zevauth.conformance:/callback#x"),
            ("protocol.md#loopback-matching", "a javascript: URI", "javascript:alert(1)"),
            ("protocol.md#loopback-matching", "userinfo on loopback", "http://user@127.0.0.1/callback"),
        ]
        for (clause, what, uri) in refused {
            let observed = try register(uri, devSecret)
            record(
                clause, "registration: \(what) is refused → 400 invalid_request",
                Verdicts.jsonError(observed, status: 400, error: "invalid_request"))
        }
        let scheme = "com.zevauth.conformance:/callback"
        let loopback = "http://127.0.0.1/conformance"
        let devScheme = try register(scheme, devSecret)
        record(
            "protocol.md#admin-api", "registration: a custom scheme → 201 kind custom_scheme",
            .expect(
                devScheme.status == 201 && devScheme.json?["kind"] as? String == "custom_scheme",
                Verdicts.describe(devScheme) + " kind \(devScheme.json?["kind"] as? String ?? "missing")"))
        _ = try register(scheme, prodSecret)
        _ = try register(loopback, prodSecret)

        // A start error for an app is held on a one-button page (no gesture in the current page).
        let pair = agent.pkce()
        let held = try browser.get(
            start(clientID: devKey, redirectURI: scheme, state: "held ✓", challenge: pair.challenge).removing("code_challenge").target())
        let back = RedirectBack.find(in: held, redirectURI: scheme)
        record(
            "protocol.md#redirect-back", "custom scheme: a start error is held on the Return to the app page, with state and iss",
            .expect(
                held.status == 200 && back?.delivery == .heldPage && back?.value("error") == "pkce_required"
                    && back?.value("state") == "held ✓"
                    && back?.value("iss") == options.issuer,
                Verdicts.describe(held, redirectURI: scheme)))
        let prodScheme = try browser.get(
            start(clientID: prodKey, redirectURI: scheme, challenge: pair.challenge).target(), accept: "application/json")
        record(
            "protocol.md#redirect-kinds", "production: a registered custom scheme → 403 custom_scheme_not_allowed, shown",
            Verdicts.shownError(prodScheme, status: 403, error: "custom_scheme_not_allowed"))
        let prodLoopback = try browser.get(
            start(clientID: prodKey, redirectURI: Verdicts.withPort(loopback, randomPort()) ?? loopback, challenge: pair.challenge)
                .target(),
            accept: "application/json")
        record(
            "protocol.md#redirect-kinds", "production: a registered loopback → 403 loopback_redirect_not_allowed, shown",
            Verdicts.shownError(prodLoopback, status: 403, error: "loopback_redirect_not_allowed"))
    }

    // MARK: Association files

    func associationChecks() throws(AgentError) {
        for host in options.associationHosts {
            for (path, apple) in [("/.well-known/apple-app-site-association", true), ("/.well-known/assetlinks.json", false)] {
                // Over https the file is fetched as a platform would; a development issuer on http is asked with
                // the hosted domain's Host header.
                let observed: Observed
                if options.issuer.hasPrefix("https://") {
                    observed = try agent.send(.get, "https://\(host)\(path)")
                } else {
                    observed = try agent.send(.get, path, headers: [("Host", host)])
                }
                record(
                    "protocol.md#served-files", "\(host)\(path): 200 application/json, strict JSON, not a redirect",
                    Verdicts.associationFile(observed, apple: apple))
            }
        }
    }

    // MARK: Slow

    func slowChecks() throws(AgentError) {
        let issued = try issue()
        agent.sleep(61)
        let late = try exchange(issued)
        record(
            "RFC 6749 §4.1.2, protocol.md#round-trip", "code: expires 60 s after issue → 400 invalid_grant after 61 s",
            Verdicts.jsonError(late, status: 400, error: "invalid_grant"))
    }
}

extension Outcome {
    /// The same verdict with another description.
    func withSeen(_ seen: String) -> Outcome { Outcome(verdict: verdict, seen: seen) }
}
