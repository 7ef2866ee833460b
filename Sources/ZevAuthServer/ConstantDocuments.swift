import Authorize
import Encoding
import HTTPServer

/// The JSON bodies that never change while the server runs, encoded once: the health answers (the same
/// bytes for every server) and the RFC 8414 metadata document (built from the configuration when a
/// `ZevAuthApp` registers its routes). Answering one copies bytes; nothing is built per request.
struct ConstantDocuments: Sendable {
    /// `GET /healthz`: `{"status":"ok"}`.
    static let healthy = JSONWriter.encode(["status": "ok"] as JSONValue)
    /// `GET /readyz` when the database answers: `{"status":"ready"}`.
    static let ready = JSONWriter.encode(["status": "ready"] as JSONValue)
    /// `GET /readyz` when it does not: `{"status":"unavailable","error":"temporarily_unavailable"}`.
    static let notReady = JSONWriter.encode(["status": "unavailable", "error": "temporarily_unavailable"] as JSONValue)

    /// The metadata document's bytes for this configuration's issuer.
    let metadata: [UInt8]

    /// Encodes the documents that depend on `configuration`.
    init(configuration: ServerConfiguration) {
        metadata = JSONWriter.encode(Self.metadataDocument(issuer: configuration.issuer), capacity: 2048)
    }

    /// The claims an ID token or userinfo may carry (OpenID Connect Discovery 1.0 §3, `claims_supported`).
    static let claimsSupported: [JSONValue] = [
        "iss", "sub", "aud", "azp", "iat", "exp", "auth_time", "nonce", "amr", "sid", "at_hash", "name", "picture",
        "updated_at", "email", "email_verified",
    ]

    /// One document for both well-known paths (docs/protocol.md, "OpenID Connect"): the RFC 8414 §2
    /// authorization server metadata and the OpenID Provider Metadata (OpenID Connect Discovery 1.0 §3) for
    /// `issuer` (an origin without a trailing slash, byte-identical to `ZEVAUTH_ISSUER`).
    static func metadataDocument(issuer: String) -> JSONValue {
        [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + "/oauth2/authorize"),
            "token_endpoint": .string(issuer + "/oauth2/token"),
            "revocation_endpoint": .string(issuer + "/oauth2/revoke"),
            "introspection_endpoint": .string(issuer + "/oauth2/introspect"),
            // RFC 9126 §5. The deployment-wide default is false; an environment may require pushed requests
            // (docs/protocol.md#pushed-requests). `request_uri_parameter_supported` stays false below: no
            // request URI but the server's own is ever read.
            "pushed_authorization_request_endpoint": .string(issuer + "/oauth2/par"),
            "require_pushed_authorization_requests": false,
            // RFC 9449 §5.1: the algorithms a DPoP proof may use (docs/dpop.md).
            "dpop_signing_alg_values_supported": .array(DPoPAlgorithm.allCases.map { .string($0.rawValue) }),
            "response_types_supported": ["code"],
            // form_post for web clients (docs/protocol.md, "Web clients").
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": ["authorization_code", "refresh_token", .string(TokenExchangeRequest.grantType)],
            "code_challenge_methods_supported": ["S256"],
            // Web clients authenticate (docs/protocol.md, "Web clients"); native apps are public ("none").
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256", "ES256"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"],
            "authorization_response_iss_parameter_supported": true,
            "jwks_uri": .string(issuer + "/.well-known/jwks.json"),
            "userinfo_endpoint": .string(issuer + "/oauth2/userinfo"),
            "end_session_endpoint": .string(issuer + "/oauth2/logout"),
            "scopes_supported": .array(GrantedScope.known.map(JSONValue.string)),
            "claims_supported": .array(claimsSupported),
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": .array(SigningAlgorithm.allCases.map { .string($0.rawValue) }),
            "prompt_values_supported": ["none", "login", "consent"],
            "request_parameter_supported": false,
            "request_uri_parameter_supported": false,
            "claims_parameter_supported": true,
        ]
    }

    /// A health answer: the constant `body` with `no-store`.
    static func health(status: Int, _ body: [UInt8]) -> HTTPResponse {
        var response = Wire.jsonBytes(status: status, body)
        // Not ready is a 503 like any other: say when to ask again.
        if status == 503 { response.headers.set("Retry-After", "1") }
        return response
    }
}
