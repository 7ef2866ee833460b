import Foundation

/// The request URIs of `POST /oauth2/par` (RFC 9126 §2.2; docs/protocol.md#pushed-requests).
public enum PushedRequestURI {
    /// The prefix of every request URI the server issues (RFC 9126 §2.2's example and §7.1's registered URN).
    public static let prefix = "urn:ietf:params:oauth:request_uri:"
    /// How long a pushed request can be used, in seconds (`expires_in`; RFC 9126 §2.2 leaves it to the
    /// server, "typically … between 5 and 600 seconds").
    public static let lifetimeSeconds = 60

    /// The random part of one of the server's request URIs: the text after `prefix`, when the value starts
    /// with it and the rest is not empty. Anything else is not ours (check 4's `request_uri_not_supported`).
    public static func reference(_ requestURI: String) -> String? {
        guard requestURI.hasPrefix(prefix) else { return nil }
        let reference = String(requestURI.dropFirst(prefix.count))
        return reference.isEmpty ? nil : reference
    }
}

/// A pushed request that passed every start check, as stored: the digest of its reference (never the
/// reference), the client's environment, and the parameters the authorization endpoint checks again.
public struct PushedRequest: Sendable, Equatable {
    /// SHA-256 hex of the random part of the request URI (`Secrets.digest`).
    public let referenceHash: String
    /// The environment whose publishable key pushed it: the only client that can use it.
    public let environmentID: String
    /// The pushed parameters, each name once (`StartQuery.storableParameters`).
    public let parameters: [String: String]
    /// When it was pushed.
    public let createdAt: Date
    /// When it stops working (`createdAt` + `PushedRequestURI.lifetimeSeconds`).
    public let expiresAt: Date

    /// Creates a pushed request record.
    public init(referenceHash: String, environmentID: String, parameters: [String: String], createdAt: Date, expiresAt: Date) {
        self.referenceHash = referenceHash
        self.environmentID = environmentID
        self.parameters = parameters
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The store port of pushed requests (sql/024_pushed_authorization_requests.sql).
public protocol PushedRequestStore: Sendable {
    /// Records a pushed request.
    /// - Throws: `StoreUnavailable`.
    func recordPushedRequest(_ request: PushedRequest) throws
    /// Uses a pushed request once, in one statement: only when it is this environment's, unused and not
    /// expired at `now` (RFC 9126 §4).
    /// - Returns: its parameters, or nil when it is unknown, used, expired or another client's.
    /// - Throws: `StoreUnavailable`.
    func consumePushedRequest(referenceHash: String, environmentID: String, now: Date) throws -> [String: String]?
}

/// How a request to `POST /oauth2/par` authenticates its client (RFC 9126 §2: "The rules for client
/// authentication as defined in [RFC6749] for token endpoint requests … apply for the PAR endpoint as well").
///
/// A request that names a web client (`zc_…`, `namedWebClient`) authenticates with its registered method
/// exactly as at the token endpoint (`authenticate`). Any other client is public: the publishable key as
/// `client_id` is the whole identification, and a request that presents client credentials is refused with
/// 401 `invalid_client` rather than ignored (docs/protocol.md#pushed-requests).
extension ClientAuthentication {
    /// The form parameters that authenticate a client (RFC 6749 §2.3.1; RFC 7521 §4.2, RFC 7523 §2.2).
    public static let credentialParameters: Set<String> = ["client_secret", "client_assertion", "client_assertion_type"]

    /// Decides a PAR request's client authentication for a client that names no web client.
    /// - Parameters:
    ///   - parameterNames: every parameter name of the form body, empty values included.
    ///   - authorizationScheme: the lower-cased scheme of an `Authorization` header, when one was sent.
    /// - Returns: nil for a public client (no credentials), else 401 `invalid_client`.
    public static func checkPublicClient(parameterNames: Set<String>, authorizationScheme: String?) -> OAuthError? {
        if !parameterNames.isDisjoint(with: credentialParameters) || authorizationScheme == "basic" {
            return OAuthError(
                .invalidClient, "A publishable key is a public client: send it as client_id with no client credentials.")
        }
        return nil
    }
}

/// `POST /oauth2/par` (RFC 9126 §2): the start's ordered checks on the pushed parameters
/// (`StartValidator.decide` with `.pushed`), then the pushed request stored under a fresh request URI.
public struct PushAuthorizationRequest: Sendable {
    let clients: any StartStore
    let store: any PushedRequestStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - clients: the start's client read.
    ///   - store: where pushed requests are kept.
    ///   - secrets: the CSPRNG and digest.
    public init(clients: any StartStore, store: any PushedRequestStore, secrets: any Secrets) {
        self.clients = clients
        self.store = store
        self.secrets = secrets
    }

    /// What pushing decided.
    public enum Outcome: Sendable, Equatable {
        /// A check failed; nothing was stored. The shell answers it as JSON (RFC 9126 §2.3), never redirected.
        case refused(OAuthError)
        /// Stored: the request URI to answer (201) and its lifetime in seconds.
        case pushed(requestURI: String, expiresIn: Int)
    }

    /// Checks and stores a pushed request.
    /// - Parameters:
    ///   - body: the form body, decoded (`StartValidator.parse(bytes:)`) as the start decodes its query.
    ///   - now: the injected clock's now.
    /// - Throws: `StoreUnavailable`; the CSPRNG's failure.
    public func callAsFunction(body query: StartQuery, now: Date) throws -> Outcome {
        var lookupFailure: (any Error)?
        let decision = StartValidator.decide(query, endpoint: .pushed) { clientID in
            do {
                return try clients.startClient(publishableKey: clientID)?.client
            } catch {
                lookupFailure = error
                return nil
            }
        }
        if let lookupFailure { throw lookupFailure }
        switch decision {
        case .show(let error), .redirect(let error, _, _):
            return .refused(error)
        case .proceed(let validated):
            let reference = try secrets.mintToken(prefix: "")
            try store.recordPushedRequest(
                PushedRequest(
                    referenceHash: secrets.digest(reference), environmentID: validated.environmentID,
                    parameters: query.storableParameters, createdAt: now,
                    expiresAt: now.addingTimeInterval(Double(PushedRequestURI.lifetimeSeconds))))
            return .pushed(requestURI: PushedRequestURI.prefix + reference, expiresIn: PushedRequestURI.lifetimeSeconds)
        }
    }
}
