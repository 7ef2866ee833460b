#!/usr/bin/env python3
# Breaks one rule of docs/protocol.md in the server at a time, runs the live conformance suite against it, and
# restores the file with git. Every mutation must be CAUGHT (docs/conformance.md lists the results).
# Needs ZEVAUTH_TEST_DATABASE_URL (scripts/test-postgres.sh start DIR). Usage: scripts/conformance-mutations.py [index …]
# Each mutation: name, [(file, old, new)]. Applied one at a time to the working tree, then restored by git.
M = [
 ("accept plain at the start", [("Sources/Authorize/StartValidator.swift",
   'guard let method = parameters["code_challenge_method"], method.utf8.elementsEqual("S256".utf8) else {',
   'guard let method = parameters["code_challenge_method"], method.utf8.elementsEqual("S256".utf8) || method == "plain" else {')]),
 ("advertise plain in the metadata", [("Sources/ZevAuthServer/ConstantDocuments.swift",
   '"code_challenge_methods_supported": ["S256"],', '"code_challenge_methods_supported": ["plain", "S256"],')]),
 ("skip the redirect-URI check at the exchange", [
   ("Sources/Authorize/RoundTrip/Exchange.swift", 'guard facts.redirectMatches else { return .refused(redirectMismatch) }', 'guard true else { return .refused(redirectMismatch) }'),
   ("Sources/PostgresStore/PostgresAuthorizations.swift", 'WHERE code.won AND code.redirect_matches AND code.challenge_matches', 'WHERE code.won AND code.challenge_matches')]),
 ("let a code work twice", [("Sources/PostgresStore/PostgresAuthorizations.swift",
   'c.consumed_by = $6::uuid AS won,', 'true AS won,')]),
 ("valid replay does not revoke the session", [
   ("Sources/PostgresStore/PostgresAuthorizations.swift", 'FROM code WHERE NOT code.won AND code.redirect_matches AND code.challenge_matches', 'FROM code WHERE false'),
   ("Sources/PostgresStore/PostgresAuthorizations.swift", 'WHERE authorization_code_id = $1 AND revoked_at IS NULL', 'WHERE false AND authorization_code_id = $1')]),
 ("drop iss from the success redirect", [("Sources/Authorize/RedirectLocation.swift",
   '[("code", code), ("state", state.value), ("iss", issuer)]', '[("code", code), ("state", state.value)]')]),
 ("drop iss from error redirects", [("Sources/Authorize/RedirectLocation.swift",
   '    pairs.append(("iss", issuer))', '    _ = issuer')]),
 ("re-encode state with + for a space", [("Sources/Authorize/RedirectLocation.swift",
   'return base.raw + separator + FormURLEncoding.encode(parameters)', 'return base.raw + separator + FormURLEncoding.encode(parameters).replacing("%20", with: "+")')]),
 ("forget no-store on exchange answers", [("Sources/ZevAuthServer/ExchangeHandler.swift",
   '        return try grant(fields, publishableKey: publishableKey, gate: gate).response(on: .zevAuth)\n',
   '        var stripped = try grant(fields, publishableKey: publishableKey, gate: gate).response(on: .zevAuth)\n        stripped.headers.remove("Cache-Control")\n        return stripped\n')]),
 ("allow loopback in production", [("Sources/Authorize/StartValidator.swift",
   '            if client.kind == .production {\n                return .failure(\n                    OAuthError(.loopbackRedirectNotAllowed',
   '            if client.kind == .production && false {\n                return .failure(\n                    OAuthError(.loopbackRedirectNotAllowed')]),
 ("refresh reuse does not revoke the session", [("Sources/PostgresStore/PostgresSessions.swift",
   "                    ELSE to_timestamp($3::float8) END,\n                revoked_reason", "                    ELSE NULL::timestamptz END,\n                revoked_reason")]),
 ("redirect invalid_state instead of showing it", [("Sources/Authorize/StartValidator.swift",
   '            return .show(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."))',
   '            return .redirect(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."), to: redirect, state: nil)')]),
 # OpenID Connect in the browser (docs/protocol.md#openid-browser).
 ("prompt=none shows the sign-in page", [("Sources/ZevAuthServer/SignInFlow.swift",
   '            if validated.options.prompts.contains(.noInteraction) {', '            if false {')]),
 ("max_age ignored", [("Sources/PostgresStore/PostgresAuthorizations.swift",
   'AND ($20::bigint IS NULL OR b.auth_time >', 'AND ($20::bigint IS NULL OR true OR b.auth_time >')]),
 ("request objects accepted", [("Sources/Authorize/StartValidator.swift",
   '        if present(parameters["request"]) != nil {', '        if present(parameters["request"]) != nil && false {')]),
 ("logout follows an unregistered post_logout_redirect_uri", [("Sources/Authorize/OpenID/Logout.swift",
   'switch StartValidator.checkRedirect(["redirect_uri": raw], client: client) {',
   'switch RedirectURI.parse(raw).mapError({ _ in OAuthError(.redirectURIMismatch, "x") }) {')]),
 ("logout without a confirmation page", [("Sources/Authorize/OpenID/Logout.swift",
   'confirm: !hintMatches,', 'confirm: false,')]),
 ("logout leaves the browser session and its app sessions", [("Sources/ZevAuthServer/LogoutHandler.swift",
   '        if let browser { try SignOut(', '        if let browser, false { try SignOut(')]),
 # OpenID Connect: ID token claims, userinfo, discovery and the JWKS (docs/protocol.md, "OpenID Connect").
 ("ID token without the start's nonce", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   '        self.nonce = session.grant.nonce', '        self.nonce = nil')]),
 ("at_hash over the refresh token", [("Sources/ZevAuthServer/SessionGrants.swift",
   'guard case .issued(let session, let accessToken, _) = outcome,', 'guard case .issued(let session, _, let accessToken) = outcome,')]),
 ("at_hash over the whole SHA-256", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   'Base64URL.encode(sha256(Array(accessToken.utf8)).prefix(16))', 'Base64URL.encode(sha256(Array(accessToken.utf8)))')]),
 ("aud is the issuer, not the publishable key", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   '            object.field("aud", clientID)', '            object.field("aud", issuer)')]),
 ("iss with a trailing slash", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   '            object.field("iss", issuer)', '            object.field("iss", issuer + "/")')]),
 ("exp is iat + 7200", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   'public static let lifetimeSeconds = 3600', 'public static let lifetimeSeconds = 7200')]),
 ("no exp", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   '            object.field("exp", issuedAt + Self.lifetimeSeconds)\n', '')]),
 ("auth_time is the exchange's time", [("Sources/Authorize/OpenID/IDTokenClaims.swift",
   '        self.authTime = Int(session.grant.authTime.timeIntervalSince1970)', '        self.authTime = Int(now.timeIntervalSince1970)')]),
 ("userinfo answers 200 to a refresh token", [("Sources/ZevAuthServer/UserInfoHandler.swift",
   '        case .invalidToken:\n', '        case .invalidToken where token.hasPrefix("zrt_"):\n            return HTTPResponse(status: 200, headers: HTTPHeaders([]))\n        case .invalidToken:\n')]),
 ("discovery without jwks_uri", [("Sources/ZevAuthServer/ConstantDocuments.swift",
   '            "jwks_uri": .string(issuer + "/.well-known/jwks.json"),\n', '')]),
 ("discovery without end_session_endpoint", [("Sources/ZevAuthServer/ConstantDocuments.swift",
   '            "end_session_endpoint": .string(issuer + "/oauth2/logout"),\n', '')]),
 ("the ID token signed by the current key under the next key's kid", [("Sources/ZevAuthServer/SigningKeyRing.swift",
   'JWS.protectedHeader(algorithm: algorithm, keyID: record.kid)',
   'JWS.protectedHeader(algorithm: algorithm, keyID: held.records.first { $0.algorithm == algorithm && $0.state == .next }?.kid ?? record.kid)')]),
 ("the JWKS leaves out the next keys", [("Sources/Authorize/OpenID/SigningKeys.swift",
   '        case .next, .current: return true\n', '        case .current: return true\n        case .next: return false\n')]),
]
import sys, subprocess, os, re
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
only = sys.argv[1:]
caught = []
for i,(name, edits) in enumerate(M):
    if only and str(i) not in only: continue
    try:
        for f,old,new in edits:
            s=open(f).read()
            assert s.count(old)==1, (name, f, s.count(old))
            open(f,'w').write(s.replace(old,new))
        # Bounded: a build or a run that hangs is reported, never waited on for ever.
        b = subprocess.run("swift build -j 2 --build-tests 2>&1 | grep -E 'error:' | head -5", shell=True, capture_output=True, text=True, timeout=3600)
        if b.stdout.strip(): print(f"### {i} {name}: BUILD ERROR {b.stdout}", flush=True)
        else:
            r = subprocess.run("swift test --skip-build --filter 'ConformanceLiveTests/everyCheckPasses' 2>&1", shell=True, capture_output=True, text=True, timeout=1200)
            m = re.search(r'failures\.isEmpty.*', r.stdout)
            if r.returncode != 0: caught.append(i)
            print(f"### {i} {name}: {'CAUGHT' if r.returncode!=0 else 'NOT CAUGHT'}", flush=True)
            print((m.group(0) if m else r.stdout[-1500:])[:6000], flush=True)
    except subprocess.TimeoutExpired as e:
        print(f"### {i} {name}: TIMED OUT ({e.cmd})", flush=True)
    finally:
        subprocess.run(["git","checkout","--"] + list({f for f,_,_ in edits}))
ran = [i for i in range(len(M)) if not only or str(i) in only]
print(f"### {len(caught)} of {len(ran)} caught; not caught: {[i for i in ran if i not in caught]}", flush=True)
