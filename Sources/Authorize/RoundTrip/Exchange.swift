import Foundation
import PKCE

/// One exchange attempt as the store runs it: everything hashed or derived before it reaches SQL.
public struct ExchangeAttempt: Sendable, Equatable {
    public let publishableKey: String
    /// The stored form (`Secrets.digest`) of the presented code.
    public let codeHash: String
    /// The `redirectUri` sent, or nil when missing, null or empty (row 4).
    public let requestedRedirectURI: String?
    /// S256 of the sent verifier when its grammar is valid (RFC 7636 §4.1, §4.2), else nil: the verifier
    /// is checked and hashed here, once, and the store only compares.
    public let verifierChallenge: String?
    /// A fresh UUID naming this attempt: the code's row records which attempt consumed it.
    public let attemptID: String
    public let accessTokenHash: String
    public let refreshTokenHash: String
    public let now: Date
    /// When set, the statement touches no code if the client's failure counter is at its threshold.
    public let failureGate: FailureGate?
    /// The request's verified DPoP proof, when it carried one (docs/dpop.md, "Binding").
    public var proof: DPoPProofUse? = nil
    /// The authenticated web client (`zc_…`); nil for a native app. A code is consumed only by the
    /// client it was issued to (sql/026).
    public var webClientID: String?

    public init(
        publishableKey: String, codeHash: String, requestedRedirectURI: String?, verifierChallenge: String?,
        attemptID: String, accessTokenHash: String, refreshTokenHash: String, now: Date, failureGate: FailureGate? = nil
    ) {
        self.publishableKey = publishableKey
        self.codeHash = codeHash
        self.requestedRedirectURI = requestedRedirectURI
        self.verifierChallenge = verifierChallenge
        self.attemptID = attemptID
        self.accessTokenHash = accessTokenHash
        self.refreshTokenHash = refreshTokenHash
        self.now = now
        self.failureGate = failureGate
    }
}

/// What the one exchange statement found and did, as facts; `ExchangeDecision.decide` turns them into the
/// answer. The store decides nothing the contract's table orders (docs/protocol.md#exchange-checks); it
/// only gates its own writes on the same facts (the code is consumed when row 3 passes, the session is
/// created when rows 4–6 pass too), so the two can never disagree.
public struct ExchangeFacts: Sendable, Equatable {
    /// What happened to the presented code.
    public enum Code: Sendable, Equatable {
        /// Unknown, expired, another environment's, or outlived by what it stood for (row 3): untouched.
        case notConsumed
        /// This attempt consumed it.
        case won
        /// It had been consumed before. `revokedSession`: this presentation would have passed rows 4–6, so
        /// the session of the first exchange was revoked (docs/protocol.md#exchange-replay).
        case alreadyConsumed(revokedSession: Bool)
    }

    /// An environment has the publishable key.
    public var clientKnown: Bool
    /// The client's failure counter was at its threshold: the statement touched no code.
    public var rateLimited: Bool
    public var code: Code
    /// A `redirectUri` was sent (row 4).
    public var redirectPresent: Bool
    /// The sent `redirectUri` equals the code's byte for byte (row 5); false when none was sent.
    public var redirectMatches: Bool
    /// The sent verifier is well formed and its S256 equals the code's challenge (row 6).
    public var challengeMatches: Bool
    /// The session the statement created, when it did (rows 4–6 passed and the account is still open).
    public var session: IssuedSession?
    /// What the statement found about DPoP before touching the code (`.fine`: it went on).
    public var dpop: DPoPStatementFact = .fine
    /// The proof's key is the one the code is bound to, or the code is bound to none.
    public var keyMatches = true

    public init(
        clientKnown: Bool, rateLimited: Bool = false, code: Code = .notConsumed, redirectPresent: Bool = false,
        redirectMatches: Bool = false, challengeMatches: Bool = false, session: IssuedSession? = nil
    ) {
        self.clientKnown = clientKnown
        self.rateLimited = rateLimited
        self.code = code
        self.redirectPresent = redirectPresent
        self.redirectMatches = redirectMatches
        self.challengeMatches = challengeMatches
        self.session = session
    }
}

/// What an exchange answers, decided once from the statement's facts.
public enum ExchangeVerdict: Sendable, Equatable {
    /// Row 1: 401 `invalid_client`.
    case invalidClient
    /// 429: too many failed exchanges from this client address (docs/protocol.md#exchange-rate-limit).
    case rateLimited
    /// Rows 3–6, or an account closed while the code was consumed: 400 with this error.
    case refused(OAuthError)
    /// 200 with this session.
    case issue(IssuedSession)
}

/// The exchange's one decision (docs/protocol.md#exchange-checks): pure, in the contract's row order.
public enum ExchangeDecision {
    /// Row 3's answer (the same for every reason, RFC 6749 §5.2).
    public static let invalidCode = OAuthError(.invalidGrant, "The authorization code is invalid, expired or already used.")
    /// Row 4's answer (RFC 6749 §4.1.3).
    public static let redirectRequired = OAuthError(
        .redirectURIRequired, "redirectUri is required and must equal the one sent to the start.")
    /// Row 5's answer: byte-for-byte (RFC 6749 §4.1.3, "identical").
    public static let redirectMismatch = OAuthError(.redirectURIMismatch, "redirectUri differs from the one the code was issued for.")
    /// Row 6's answer (RFC 7636 §4.6).
    public static let verifierMismatch = OAuthError(.pkceVerificationFailed, "The code verifier does not match the code challenge.")
    /// Rows 4–6 passed but no session was made: the account was closed in the meantime.
    public static let accountClosed = OAuthError(.invalidGrant, "The account can no longer sign in.")
    /// The code is bound to a DPoP key (`dpop_jkt`) and the exchange sent no proof (docs/dpop.md, "Binding";
    /// RFC 9449 §10). A proof of another key is `DPoPRefusal.otherKey`: the same error, another sentence.
    public static let boundCodeNeedsProof = OAuthError(
        .invalidDPoPProof, "This code is bound to a DPoP key: send a DPoP proof made with it.")

    /// Decides an exchange from what its statement found: row 1, the rate limit, row 3, then rows 4–6
    /// (which run after consumption, so a failed attempt burns the code: RFC 6749 §4.1.2), then the session.
    /// - Parameters:
    ///   - facts: what the exchange statement found and did.
    ///   - proofPresented: the request carried a verified DPoP proof; it only chooses the sentence of a
    ///     refused key binding (no proof, or a proof of another key).
    public static func decide(_ facts: ExchangeFacts, proofPresented: Bool) -> ExchangeVerdict {
        guard facts.clientKnown else { return .invalidClient }
        if facts.rateLimited { return .rateLimited }
        if let refusal = facts.dpop.refusal { return .refused(refusal.error) }
        guard facts.code == .won else { return .refused(invalidCode) }
        guard facts.redirectPresent else { return .refused(redirectRequired) }
        guard facts.redirectMatches else { return .refused(redirectMismatch) }
        guard facts.challengeMatches else { return .refused(verifierMismatch) }
        guard facts.keyMatches else { return .refused(proofPresented ? DPoPRefusal.otherKey.error : boundCodeNeedsProof) }
        guard let session = facts.session else { return .refused(accountClosed) }
        return .issue(session)
    }
}

/// The store port of the exchange: the one statement, and the client lookup row 1 needs when the body
/// is unreadable (row 2 cannot reach the statement).
public protocol ExchangeStore: Sendable {
    /// Runs one exchange attempt in one statement (docs/protocol.md#exchange-replay): finds the client,
    /// checks the failure gate, consumes the code or marks a valid replay, creates the session when rows
    /// 4–6 pass, revokes the first session on a valid replay.
    /// - Throws: `StoreUnavailable`, or a fault of the server.
    func exchange(_ attempt: ExchangeAttempt) throws -> ExchangeFacts
    /// Whether an environment has this publishable key.
    /// - Throws: `StoreUnavailable`.
    func isKnownClient(publishableKey: String) throws -> Bool
    /// The live session whose access token digests to `accessTokenHash`, or nil: how an in-doubt exchange
    /// learns whether its own write landed (`Settle`).
    /// - Throws: `StoreUnavailable`.
    func exchangedSession(accessTokenHash: String, now: Date) throws -> IssuedSession?
}

extension ExchangeStore {
    /// No lookup: an in-doubt write is run again (a store that cannot look its writes up).
    public func exchangedSession(accessTokenHash: String, now: Date) throws -> IssuedSession? { nil }
}

/// `POST /v1/auth/handoff/exchange` and the code grant of `POST /oauth2/token`: mints the pair, checks and
/// hashes the verifier once, runs the store's one statement and decides from its facts.
public struct Exchange: Sendable {
    let store: any ExchangeStore
    let secrets: any Secrets
    let settle: SettleWindow

    /// - Parameters:
    ///   - store: the exchange statement.
    ///   - secrets: the CSPRNG and SHA-256.
    ///   - settle: how long an in-doubt exchange settles itself (`.off`: 503 at once).
    public init(store: any ExchangeStore, secrets: any Secrets, settle: SettleWindow = .off) {
        self.store = store
        self.secrets = secrets
        self.settle = settle
    }

    /// One exchange of rows 3–6 (rows 1–2 are the edge's: a key and a readable body).
    /// - Parameters:
    ///   - code: the presented code.
    ///   - redirectURI: the sent redirect URI; nil or empty counts as missing (row 4).
    ///   - codeVerifier: the sent verifier, or nil.
    ///   - gate: the client's failure limit, checked inside the statement (nil: none).
    ///   - now: the request's time (the server's clock).
    /// - Throws: `StoreUnavailable`; the CSPRNG's failure.
    ///   - observe: called with the statement's facts before the decision (the server counts outcomes from them).
    ///   - proof: the request's verified DPoP proof, when it carried one.
    ///   - webClientID: the authenticated web client (`zc_…`), or nil for a native app.
    public func callAsFunction(
        publishableKey: String, code: String, redirectURI: String?, codeVerifier: String?, gate: FailureGate?, now: Date,
        proof: DPoPProofUse? = nil, webClientID: String? = nil, observe: (ExchangeFacts) -> Void = { _ in }
    ) throws -> GrantOutcome {
        let accessToken = try secrets.mintToken(prefix: "zat_")
        let refreshToken = try secrets.mintToken(prefix: "zrt_")
        // A web client that sends no verifier matches only a code issued without PKCE (`CodeChallenge.waived`,
        // docs/protocol.md "Web clients"); a verifier sent for such a code matches nothing.
        let verifierChallenge =
            webClientID != nil && codeVerifier == nil
            ? CodeChallenge.waived.value : Self.challenge(of: codeVerifier, sha256: { [secrets] in secrets.sha256($0) })
        var attempt = ExchangeAttempt(
            publishableKey: publishableKey, codeHash: secrets.digest(code),
            requestedRedirectURI: redirectURI.flatMap { $0.isEmpty ? nil : $0 }, verifierChallenge: verifierChallenge,
            attemptID: secrets.newID(), accessTokenHash: secrets.digest(accessToken),
            refreshTokenHash: secrets.digest(refreshToken), now: now, failureGate: gate)
        attempt.proof = proof
        attempt.webClientID = webClientID
        // In doubt (the statement was sent, no answer came), the same attempt, with the same tokens, looks
        // its session up or runs again: a second run finds the code consumed by this attempt id, so it is
        // never taken for a replay (docs/decisions.md, "In-doubt writes are settled by the request that
        // sent them").
        return try Settle.run(
            window: settle,
            write: {
                let facts = try store.exchange(attempt)
                observe(facts)
                switch ExchangeDecision.decide(facts, proofPresented: attempt.proof != nil) {
                case .invalidClient: return .invalidClient
                case .rateLimited: return .rateLimited
                case .refused(let error): return .refused(error)
                case .issue(let session): return .issued(session, accessToken: accessToken, refreshToken: refreshToken)
                }
            },
            lookup: {
                try store.exchangedSession(accessTokenHash: attempt.accessTokenHash, now: now).map {
                    GrantOutcome.issued($0, accessToken: accessToken, refreshToken: refreshToken)
                }
            })
    }

    /// The S256 challenge of a presented verifier when its grammar is valid (RFC 7636 §4.1, §4.2), else nil.
    public static func challenge(of verifier: String?, sha256: PKCE.SHA256) -> String? {
        guard let verifier = verifier.flatMap(CodeVerifier.init) else { return nil }
        return PKCE.s256Challenge(for: verifier, sha256: sha256).value
    }
}
