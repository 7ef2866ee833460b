import Authorize
import Foundation
import Postgres

/// The ID-token signing keys' aggregate (`signing_keys`, sql/009; docs/operations.md, "Signing keys").
/// Rotation and revocation are transactions whose `UPDATE … WHERE state = …` lock the rows they change:
/// a second rotation started at the same time waits on those row locks, then finds the keys in other
/// states, changes nothing and rolls back, so two instances rotating at once make exactly one rotation.
public struct PostgresSigningKeys: Sendable {
    let pool: PostgresPool

    static let columns =
        "kid, alg, state, public_jwk, private_key_sealed, created_at, activates_at, retires_at, revoked_at"

    static func record(_ row: PostgresRow) throws -> SigningKeyRecord? {
        guard let algorithm = SigningAlgorithm(rawValue: try row.string("alg")),
            let state = SigningKeyState(rawValue: try row.string("state"))
        else { return nil }
        return SigningKeyRecord(
            kid: try row.string("kid"), algorithm: algorithm, state: state, publicJWK: try row.string("public_jwk"),
            sealedPrivateKey: row["private_key_sealed"] ?? "", createdAt: try row.date("created_at"),
            activatesAt: try row.optionalDate("activates_at"), retiresAt: try row.optionalDate("retires_at"),
            revokedAt: try row.optionalDate("revoked_at"))
    }

    /// A private error that rolls a transaction back when the keys changed under it.
    struct KeysChanged: Error {}

    /// `{a,b}`: a text[] literal of kids (base64url, so nothing needs quoting).
    static func array(_ kids: [String]) -> String { "{" + kids.joined(separator: ",") + "}" }

    static let insertSQL = """
        INSERT INTO signing_keys (kid, alg, state, public_jwk, private_key_sealed, created_at, activates_at)
        VALUES ($1, $2, $3, $4, $5, to_timestamp($6::float8), to_timestamp($7::float8))
        ON CONFLICT DO NOTHING
        """

    static func insertParameters(_ key: NewSigningKey, state: SigningKeyState, now: Date) -> [String?] {
        let activates = state == .next ? SigningKeyPolicy.activatesAt(createdAt: now) : now
        return [
            key.kid, key.algorithm.rawValue, state.rawValue, key.publicJWK, key.sealedPrivateKey, SQLTime.parameter(now),
            SQLTime.parameter(activates),
        ]
    }
}

extension PostgresSigningKeys: SigningKeyStore {
    public func signingKeys(now: Date) throws -> [SigningKeyRecord] {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT \(Self.columns) FROM signing_keys
                WHERE state IN ('next', 'current') OR (state = 'retired' AND retires_at > to_timestamp($1::float8))
                ORDER BY created_at
                """, [SQLTime.parameter(now)]
            ).rows.compactMap(Self.record)
        }
    }

    /// `INSERT … ON CONFLICT DO NOTHING` per key, in one transaction: the partial unique indexes keep one
    /// current and one next key per algorithm (a concurrent insert waits for this transaction, then does
    /// nothing), so instances starting together store one set and no reader sees half of it.
    public func addSigningKeys(_ keys: [(key: NewSigningKey, state: SigningKeyState)], now: Date) throws -> Int {
        try PostgresEdge.run {
            try pool.transaction { connection in
                try keys.reduce(0) { stored, entry in
                    stored
                        + (try connection.query(Self.insertSQL, Self.insertParameters(entry.key, state: entry.state, now: now)).rowsAffected)
                }
            }
        }
    }

    public func rotate(_ steps: [SigningKeyPolicy.RotationStep], newNext: [NewSigningKey], now: Date, audit: AuditEntry) throws -> Bool {
        do {
            return try PostgresEdge.run {
                try pool.transaction { connection in
                    let retired = try connection.query(
                        """
                        UPDATE signing_keys SET state = 'retired', retires_at = to_timestamp($2::float8)
                        WHERE kid = ANY ($1::text[]) AND state = 'current'
                        """, [Self.array(steps.map(\.retiredKID)), SQLTime.parameter(SigningKeyPolicy.retiresAt(retiredAt: now))])
                    guard retired.rowsAffected == steps.count else { throw KeysChanged() }
                    let promoted = try connection.query(
                        """
                        UPDATE signing_keys SET state = 'current', activates_at = to_timestamp($2::float8)
                        WHERE kid = ANY ($1::text[]) AND state = 'next'
                        """, [Self.array(steps.map(\.promotedKID)), SQLTime.parameter(now)])
                    guard promoted.rowsAffected == steps.count else { throw KeysChanged() }
                    for key in newNext {
                        let inserted = try connection.query(Self.insertSQL, Self.insertParameters(key, state: .next, now: now))
                        guard inserted.rowsAffected == 1 else { throw KeysChanged() }
                    }
                    try connection.query(
                        "DELETE FROM signing_keys WHERE state = 'retired' AND retires_at <= to_timestamp($1::float8)",
                        [SQLTime.parameter(now)])
                    try AuditRows.insert(audit, on: connection)
                    return true
                }
            }
        } catch is KeysChanged {
            return false
        }
    }

    public func revoke(kid: String, replacement: NewSigningKey, now: Date, audit: AuditEntry) throws -> SigningKeyRevocation? {
        do {
            return try PostgresEdge.run {
                try pool.transaction { connection -> SigningKeyRevocation? in
                    // The row lock first: a rotation or another revocation of this key waits for this one.
                    guard
                        let row = try connection.query(
                            "SELECT alg, state FROM signing_keys WHERE kid = $1 AND state <> 'revoked' FOR UPDATE", [kid]
                        ).first,
                        let algorithm = SigningAlgorithm(rawValue: try row.string("alg")),
                        let state = SigningKeyState(rawValue: try row.string("state"))
                    else { return nil }
                    try connection.query(
                        """
                        UPDATE signing_keys SET state = 'revoked', revoked_at = to_timestamp($2::float8), private_key_sealed = NULL
                        WHERE kid = $1
                        """, [kid, SQLTime.parameter(now)])
                    var promoted: String?
                    if state == .current {
                        promoted = try connection.query(
                            """
                            UPDATE signing_keys SET state = 'current', activates_at = to_timestamp($2::float8)
                            WHERE alg = $1 AND state = 'next' RETURNING kid
                            """, [algorithm.rawValue, SQLTime.parameter(now)]
                        ).first.map { try $0.string("kid") }
                    }
                    if state == .current || state == .next {
                        let inserted = try connection.query(
                            Self.insertSQL, Self.insertParameters(replacement, state: .next, now: now))
                        guard inserted.rowsAffected == 1 else { throw KeysChanged() }
                    }
                    try AuditRows.insert(audit, on: connection)
                    return SigningKeyRevocation(kid: kid, algorithm: algorithm, previousState: state, promotedKID: promoted)
                }
            }
        } catch is KeysChanged {
            throw StoreUnavailable(reason: "signing_keys_changed")
        }
    }
}

extension PostgresStore {
    /// The signing keys' aggregate.
    public var signingKeys: PostgresSigningKeys { PostgresSigningKeys(pool: pool) }
}
