import Authorize
import Testing

@Suite struct RedirectURITests {
    @Test(arguments: [
        ("http://127.0.0.1:54321/cb", true),
        ("http://127.0.0.1/cb", true),
        ("http://127.0.0.1:1/cb", true),
        ("http://127.0.0.1:65535/cb", true),
        ("http://127.0.0.1.evil.example:54321/cb", false),
        ("http://evil@127.0.0.1:1/cb", false),
        ("http://127.0.0.1@evil.example/cb", false),
        ("http://localhost:1/cb", false),
        ("http://127.0.0.1:1/cb/../x", false),
        ("http://127.0.0.1:1/cb/%2e%2e/x", false),
        ("http://127.000.000.001:1/cb", false),
        ("HTTP://127.0.0.1:1/cb", false),
        ("http://127.0.0.1:1/cb/", false),
        ("http://127.0.0.1:1/cb?x=1", false),
        ("http://127.0.0.1:1/CB", false),
        ("http://127.0.0.1:0/cb", false),
        ("http://127.0.0.1:65536/cb", false),
        ("http://127.0.0.1:/cb", false),
        ("http://127.0.0.1:01/cb", false),
        ("http://[::1]:1/cb", false),
        ("https://127.0.0.1:1/cb", false),
        ("http://127.0.0.1:1/cb#frag", false),
    ])
    func loopbackRegistrationIgnoresPortOnly(requested: String, accepted: Bool) {
        #expect(matches(requested, registered: "http://127.0.0.1/cb") == accepted)
    }

    @Test(arguments: [
        ("http://[::1]:1/cb", true), ("http://[::1]:65535/cb", true), ("http://[::1]/cb", true),
        ("http://127.0.0.1:1/cb", false), ("http://localhost:1/cb", false), ("http://[0:0:0:0:0:0:0:1]:1/cb", false),
    ])
    func ipv6LoopbackIsItsOwnHost(requested: String, accepted: Bool) {
        #expect(matches(requested, registered: "http://[::1]/cb") == accepted)
    }

    @Test func registeredLoopbackPortDoesNotPinThePort() {
        #expect(matches("http://localhost:9999/cb", registered: "http://localhost:8080/cb"))
        #expect(!matches("http://LOCALHOST:9999/cb", registered: "http://localhost:8080/cb"))
        #expect(!matches("http://localhost.:9999/cb", registered: "http://localhost:8080/cb"))
    }

    @Test(arguments: [
        ("https://acme.com/app/callback", true),
        ("https://ACME.com/app/callback", false),
        ("https://acme.com/App/callback", false),
        ("https://acme.com/app/callback/", false),
        ("https://acme.com:443/app/callback", false),
        ("https://acme.com/app%2Fcallback", false),
        ("https://acme.com/app/callback?", false),
        ("https://acme.com/app/callback?x=1", false),
        ("https://acme.com.evil.example/app/callback", false),
        ("http://acme.com/app/callback", false),
    ])
    func linkMatchesByteForByte(requested: String, accepted: Bool) {
        #expect(matches(requested, registered: "https://acme.com/app/callback") == accepted)
    }

    @Test(arguments: [
        ("com.acme.app:/callback", true),
        ("COM.acme.app:/callback", false),
        ("com.acme.app:/Callback", false),
        ("com.acme.app:/callback/", false),
        ("com.acme.app://callback", false),
        ("com.acme.app:/callback%2F", false),
        ("com.acme.app.evil:/callback", false),
    ])
    func customSchemeMatchesByteForByte(requested: String, accepted: Bool) {
        #expect(matches(requested, registered: "com.acme.app:/callback") == accepted)
    }

    @Test(arguments: [
        ("https://acme.com/app/callback", RedirectKind.link, "acme.com" as String?, nil as Int?, "/app/callback"),
        ("https://acme.com:8443/cb?x=1", .link, "acme.com", 8443, "/cb?x=1"),
        (
            "http://127.0.0.1:51004/oauth2redirect/example-provider", .loopback, "127.0.0.1", 51004,
            "/oauth2redirect/example-provider"
        ),
        ("http://[::1]/cb", .loopback, "[::1]", nil, "/cb"),
        ("http://localhost:3000/cb", .loopback, "localhost", 3000, "/cb"),
        ("com.example.app:/oauth2redirect/example-provider", .customScheme, nil, nil, "/oauth2redirect/example-provider"),
        ("com.acme.app://callback", .customScheme, "callback", nil, ""),
        ("com.acme.app://callback/path?q=1", .customScheme, "callback", nil, "/path?q=1"),
    ])
    func parsesAllowedShapes(raw: String, kind: RedirectKind, host: String?, port: Int?, pathAndQuery: String) throws {
        let parsed = try RedirectURI.parse(raw).get()
        #expect(parsed.raw == raw)
        #expect(parsed.kind == kind)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
        #expect(parsed.pathAndQuery == pathAndQuery)
    }

    @Test(arguments: [
        ("", RedirectURIProblem.empty),
        ("http://127.0.0.1/" + String(repeating: "a", count: 2032), .tooLong),
        ("com.acme.app:/" + String(repeating: "%61", count: 700), .tooLong),
        ("javascript:alert(1)", .forbiddenScheme),
        ("JavaScript:alert(1)", .forbiddenScheme),
        ("data:text/html,hi", .forbiddenScheme),
        ("file:///etc/passwd", .forbiddenScheme),
        ("vbscript:msgbox", .forbiddenScheme),
        ("myapp://cb", .schemeNotReverseDomain),
        ("myapp:/cb", .schemeNotReverseDomain),
        ("com..app:/cb", .schemeNotReverseDomain),
        ("com.acme.:/cb", .schemeNotReverseDomain),
        ("Com.Acme.App:/cb", .schemeNotLowercase),
        ("HTTPS://acme.com/cb", .schemeNotLowercase),
        ("http://example.com/cb", .httpNotLoopback),
        ("http://127.000.000.001:1/cb", .httpNotLoopback),
        ("http://127.0.0.1.evil.example:1/cb", .httpNotLoopback),
        ("http://localhost./cb", .httpNotLoopback),
        ("http://LOCALHOST/cb", .httpNotLoopback),
        ("http://[::ffff:127.0.0.1]/cb", .httpNotLoopback),
        ("https://acme.com/cb#frag", .fragment),
        ("com.acme.app:/cb#", .fragment),
        ("https://user@acme.com/cb", .userinfo),
        ("https://user:pw@acme.com/cb", .userinfo),
        ("http://127.0.0.1@evil.example/cb", .userinfo),
        ("com.acme.app://user@host/cb", .userinfo),
        ("/cb", .relative),
        ("cb", .relative),
        ("//acme.com/cb", .relative),
        ("./x:y", .relative),
        ("1abc.x:/cb", .invalidScheme),
        ("https://acme.com/cb/../x", .dotSegment),
        ("https://acme.com/./cb", .dotSegment),
        ("https://acme.com/cb/..", .dotSegment),
        ("https://acme.com/cb/%2E%2e/x", .dotSegment),
        ("com.acme.app:/cb/../x", .dotSegment),
        ("https://acme.com/c b", .invalidCharacter),
        ("https://acme.com/cb\n", .invalidCharacter),
        ("https://acme.com/cb\\x", .invalidCharacter),
        ("https://acmé.com/cb", .invalidCharacter),
        ("https://acme.com/cb<", .invalidCharacter),
        ("https://acme.com/cb%", .malformedPercentEncoding),
        ("https://acme.com/cb%zz", .malformedPercentEncoding),
        ("https:///cb", .emptyHost),
        ("https://:443/cb", .emptyHost),
        ("https:acme.com/cb", .emptyHost),
        ("https://acme%2Ecom/cb", .percentEncodedHost),
        ("https://93.184.216.34/cb", .ipLiteralHost),
        ("https://[2001:db8::1]/cb", .ipLiteralHost),
        ("https://localhost/cb", .invalidHost),
        ("https://Acme.com/cb", .invalidHost),
        ("https://acme.com./cb", .invalidHost),
        ("https://-acme.com/cb", .invalidHost),
        ("https://acme_x.com/cb", .invalidHost),
        ("https://acme.com:0/cb", .invalidPort),
        ("https://acme.com:65536/cb", .invalidPort),
        ("https://acme.com:/cb", .invalidPort),
        ("https://acme.com:+1/cb", .invalidPort),
        ("https://acme.com", .missingPath),
        ("https://acme.com?x=1", .missingPath),
        ("com.acme.app:callback", .missingPath),
    ])
    func refusesUnsafeShapes(raw: String, problem: RedirectURIProblem) {
        #expect(throws: problem) { try RedirectURI.parse(raw).get() }
    }

    /// RFC 6749 §3.1.2, RFC 9207 §2: a registered query must not already carry a parameter the response
    /// adds, or the redirect carries two values and a client reading the first reads the wrong one.
    @Test(arguments: [
        "http://127.0.0.1/cb?iss=https%3A%2F%2Fevil.example",
        "http://127.0.0.1/cb?code=x",
        "http://127.0.0.1/cb?a=1&state=x",
        "http://[::1]/cb?error",
        "http://localhost/cb?x=1;error_description=x",
        "https://acme.com/cb?error_uri=",
        "https://acme.com/cb?ID_TOKEN=x",
        "https://acme.com/cb?Session_State=x",
        "https://acme.com/cb?%63ode=1",
        "https://acme.com/cb?%53TATE=1",
        "https://acme.com/cb?%69ss",
        "https://acme.com/cb?error%5Fdescription=1",
        "com.acme.app:/cb?state=1",
        "com.acme.app://cb/x?x=y&&iss=1",
        // Spellings lenient parsers (PHP's $_GET and others) turn into a response parameter.
        "https://acme.com/cb?error.description=x", "https://acme.com/cb?error+description=x",
        "https://acme.com/cb?error%20uri=x", "https://acme.com/cb?+error=x", "https://acme.com/cb?%20iss=x",
        "https://acme.com/cb?iss%20=x", "https://acme.com/cb?code[]=x", "https://acme.com/cb?code%5B%5D=x",
        "https://acme.com/cb?code%00=x", "https://acme.com/cb?iss%0A=x", "https://acme.com/cb?code%09=x",
        "https://acme.com/cb?state[a]=x", "https://acme.com/cb?error[description=x", "https://acme.com/cb?ID.TOKEN=x",
        "https://acme.com/cb?error%2Buri=x", "https://acme.com/cb?code%20[]=x",
    ])
    func refusesAQueryThatAlreadyCarriesAResponseParameter(raw: String) {
        #expect(throws: RedirectURIProblem.responseParameterInQuery) { try RedirectURI.parse(raw).get() }
    }

    @Test(arguments: [
        "http://127.0.0.1/cb?codes=1", "http://127.0.0.1/cb?x=code", "https://acme.com/cb?state_x=1&my_iss=2",
        "https://acme.com/cb?errors", "com.acme.app:/cb?x=state%3D1", "https://acme.com/state/cb?issuer=1",
        "https://acme.com/cb?s+tate=1", "https://acme.com/cb?%FF=1", "https://acme.com/cb?x[code]=1",
        "https://acme.com/cb?my.iss=1", "https://acme.com/cb?co.de=1",
    ])
    func acceptsQueriesWithoutResponseParameters(raw: String) {
        #expect(throws: Never.self) { try RedirectURI.parse(raw).get() }
    }

    @Test func acceptsAURIOfExactlyTheMaximumLength() {
        let raw = "http://127.0.0.1/" + String(repeating: "a", count: RedirectURI.maximumLength - 17)
        #expect(raw.utf8.count == 2048)
        #expect(throws: Never.self) { try RedirectURI.parse(raw).get() }
    }

    private func matches(_ requested: String, registered: String) -> Bool {
        guard case .success(let wanted) = RedirectURI.parse(requested) else { return false }
        return wanted.matchesRegistered(uri(registered))
    }
}
