import Foundation

/// Where a signing key is in its life (docs/operations.md, "Signing keys"): published as `next` before it
/// signs, `current` while it signs, `retired` while tokens it signed may still be live, then gone; or
/// `revoked` at once by the operator (never published or trusted again).
public enum SigningKeyState: String, Sendable, Equatable, CaseIterable {
    case next, current, retired, revoked
}

/// One stored signing key: its public JWK and its private key sealed under `ZEVAUTH_ENCRYPTION_KEY`.
public struct SigningKeyRecord: Sendable, Equatable {
    /// The key id: the RFC 7638 SHA-256 thumbprint of its public JWK, base64url.
    public let kid: String
    public let algorithm: SigningAlgorithm
    public let state: SigningKeyState
    /// The public JWK as one JSON object (`kty`, `kid`, `use`, `alg`, `n`/`e` or `crv`/`x`/`y`).
    public let publicJWK: String
    /// The PKCS#8 private key sealed with AES-256-GCM, base64 (`nonce ‖ ciphertext ‖ tag`).
    public let sealedPrivateKey: String
    public let createdAt: Date
    /// For `next`: the earliest time it may become current (published for the JWKS cache time); else when
    /// it became current.
    public let activatesAt: Date?
    /// For `retired`: when it leaves the JWKS (every token it signed has expired).
    public let retiresAt: Date?
    public let revokedAt: Date?

    public init(
        kid: String, algorithm: SigningAlgorithm, state: SigningKeyState, publicJWK: String, sealedPrivateKey: String,
        createdAt: Date, activatesAt: Date?, retiresAt: Date?, revokedAt: Date?
    ) {
        self.kid = kid
        self.algorithm = algorithm
        self.state = state
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
        self.createdAt = createdAt
        self.activatesAt = activatesAt
        self.retiresAt = retiresAt
        self.revokedAt = revokedAt
    }
}

/// A freshly generated key, ready to store.
public struct NewSigningKey: Sendable, Equatable {
    public let kid: String
    public let algorithm: SigningAlgorithm
    public let publicJWK: String
    public let sealedPrivateKey: String

    public init(kid: String, algorithm: SigningAlgorithm, publicJWK: String, sealedPrivateKey: String) {
        self.kid = kid
        self.algorithm = algorithm
        self.publicJWK = publicJWK
        self.sealedPrivateKey = sealedPrivateKey
    }
}

/// The lifecycle rules of signing keys, pure (docs/operations.md, "Signing keys").
public enum SigningKeyPolicy {
    /// `Cache-Control: max-age` of the JWKS, and so how long a next key is published before it may sign.
    public static let jwksCacheSeconds: Double = 300
    /// The lifetime of an ID token (`exp` = `iat` + this), and so how long a retired key stays published.
    public static let idTokenLifetimeSeconds: Double = 3600

    /// When a next key made at `createdAt` may become current.
    public static func activatesAt(createdAt: Date) -> Date { createdAt.addingTimeInterval(jwksCacheSeconds) }
    /// When a key retired at `retiredAt` leaves the JWKS: after the last token it signed has expired.
    public static func retiresAt(retiredAt: Date) -> Date { retiredAt.addingTimeInterval(idTokenLifetimeSeconds) }

    /// Whether `key` is published at `now` (and so trusted for an `id_token_hint`): next, current, or
    /// retired and not yet gone; never revoked.
    public static func isPublished(_ key: SigningKeyRecord, now: Date) -> Bool {
        switch key.state {
        case .next, .current: return true
        case .retired: return (key.retiresAt ?? .distantPast) > now
        case .revoked: return false
        }
    }

    /// The keys the JWKS lists at `now`, by algorithm (`SigningAlgorithm.allCases` order) then state
    /// (current, next, retired) then newest first.
    public static func published(_ keys: [SigningKeyRecord], now: Date) -> [SigningKeyRecord] {
        let stateOrder: [SigningKeyState: Int] = [.current: 0, .next: 1, .retired: 2]
        let algorithmOrder = Dictionary(uniqueKeysWithValues: SigningAlgorithm.allCases.enumerated().map { ($1, $0) })
        return keys.filter { isPublished($0, now: now) }.sorted { a, b in
            if a.algorithm != b.algorithm { return algorithmOrder[a.algorithm]! < algorithmOrder[b.algorithm]! }
            if a.state != b.state { return stateOrder[a.state]! < stateOrder[b.state]! }
            return a.createdAt > b.createdAt
        }
    }

    /// The key that signs `algorithm` now, if any.
    public static func current(_ keys: [SigningKeyRecord], algorithm: SigningAlgorithm) -> SigningKeyRecord? {
        keys.first { $0.algorithm == algorithm && $0.state == .current }
    }

    /// Whether every algorithm has its current and its next key.
    public static func isComplete(_ keys: [SigningKeyRecord]) -> Bool {
        SigningAlgorithm.allCases.allSatisfy { missingStates(keys, algorithm: $0).isEmpty }
    }

    /// The states missing for `algorithm` (a current and a next key must always exist).
    public static func missingStates(_ keys: [SigningKeyRecord], algorithm: SigningAlgorithm) -> [SigningKeyState] {
        [.current, .next].filter { state in !keys.contains { $0.algorithm == algorithm && $0.state == state } }
    }

    /// One algorithm's step of a rotation: its next key becomes current, its current key retires.
    public struct RotationStep: Sendable, Equatable {
        public let algorithm: SigningAlgorithm
        public let promotedKID: String
        public let retiredKID: String

        public init(algorithm: SigningAlgorithm, promotedKID: String, retiredKID: String) {
            self.algorithm = algorithm
            self.promotedKID = promotedKID
            self.retiredKID = retiredKID
        }
    }

    /// What a rotation may do at `now`.
    public enum RotationPlan: Sendable, Equatable {
        /// Rotate every algorithm at once.
        case rotate([RotationStep])
        /// A next key is younger than the JWKS cache time: rotation becomes possible at this time.
        case tooEarly(possibleAt: Date)
        /// An algorithm lacks a current or next key (make the missing keys first).
        case incomplete
    }

    /// The rotation plan for `keys` at `now`: every algorithm's next key must have been published for at
    /// least `jwksCacheSeconds` (so every client's cached JWKS already holds it); else `tooEarly` at the
    /// latest of their activation times.
    public static func rotation(_ keys: [SigningKeyRecord], now: Date) -> RotationPlan {
        var steps: [RotationStep] = []
        var latest: Date?
        for algorithm in SigningAlgorithm.allCases {
            guard let current = current(keys, algorithm: algorithm),
                let next = keys.first(where: { $0.algorithm == algorithm && $0.state == .next })
            else { return .incomplete }
            let activates = next.activatesAt ?? activatesAt(createdAt: next.createdAt)
            if activates > now { latest = max(latest ?? activates, activates) }
            steps.append(RotationStep(algorithm: algorithm, promotedKID: next.kid, retiredKID: current.kid))
        }
        if let latest { return .tooEarly(possibleAt: latest) }
        return .rotate(steps)
    }
}

/// Generates and seals a new signing key (OpenSSL and AES-256-GCM in the server).
public protocol SigningKeyMaker: Sendable {
    /// A new key of `algorithm` with its kid, public JWK and sealed private key.
    /// - Throws: when OpenSSL or sealing fails.
    func make(_ algorithm: SigningAlgorithm) throws -> NewSigningKey
}

/// What a revocation did.
public struct SigningKeyRevocation: Sendable, Equatable {
    public let kid: String
    public let algorithm: SigningAlgorithm
    /// The state the key had.
    public let previousState: SigningKeyState
    /// The key that became current in its place, when the revoked key was current.
    public let promotedKID: String?

    public init(kid: String, algorithm: SigningAlgorithm, previousState: SigningKeyState, promotedKID: String?) {
        self.kid = kid
        self.algorithm = algorithm
        self.previousState = previousState
        self.promotedKID = promotedKID
    }
}

/// The signing keys in PostgreSQL (`signing_keys`, sql/009).
public protocol SigningKeyStore: Sendable {
    /// Every key that is not revoked and not gone at `now` (gone: retired past its `retiresAt`).
    /// - Throws: `StoreUnavailable`.
    func signingKeys(now: Date) throws -> [SigningKeyRecord]
    /// Stores each key in its state (`current` or `next`) unless its algorithm already has a key in that
    /// state (another instance made one first), in one transaction, so no reader sees half a set.
    /// - Returns: how many were stored.
    func addSigningKeys(_ keys: [(key: NewSigningKey, state: SigningKeyState)], now: Date) throws -> Int
    /// Performs `steps` and stores `newNext` as next keys, all or nothing, only while each step's keys are
    /// still in the states the plan saw (row locks make two concurrent rotations one).
    /// `audit` is written in the same transaction when the rotation happens (docs/console.md, "Audit log").
    /// - Returns: false when another rotation or a revocation changed the keys first (nothing written).
    func rotate(_ steps: [SigningKeyPolicy.RotationStep], newNext: [NewSigningKey], now: Date, audit: AuditEntry) throws -> Bool
    /// Revokes `kid` at `now`; when it was current, promotes its algorithm's next key at once; when it was
    /// current or next, stores `replacement` as the next key. All or nothing.
    /// `audit` is written in the same transaction when a key is revoked.
    /// - Returns: nil when no unrevoked key has this kid.
    func revoke(kid: String, replacement: NewSigningKey, now: Date, audit: AuditEntry) throws -> SigningKeyRevocation?
}

/// Makes sure every algorithm has a current and a next key (the first `migrate` with an encryption key, or
/// the first `serve`); safe to run on several instances at once.
public struct EnsureSigningKeys: Sendable {
    let store: any SigningKeyStore
    let maker: any SigningKeyMaker

    public init(store: any SigningKeyStore, maker: any SigningKeyMaker) {
        self.store = store
        self.maker = maker
    }

    /// - Returns: how many keys this call stored.
    /// - Throws: `StoreUnavailable`; what the maker throws.
    @discardableResult
    public func callAsFunction(now: Date) throws -> Int {
        let keys = try store.signingKeys(now: now)
        var missing: [(key: NewSigningKey, state: SigningKeyState)] = []
        for algorithm in SigningAlgorithm.allCases {
            for state in SigningKeyPolicy.missingStates(keys, algorithm: algorithm) { missing.append((try maker.make(algorithm), state)) }
        }
        return missing.isEmpty ? 0 : try store.addSigningKeys(missing, now: now)
    }
}

/// The operator's rotation (`POST /v1/admin/signing-keys/rotate`).
public struct RotateSigningKeys: Sendable {
    let store: any SigningKeyStore
    let maker: any SigningKeyMaker

    public init(store: any SigningKeyStore, maker: any SigningKeyMaker) {
        self.store = store
        self.maker = maker
    }

    /// What a rotation answered.
    public enum Outcome: Sendable, Equatable {
        /// Rotated: these keys now sign.
        case rotated(promoted: [String])
        /// Refused: possible from this time on (409 `conflict`).
        case tooEarly(possibleAt: Date)
    }

    /// Rotates every algorithm at once when the plan allows; a rotation that lost a race to another
    /// instance's answers `tooEarly` for the new next keys (exactly one rotation happened).
    /// - Parameter audit: the `signing_key.rotate` row, written with the rotation.
    /// - Throws: `StoreUnavailable`; what the maker throws.
    public func callAsFunction(now: Date, audit: AuditEntry) throws -> Outcome {
        var keys = try store.signingKeys(now: now)
        if SigningKeyPolicy.rotation(keys, now: now) == .incomplete {
            try EnsureSigningKeys(store: store, maker: maker)(now: now)
            keys = try store.signingKeys(now: now)
        }
        switch SigningKeyPolicy.rotation(keys, now: now) {
        case .incomplete, .tooEarly:
            return .tooEarly(possibleAt: Self.possibleAt(keys, now: now))
        case .rotate(let steps):
            let fresh = try steps.map { try maker.make($0.algorithm) }
            if try store.rotate(steps, newNext: fresh, now: now, audit: audit) { return .rotated(promoted: steps.map(\.promotedKID)) }
            return .tooEarly(possibleAt: Self.possibleAt(try store.signingKeys(now: now), now: now))
        }
    }

    private static func possibleAt(_ keys: [SigningKeyRecord], now: Date) -> Date {
        if case .tooEarly(let at) = SigningKeyPolicy.rotation(keys, now: now) { return at }
        return SigningKeyPolicy.activatesAt(createdAt: now)
    }
}

/// The operator's emergency revocation (`POST /v1/admin/signing-keys/{kid}/revoke`).
public struct RevokeSigningKey: Sendable {
    let store: any SigningKeyStore
    let maker: any SigningKeyMaker

    public init(store: any SigningKeyStore, maker: any SigningKeyMaker) {
        self.store = store
        self.maker = maker
    }

    /// Revokes `kid` at once (no waiting for the JWKS cache time). - Returns: nil for an unknown or
    /// already revoked kid. - Throws: `StoreUnavailable`; what the maker throws.
    public func callAsFunction(kid: String, now: Date, audit: AuditEntry) throws -> SigningKeyRevocation? {
        guard let key = try store.signingKeys(now: now).first(where: { $0.kid == kid }) else { return nil }
        return try store.revoke(kid: kid, replacement: try maker.make(key.algorithm), now: now, audit: audit)
    }
}
