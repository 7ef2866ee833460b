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
        metadata = JSONWriter.encode(Self.metadataDocument(issuer: configuration.issuer), capacity: 1024)
    }

    /// The RFC 8414 §2 authorization server metadata for `issuer` (an https origin without a trailing
    /// slash). No `scopes_supported`: no scope is granted (docs/decisions.md).
    static func metadataDocument(issuer: String) -> JSONValue {
        [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + "/oauth2/authorize"),
            "token_endpoint": .string(issuer + "/oauth2/token"),
            "revocation_endpoint": .string(issuer + "/oauth2/revoke"),
            "introspection_endpoint": .string(issuer + "/oauth2/introspect"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
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
