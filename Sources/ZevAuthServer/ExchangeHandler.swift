import Authorize
import Crypto
import Foundation
import HTTPServer
import PKCE
import PostgresStore

/// `POST /v1/auth/handoff/exchange` (docs/protocol.md#exchange-checks): the checks in the contract's order, with the
/// code consumed by one atomic statement that also creates the session (`PostgresStore.exchange`).
struct ExchangeHandler: Sendable {
    let context: ServerContext

    /// The request's fields once rows 1–2 have passed.
    struct Fields {
        let code: String
        let redirectURI: String?
        let codeVerifier: String?
    }

    /// Handles one exchange; every answer carries `Cache-Control: no-store`. Failed exchanges count against
    /// the client address (docs/protocol.md#rate-limits); over the limit, 429 before any check runs. On the common path
    /// the limit is checked inside the exchange statement itself, so a success is one SQL statement.
    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let limiter = RateLimiter(context: context)
        let address = ClientAddress.of(request, configuration: context.configuration)
        let response = try checkedExchange(request, limiter: limiter, address: address)
        if response.status != 429, (400..<500).contains(response.status) { try limiter.hit(.exchangeFailuresPerAddress, key: address) }
        return response
    }

    /// Rows 1–6 of one exchange.
    private func checkedExchange(_ request: HTTPRequest, limiter: RateLimiter, address: String) throws -> HTTPResponse {
        // Rows 1–2 failing: check the limit first with its own statement (a rare path).
        func limitedOr(_ answer: () throws -> HTTPResponse) throws -> HTTPResponse {
            if case .limited(let seconds) = try limiter.check(.exchangeFailuresPerAddress, key: address) {
                context.metrics.exchange(.rateLimited)
                return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
            }
            return try answer()
        }
        // Row 1: no publishable key. (An unknown one is found by the exchange statement itself, so the
        // common case is one statement; a malformed body needs the lookup first, to keep the order.)
        guard let publishableKey = Wire.bearer(request), publishableKey.hasPrefix("pk_") else {
            return try limitedOr {
                context.metrics.exchange(.invalidClient)
                return invalidClient()
            }
        }
        // Row 2: strict JSON with string fields.
        guard let fields = Self.parse(request.body) else {
            return try limitedOr { try invalidBody(publishableKey: publishableKey) }
        }
        let gate = limiter.gate(.exchangeFailuresPerAddress, key: address)
        return try grant(fields, publishableKey: publishableKey, gate: gate).response(on: .zevAuth)
    }

    /// Row 2's answer, after row 1 is checked for a known key (a malformed body cannot reach the statement).
    private func invalidBody(publishableKey: String) throws -> HTTPResponse {
        guard try context.store.environment(publishableKey: publishableKey) != nil else {
            context.metrics.exchange(.invalidClient)
            return invalidClient()
        }
        context.metrics.exchange(.invalidRequest)
        return Wire.error(
            OAuthError(
                .invalidRequest,
                "The body must be a JSON object with \"code\" as a string, and \"codeVerifier\" and \"redirectUri\" as strings when present."
            ))
    }

    /// Rows 3–6 and the session as a `GrantResult`, so `POST /oauth2/token` answers the same core in RFC
    /// 6749 §5.1/§5.2 shapes and a code from either start works on either exchange.
    /// - Parameter gate: the client's failure limit, checked inside the exchange statement (nil: none).
    func grant(_ fields: Fields, publishableKey: String, gate: RateLimiter.Gate? = nil) throws -> GrantResult {
        let accessToken = try Crypto.mintToken(prefix: "zat_")
        let refreshToken = try Crypto.mintToken(prefix: "zrt_")
        let now = context.clock.now()
        let outcome = try context.store.exchange(
            PostgresStore.ExchangeAttempt(
                publishableKey: publishableKey,
                codeHash: Crypto.hexSHA256(fields.code),
                requestedRedirectURI: fields.redirectURI,
                verifierChallenge: ExchangeCheck.verifierChallengeIfValid(fields.codeVerifier, sha256: Self.sha256),
                attemptID: UUID().uuidString,
                accessTokenHash: Crypto.hexSHA256(accessToken),
                refreshTokenHash: Crypto.hexSHA256(refreshToken),
                now: now, failureGate: gate?.stored))
        switch outcome {
        case .unknownClient:
            context.metrics.exchange(.invalidClient)
            return .failed(GrantResult.invalidClient)
        case .rateLimited:
            context.metrics.exchange(.rateLimited)
            context.metrics.rateLimited(.exchangeFailuresPerAddress)
            return .limited(retryAfterSeconds: gate?.retryAfterSeconds ?? 1)
        case .invalidGrant(let revokedReplay):
            context.metrics.exchange(revokedReplay ? .replayRevoked : .invalidGrant)
            // Row 3: unknown, expired, used, or another environment's; the same answer for each (RFC 6749 §5.2).
            return .failed(OAuthError(.invalidGrant, "The authorization code is invalid, expired or already used."))
        case .consumed(let issuedRedirectURI, let challengeText, let session):
            // Rows 4–6 run after consumption: a failed attempt burns the code (RFC 6749 §4.1.2, "MUST NOT be used more than once").
            guard let challenge = CodeChallenge(challengeText) else {
                throw ServerFailure.inconsistent("stored challenge is not canonical")
            }
            if let failure = ExchangeCheck.afterConsumption(
                requestedRedirectURI: fields.redirectURI, issuedRedirectURI: issuedRedirectURI,
                verifier: fields.codeVerifier, challenge: challenge, sha256: Self.sha256,
                constantTimeEquals: Self.constantTimeEquals)
            {
                context.metrics.exchange(failure.code == .pkceVerificationFailed ? .pkceFailed : .redirectURIMismatch)
                return .failed(failure)
            }
            guard let session else {
                context.metrics.exchange(.invalidGrant)
                // Rows 4–6 passed but no session was made: the account was closed in the meantime.
                return .failed(OAuthError(.invalidGrant, "The account can no longer sign in."))
            }
            context.metrics.exchange(.ok)
            return .issued(session, accessToken: accessToken, refreshToken: refreshToken, now: now)
        }
    }

    /// Reads row 2: `code` a string; `codeVerifier` and `redirectUri` strings when present (null or absent
    /// counts as missing, checked after consumption by rows 4 and 6).
    static func parse(_ body: [UInt8]) -> Fields? {
        guard let object = JSONObjectBody(body), case .value(let code) = object.string("code") else { return nil }
        let redirectURI: String?
        switch object.string("redirectUri") {
        case .wrongType: return nil
        case .missing: redirectURI = nil
        case .value(let value): redirectURI = value.isEmpty ? nil : value
        }
        let verifier: String?
        switch object.string("codeVerifier") {
        case .wrongType: return nil
        case .missing: verifier = nil
        case .value(let value): verifier = value
        }
        return Fields(code: code, redirectURI: redirectURI, codeVerifier: verifier)
    }

    /// The success body (docs/protocol.md#exchange-success): the session and the safe user fields, never the
    /// internal records.
    static func sessionBody(_ session: IssuedSession, accessToken: String, refreshToken: String, now: Date) -> [String: Any] {
        [
            "session": [
                "id": session.sessionID,
                "accessToken": accessToken,
                "refreshToken": refreshToken,
                "tokenType": "Bearer",
                "expiresIn": max(0, Int(session.accessExpiresAt.timeIntervalSince(now).rounded())),
                "expiresAt": Wire.timestamp(session.expiresAt),
                "idleExpiresAt": Wire.timestamp(session.idleExpiresAt),
            ] as [String: Any],
            "user": userBody(session.user),
        ]
    }

    /// `{"id","email","name","imageUrl"}` (null when the account has no image).
    static func userBody(_ user: UserRecord) -> [String: Any] {
        ["id": user.id, "email": user.email, "name": user.name, "imageUrl": user.imageURL ?? NSNull()]
    }

    private func invalidClient() -> HTTPResponse {
        GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
    }

    static let sha256: PKCE.SHA256 = { Crypto.sha256($0) }
    static let constantTimeEquals: @Sendable ([UInt8], [UInt8]) -> Bool = { Crypto.constantTimeEquals($0, $1) }
}
