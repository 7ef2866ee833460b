import Foundation

/// What a verified upstream ID token says about the person (docs/federation.md, "Verifying an upstream ID
/// token").
public struct UpstreamIdentity: Sendable, Equatable {
    /// The id of the provider (`UpstreamProviderRecord.id`) that proved the identity.
    public let providerID: String
    /// The token's `iss`, equal to the provider's issuer.
    public let issuer: String
    /// The token's `sub`: with `issuer`, the identity's key (never empty).
    public let subject: String
    /// The token's `email`, as given (Apple's private-relay addresses are real addresses).
    public let email: String?
    /// The token's `email_verified`: a JSON boolean, or Apple's strings `"true"` and `"false"`; false when absent.
    public let emailVerified: Bool
    /// The token's `name`, or the name from Apple's first-sign-in `user` form field (the hosted flow fills it).
    public let name: String?
    /// The single-use key of the token: the SHA-256 hex digest of its compact serialization (stored in
    /// `upstream_token_uses` by the native exchange).
    public let tokenID: String
    /// The token's `exp`, in seconds since 1970.
    public let expiresAt: Double

    public init(
        providerID: String, issuer: String, subject: String, email: String?, emailVerified: Bool, name: String?, tokenID: String,
        expiresAt: Double
    ) {
        self.providerID = providerID
        self.issuer = issuer
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.tokenID = tokenID
        self.expiresAt = expiresAt
    }

    /// This identity with `name` when it has none (Apple sends the name only in the first sign-in's `user`
    /// form field, never in the token).
    public func naming(_ given: String?) -> UpstreamIdentity {
        guard name == nil, let given, !given.isEmpty else { return self }
        return UpstreamIdentity(
            providerID: providerID, issuer: issuer, subject: subject, email: email, emailVerified: emailVerified, name: given,
            tokenID: tokenID, expiresAt: expiresAt)
    }
}

/// Why talking to an upstream provider or verifying its ID token failed (docs/federation.md, "Verifying an
/// upstream ID token"). `code` is safe for a log line; `sentence` is shown to the person.
public enum UpstreamFailure: Error, Sendable, Equatable {
    /// The discovery document could not be fetched or is not valid (wrong `issuer`, missing endpoints).
    case discovery
    /// The key set could not be fetched or holds no usable key.
    case jwks
    /// The token endpoint refused the code or answered something unreadable; the associated value is the
    /// upstream's `error` code when it gave one (a code, never a description), else a short log-safe word.
    case tokenEndpoint(String)
    /// The signature does not verify, or no key has the header's `kid` (after one refetch of the key set).
    case signature
    /// The header's `alg` is not RS256 or ES256 (`none` and every HMAC are refused), or not the key's.
    case algorithm
    /// `iss` is not the provider's issuer.
    case issuer
    /// `aud` does not contain an accepted audience, or `azp` names another party.
    case audience
    /// `exp` has passed (more than 5 minutes ago).
    case expired
    /// `iat` is more than 5 minutes in the future.
    case issuedInFuture
    /// `nonce` is missing or does not match.
    case nonce
    /// Not a JWS compact serialization, or a claim is missing or of the wrong type.
    case malformed
    /// The token was already accepted once.
    case replayed
    /// The provider is not configured for this use (no secret, key unreadable) or cannot be reached.
    case providerUnavailable

    /// The failure's code for logs and metrics (no token, claim value or address).
    public var code: String {
        switch self {
        case .discovery: "discovery"
        case .jwks: "jwks"
        case .tokenEndpoint(let reason): "token_endpoint:\(reason)"
        case .signature: "signature"
        case .algorithm: "algorithm"
        case .issuer: "issuer"
        case .audience: "audience"
        case .expired: "expired"
        case .issuedInFuture: "issued_in_future"
        case .nonce: "nonce"
        case .malformed: "malformed"
        case .replayed: "replayed"
        case .providerUnavailable: "provider_unavailable"
        }
    }

    /// A person-facing sentence (also the native exchange's `error_description`).
    public var sentence: String {
        switch self {
        case .discovery, .jwks, .providerUnavailable:
            "The sign-in provider could not be reached. Try again in a moment, or sign in another way."
        case .tokenEndpoint:
            "The sign-in provider did not confirm the sign-in. Start again."
        case .signature, .algorithm, .issuer, .audience, .malformed:
            "The sign-in provider's answer could not be verified. Start again."
        case .expired, .issuedInFuture:
            "The sign-in provider's answer has expired or is not yet valid. Start again, and check this device's clock."
        case .nonce:
            "The sign-in provider's answer does not belong to this sign-in. Start again."
        case .replayed:
            "This sign-in was already used. Start again."
        }
    }
}

/// The port the hosted flow and the native token exchange use to talk to an upstream OpenID provider; the
/// server implements it over its outbound fetcher (discovery, key sets, the token endpoint), and pure tests
/// use a fake (docs/federation.md). Synchronous like every handler here: a call blocks its thread for up
/// to the outbound timeouts of the fetches it needs (none while discovery and keys are cached).
public protocol UpstreamAuthority: Sendable {
    /// The URL to send the browser to: the provider's `authorization_endpoint` (from discovery) with
    /// `response_type=code`, `client_id`, `redirect_uri`, `state`, `nonce`, `code_challenge` and
    /// `code_challenge_method=S256`; Apple: `response_mode=form_post` and `scope=name email`; others:
    /// `scope=openid email profile`.
    /// - Throws: `.discovery`, `.providerUnavailable`.
    func authorizationURL(
        provider: UpstreamProviderRecord, redirectURI: String, state: String, nonce: String, codeChallenge: String
    ) throws(UpstreamFailure) -> String

    /// Redeems `code` at the provider's token endpoint (with the PKCE verifier and the client's
    /// authentication) and verifies the ID token of the answer, whose `nonce` must equal `nonce` exactly
    /// (the raw value sent in the authorization URL) and whose `aud` must contain the provider's client ID.
    /// - Throws: any `UpstreamFailure` but `.replayed`.
    func redeem(
        provider: UpstreamProviderRecord, code: String, codeVerifier: String, redirectURI: String, nonce: String
    ) throws(UpstreamFailure) -> UpstreamIdentity

    /// Verifies an ID token an app obtained natively (Apple's sheet, Google's Credential Manager).
    /// - Parameters:
    ///   - audiences: the accepted `aud` values (Apple: the environment's iOS bundle IDs; Google and `oidc`:
    ///     the provider's client ID).
    ///   - rawNonce: the raw nonce the app generated; the token's `nonce` must equal either it or the
    ///     lower-case hex SHA-256 of it (docs/federation.md, "Native Sign in with Apple and Google"); a
    ///     token without `nonce` is refused.
    /// - Throws: any `UpstreamFailure` but `.tokenEndpoint` and `.replayed` (single use is the caller's).
    func verifyNative(
        provider: UpstreamProviderRecord, idToken: String, audiences: [String], rawNonce: String
    ) throws(UpstreamFailure) -> UpstreamIdentity
}
