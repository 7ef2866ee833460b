import Authorize
import Encoding
import Foundation
import HTTPServer

/// What a token grant (exchange or refresh) produced, with what rendering needs: the request's time and
/// the failure gate's `Retry-After`. Rendered on ZevAuth's surface (docs/protocol.md#exchange-success) or
/// on the standard token endpoint (RFC 6749 §5.1/§5.2).
struct GrantResult {
    let outcome: GrantOutcome
    let now: Date
    /// Seconds until the failure window ends, answered when the outcome is `.rateLimited`.
    let retryAfterSeconds: Int
    /// The ID token issued with the pair, for an OpenID sign-in's session (docs/protocol.md, "OpenID Connect").
    var idToken: String?

    init(_ outcome: GrantOutcome, now: Date = Date(timeIntervalSince1970: 0), retryAfterSeconds: Int = 1) {
        self.outcome = outcome
        self.now = now
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// This result with the ID token of an issued OpenID session signed (`IssueIDToken`); any other result
    /// unchanged. The pair is committed before it is signed: a signing failure answers 503 and the client
    /// signs in again (a repeated code is a replay, which ends the session it made).
    /// - Throws: `StoreUnavailable` when the signing keys cannot be read.
    func withIDToken(context: ServerContext, clientID: String) throws -> GrantResult {
        guard case .issued(let session, let accessToken, _) = outcome, session.grant.scope.openID else { return self }
        var result = self
        result.idToken = try IssueIDToken(
            signer: context.roundTrip.idTokenSigner, sha256: { [secrets = context.secrets] in secrets.sha256($0) })(
                issuer: context.configuration.issuer, clientID: clientID, session: session, accessToken: accessToken, now: now)
        return result
    }

    /// A refusal with `error`.
    static func failed(_ error: OAuthError) -> GrantResult { GrantResult(.refused(error)) }

    /// No or unknown publishable key (docs/protocol.md#exchange-row-1; RFC 6749 §5.2).
    static let invalidClient = OAuthError(.invalidClient, "Send the environment's publishable key as Authorization: Bearer pk_…")

    /// The answer on `surface`: 200 with the session, or the error with `Cache-Control: no-store`.
    /// On `/oauth2/token` the error is the RFC code with the product code first in `error_description`,
    /// and its status is the RFC code's (a `reauthentication_required` is a 400 `invalid_grant` there).
    func response(on surface: ErrorSurface) -> HTTPResponse {
        switch outcome {
        case .rateLimited:
            return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: retryAfterSeconds)
        case .invalidClient:
            return Self.refusal(Self.invalidClient, on: surface)
        case .refused(let error):
            return Self.refusal(error, on: surface)
        case .issued(let session, let accessToken, let refreshToken):
            switch surface {
            case .zevAuth:
                return Wire.json(
                    status: 200,
                    SessionBody(session: session, accessToken: accessToken, refreshToken: refreshToken, now: now, idToken: idToken))
            case .standard:
                return Wire.json(
                    status: 200,
                    TokenBody(session: session, accessToken: accessToken, refreshToken: refreshToken, now: now, idToken: idToken))
            }
        }
    }

    private static func refusal(_ error: OAuthError, on surface: ErrorSurface) -> HTTPResponse {
        switch surface {
        case .zevAuth:
            var response = Wire.error(error)
            if error.code == .invalidClient { response.headers.set("WWW-Authenticate", "Bearer") }
            return response
        case .standard(let endpoint):
            let rfc = error.code.rfcCode(at: endpoint)
            var response = Wire.json(
                status: rfc.httpStatus,
                ["error": .string(rfc.rawValue), "error_description": .string(error.wireDescription(on: surface))] as JSONValue)
            if rfc == .invalidClient { response.headers.set("WWW-Authenticate", "Bearer") }
            return response
        }
    }
}

/// Whole seconds from `now` until `expiry`, never negative (`expiresIn`, `expires_in`).
private func secondsUntil(_ expiry: Date, from now: Date) -> Int {
    max(0, Int(expiry.timeIntervalSince(now).rounded()))
}

/// `{"id","email","name","imageUrl"}` (`imageUrl` null when the account has no image).
struct SessionUserBody: JSONEncodable {
    let user: SessionUser

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", user.id)
            object.field("email", user.email)
            object.field("name", user.name)
            object.field("imageUrl", user.imageURL)
        }
    }
}

/// The exchange's and the refresh's success body (docs/protocol.md#exchange-success): the session and the
/// safe user fields, never the internal records. `session.scope` is the granted scope (`""` when none);
/// `session.idToken` is present for an OpenID sign-in's session.
struct SessionBody: JSONEncodable {
    let session: IssuedSession
    let accessToken: String
    let refreshToken: String
    let now: Date
    var idToken: String? = nil

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("session") { writer in
                writer.object { fields in
                    fields.field("id", session.sessionID)
                    fields.field("accessToken", accessToken)
                    fields.field("refreshToken", refreshToken)
                    fields.field("tokenType", session.dpopThumbprint == nil ? "Bearer" : "DPoP")
                    fields.field("expiresIn", secondsUntil(session.accessExpiresAt, from: now))
                    fields.field("expiresAt", Wire.timestamp(session.expiresAt))
                    fields.field("idleExpiresAt", Wire.timestamp(session.idleExpiresAt))
                    fields.field("scope", session.grant.scope.value)
                    fields.fieldIfPresent("idToken", idToken)
                }
            }
            object.field("user", SessionUserBody(user: session.user))
        }
    }
}

/// The standard token endpoint's success body (RFC 6749 §5.1; `scope` always, `""` when none;
/// `id_token` for an OpenID sign-in's session, OpenID Connect Core §3.1.3.3).
struct TokenBody: JSONEncodable {
    let session: IssuedSession
    let accessToken: String
    let refreshToken: String
    let now: Date
    var idToken: String? = nil

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("access_token", accessToken)
            object.field("token_type", session.dpopThumbprint == nil ? "Bearer" : "DPoP")
            object.field("refresh_token", refreshToken)
            object.field("expires_in", secondsUntil(session.accessExpiresAt, from: now))
            object.field("scope", session.grant.scope.value)
            object.fieldIfPresent("id_token", idToken)
        }
    }
}

/// `GET /v1/auth/session`'s body (docs/protocol.md#current-session).
struct CurrentSessionBody: JSONEncodable {
    let session: IssuedSession

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("session") { writer in
                writer.object { fields in
                    fields.field("id", session.sessionID)
                    fields.field("accessTokenExpiresAt", Wire.timestamp(session.accessExpiresAt))
                    fields.field("expiresAt", Wire.timestamp(session.expiresAt))
                    fields.field("idleExpiresAt", Wire.timestamp(session.idleExpiresAt))
                }
            }
            object.field("user", SessionUserBody(user: session.user))
        }
    }
}

/// `POST /v1/auth/session/refresh` and `POST /v1/auth/session/revoke` (docs/protocol.md#refresh,
/// docs/protocol.md#revoke), and the refresh core that `POST /oauth2/token` shares.
struct SessionGrants: Sendable {
    let context: ServerContext

    /// Refresh with rotation (`Refresh`, one statement): a new pair, reuse revoking the session outside
    /// the grace, 401 `reauthentication_required` past a window.
    /// - Parameters:
    ///   - gate: the client's failure limit, checked inside the refresh statement (nil: none).
    ///   - proof: the request's verified DPoP proof (nil: none sent).
    func refresh(refreshToken: String, publishableKey: String, gate: RateLimiter.Gate? = nil, proof: DPoPProofUse? = nil) throws
        -> GrantResult
    {
        let now = context.clock.now()
        let outcome = try Refresh(
            store: context.roundTrip.refresh, secrets: context.secrets,
            settle: SettleWindow(milliseconds: context.configuration.databaseSettleMilliseconds))(
                publishableKey: publishableKey, refreshToken: refreshToken, gate: gate?.stored, now: now, proof: proof,
                observe: { context.metrics.refresh(Self.metric($0)) })
        if case .rateLimited = outcome { context.metrics.rateLimited(.refreshFailuresPerAddress) }
        return try GrantResult(outcome, now: now, retryAfterSeconds: gate?.retryAfterSeconds ?? 1)
            .withIDToken(context: context, clientID: publishableKey)
    }

    /// The `zevauth_refreshes_total` outcome of one refresh statement.
    static func metric(_ outcome: RefreshOutcome) -> RefreshMetric {
        switch outcome {
        case .unknownClient: .invalidClient
        case .rateLimited: .rateLimited
        case .unknownToken: .invalidGrant
        case .ended(let revokedForReuse): revokedForReuse ? .reuseRevoked : .ended
        case .reauthenticationRequired: .reauthenticationRequired
        case .refreshed: .ok
        case .dpopRefused: .invalidRequest
        case .otherKey: .invalidGrant
        }
    }

    /// `POST /v1/auth/session/refresh` `{"refreshToken"}` with `Authorization: Bearer pk_…`.
    /// Order as the exchange: 401 `invalid_client`, 400 `invalid_request`, then the grant. Failed refreshes
    /// count against the client address (docs/protocol.md#rate-limits); on the common path the limit is
    /// checked inside the refresh statement itself, so a success is one SQL statement.
    func handleRefresh(_ request: HTTPRequest) throws -> HTTPResponse {
        let limiter = RateLimiter(context: context)
        return try limiter.countingFailures(.refreshFailuresPerAddress, request, configuration: context.configuration) { address in
            try checkedRefresh(request, limiter: limiter, address: address)
        }
    }

    private func checkedRefresh(_ request: HTTPRequest, limiter: RateLimiter, address: String) throws -> HTTPResponse {
        // A request that cannot reach the statement checks the limit with its own statement (a rare path).
        func limitedOr(_ answer: () throws -> HTTPResponse) throws -> HTTPResponse {
            if case .limited(let seconds) = try limiter.check(.refreshFailuresPerAddress, key: address) {
                context.metrics.refresh(.rateLimited)
                return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
            }
            return try answer()
        }
        guard let publishableKey = Wire.bearer(request), publishableKey.hasPrefix("pk_") else {
            return try limitedOr {
                context.metrics.refresh(.invalidClient)
                return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
            }
        }
        guard let body = JSONObjectBody(request.body), case .value(let token) = body.string("refreshToken") else {
            return try limitedOr {
                guard try context.roundTrip.refresh.isKnownClient(publishableKey: publishableKey) else {
                    context.metrics.refresh(.invalidClient)
                    return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
                }
                context.metrics.refresh(.invalidRequest)
                return Wire.error(OAuthError(.invalidRequest, "The body must be a JSON object with \"refreshToken\" as a string."))
            }
        }
        let proof: DPoPProofUse?
        switch DPoPProofs.grantProof(request, context: context) {
        case .failure(let refusal):
            return try limitedOr {
                guard try context.roundTrip.refresh.isKnownClient(publishableKey: publishableKey) else {
                    context.metrics.refresh(.invalidClient)
                    return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
                }
                context.metrics.refresh(.invalidRequest)
                return DPoPProofs.withNonce(Wire.error(refusal.error), context: context)
            }
        case .success(let use): proof = use
        }
        let gate = limiter.gate(.refreshFailuresPerAddress, key: address)
        let result = try refresh(refreshToken: token, publishableKey: publishableKey, gate: gate, proof: proof)
        return DPoPProofs.grantAnswer(result, on: .zevAuth, request, context: context)
    }

    /// `POST /v1/auth/session/revoke` `{"token"}` (access or refresh token) with `Authorization: Bearer
    /// pk_…`: 200 `{}` whether or not the token was live (RFC 7009 §2.2); ends the session it belongs to.
    func handleRevoke(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let publishableKey = Wire.bearer(request), publishableKey.hasPrefix("pk_"),
            let environmentID = try context.roundTrip.revoke.environmentID(publishableKey: publishableKey)
        else {
            return GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
        }
        guard let body = JSONObjectBody(request.body), case .value(let token) = body.string("token") else {
            return Wire.error(OAuthError(.invalidRequest, "The body must be a JSON object with \"token\" as a string."))
        }
        try revoke(token: token, environmentID: environmentID)
        return Wire.json(status: 200, [:] as JSONValue)
    }

    /// Ends the session that issued `token` when it is this environment's; anything else is ignored.
    func revoke(token: String, environmentID: String) throws {
        try Revoke(
            store: context.roundTrip.revoke, secrets: context.secrets,
            settle: SettleWindow(milliseconds: context.configuration.databaseSettleMilliseconds))(
                token: token, environmentID: environmentID, now: context.clock.now())
    }
}
