import Authorize
import PKCE
import Testing

/// RFC 7636 Appendix B.
let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
let rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

/// A stand-in digest for the pure tests (this target links no C): the input's first 32 bytes, zero-padded.
/// Real SHA-256 is exercised in PKCETests.
let fakeSHA256: PKCE.SHA256 = { bytes in Array((bytes + [UInt8](repeating: 0, count: 32)).prefix(32)) }
let plainEquals: @Sendable ([UInt8], [UInt8]) -> Bool = { $0 == $1 }

func uri(_ raw: String) -> RedirectURI {
    guard case .success(let parsed) = RedirectURI.parse(raw) else { fatalError("fixture URI does not parse: \(raw)") }
    return parsed
}

let development = ClientEnvironment(
    environmentID: "env_dev", kind: .development, appName: "Acme",
    registeredRedirects: [
        RegisteredRedirect(uri: uri("http://127.0.0.1/cb")),
        RegisteredRedirect(uri: uri("http://[::1]/cb")),
        RegisteredRedirect(uri: uri("http://localhost:8080/cb")),
        RegisteredRedirect(uri: uri("com.acme.app:/callback")),
        RegisteredRedirect(uri: uri("https://acme.com/app/callback"), linkVerified: true),
        RegisteredRedirect(uri: uri("https://unverified.example/cb"), linkVerified: false),
    ])

let production = ClientEnvironment(
    environmentID: "env_prod", kind: .production, appName: "Acme",
    registeredRedirects: [
        RegisteredRedirect(uri: uri("http://127.0.0.1/cb")),
        RegisteredRedirect(uri: uri("com.acme.app:/callback")),
        RegisteredRedirect(uri: uri("com.acme.enabled:/callback"), productionCustomSchemeAllowed: true),
        RegisteredRedirect(uri: uri("https://acme.com/app/callback"), linkVerified: true),
        RegisteredRedirect(uri: uri("https://acme.org/cb"), linkVerified: false),
    ])

func lookup(_ clientID: String) -> ClientEnvironment? {
    switch clientID {
    case "pk_test_dev": return development
    case "pk_live_prod": return production
    default: return nil
    }
}

/// A valid development start; `with` replaces (or with `nil` removes) parameters, keeping order.
func startQuery(
    _ changes: [String: String?] = [:], client: String = "pk_test_dev", standard: Bool = false
) -> [(name: String, value: String)] {
    var pairs: [(name: String, value: String)] = [
        ("client_id", client), ("redirect_uri", "com.acme.app:/callback"), ("state", "xyz"),
        ("code_challenge", rfcChallenge), ("code_challenge_method", "S256"),
    ]
    if standard { pairs.append(("response_type", "code")) }
    for (name, value) in changes {
        if let index = pairs.firstIndex(where: { $0.name == name }) {
            if let value { pairs[index].value = value } else { pairs.remove(at: index) }
        } else if let value {
            pairs.append((name, value))
        }
    }
    return pairs
}

func decide(_ query: [(name: String, value: String)], standard: Bool = false) -> StartDecision {
    StartValidator.decide(query: query, standardEndpoint: standard, lookupClient: lookup)
}
