import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The server's DPoP edge (docs/dpop.md): `DPoPProofRules` with OpenSSL's signature check and SHA-256,
/// the stateless server nonces, and reading the `DPoP` header of a grant or a resource request.
enum DPoPProofs {
    /// OpenSSL's check of a proof's signature with its own `jwk` (`Crypto.verifyJWS`).
    static let checkSignature: DPoPSignatureCheck = { signature, signingInput, algorithm, key in
        guard let algorithm = Crypto.JWSAlgorithm(rawValue: algorithm.rawValue) else { return false }
        let jwk: Crypto.JWKPublicKey =
            switch key {
            case .ec(let x, let y): .p256(x: x, y: y)
            case .okp(let x): .ed25519(x: x)
            case .rsa(let n, let e): .rsa(n: n, e: e)
            }
        return Crypto.verifyJWS(signature, of: signingInput, algorithm: algorithm, key: jwk)
    }

    /// The rules with OpenSSL behind them.
    static let rules = DPoPProofRules(checkSignature: checkSignature, sha256: { Crypto.sha256($0) })

    /// A server nonce's period, in seconds: a nonce is accepted in its own period and the next one.
    static let noncePeriodSeconds = 300

    /// The nonces' HMAC key, derived from a secret every instance shares: `ZEVAUTH_ENCRYPTION_KEY` when
    /// set, else `ZEVAUTH_OPERATOR_TOKEN` (docs/decisions.md, "DPoP nonces are stateless").
    static func nonceKey(_ configuration: ServerConfiguration) -> [UInt8] {
        let secret = configuration.encryptionKey ?? Array(configuration.operatorToken.utf8)
        return Crypto.hmacSHA256(key: secret, message: Array("zevauth dpop nonce v1".utf8))
    }

    /// The nonce of the period `now` falls in: base64url of HMAC-SHA-256 over the period's number.
    static func nonce(at now: Date, key: [UInt8]) -> String {
        nonce(period: Int(now.timeIntervalSince1970) / noncePeriodSeconds, key: key)
    }

    private static func nonce(period: Int, key: [UInt8]) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: key, message: Array("period \(period)".utf8)))
    }

    /// Whether `value` is the nonce of `now`'s period or of the one before (compared in constant time).
    static func acceptsNonce(_ value: String, at now: Date, key: [UInt8]) -> Bool {
        let period = Int(now.timeIntervalSince1970) / noncePeriodSeconds
        let sent = Array(value.utf8)
        return [period, period - 1].contains { Crypto.constantTimeEquals(sent, Array(nonce(period: $0, key: key).utf8)) }
    }

    /// The issuer-based URL of `path` (`ZEVAUTH_ISSUER` + path): what `htu` must be, never from `Host`.
    static func endpointURL(_ path: String, context: ServerContext) -> String {
        var issuer = context.configuration.issuer
        while issuer.hasSuffix("/") { issuer.removeLast() }
        return issuer + path
    }

    /// The `DPoP` header of a grant request (the exchange, the token endpoint, their refresh), checked
    /// against `POST` at `path`: nil when none was sent, the proof's use, or the rule it broke. The nonce
    /// is not required here; whether it is accepted goes to the grant's statement, which knows whether
    /// the environment requires it.
    static func grantProof(_ request: HTTPRequest, context: ServerContext) -> Result<DPoPProofUse?, DPoPRefusal> {
        let headers = request.headers.values("DPoP")
        if headers.isEmpty { return .success(nil) }
        guard headers.count == 1 else { return .failure(.missing) }
        let now = context.clock.now()
        do {
            let proof = try rules.verify(
                headers[0], expecting: DPoPExpectation(method: request.method, url: endpointURL(request.path, context: context)),
                nonce: .notRequired, now: now)
            let key = nonceKey(context.configuration)
            let accepted = proof.nonce.map { acceptsNonce($0, at: now, key: key) } ?? false
            return .success(DPoPProofUse(proof, nonceAccepted: accepted, digest: { context.secrets.digest($0) }))
        } catch {
            return .failure(error)
        }
    }

    /// `response` with the current `DPoP-Nonce` (RFC 9449 §8.1), as every answer to a request that sent a
    /// proof or was refused for want of one carries it.
    static func withNonce(_ response: HTTPResponse, context: ServerContext) -> HTTPResponse {
        var response = response
        response.headers.set("DPoP-Nonce", nonce(at: context.clock.now(), key: nonceKey(context.configuration)))
        return response
    }

    /// A grant's answer: with `DPoP-Nonce` when the request sent a proof or was refused for its proof.
    static func grantAnswer(_ result: GrantResult, on surface: ErrorSurface, _ request: HTTPRequest, context: ServerContext)
        -> HTTPResponse
    {
        let response = result.response(on: surface)
        var aboutProof = !request.headers.values("DPoP").isEmpty
        if case .refused(let error) = result.outcome, error.code == .invalidDPoPProof || error.code == .useDPoPNonce {
            aboutProof = true
        }
        return aboutProof ? withNonce(response, context: context) : response
    }
}

extension UnavailableStores: DPoPProofUseStore {
    public func recordProofUse(_ use: DPoPProofUse, now: Date) throws -> Bool { throw StoreUnavailable(reason: "no_store") }
}

/// An access token presented to a resource (userinfo, `/v1/auth/session`) and how (RFC 6750 §2.1,
/// RFC 9449 §7.1), and the DPoP checks that follow from its session's binding (docs/dpop.md, "Resources").
struct PresentedAccessToken {
    let token: String
    /// Sent as `Authorization: DPoP`, with this proof (checked, `ath` included); nil: as a bearer token.
    let proof: VerifiedDPoPProof?

    /// The value of `WWW-Authenticate` for a refusal with `error` at a DPoP resource.
    static func dpopChallenge(_ error: OAuthErrorCode) -> String {
        "DPoP error=\"\(error.rawValue)\", algs=\"\(DPoPAlgorithm.advertised)\""
    }

    /// 401 with `error`, a DPoP challenge and the current nonce.
    static func refusal(_ error: OAuthError, context: ServerContext) -> HTTPResponse {
        let unauthorized = OAuthError(error.code, error.description, status: 401)
        var response = Wire.error(unauthorized)
        response.headers.set("WWW-Authenticate", dpopChallenge(error.code))
        return DPoPProofs.withNonce(response, context: context)
    }

    /// What an `Authorization: DPoP` field gave.
    enum DPoPAuthorization {
        /// No such field (a `Bearer` token is read by `Wire.bearer`).
        case none
        /// The token with its checked proof.
        case presented(PresentedAccessToken)
        /// The proof broke a rule: this 401.
        case refused(HTTPResponse)
    }

    /// The token of an `Authorization: DPoP <token>` field with its checked proof (one `DPoP` header,
    /// `htm`, `htu`, `ath` of this token).
    static func dpop(_ request: HTTPRequest, context: ServerContext) -> DPoPAuthorization {
        let fields = request.headers.values("Authorization")
        guard fields.count == 1, let header = fields.first else { return .none }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "dpop" else { return .none }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        let proofs = request.headers.values("DPoP")
        guard proofs.count == 1 else { return .refused(refusal(DPoPRefusal.missing.error, context: context)) }
        do {
            let proof = try DPoPProofs.rules.verify(
                proofs[0],
                expecting: DPoPExpectation(
                    method: request.method, url: DPoPProofs.endpointURL(request.path, context: context), accessToken: token),
                nonce: .notRequired, now: context.clock.now())
            return .presented(PresentedAccessToken(token: token, proof: proof))
        } catch {
            return .refused(refusal(error.error, context: context))
        }
    }

    /// The refusal a live session's binding asks for, or nil when the token may be used: a bound token
    /// only with a proof of its key (RFC 9449 §7.1: as a bearer token it is `invalid_token`), an unbound
    /// one only as a bearer token; the proof used once (a replay is `invalid_dpop_proof`).
    /// - Throws: `StoreUnavailable`.
    func bindingRefusal(_ session: IssuedSession, context: ServerContext) throws -> HTTPResponse? {
        switch (session.dpopThumbprint, proof) {
        case (nil, nil):
            return nil
        case (nil, .some):
            return Self.refusal(
                OAuthError(.invalidToken, "This access token is not DPoP-bound: send it as a bearer token."), context: context)
        case (.some, nil):
            return Self.refusal(
                OAuthError(.invalidToken, "This access token is DPoP-bound: send it as Authorization: DPoP with a proof."), context: context
            )
        case (.some(let bound), .some(let proof)):
            guard proof.thumbprint == bound else { return Self.refusal(DPoPRefusal.otherKey.error, context: context) }
            let use = DPoPProofUse(proof, nonceAccepted: false, digest: { context.secrets.digest($0) })
            guard try context.roundTrip.dpopProofUses.recordProofUse(use, now: context.clock.now()) else {
                return Self.refusal(DPoPRefusal.replayed.error, context: context)
            }
            return nil
        }
    }
}
