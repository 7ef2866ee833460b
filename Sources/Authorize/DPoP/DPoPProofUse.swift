import Foundation

/// A verified proof as a grant's one statement uses it (docs/dpop.md, "Replay and nonces"): the key it
/// binds, its `jti` digest recorded once per key until `usableUntil`, and whether its `nonce` is one the
/// server currently accepts (required only when the environment requires DPoP).
public struct DPoPProofUse: Sendable, Equatable {
    /// The key's `jkt` (RFC 7638).
    public let thumbprint: String
    /// `Secrets.digest` of the proof's `jti` (the store never sees the value).
    public let identifierHash: String
    /// `iat` + `DPoPProofRules.maximumAge`: until then the same `jti` of this key is a replay.
    public let usableUntil: Date
    /// The proof's `nonce` is the current or the previous period's server nonce.
    public let nonceAccepted: Bool

    public init(thumbprint: String, identifierHash: String, usableUntil: Date, nonceAccepted: Bool) {
        self.thumbprint = thumbprint
        self.identifierHash = identifierHash
        self.usableUntil = usableUntil
        self.nonceAccepted = nonceAccepted
    }

    /// The use of `proof`, its `jti` digested by `digest`.
    public init(_ proof: VerifiedDPoPProof, nonceAccepted: Bool, digest: (String) -> String) {
        self.init(
            thumbprint: proof.thumbprint, identifierHash: digest(proof.identifier),
            usableUntil: proof.issuedAt.addingTimeInterval(DPoPProofRules.maximumAge), nonceAccepted: nonceAccepted)
    }
}

/// What a grant's statement found about DPoP before it touched a code or a session, in this order
/// (docs/dpop.md, "Binding"): the environment requires a proof and none came; it requires a nonce and the
/// proof's is missing or stale; this key used this `jti` already.
public enum DPoPStatementFact: Sendable, Equatable {
    case fine
    case required
    case nonceRequired
    case replayed

    /// The refusal for this fact, nil when fine.
    public var refusal: DPoPRefusal? {
        switch self {
        case .fine: nil
        case .required: .missing
        case .nonceRequired: .useNonce
        case .replayed: .replayed
        }
    }
}

/// The store port of a proof's single use where no grant statement carries it (the resources).
public protocol DPoPProofUseStore: Sendable {
    /// Records `use` once per key and `jti` digest (docs/dpop.md, "Replay and nonces").
    /// - Returns: false when this key used this `jti` already and that use has not expired at `now`: a replay.
    /// - Throws: `StoreUnavailable`.
    func recordProofUse(_ use: DPoPProofUse, now: Date) throws -> Bool
}
