import Foundation

/// One refresh attempt as the store runs it: everything hashed before it reaches SQL.
public struct RefreshAttempt: Sendable, Equatable {
    public let publishableKey: String
    public let refreshTokenHash: String
    public let newAccessTokenHash: String
    public let newRefreshTokenHash: String
    public let now: Date
    /// When set, the statement touches no session if the client's failure counter is at its threshold.
    public let failureGate: FailureGate?
    /// The request's verified DPoP proof, when it carried one (docs/dpop.md, "Binding").
    public var proof: DPoPProofUse? = nil
    /// The authenticated web client (`zc_…`); nil for a native app. A session is refreshed only by the
    /// client it was issued to (sql/026).
    public var webClientID: String?

    public init(
        publishableKey: String, refreshTokenHash: String, newAccessTokenHash: String, newRefreshTokenHash: String, now: Date,
        failureGate: FailureGate? = nil
    ) {
        self.publishableKey = publishableKey
        self.refreshTokenHash = refreshTokenHash
        self.newAccessTokenHash = newAccessTokenHash
        self.newRefreshTokenHash = newRefreshTokenHash
        self.now = now
        self.failureGate = failureGate
    }
}

/// What one refresh statement found and did (docs/protocol.md#refresh-checks).
public enum RefreshOutcome: Sendable, Equatable {
    /// No environment has this publishable key.
    case unknownClient
    /// The client's failed-refresh counter is at its threshold; nothing was touched.
    case rateLimited
    /// The refresh token is unknown or belongs to another environment (nothing changed).
    case unknownToken
    /// The session has ended (revoked, signed out, account closed) or just ended because this
    /// presentation was reuse outside the grace (`revokedForReuse`).
    case ended(revokedForReuse: Bool)
    /// The session is past its absolute or idle window: the person must sign in again.
    case reauthenticationRequired
    /// A new pair was issued: a rotation, or a presentation within the reuse grace.
    case refreshed(IssuedSession)
    /// Nothing was touched: the environment requires a proof or a nonce, or the proof was a replay.
    case dpopRefused(DPoPRefusal)
    /// Nothing was touched: the session's tokens are bound to a DPoP key and the request carried no proof
    /// of it (RFC 9449 §5: the refresh token of a public client is bound to the key).
    case otherKey
}

/// The refresh's answer for each outcome (docs/protocol.md#refresh-checks): pure.
public enum RefreshDecision {
    /// The answer for a statement's outcome; `.refreshed` becomes `.issued` with the minted pair.
    public static func decide(_ outcome: RefreshOutcome, accessToken: String, refreshToken: String) -> GrantOutcome {
        switch outcome {
        case .unknownClient: return .invalidClient
        case .rateLimited: return .rateLimited
        case .unknownToken: return .refused(OAuthError(.invalidGrant, "The refresh token is invalid."))
        case .ended(let revokedForReuse):
            return .refused(
                OAuthError(
                    .invalidGrant,
                    revokedForReuse
                        ? "The refresh token was already used; the session has ended. Sign in again, and refresh single-flight."
                        : "The session has ended. Sign in again."))
        case .reauthenticationRequired:
            return .refused(OAuthError(.reauthenticationRequired, "The session has expired. Sign in again."))
        case .refreshed(let session):
            return .issued(session, accessToken: accessToken, refreshToken: refreshToken)
        case .dpopRefused(let refusal):
            return .refused(refusal.error)
        case .otherKey:
            return .refused(OAuthError(.invalidGrant, "The refresh token is bound to a DPoP key: send a proof signed with it."))
        }
    }
}

/// The store port of the refresh: the one rotating statement, and the client lookup row 1 needs when
/// the body is unreadable.
public protocol RefreshStore: Sendable {
    /// Runs one refresh in one statement, race-free on any number of server instances
    /// (docs/protocol.md#refresh-rotation), the failure gate included.
    /// - Throws: `StoreUnavailable`, or a fault of the server.
    func refresh(_ attempt: RefreshAttempt) throws -> RefreshOutcome
    /// Whether an environment has this publishable key.
    /// - Throws: `StoreUnavailable`.
    func isKnownClient(publishableKey: String) throws -> Bool
    /// The live session whose access token digests to `accessTokenHash`, or nil: how an in-doubt refresh
    /// learns whether its own rotation landed (`Settle`).
    /// - Throws: `StoreUnavailable`.
    func refreshedSession(accessTokenHash: String, now: Date) throws -> IssuedSession?
}

extension RefreshStore {
    /// No lookup: an in-doubt write is run again (a store that cannot look its writes up).
    public func refreshedSession(accessTokenHash: String, now: Date) throws -> IssuedSession? { nil }
}

/// `POST /v1/auth/session/refresh` and the refresh grant of `POST /oauth2/token`: mints the pair, runs the
/// store's one statement, answers from its outcome.
public struct Refresh: Sendable {
    let store: any RefreshStore
    let secrets: any Secrets
    let settle: SettleWindow

    /// - Parameter settle: how long an in-doubt refresh settles itself (`.off`: 503 at once).
    public init(store: any RefreshStore, secrets: any Secrets, settle: SettleWindow = .off) {
        self.store = store
        self.secrets = secrets
        self.settle = settle
    }

    /// One refresh with rotation (docs/protocol.md#refresh).
    /// - Parameters:
    ///   - gate: the client's failure limit, checked inside the statement (nil: none).
    ///   - now: the request's time.
    /// - Throws: `StoreUnavailable`; the CSPRNG's failure.
    /// `observe` is called with the statement's outcome before the decision (the server counts outcomes).
    /// `proof` is the request's verified DPoP proof, when it carried one; `webClientID` the authenticated web
    /// client (`zc_…`), or nil for a native app.
    public func callAsFunction(
        publishableKey: String, refreshToken: String, gate: FailureGate?, now: Date, proof: DPoPProofUse? = nil,
        webClientID: String? = nil,
        observe: (RefreshOutcome) -> Void = { _ in }
    ) throws -> GrantOutcome {
        let accessToken = try secrets.mintToken(prefix: "zat_")
        let newRefreshToken = try secrets.mintToken(prefix: "zrt_")
        var attempt = RefreshAttempt(
            publishableKey: publishableKey, refreshTokenHash: secrets.digest(refreshToken),
            newAccessTokenHash: secrets.digest(accessToken), newRefreshTokenHash: secrets.digest(newRefreshToken), now: now,
            failureGate: gate)
        attempt.proof = proof
        attempt.webClientID = webClientID
        // In doubt, the same attempt looks its new pair up or runs again: when its rotation did not land,
        // the presented token is still the current generation, so a second run is not reuse.
        return try Settle.run(
            window: settle,
            write: {
                let outcome = try store.refresh(attempt)
                observe(outcome)
                return RefreshDecision.decide(outcome, accessToken: accessToken, refreshToken: newRefreshToken)
            },
            lookup: {
                try store.refreshedSession(accessTokenHash: attempt.newAccessTokenHash, now: now).map {
                    GrantOutcome.issued($0, accessToken: accessToken, refreshToken: newRefreshToken)
                }
            })
    }
}
