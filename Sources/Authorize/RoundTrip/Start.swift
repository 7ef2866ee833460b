import Foundation

/// The client as the start sees it: the environment with its registered callbacks (stored parsed) and
/// the setting that decides whether a ZevID browser session is still recent enough to skip the password.
public struct StartClient: Sendable, Equatable {
    public let client: ClientEnvironment
    /// Days after which a browser session's authentication is too old to skip the password (1–90).
    public let sessionMaxAgeDays: Int

    public init(client: ClientEnvironment, sessionMaxAgeDays: Int) {
        self.client = client
        self.sessionMaxAgeDays = sessionMaxAgeDays
    }
}

/// What the start writes, in one statement: the pending sign-in bound to this browser, the browser's
/// binding adopted when on record or the fresh one recorded, and the browser session attached when it
/// may skip the password (docs/protocol.md#pending-sign-in, docs/protocol.md#browser-recognised).
public struct PendingSignIn: Sendable, Equatable {
    public let request: ValidatedStartRequest
    /// Whether `/oauth2/authorize` (not `/v1/auth/zevid/start`) started it.
    public let standardEndpoint: Bool
    /// The digest of the binding cookie the browser sent, when it has the right shape.
    public let presentedBindingHash: String?
    /// The digest of a freshly minted binding, recorded and used only when the presented one is not on record.
    public let freshBindingHash: String
    /// How long a recorded binding stays on record, in seconds.
    public let bindingLifetimeSeconds: Double
    /// The digest of the ZevID browser-session cookie the browser sent, unless `prompt=login` asks for the password.
    public let browserSessionTokenHash: String?
    /// Days after which the browser session's authentication is too old to skip the password.
    public let sessionMaxAgeDays: Int
    public let now: Date
    /// How long the pending sign-in lives, in seconds (600, docs/protocol.md#pending-sign-in).
    public let lifetimeSeconds: Double

    public init(
        request: ValidatedStartRequest, standardEndpoint: Bool, presentedBindingHash: String?, freshBindingHash: String,
        bindingLifetimeSeconds: Double, browserSessionTokenHash: String?, sessionMaxAgeDays: Int, now: Date, lifetimeSeconds: Double
    ) {
        self.request = request
        self.standardEndpoint = standardEndpoint
        self.presentedBindingHash = presentedBindingHash
        self.freshBindingHash = freshBindingHash
        self.bindingLifetimeSeconds = bindingLifetimeSeconds
        self.browserSessionTokenHash = browserSessionTokenHash
        self.sessionMaxAgeDays = sessionMaxAgeDays
        self.now = now
        self.lifetimeSeconds = lifetimeSeconds
    }
}

/// What recording a pending sign-in did.
public struct RecordedSignIn: Sendable, Equatable {
    /// The pending sign-in's id (a UUID, not a secret: the browser binding protects it).
    public let requestID: String
    /// Whether the fresh binding was recorded (the browser must be given its cookie).
    public let mintedBinding: Bool
    /// Whether a recent ZevID browser session was attached (next: consent, not the password).
    public let authenticated: Bool

    public init(requestID: String, mintedBinding: Bool, authenticated: Bool) {
        self.requestID = requestID
        self.mintedBinding = mintedBinding
        self.authenticated = authenticated
    }
}

/// The store port of the start: one read for the client, one statement for the write.
public protocol StartStore: Sendable {
    /// The client by publishable key, with its registered callbacks as stored (parsed at registration).
    /// - Returns: nil when no environment has this key.
    /// - Throws: `StoreUnavailable`.
    func startClient(publishableKey: String) throws -> StartClient?
    /// Records the pending sign-in, the binding and the browser session's attachment in one statement
    /// (one commit).
    /// - Throws: `StoreUnavailable`.
    func recordPendingSignIn(_ pending: PendingSignIn) throws -> RecordedSignIn
}

/// `GET /v1/auth/zevid/start` and `GET /oauth2/authorize`: the ordered checks (`StartValidator`, the
/// policy), then the pending sign-in. On `/oauth2/authorize`, a `request_uri` the server issued
/// (`POST /oauth2/par`) is used once and its stored parameters are checked in place of the query's
/// (RFC 9126 §4; docs/protocol.md#pushed-requests).
public struct Start: Sendable {
    let store: any StartStore
    let secrets: any Secrets
    let pushedRequests: (any PushedRequestStore)?

    /// - Parameters:
    ///   - store: the client read and the pending sign-in's write.
    ///   - secrets: the CSPRNG and digest.
    ///   - pushedRequests: the pushed requests; nil treats the server's own request URIs as unknown.
    public init(store: any StartStore, secrets: any Secrets, pushedRequests: (any PushedRequestStore)? = nil) {
        self.store = store
        self.secrets = secrets
        self.pushedRequests = pushedRequests
    }

    /// What the start decided and, when it proceeded, what it recorded.
    public enum Outcome: Sendable, Equatable {
        /// A check failed (`StartDecision.show` or `.redirect`); nothing was written. `appName` is the
        /// client's when it was found; `asksNoInteraction` is whether the checked parameters hold
        /// `prompt=none` (`RequestOptions.asksNoInteraction`), so that a redirected error is never held for a
        /// gesture; `formPost` is whether a redirected error goes back by form_post (`respondsByFormPost`).
        case refused(StartDecision, appName: String?, asksNoInteraction: Bool, formPost: Bool)
        /// The pending sign-in is recorded; `binding` is the browser's binding id (fresh when minted);
        /// `request` is what the checks validated (its OpenID Connect options decide `prompt=none`).
        case recorded(RecordedSignIn, binding: String, request: ValidatedStartRequest)
    }

    /// Runs the checks of docs/protocol.md#start-order and records the pending sign-in.
    /// - Parameters:
    ///   - rawQuery: the request's query string as sent.
    ///   - presentedBinding: the binding cookie when it has the right shape, else nil.
    ///   - browserSessionToken: the ZevID browser-session cookie, or nil.
    /// - Throws: `StoreUnavailable`; the CSPRNG's failure.
    public func callAsFunction(
        rawQuery: String, standardEndpoint: Bool, presentedBinding: String?, browserSessionToken: String?,
        bindingLifetimeSeconds: Double, lifetimeSeconds: Double, now: Date
    ) throws -> Outcome {
        var query = StartValidator.parse(rawQuery: rawQuery)
        var endpoint: StartEndpoint = standardEndpoint ? .authorize : .zevAuthStart
        var found: StartClient?
        var resumedClientID: String?
        if standardEndpoint, case .reference(let clientID, let reference) = StartValidator.pushedReference(query) {
            switch try resume(clientID: clientID, reference: reference, now: now) {
            case .failure(let refusal): return refusal.outcome
            case .success(let (client, parameters)):
                (found, resumedClientID) = (client, clientID)
                query = StartQuery(stored: parameters)
                endpoint = .pushedReference
            }
        }
        var lookupFailure: (any Error)?
        let decision = StartValidator.decide(query, endpoint: endpoint) { clientID in
            do {
                if let found, clientID == resumedClientID { return found.client }
                found = try store.startClient(publishableKey: clientID)
                return found?.client
            } catch {
                lookupFailure = error
                return nil
            }
        }
        if let lookupFailure { throw lookupFailure }
        guard case .proceed(let validated) = decision, let found else {
            return .refused(
                decision, appName: found?.client.appName, asksNoInteraction: Self.asksNoInteraction(query),
                formPost: Self.respondsByFormPost(query, client: found?.client))
        }
        let fresh = try secrets.mintToken(prefix: "zbb_")
        let recorded = try store.recordPendingSignIn(
            PendingSignIn(
                request: validated, standardEndpoint: standardEndpoint, presentedBindingHash: presentedBinding.map { secrets.digest($0) },
                freshBindingHash: secrets.digest(fresh), bindingLifetimeSeconds: bindingLifetimeSeconds,
                browserSessionTokenHash: validated.prompt == .login ? nil : browserSessionToken.map { secrets.digest($0) },
                sessionMaxAgeDays: found.sessionMaxAgeDays, now: now, lifetimeSeconds: lifetimeSeconds))
        return .recorded(recorded, binding: recorded.mintedBinding ? fresh : (presentedBinding ?? fresh), request: validated)
    }

    /// RFC 9126 §4: the pushed request named by `reference`, used once, only by the client that pushed it.
    /// An unknown client is check 2's `invalid_client`; a request URI that is unknown, used, expired or
    /// another client's is `invalid_request_uri`; both shown, never redirected (no redirect URI can be
    /// trusted from a request that cannot be found).
    private func resume(clientID: String, reference: String, now: Date) throws -> Result<(StartClient, [String: String]), Refusal> {
        guard let client = try store.startClient(publishableKey: clientID) else {
            let error = OAuthError(.invalidClient, "client_id is missing or unknown.", status: 400)
            return .failure(Refusal(.refused(.show(error), appName: nil, asksNoInteraction: false, formPost: false)))
        }
        guard
            let pushedRequests,
            let parameters = try pushedRequests.consumePushedRequest(
                referenceHash: secrets.digest(reference), environmentID: client.client.environmentID, now: now)
        else {
            let error = OAuthError(
                .invalidRequestURI, "The request_uri is unknown, expired, already used or not this client's.")
            return .failure(Refusal(.refused(.show(error), appName: client.client.appName, asksNoInteraction: false, formPost: false)))
        }
        // An environment's web clients share its pushed requests' table: a request pushed by another client of
        // the environment is not this client's, and is spent without being used.
        guard parameters["client_id"] == clientID else {
            let error = OAuthError(
                .invalidRequestURI, "The request_uri is unknown, expired, already used or not this client's.")
            return .failure(Refusal(.refused(.show(error), appName: client.client.appName, asksNoInteraction: false, formPost: false)))
        }
        return .success((client, parameters))
    }

    /// A refusal carried out of `resume`.
    private struct Refusal: Error {
        let outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
    }

    /// Whether the authorization response, errors included, goes back by OAuth 2.0 Form Post Response Mode
    /// (§2: "the Authorization Response parameters", which RFC 6749 §4.1.2.1's error response is):
    /// `response_mode=form_post` among the checked parameters (the pushed ones on a resumed start, never the
    /// browser's query then) and a web client, the only clients form_post is for (a native app's form_post is
    /// itself refused, by query). A successful start decides the same through `RequestOptions.formPost`,
    /// which the validator keeps for web clients only (docs/protocol.md#form-post).
    static func respondsByFormPost(_ query: StartQuery, client: ClientEnvironment?) -> Bool {
        guard client?.webClient != nil, let mode = query.value("response_mode") else { return false }
        return RequestOptions.asksFormPost(["response_mode": mode])
    }

    /// `prompt` holds `none` among the checked parameters (the first `prompt`, when it decoded).
    static func asksNoInteraction(_ query: StartQuery) -> Bool {
        guard let prompt = query.value("prompt") else { return false }
        return RequestOptions.asksNoInteraction(["prompt": prompt])
    }
}
