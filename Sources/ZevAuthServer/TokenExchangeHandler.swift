import Authorize
import Encoding
import Foundation
import HTTPServer
import IDNA

/// The native token exchange at `POST /oauth2/token` (RFC 8693; docs/federation.md, "Native Sign in with
/// Apple and Google"): an app that got an ID token from Apple's native sheet or Google's Credential Manager
/// exchanges it for this server's token pair, the same answer as a code exchange.
///
/// Checks in order, after the token endpoint's shared front (a form, no client credentials, `client_id` a
/// publishable key): the client's environment (401 `invalid_client`), the parameters (400
/// `invalid_request`, `TokenExchangeRequest.parse`), the provider among those the project shows, the
/// token (`UpstreamAuthority.verifyNative`: any failure 400 `invalid_grant`), the account rules
/// (`ResolveUpstreamAccount`: an address that has an unlinked account answers 400 `interaction_required`
/// with an `error_uri` to confirm in the browser), then one statement that uses the upstream token once
/// and makes the session (a second use is `invalid_grant`).
///
/// A `DPoP` proof binds the session as at the code exchange (docs/dpop.md, "Binding"; RFC 9449 §5): the
/// token endpoint checks the proof's stateless rules before any of this (400 `invalid_dpop_proof`), and the
/// one statement checks the environment's requirement and nonce and the proof's single use before it uses
/// the upstream token, so a refused proof issues nothing and leaves the token usable.
struct TokenExchangeHandler: Sendable {
    let context: ServerContext

    /// The answer to a token exchange from `publishableKey`'s app, `form` being the request's non-empty
    /// parameters, with `DPoP-Nonce` when `request` sent a proof or was refused for want of one.
    /// - Parameter proof: the request's proof, its stateless rules checked (`DPoPProofs.grantProof`); nil: none sent.
    /// - Throws: `StoreUnavailable` (answered 503 by the error funnel).
    func respond(
        _ form: [String: String], publishableKey: String, clientAddress: String, proof: DPoPProofUse?, request: HTTPRequest
    ) throws -> HTTPResponse {
        let response = try answer(form, publishableKey: publishableKey, clientAddress: clientAddress, proof: proof, request: request)
        return request.headers.values("DPoP").isEmpty ? response : DPoPProofs.withNonce(response, context: context)
    }

    private func answer(
        _ form: [String: String], publishableKey: String, clientAddress: String, proof: DPoPProofUse?, request: HTTPRequest
    ) throws -> HTTPResponse {
        guard let client = try context.roundTrip.tokenExchange.tokenExchangeClient(publishableKey: publishableKey) else {
            return GrantResult.failed(OAuthError(.invalidClient, "Send the environment's publishable key as client_id."))
                .response(on: .standard(.token))
        }
        let exchange: TokenExchangeRequest
        switch TokenExchangeRequest.parse(form) {
        case .failure(let error): return Self.refusal(error)
        case .success(let parsed): exchange = parsed
        }
        let shown = try context.roundTrip.tokenExchange.exchangeProviders(projectID: client.projectID)
        guard let provider = exchange.provider(among: shown) else {
            if exchange.provider != nil {
                return Self.refusal(OAuthError(.invalidRequest, "provider names no provider this project's sign-in shows."))
            }
            return Self.refusal(OAuthError(.invalidGrant, "The token's issuer is not a provider this project's sign-in shows."))
        }
        let identity: UpstreamIdentity
        do {
            identity = try context.upstream.verifyNative(
                provider: provider, idToken: exchange.subjectToken,
                audiences: TokenExchangeRequest.audiences(provider: provider, client: client), rawNonce: exchange.nonce)
        } catch {
            context.log.write("refused token exchange provider=\(provider.slug) reason=\(error.code)")
            context.metrics.signIn(.federated, .invalidCredentials)
            return Self.refusal(OAuthError(.invalidGrant, error.sentence))
        }
        let now = context.clock.now()
        let user: UserRecord
        switch try ResolveUpstreamAccount(store: context.accounts.upstream, domainToASCII: { IDNA.toASCII($0) })(
            identity, now: now, clientAddress: clientAddress)
        {
        case .signIn(let account, _): user = account
        case .confirmLink:
            return Self.interactionRequired(
                "An account with this email address exists: sign in to it once in the browser and confirm, then the identity is linked.",
                uri: confirmationURL)
        case .closed:
            return Self.refusal(ExchangeDecision.accountClosed)
        case .refused(let refusal):
            return Self.refusal(OAuthError(.invalidGrant, refusal.sentence(provider: provider.displayName)))
        }
        let accessToken = try context.secrets.mintToken(prefix: "zat_")
        let refreshToken = try context.secrets.mintToken(prefix: "zrt_")
        var attempt = FederatedSessionAttempt(
            environmentID: client.environmentID, userID: user.id, upstreamTokenHash: identity.tokenID,
            upstreamTokenExpiresAt: Date(timeIntervalSince1970: identity.expiresAt), scope: exchange.scope.value,
            accessTokenHash: context.secrets.digest(accessToken), refreshTokenHash: context.secrets.digest(refreshToken), now: now)
        attempt.proof = proof
        switch try context.roundTrip.tokenExchange.createFederatedSession(attempt) {
        case .dpopRefused(let refusal):
            context.log.write("refused token exchange provider=\(provider.slug) reason=\(refusal.error.code.rawValue)")
            return DPoPProofs.grantAnswer(.failed(refusal.error), on: .standard(.token), request, context: context)
        case .replayed:
            context.log.write("refused token exchange provider=\(provider.slug) reason=\(UpstreamFailure.replayed.code)")
            return Self.refusal(OAuthError(.invalidGrant, UpstreamFailure.replayed.sentence))
        case .accountClosed:
            return Self.refusal(ExchangeDecision.accountClosed)
        case .secondFactorRequired:
            context.metrics.signIn(.federated, .mfaRequired)
            return Self.interactionRequired(
                "This account asks for a second factor: sign in through the browser, where it is asked.",
                uri: context.configuration.issuer + "/account/signin")
        case .issued(let session):
            context.metrics.signIn(.federated, .ok)
            // A security event on the person's account page, as a hosted upstream sign-in records.
            try context.tenancy.audit.record(
                AuditEntry(
                    actor: .account(userID: user.id), action: "signin.upstream", subjectUserID: user.id, clientAddress: clientAddress,
                    at: now))
            return try GrantResult(.issued(session, accessToken: accessToken, refreshToken: refreshToken), now: now)
                .withIDToken(context: context, clientID: publishableKey).response(on: .standard(.token))
        }
    }

    /// Where the person confirms linking in the browser: the account area's sign-in page, which shows every
    /// provider; "Continue with NAME" there meets the same account rule, and the hosted flow links the identity
    /// only after the person signs in to the existing account and confirms (docs/federation.md, "Accounts").
    private var confirmationURL: String { context.configuration.issuer + "/account/signin" }

    private static func refusal(_ error: OAuthError) -> HTTPResponse {
        GrantResult.failed(error).response(on: .standard(.token))
    }

    /// 400 `interaction_required` (OpenID Connect Core §3.1.2.6) with `error_uri`, the page to continue on.
    private static func interactionRequired(_ description: String, uri: String) -> HTTPResponse {
        Wire.json(
            status: 400,
            [
                "error": .string(OAuthErrorCode.interactionRequired.rawValue), "error_description": .string(description),
                "error_uri": .string(uri),
            ] as JSONValue)
    }
}
