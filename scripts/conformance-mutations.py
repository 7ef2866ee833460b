#!/usr/bin/env python3
# Breaks one rule of docs/protocol.md in the server at a time, runs the live conformance suite against it, and
# restores the file with git. Every mutation must be CAUGHT (docs/conformance.md lists the results).
# Needs ZEVAUTH_TEST_DATABASE_URL (scripts/test-postgres.sh start DIR). Usage: scripts/conformance-mutations.py [index …]
# Each mutation: name, [(file, old, new)]. Applied one at a time to the working tree, then restored by git.
M = [
 ("accept plain at the start", [("Sources/Authorize/StartValidator.swift",
   'guard let method = parameters["code_challenge_method"], method.utf8.elementsEqual("S256".utf8) else {',
   'guard let method = parameters["code_challenge_method"], method.utf8.elementsEqual("S256".utf8) || method == "plain" else {')]),
 ("advertise plain in the metadata", [("Sources/ZevAuthServer/StandardOAuthHandlers.swift",
   '"code_challenge_methods_supported": ["S256"],', '"code_challenge_methods_supported": ["plain", "S256"],')]),
 ("skip the redirect-URI check at the exchange", [
   ("Sources/Authorize/ExchangeCheck.swift", 'guard requestedRedirectURI.utf8.elementsEqual(issuedRedirectURI.utf8) else {', 'guard true else {'),
   ("Sources/PostgresStore/PostgresStore.swift", 'WHERE code.won AND code.redirect_uri = $3 AND code.code_challenge = $4', 'WHERE code.won AND code.code_challenge = $4')]),
 ("let a code work twice", [("Sources/PostgresStore/PostgresStore.swift",
   'c.consumed_by = $6::uuid AS won,', 'true AS won,')]),
 ("valid replay does not revoke the session", [
   ("Sources/PostgresStore/PostgresStore.swift", 'c.consumed_by <> $6::uuid AND COALESCE(c.redirect_uri = $3 AND c.code_challenge = $4, false) AS replay', 'false AS replay')]),
 ("drop iss from the success redirect", [("Sources/Authorize/RedirectLocation.swift",
   '[("code", code), ("state", state.value), ("iss", issuer)]', '[("code", code), ("state", state.value)]')]),
 ("drop iss from error redirects", [("Sources/Authorize/RedirectLocation.swift",
   '    pairs.append(("iss", issuer))', '    _ = issuer')]),
 ("re-encode state with + for a space", [("Sources/Authorize/RedirectLocation.swift",
   'return base.raw + separator + FormURLEncoding.encode(parameters)', 'return base.raw + separator + FormURLEncoding.encode(parameters).replacing("%20", with: "+")')]),
 ("forget no-store on exchange answers", [("Sources/ZevAuthServer/ExchangeHandler.swift",
   '''        if response.status != 429, (400..<500).contains(response.status) { try limiter.hit(.exchangeFailuresPerAddress, key: address) }
        return response''', '''        if response.status != 429, (400..<500).contains(response.status) { try limiter.hit(.exchangeFailuresPerAddress, key: address) }
        var stripped = response
        stripped.headers.remove("Cache-Control")
        return stripped''')]),
 ("allow loopback in production", [("Sources/Authorize/StartValidator.swift",
   '            if client.kind == .production {\n                return .failure(\n                    OAuthError(.loopbackRedirectNotAllowed',
   '            if client.kind == .production && false {\n                return .failure(\n                    OAuthError(.loopbackRedirectNotAllowed')]),
 ("refresh reuse does not revoke the session", [("Sources/PostgresStore/PostgresStore+Sessions.swift",
   "                    ELSE to_timestamp($3::float8) END,\n                revoked_reason", "                    ELSE NULL::timestamptz END,\n                revoked_reason")]),
 ("redirect invalid_state instead of showing it", [("Sources/Authorize/StartValidator.swift",
   '            return .show(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."))',
   '            return .redirect(OAuthError(.invalidState, "state must be 1 to 512 characters with no control character."), to: redirect, state: nil)')]),
 # OpenID Connect in the browser (docs/protocol.md#openid-browser).
 ("prompt=none shows the sign-in page", [("Sources/ZevAuthServer/SignInFlow.swift",
   '            if validated.options.prompts.contains(.noInteraction) {', '            if false {')]),
 ("max_age ignored", [("Sources/PostgresStore/PostgresAuthorizations.swift",
   'AND ($20::bigint IS NULL OR b.auth_time >', 'AND ($20::bigint IS NULL OR true OR b.auth_time >')]),
 ("request objects accepted", [("Sources/Authorize/OpenID/RequestOptions.swift",
   '        if present("request") != nil {', '        if present("request") != nil && false {')]),
 ("logout follows an unregistered post_logout_redirect_uri", [("Sources/Authorize/OpenID/Logout.swift",
   'switch StartValidator.checkRedirect(["redirect_uri": raw], client: client) {',
   'switch RedirectURI.parse(raw).mapError({ _ in OAuthError(.redirectURIMismatch, "x") }) {')]),
 ("logout without a confirmation page", [("Sources/Authorize/OpenID/Logout.swift",
   'confirm: !hintMatches,', 'confirm: false,')]),
 ("logout leaves the browser session and its app sessions", [("Sources/ZevAuthServer/LogoutHandler.swift",
   '        if let browser { try SignOut(', '        if let browser, false { try SignOut(')]),
]
import sys, subprocess, os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
only = sys.argv[1:] 
for i,(name, edits) in enumerate(M):
    if only and str(i) not in only: continue
    for f,old,new in edits:
        s=open(f).read()
        assert s.count(old)==1, (name, f, s.count(old))
        open(f,'w').write(s.replace(old,new))
    b = subprocess.run("swift build -j 2 --build-tests 2>&1 | grep -E 'error:' | head -5", shell=True, capture_output=True, text=True)
    if b.stdout.strip(): print(f"### {i} {name}: BUILD ERROR {b.stdout}", flush=True)
    else:
        r = subprocess.run("swift test --skip-build --filter 'ConformanceLiveTests/everyCheckPasses' 2>&1", shell=True, capture_output=True, text=True)
        import re
        m = re.search(r'failures\.isEmpty.*', r.stdout)
        print(f"### {i} {name}: {'CAUGHT' if r.returncode!=0 else 'NOT CAUGHT'}", flush=True)
        print((m.group(0) if m else r.stdout[-1500:])[:6000], flush=True)
    subprocess.run(["git","checkout","--"] + list({f for f,_,_ in edits}))
