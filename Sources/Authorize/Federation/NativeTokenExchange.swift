import Encoding
import Foundation

/// The environment a native token exchange's `client_id` names, with what the exchange accepts from it.
public struct TokenExchangeClient: Sendable, Equatable {
    public let environmentID: String
    public let projectID: String
    /// The bundle IDs of the environment's registered iOS apps, as typed: the `aud` values accepted from Apple.
    public let iosBundleIDs: [String]

    public init(environmentID: String, projectID: String, iosBundleIDs: [String]) {
        self.environmentID = environmentID
        self.projectID = projectID
        self.iosBundleIDs = iosBundleIDs
    }
}

/// One session the native exchange asks the store to make: the upstream token's single use and the session
/// commit together, or neither does.
public struct FederatedSessionAttempt: Sendable, Equatable {
    public let environmentID: String
    public let userID: String
    /// `UpstreamIdentity.tokenID`: the SHA-256 hex digest of the upstream ID token.
    public let upstreamTokenHash: String
    /// When the upstream token expires (kept in `upstream_token_uses` until then).
    public let upstreamTokenExpiresAt: Date
    /// The granted scope's value (`GrantedScope.value`).
    public let scope: String
    public let accessTokenHash: String
    public let refreshTokenHash: String
    public let now: Date
    /// The request's verified DPoP proof, when it carried one: its use is recorded and the session bound to
    /// its key in the same statement (docs/dpop.md, "Binding").
    public var proof: DPoPProofUse? = nil

    public init(
        environmentID: String, userID: String, upstreamTokenHash: String, upstreamTokenExpiresAt: Date, scope: String,
        accessTokenHash: String, refreshTokenHash: String, now: Date
    ) {
        self.environmentID = environmentID
        self.userID = userID
        self.upstreamTokenHash = upstreamTokenHash
        self.upstreamTokenExpiresAt = upstreamTokenExpiresAt
        self.scope = scope
        self.accessTokenHash = accessTokenHash
        self.refreshTokenHash = refreshTokenHash
        self.now = now
    }
}

/// What the one federated-session statement did.
public enum FederatedSessionFacts: Sendable, Equatable {
    /// The environment requires a proof or a nonce, or the proof was a replay: nothing was made and the
    /// upstream token was not used (docs/dpop.md, "Binding").
    case dpopRefused(DPoPRefusal)
    /// The upstream token had been accepted before: nothing was made.
    case replayed
    /// The account has TOTP: it signs in through the browser, where the code is asked (the token is used up).
    case secondFactorRequired
    /// The account was closed meanwhile.
    case accountClosed
    /// The session, with the `amr` `["fed"]`.
    case issued(IssuedSession)
}

/// What the native token exchange needs from storage.
public protocol TokenExchangeStore: Sendable {
    /// The environment of a publishable key and its iOS bundle IDs, or nil.
    /// - Throws: `StoreUnavailable`.
    func tokenExchangeClient(publishableKey: String) throws -> TokenExchangeClient?
    /// The providers the project's sign-in page shows (the ones its apps may exchange tokens of).
    /// - Throws: `StoreUnavailable`.
    func exchangeProviders(projectID: String) throws -> [UpstreamProviderRecord]
    /// In one transaction: checks the DPoP requirement and records the proof's use (a refusal uses nothing),
    /// records the upstream token's use (a second use inserts nothing and makes nothing), then makes the
    /// session, bound to the proof's key when there is one, when the account is open and has no TOTP.
    /// - Throws: `StoreUnavailable`.
    func createFederatedSession(_ attempt: FederatedSessionAttempt) throws -> FederatedSessionFacts
}

/// A native token exchange request once its parameters are read (RFC 8693 §2.1; docs/federation.md,
/// "Native Sign in with Apple and Google").
public struct TokenExchangeRequest: Sendable, Equatable {
    /// `grant_type` of the exchange (RFC 8693 §2.1).
    public static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    /// The one `subject_token_type` accepted: an OpenID Connect ID token (RFC 8693 §3).
    public static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    /// The scope granted when `scope` is absent.
    public static let defaultScope = "openid email profile"

    public let subjectToken: String
    public let nonce: String
    /// The provider's slug, when given.
    public let provider: String?
    public let scope: GrantedScope

    /// Reads the form's parameters (each present at most once, empty values counting as missing):
    /// `subject_token_type` must be the ID token type; `subject_token` and `nonce` are required (`nonce` at
    /// most 256 characters); `provider` is optional; `scope`, when given, holds `openid` and only `openid`,
    /// `email`, `profile` and `offline_access`. RFC 8693's `actor_token`, `resource`, `audience` and
    /// `requested_token_type` are refused (this exchange issues only this server's token pair).
    /// - Returns: the request, or the sentence of 400 `invalid_request`.
    public static func parse(_ form: [String: String]) -> Result<TokenExchangeRequest, OAuthError> {
        func refused(_ sentence: String) -> Result<TokenExchangeRequest, OAuthError> { .failure(OAuthError(.invalidRequest, sentence)) }
        guard form["subject_token_type"] == idTokenType else {
            return refused("subject_token_type must be \(idTokenType).")
        }
        guard let token = form["subject_token"] else { return refused("subject_token is required: the ID token the app received.") }
        guard let nonce = form["nonce"], nonce.unicodeScalars.count <= 256 else {
            return refused("nonce is required: the raw nonce the app generated for this sign-in (at most 256 characters).")
        }
        for name in ["actor_token", "actor_token_type", "resource", "audience", "requested_token_type"] where form[name] != nil {
            return refused("\(name) is not supported: the exchange answers this server's access, refresh and ID tokens.")
        }
        let values = (form["scope"] ?? defaultScope).split(separator: " ").map(String.init)
        guard values.contains("openid"), values.allSatisfy(GrantedScope.known.contains) else {
            return refused("scope must contain openid and only openid, email, profile and offline_access.")
        }
        return .success(
            TokenExchangeRequest(
                subjectToken: token, nonce: nonce, provider: form["provider"], scope: GrantedScope(requested: values.joined(separator: " "))
            ))
    }

    public init(subjectToken: String, nonce: String, provider: String?, scope: GrantedScope) {
        self.subjectToken = subjectToken
        self.nonce = nonce
        self.provider = provider
        self.scope = scope
    }

    /// The provider the token is exchanged with: the one named by `provider` among `shown`, else the one
    /// whose issuer is the token's (unverified) `iss`; nil when none fits. The token is verified against
    /// the chosen provider afterwards, so reading `iss` unverified only picks which checks run.
    public func provider(among shown: [UpstreamProviderRecord]) -> UpstreamProviderRecord? {
        if let slug = provider { return shown.first { $0.slug == slug.lowercased() } }
        let parts = subjectToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decodeCanonical(String(parts[1])),
            let issuer = (try? JSONValue.parse(payload))?["iss"]?.stringValue
        else { return nil }
        return shown.first { $0.issuer == issuer }
    }

    /// The accepted `aud` values: for Apple the environment's iOS bundle IDs (Apple's native sheet writes the
    /// app's bundle ID), for Google and `oidc` the provider's client ID.
    public static func audiences(provider: UpstreamProviderRecord, client: TokenExchangeClient) -> [String] {
        provider.kind == .apple ? client.iosBundleIDs : [provider.clientID]
    }
}
