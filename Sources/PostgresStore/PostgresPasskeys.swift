import Authorize
import Foundation
import Postgres

/// Passkeys in PostgreSQL (sql/022, docs/passkeys.md, "Storage"): credentials, user handles, challenges
/// (stored as SHA-256 hex digests only) and the offer's "Not now". Binary values travel as hex text
/// (`decode($n, 'hex')`, `encode(column, 'hex')`). Every statement runs through `PostgresEdge.run`.
public struct PostgresPasskeys: Sendable, PasskeyStores {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    static let columns = """
        id, encode(credential_id, 'hex') AS credential_id, name, encode(aaguid, 'hex') AS aaguid, backup_eligible, backed_up,
        array_to_string(transports, ',') AS transports, created_at, last_used_at
        """

    static func record(_ row: PostgresRow) throws -> PasskeyRecord {
        let transports = try row.string("transports")
        return PasskeyRecord(
            id: try row.string("id"), credentialID: try hexBytes(row, "credential_id"), name: try row.string("name"),
            aaguid: try hexBytes(row, "aaguid"), backupEligible: try row.bool("backup_eligible"), backedUp: try row.bool("backed_up"),
            transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init), createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at"))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    static func hexBytes(_ row: PostgresRow, _ column: String) throws -> [UInt8] {
        let text = Array(try row.string(column).utf8)
        guard text.count % 2 == 0 else { throw PostgresError(kind: .query, message: "column \"\(column)\" is not hex") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = 0
        while index < text.count {
            guard let byte = UInt8(String(decoding: text[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw PostgresError(kind: .query, message: "column \"\(column)\" is not hex")
            }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }

    // MARK: Challenges

    public func issuePasskeyChallenge(
        hash: String, purpose: PasskeyPurpose, userID: String?, bindingHash: String, now: Date, lifetimeSeconds: Double
    ) throws {
        _ = try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO passkey_challenges (challenge_hash, purpose, user_id, browser_binding_hash, created_at, expires_at)
                VALUES ($1, $2, $3, $4, to_timestamp($5::float8), to_timestamp($5::float8 + $6::float8))
                """, [hash, purpose.rawValue, userID, bindingHash, SQLTime.parameter(now), String(lifetimeSeconds)])
        }
    }

    /// One statement: consume-if-unconsumed, so two tabs (or a replay) cannot both use a challenge.
    public func consumePasskeyChallenge(hash: String, purpose: PasskeyPurpose, bindingHash: String, now: Date) throws -> (
        consumed: Bool, userID: String?
    ) {
        try PostgresEdge.run {
            let row = try pool.query(
                """
                UPDATE passkey_challenges SET used = true
                WHERE challenge_hash = $1 AND purpose = $2 AND browser_binding_hash = $3 AND NOT used
                  AND expires_at > to_timestamp($4::float8)
                RETURNING user_id
                """, [hash, purpose.rawValue, bindingHash, SQLTime.parameter(now)]
            ).first
            return (row != nil, row?["user_id"])
        }
    }

    // MARK: Registration

    public func passkeyUserHandle(userID: String, candidate: [UInt8]) throws -> [UInt8] {
        try PostgresEdge.run {
            let row = try pool.query(
                """
                WITH inserted AS (
                    INSERT INTO passkey_user_handles (user_id, handle) VALUES ($1, decode($2, 'hex'))
                    ON CONFLICT (user_id) DO NOTHING RETURNING handle
                )
                SELECT encode(handle, 'hex') AS handle FROM inserted
                UNION ALL
                SELECT encode(handle, 'hex') FROM passkey_user_handles WHERE user_id = $1
                LIMIT 1
                """, [userID, Self.hex(candidate)]
            ).first
            guard let row else { throw PostgresError(kind: .query, message: "no user handle was stored") }
            return try Self.hexBytes(row, "handle")
        }
    }

    public func passkeys(userID: String) throws -> [PasskeyRecord] {
        guard UUID(uuidString: userID) != nil else { return [] }
        return try PostgresEdge.run {
            try pool.query(
                "SELECT \(Self.columns) FROM passkey_credentials WHERE user_id = $1 ORDER BY created_at, id", [userID]
            ).rows.map(Self.record)
        }
    }

    /// Inserts without raising a unique violation on the credential ID (`ON CONFLICT DO NOTHING`); the
    /// trigger's `passkey_limit` becomes `PasskeyFailure.limit`. No transports are stored as `'{}'` (the
    /// column is `NOT NULL`; `string_to_array` of NULL is NULL).
    public func addPasskey(_ passkey: NewPasskey, userID: String, now: Date) throws -> PasskeyRecord? {
        try PostgresEdge.run {
            do {
                return try pool.query(
                    """
                    INSERT INTO passkey_credentials (credential_id, user_id, public_key, sign_count, aaguid, backup_eligible,
                        backed_up, transports, attestation_format, name, created_at)
                    VALUES (decode($1, 'hex'), $2, decode($3, 'hex'), $4, decode($5, 'hex'), $6, $7,
                        COALESCE(string_to_array(NULLIF($8, ''), ','), '{}'), $9, $10, to_timestamp($11::float8))
                    ON CONFLICT (credential_id) DO NOTHING
                    RETURNING \(Self.columns)
                    """,
                    [
                        Self.hex(passkey.credentialID), userID, Self.hex(passkey.publicKey), String(passkey.signCount),
                        Self.hex(passkey.aaguid), passkey.backupEligible ? "true" : "false", passkey.backedUp ? "true" : "false",
                        passkey.transports.joined(separator: ","), passkey.attestationFormat, passkey.name.value, SQLTime.parameter(now),
                    ]
                ).first.map(Self.record)
            } catch let error as PostgresError where error.sqlState == .checkViolation && error.constraint == "passkey_limit" {
                throw PasskeyFailure.limit
            }
        }
    }

    // MARK: Sign-in

    public func passkeyForSignIn(credentialID: [UInt8]) throws -> PasskeyForSignIn? {
        try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT c.id AS passkey_id, encode(c.public_key, 'hex') AS public_key, c.sign_count, c.backup_eligible,
                           encode(h.handle, 'hex') AS handle, u.id, u.email, u.name, u.image_url, u.password_hash, u.closed_at,
                           u.email_verified_at, u.self_signed_up
                    FROM passkey_credentials c JOIN users u ON u.id = c.user_id
                    JOIN passkey_user_handles h ON h.user_id = c.user_id
                    WHERE c.credential_id = decode($1, 'hex') AND u.closed_at IS NULL
                    """, [Self.hex(credentialID)]
                ).first
            else { return nil }
            guard let count = UInt32(try row.string("sign_count")) else {
                throw PostgresError(kind: .query, message: "column \"sign_count\" is out of range")
            }
            return PasskeyForSignIn(
                id: try row.string("passkey_id"), user: try PostgresAccounts.user(from: row), userHandle: try Self.hexBytes(row, "handle"),
                credentialID: credentialID, publicKey: try Self.hexBytes(row, "public_key"), signCount: count,
                backupEligible: try row.bool("backup_eligible"))
        }
    }

    public func recordPasskeyUse(id: String, signCount: UInt32, backedUp: Bool, now: Date) throws {
        _ = try PostgresEdge.run {
            try pool.query(
                "UPDATE passkey_credentials SET sign_count = $2, backed_up = $3, last_used_at = to_timestamp($4::float8) WHERE id = $1",
                [id, String(signCount), backedUp ? "true" : "false", SQLTime.parameter(now)])
        }
    }

    public func createBrowserSession(tokenHash: String, userID: String, now: Date, methods: AuthenticationMethods) throws -> String {
        try PostgresEdge.run {
            try pool.withConnection {
                try PostgresBrowserSessions.insert($0, tokenHash: tokenHash, userID: userID, now: now, methods: methods)
            }
        }
    }

    // MARK: Managing

    public func renamePasskey(userID: String, id: String, name: PasskeyName) throws -> Bool {
        guard UUID(uuidString: id) != nil, UUID(uuidString: userID) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query("UPDATE passkey_credentials SET name = $3 WHERE id = $1 AND user_id = $2", [id, userID, name.value])
                .rowsAffected == 1
        }
    }

    public func removePasskey(userID: String, id: String) throws -> PasskeyRecord? {
        guard UUID(uuidString: id) != nil, UUID(uuidString: userID) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query("DELETE FROM passkey_credentials WHERE id = $1 AND user_id = $2 RETURNING \(Self.columns)", [id, userID])
                .first.map(Self.record)
        }
    }

    public func passkeyOfferFacts(userID: String) throws -> (count: Int, skippedAt: Date?) {
        try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT (SELECT count(*) FROM passkey_credentials WHERE user_id = u.id) AS passkeys, u.passkey_offer_skipped_at
                    FROM users u WHERE u.id = $1
                    """, [userID]
                ).first
            else { return (0, nil) }
            return (try row.int("passkeys"), try row.optionalDate("passkey_offer_skipped_at"))
        }
    }

    public func skipPasskeyOffer(userID: String, now: Date) throws {
        _ = try PostgresEdge.run {
            try pool.query(
                "UPDATE users SET passkey_offer_skipped_at = to_timestamp($2::float8) WHERE id = $1", [userID, SQLTime.parameter(now)])
        }
    }

    /// How many passkeys each account holds (the admin API's and the console's `passkeys`).
    public func passkeyCount(userID: String) throws -> Int {
        guard UUID(uuidString: userID) != nil else { return 0 }
        return try PostgresEdge.run {
            try pool.query("SELECT count(*) AS n FROM passkey_credentials WHERE user_id = $1", [userID]).rows[0].int("n")
        }
    }
}

extension PostgresStore {
    /// Passkeys (docs/passkeys.md).
    public var passkeys: PostgresPasskeys { PostgresPasskeys(pool: pool) }
}
