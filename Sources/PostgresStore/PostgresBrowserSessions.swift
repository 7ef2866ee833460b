import Authorize
import Foundation
import Postgres

/// ZevID browser sessions in PostgreSQL (`browser_sessions`): the cookie's secret is stored as its SHA-256
/// digest only. Every statement runs through `PostgresEdge.run`.
public struct PostgresBrowserSessions: Sendable, SignOutStore {
    let pool: PostgresPool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = pool }

    /// Inserts a browser session authenticated now by `methods` (`amr`, sql/010).
    static func insert(
        _ connection: PostgresConnection, tokenHash: String, userID: String, now: Date, methods: AuthenticationMethods = .password
    ) throws -> String {
        try connection.query(
            """
            INSERT INTO browser_sessions (token_hash, user_id, auth_time, created_at, amr)
            VALUES ($1, $2, to_timestamp($3::float8), to_timestamp($3::float8), $4) RETURNING id
            """, [tokenHash, userID, SQLTime.parameter(now), methods.rawValue]
        ).rows[0].string("id")
    }

    /// Starts a ZevID browser session for an account that just entered its password (or its second factor).
    /// - Returns: the browser session's id.
    public func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
        try PostgresEdge.run { try pool.withConnection { try Self.insert($0, tokenHash: tokenHash, userID: userID, now: now) } }
    }

    private static func record(_ row: PostgresRow) throws -> BrowserSessionRecord {
        BrowserSessionRecord(id: try row.string("id"), userID: try row.string("user_id"), authTime: try row.date("auth_time"), ended: false)
    }

    /// The live browser session whose cookie hashes to `tokenHash`, with an open account.
    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
        try PostgresEdge.run {
            try pool.query(
                """
                SELECT b.id, b.user_id, b.auth_time FROM browser_sessions b JOIN users u ON u.id = b.user_id
                WHERE b.token_hash = $1 AND b.ended_at IS NULL AND u.closed_at IS NULL
                """, [tokenHash]
            ).first.map(Self.record)
        }
    }

    /// The live browser session by id, with an open account; nil for an id that is not a UUID.
    public func browserSession(id: String) throws -> BrowserSessionRecord? {
        guard UUID(uuidString: id) != nil else { return nil }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT b.id, b.user_id, b.auth_time FROM browser_sessions b JOIN users u ON u.id = b.user_id
                WHERE b.id = $1 AND b.ended_at IS NULL AND u.closed_at IS NULL
                """, [id]
            ).first.map(Self.record)
        }
    }

    /// Signs out of one ZevID browser session: ends it and revokes only the app sessions made from it.
    /// - Returns: the number of app sessions revoked.
    public func endBrowserSession(id: String, now: Date) throws -> Int {
        guard UUID(uuidString: id) != nil else { return 0 }
        return try PostgresEdge.run {
            try pool.transaction { connection in
                try connection.query(
                    "UPDATE browser_sessions SET ended_at = to_timestamp($2::float8) WHERE id = $1 AND ended_at IS NULL",
                    [id, SQLTime.parameter(now)])
                return try connection.query(
                    """
                    UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = 'browser_sign_out'
                    WHERE browser_session_id = $1 AND revoked_at IS NULL
                    """, [id, SQLTime.parameter(now)]
                ).rowsAffected
            }
        }
    }
}

extension PostgresStore {
    /// ZevID browser sessions (docs/architecture.md, "PostgresStore").
    public var browserSessions: PostgresBrowserSessions { PostgresBrowserSessions(pool: pool) }
}
