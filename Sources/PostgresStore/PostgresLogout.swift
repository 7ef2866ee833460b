import Authorize
import Foundation
import Postgres

extension PostgresBrowserSessions: LogoutStore {
    /// RP-initiated logout's `sid` (docs/protocol.md, "RP-initiated logout"): revokes the live app session
    /// `id` of account `userID`, in one statement.
    /// - Returns: whether a session was revoked; false for an id or account that is not a UUID.
    public func endAppSession(id: String, userID: String, now: Date) throws -> Bool {
        guard UUID(uuidString: id) != nil, UUID(uuidString: userID) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query(
                """
                UPDATE sessions SET revoked_at = to_timestamp($3::float8), revoked_reason = 'rp_logout'
                WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL
                """, [id, userID, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }
}
