import Authorize
import Foundation
import HTTPServer

/// `POST /v1/auth/handoff/exchange` (docs/protocol.md#exchange-checks): rows 1–2 here at the edge, rows 3–6
/// by the `Exchange` use case, which runs the one statement that consumes the code and creates the
/// session and decides once from its facts (`ExchangeDecision`).
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
        return try limiter.countingFailures(.exchangeFailuresPerAddress, request, configuration: context.configuration) { address in
            try checkedExchange(request, limiter: limiter, address: address)
        }
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
        // The DPoP proof's stateless rules (docs/dpop.md); its single use is the statement's.
        let proof: DPoPProofUse?
        switch DPoPProofs.grantProof(request, context: context) {
        case .failure(let refusal):
            return try limitedOr {
                guard try context.roundTrip.exchange.isKnownClient(publishableKey: publishableKey) else {
                    context.metrics.exchange(.invalidClient)
                    return invalidClient()
                }
                context.metrics.exchange(.invalidRequest)
                return DPoPProofs.withNonce(Wire.error(refusal.error), context: context)
            }
        case .success(let use): proof = use
        }
        let gate = limiter.gate(.exchangeFailuresPerAddress, key: address)
        let result = try grant(fields, publishableKey: publishableKey, gate: gate, proof: proof)
        return DPoPProofs.grantAnswer(result, on: .zevAuth, request, context: context)
    }

    /// Row 2's answer, after row 1 is checked for a known key (a malformed body cannot reach the statement).
    private func invalidBody(publishableKey: String) throws -> HTTPResponse {
        guard try context.roundTrip.exchange.isKnownClient(publishableKey: publishableKey) else {
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
    /// - Parameters:
    ///   - gate: the client's failure limit, checked inside the exchange statement (nil: none).
    ///   - proof: the request's verified DPoP proof (nil: none sent).
    func grant(_ fields: Fields, publishableKey: String, gate: RateLimiter.Gate? = nil, proof: DPoPProofUse? = nil) throws
        -> GrantResult
    {
        let now = context.clock.now()
        let outcome = try Exchange(
            store: context.roundTrip.exchange, secrets: context.secrets,
            settle: SettleWindow(milliseconds: context.configuration.databaseSettleMilliseconds))(
                publishableKey: publishableKey, code: fields.code, redirectURI: fields.redirectURI, codeVerifier: fields.codeVerifier,
                gate: gate?.stored, now: now, proof: proof, observe: { context.metrics.exchange(Self.metric($0)) })
        if case .rateLimited = outcome { context.metrics.rateLimited(.exchangeFailuresPerAddress) }
        return try GrantResult(outcome, now: now, retryAfterSeconds: gate?.retryAfterSeconds ?? 1)
            .withIDToken(context: context, clientID: publishableKey)
    }

    /// The `zevauth_exchanges_total` outcome of one statement's facts, in the decision's row order.
    static func metric(_ facts: ExchangeFacts) -> ExchangeMetric {
        guard facts.clientKnown else { return .invalidClient }
        if facts.rateLimited { return .rateLimited }
        if facts.dpop != .fine { return .invalidRequest }
        if case .alreadyConsumed(revokedSession: true) = facts.code { return .replayRevoked }
        guard facts.code == .won else { return .invalidGrant }
        guard facts.redirectPresent, facts.redirectMatches else { return .redirectURIMismatch }
        guard facts.challengeMatches else { return .pkceFailed }
        guard facts.keyMatches else { return .invalidGrant }
        return facts.session == nil ? .invalidGrant : .ok
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

    private func invalidClient() -> HTTPResponse {
        GrantResult.failed(GrantResult.invalidClient).response(on: .zevAuth)
    }
}
