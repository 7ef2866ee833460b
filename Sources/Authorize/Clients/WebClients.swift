import Encoding
import Foundation

/// How a web client authenticates at the token endpoint (RFC 7591 §2 `token_endpoint_auth_method`; OpenID
/// Connect Core §9). Public clients (`none`) are the environments' publishable keys, never a web client.
public enum TokenEndpointAuthMethod: String, Sendable, Equatable, CaseIterable {
    /// The client ID and secret in `Authorization: Basic` (RFC 6749 §2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// `client_id` and `client_secret` in the form body (RFC 6749 §2.3.1).
    case clientSecretPost = "client_secret_post"
    /// A JWT signed with one of the client's keys (RFC 7523 §2.2, §3; OpenID Connect Core §9).
    case privateKeyJWT = "private_key_jwt"

    /// Whether the method presents a client secret.
    public var usesSecret: Bool { self != .privateKeyJWT }
}

/// A registered web client (sql/026_web_clients.sql; docs/protocol.md, "Web clients"): never a secret.
public struct WebClientRecord: Sendable, Equatable {
    /// `zc_…`, the OAuth `client_id`.
    public let clientID: String
    /// The environment it belongs to (a UUID).
    public let environmentID: String
    /// The name the consent page shows (`DisplayName` rules).
    public let name: String
    /// The redirect URIs, matched byte for byte.
    public let redirectURIs: [String]
    /// Where RP-initiated logout may return, matched byte for byte.
    public let postLogoutRedirectURIs: [String]
    /// The one way the client authenticates at the token endpoint.
    public let authMethod: TokenEndpointAuthMethod
    /// The JSON Web Key Set as registered (`private_key_jwt` only), as JSON text.
    public let jwks: String?
    /// Where the client publishes its key set (`private_key_jwt` only).
    public let jwksURI: String?
    /// Whether every code request needs PKCE S256 (default true; docs/protocol.md, "Web clients").
    public let requirePKCE: Bool
    /// Whether every start must resume a pushed request (default false; RFC 9126 §6 client metadata
    /// `require_pushed_authorization_requests`; docs/protocol.md, "Web clients").
    public let requirePushedRequests: Bool
    public let createdAt: Date
    public let updatedAt: Date

    /// Creates a record (the store builds it from a row; tests from literals).
    public init(
        clientID: String, environmentID: String, name: String, redirectURIs: [String], postLogoutRedirectURIs: [String],
        authMethod: TokenEndpointAuthMethod, jwks: String?, jwksURI: String?, requirePKCE: Bool, requirePushedRequests: Bool = false,
        createdAt: Date, updatedAt: Date
    ) {
        self.clientID = clientID
        self.environmentID = environmentID
        self.name = name
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.authMethod = authMethod
        self.jwks = jwks
        self.jwksURI = jwksURI
        self.requirePKCE = requirePKCE
        self.requirePushedRequests = requirePushedRequests
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One of a client's secrets as listed: never the secret, only its last 4 characters.
public struct WebClientSecretRecord: Sendable, Equatable {
    /// The secret's id (a UUID).
    public let id: String
    /// The last 4 characters of the secret.
    public let suffix: String
    public let createdAt: Date
    /// When it was revoked; nil while it authenticates the client.
    public let revokedAt: Date?
    /// When it stops authenticating the client by itself; nil: only revocation ends it.
    public let expiresAt: Date?

    /// Creates a secret record.
    public init(id: String, suffix: String, createdAt: Date, revokedAt: Date?, expiresAt: Date?) {
        self.id = id
        self.suffix = suffix
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.expiresAt = expiresAt
    }
}

/// A client with its secrets, as the admin API answers it.
public struct ListedWebClient: Sendable, Equatable {
    public let client: WebClientRecord
    /// Every secret, live and revoked, oldest first.
    public let secrets: [WebClientSecretRecord]

    /// Creates a listed client.
    public init(client: WebClientRecord, secrets: [WebClientSecretRecord]) {
        self.client = client
        self.secrets = secrets
    }
}

/// A field of a web client that fails its rule: the admin API answers 400 `invalid_request` with
/// "`field` `rule`." (docs/protocol.md, "Web clients").
public struct WebClientFieldProblem: Error, Sendable, Equatable {
    /// The JSON member, as the admin API spells it.
    public let field: String
    /// What the value must be, after the field name.
    public let rule: String

    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }
}

/// A client's fields as received, types already checked by the edge; nil: not given.
public struct WebClientFields: Sendable, Equatable {
    public var name: String?
    public var redirectURIs: [String]?
    public var postLogoutRedirectURIs: [String]?
    public var authMethod: String?
    /// The `jwks` member re-encoded as compact JSON; `.some(nil)`: given as `null` (update: remove it).
    public var jwks: JSONValue??
    /// `.some(nil)`: given as `null` (update: remove it).
    public var jwksURI: String??
    public var requirePKCE: Bool?
    public var requirePushedRequests: Bool?

    public init() {}

    /// The JSON members, in the admin API's spelling.
    public enum Member {
        public static let name = "name"
        public static let redirectURIs = "redirectUris"
        public static let postLogoutRedirectURIs = "postLogoutRedirectUris"
        public static let authMethod = "tokenEndpointAuthMethod"
        public static let jwks = "jwks"
        public static let jwksURI = "jwksUri"
        public static let requirePKCE = "requirePkce"
        public static let requirePushedRequests = "requirePushedAuthorizationRequests"
        /// Every member a client takes.
        public static let all: Set<String> = [
            name, redirectURIs, postLogoutRedirectURIs, authMethod, jwks, jwksURI, requirePKCE, requirePushedRequests,
        ]
    }
}

/// A client's columns after their rules: every value valid, the key source whole for the method.
public struct WebClientColumns: Sendable, Equatable {
    public let name: String
    public let redirectURIs: [String]
    public let postLogoutRedirectURIs: [String]
    public let authMethod: TokenEndpointAuthMethod
    public let jwks: String?
    public let jwksURI: String?
    public let requirePKCE: Bool
    /// Whether every start must resume a pushed request (default false).
    public let requirePushedRequests: Bool

    /// The registration rules (docs/protocol.md, "Web clients"), applied to `fields` over `existing` (nil
    /// when creating). In order: `name` (`DisplayName`), `redirectUris` (1 to 10, each parsed by
    /// `RedirectURI.parse`, an `https` URI, or in development also a loopback one, no duplicate),
    /// `postLogoutRedirectUris` (0 to 10, the same rules), `tokenEndpointAuthMethod`, then the key source:
    /// `private_key_jwt` needs exactly one of `jwks` (an object whose `keys` is a non-empty array of objects
    /// with a string `kty`, at most 64 KiB) or `jwksUri` (an `https` URL); the secret methods take neither.
    /// - Parameters:
    ///   - kind: the environment's kind (production refuses loopback redirects).
    ///   - allowHTTPKeySetURI: whether a loopback `http` `jwksUri` is accepted (development with private
    ///     outbound addresses allowed, as the demo server runs).
    /// - Returns: the columns, or the first problem.
    public static func parse(
        _ fields: WebClientFields, over existing: WebClientRecord?, kind: EnvironmentKind, allowHTTPKeySetURI: Bool = false
    ) -> Result<WebClientColumns, WebClientFieldProblem> {
        typealias Member = WebClientFields.Member
        let name: String
        if let raw = fields.name {
            guard let parsed = DisplayName(raw)?.text else { return .failure(.init(field: Member.name, rule: DisplayName.rule)) }
            name = parsed
        } else if let existing {
            name = existing.name
        } else {
            return .failure(.init(field: Member.name, rule: "is required (a string)"))
        }
        let redirects: [String]
        if let raw = fields.redirectURIs {
            if let problem = redirectProblem(raw, field: Member.redirectURIs, minimum: 1, kind: kind) { return .failure(problem) }
            redirects = raw
        } else if let existing {
            redirects = existing.redirectURIs
        } else {
            return .failure(.init(field: Member.redirectURIs, rule: "is required (an array of 1 to 10 redirect URIs)"))
        }
        let logout: [String]
        if let raw = fields.postLogoutRedirectURIs {
            if let problem = redirectProblem(raw, field: Member.postLogoutRedirectURIs, minimum: 0, kind: kind) {
                return .failure(problem)
            }
            logout = raw
        } else {
            logout = existing?.postLogoutRedirectURIs ?? []
        }
        let method: TokenEndpointAuthMethod
        if let raw = fields.authMethod {
            guard let parsed = TokenEndpointAuthMethod(rawValue: raw) else {
                return .failure(
                    .init(field: Member.authMethod, rule: "must be one of client_secret_basic, client_secret_post or private_key_jwt"))
            }
            method = parsed
        } else {
            method = existing?.authMethod ?? .clientSecretBasic
        }
        var jwks = existing?.jwks
        var jwksURI = existing?.jwksURI
        if let given = fields.jwks {
            if let value = given {
                guard let text = keySetText(value) else {
                    return .failure(
                        .init(field: Member.jwks, rule: "must be a JSON Web Key Set: an object whose keys is a non-empty array of keys"))
                }
                jwks = text
                if fields.jwksURI == nil { jwksURI = nil }
            } else {
                jwks = nil
            }
        }
        if let given = fields.jwksURI {
            if let value = given {
                guard isKeySetURI(value, allowHTTP: allowHTTPKeySetURI) else {
                    return .failure(.init(field: Member.jwksURI, rule: "must be an https URL of at most 2048 characters"))
                }
                jwksURI = value
                if fields.jwks == nil { jwks = nil }
            } else {
                jwksURI = nil
            }
        }
        if method == .privateKeyJWT {
            if jwks != nil && jwksURI != nil {
                return .failure(.init(field: Member.jwks, rule: "and jwksUri cannot both be set: give one of them"))
            }
            if jwks == nil && jwksURI == nil {
                return .failure(.init(field: Member.jwks, rule: "or jwksUri is required for private_key_jwt"))
            }
        } else {
            // A secret method keeps no keys: a key set left from an earlier private_key_jwt is dropped,
            // a key set given now is refused.
            if fields.jwks != nil, jwks != nil {
                return .failure(.init(field: Member.jwks, rule: "applies to private_key_jwt only"))
            }
            if fields.jwksURI != nil, jwksURI != nil {
                return .failure(.init(field: Member.jwksURI, rule: "applies to private_key_jwt only"))
            }
            jwks = nil
            jwksURI = nil
        }
        return .success(
            WebClientColumns(
                name: name, redirectURIs: redirects, postLogoutRedirectURIs: logout, authMethod: method, jwks: jwks, jwksURI: jwksURI,
                requirePKCE: fields.requirePKCE ?? existing?.requirePKCE ?? true,
                requirePushedRequests: fields.requirePushedRequests ?? existing?.requirePushedRequests ?? false))
    }

    /// The most redirect URIs of one list.
    public static let maximumRedirects = 10
    /// The longest `jwks` accepted, in bytes of its compact JSON.
    public static let maximumKeySetBytes = 65_536

    /// A web client's redirect URI: `RedirectURI.parse`'s rules, then `https` (a `link`) anywhere, or a
    /// loopback `http` URI in development only; never a custom scheme (a web client runs on a server).
    static func redirectProblem(_ uris: [String], field: String, minimum: Int, kind: EnvironmentKind) -> WebClientFieldProblem? {
        guard (minimum...maximumRedirects).contains(uris.count) else {
            return .init(field: field, rule: "must hold \(minimum) to \(maximumRedirects) redirect URIs")
        }
        guard Set(uris).count == uris.count else { return .init(field: field, rule: "must not repeat a URI") }
        for raw in uris {
            switch RedirectURI.parse(raw) {
            case .failure(let problem):
                return .init(field: field, rule: "holds a URI that is not acceptable (\(problem.rawValue))")
            case .success(let uri):
                switch uri.kind {
                case .link: continue
                case .loopback where kind == .development: continue
                case .loopback:
                    return .init(field: field, rule: "must use https in production (loopback is for development)")
                case .customScheme:
                    return .init(field: field, rule: "must use https (or, in development, http://localhost or a loopback address)")
                }
            }
        }
        return nil
    }

    /// The compact JSON of a key set whose `keys` is a non-empty array of objects each with a string
    /// `kty` (RFC 7517 §5, §4.1), at most `maximumKeySetBytes`; nil otherwise.
    static func keySetText(_ value: JSONValue) -> String? {
        guard value.isObject, case .array(let keys)? = value["keys"], !keys.isEmpty,
            keys.allSatisfy({ $0.isObject && $0["kty"]?.stringValue != nil })
        else { return nil }
        let bytes = JSONWriter.encode(value)
        guard bytes.count <= maximumKeySetBytes else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An `https` URL with a DNS host (`RedirectURI.parse`'s link shape), or with `allowHTTP` a loopback
    /// `http` one.
    static func isKeySetURI(_ raw: String, allowHTTP: Bool) -> Bool {
        guard case .success(let uri) = RedirectURI.parse(raw) else { return false }
        return uri.kind == .link || (allowHTTP && uri.kind == .loopback)
    }
}

/// Why the store refused a change of a web client.
public enum WebClientRefusal: Error, Sendable, Equatable {
    /// No client with this id in the environment.
    case noClient
    /// No secret with this id on the client.
    case noSecret
    /// The secret is the client's last live one and the client authenticates with a secret.
    case lastSecret
}

/// A secret to store: its digest and last 4 characters.
public struct NewWebClientSecret: Sendable, Equatable {
    public let id: String
    public let hash: String
    public let suffix: String

    public init(id: String, hash: String, suffix: String) {
        self.id = id
        self.hash = hash
        self.suffix = suffix
    }
}

/// What the web clients' registry needs from storage (sql/026_web_clients.sql). Every change writes its
/// `audit` row in the same transaction.
public protocol WebClientStore: ClientAuthenticationStore {
    /// Up to `limit` clients of the environment in creation order, after the client `after`, with their secrets.
    /// - Throws: `StoreUnavailable`.
    func webClients(environmentID: String, after: String?, limit: Int) throws -> [ListedWebClient]
    /// The client with this id in any environment, with its secrets.
    /// - Throws: `StoreUnavailable`.
    func webClient(clientID: String) throws -> ListedWebClient?
    /// Inserts a client of `environmentID`, with `secret` when given.
    /// - Throws: `StoreUnavailable`.
    func createWebClient(
        clientID: String, environmentID: String, _ columns: WebClientColumns, secret: NewWebClientSecret?, now: Date, audit: AuditEntry
    ) throws -> ListedWebClient
    /// Replaces the client's columns.
    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    func updateWebClient(clientID: String, environmentID: String, _ columns: WebClientColumns, now: Date, audit: AuditEntry) throws
        -> ListedWebClient
    /// Deletes the client, its secrets and its consents.
    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    func deleteWebClient(clientID: String, environmentID: String, audit: AuditEntry) throws
    /// Adds a secret; it works at once, beside the others.
    /// - Throws: `WebClientRefusal.noClient`; `StoreUnavailable`.
    func addWebClientSecret(clientID: String, environmentID: String, _ secret: NewWebClientSecret, now: Date, audit: AuditEntry) throws
        -> WebClientSecretRecord
    /// Revokes a live secret, never the last live one of a client that authenticates with a secret
    /// (serialised per client). Revoking a revoked secret changes nothing and answers it.
    /// - Throws: `WebClientRefusal.noClient`, `.noSecret`, `.lastSecret`; `StoreUnavailable`.
    func revokeWebClientSecret(clientID: String, environmentID: String, secretID: String, now: Date, audit: AuditEntry) throws
        -> WebClientSecretRecord
    /// The scope sets the account consented to for the client (each as `GrantedScope.value`).
    /// - Throws: `StoreUnavailable`.
    func webClientConsents(userID: String, clientID: String) throws -> [String]
    /// Revokes the session that issued `tokenHash` (an access or refresh token of any generation) when the
    /// client `clientID` obtained it (RFC 7009 §2.1: a client revokes only its own tokens).
    /// - Returns: whether a live session was revoked (never told to the client, RFC 7009 §2.2).
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    func revokeWebClientSession(clientID: String, tokenHash: String, now: Date) throws -> Bool
}

/// A web client's remembered consent (docs/protocol.md, "Web clients: consent"): per account and scope set.
public enum WebClientConsent {
    /// Whether one of the `remembered` scope sets (each space-separated) holds every scope of `requested`:
    /// a consent to `openid profile email` covers a later `openid email`, not the reverse.
    public static func covers(remembered: [String], requested: GrantedScope) -> Bool {
        let wanted = Set(requested.value.split(separator: " "))
        return remembered.contains { wanted.isSubset(of: Set($0.split(separator: " "))) }
    }
}

/// The web clients' registry of an environment: mint client ids and secrets, check fields, list, change
/// and delete (docs/protocol.md, "Web clients").
public struct WebClients: Sendable {
    let store: any WebClientStore
    let secrets: any Secrets

    /// The prefix of a client id.
    public static let clientIDPrefix = "zc_"
    /// The prefix of a client secret.
    public static let secretPrefix = "zcs_"

    /// - Parameters:
    ///   - store: where clients are kept.
    ///   - secrets: the CSPRNG, ids and SHA-256.
    public init(store: any WebClientStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// Mints a secret (256 bits, `zcs_…`).
    /// - Returns: the stored form and the secret, shown once.
    func mintSecret() throws -> (stored: NewWebClientSecret, secret: String) {
        let secret = try secrets.mintToken(prefix: Self.secretPrefix)
        return (NewWebClientSecret(id: secrets.newID(), hash: secrets.digest(secret), suffix: String(secret.suffix(4))), secret)
    }

    /// Registers a client with a fresh `zc_…` id; a client that authenticates with a secret gets its first
    /// secret, returned once.
    /// - Throws: when the CSPRNG fails; `StoreUnavailable`.
    public func create(environmentID: String, _ columns: WebClientColumns, now: Date, audit: (String) throws -> AuditEntry) throws -> (
        client: ListedWebClient, secret: String?
    ) {
        let clientID = try secrets.mintToken(prefix: Self.clientIDPrefix)
        let minted = columns.authMethod.usesSecret ? try mintSecret() : nil
        let client = try store.createWebClient(
            clientID: clientID, environmentID: environmentID, columns, secret: minted?.stored, now: now, audit: try audit(clientID))
        return (client, minted?.secret)
    }

    /// Adds a secret beside the live ones (rotation: the old secret works until revoked).
    /// - Returns: the stored record and the secret, shown once.
    /// - Throws: `WebClientRefusal.noClient`; the CSPRNG's failure; `StoreUnavailable`.
    public func rotate(clientID: String, environmentID: String, now: Date, audit: AuditEntry) throws -> (
        record: WebClientSecretRecord, secret: String
    ) {
        let minted = try mintSecret()
        let record = try store.addWebClientSecret(clientID: clientID, environmentID: environmentID, minted.stored, now: now, audit: audit)
        return (record, minted.secret)
    }
}
