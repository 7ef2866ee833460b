import Authorize
import Foundation
import Postgres

/// The browser binding ids the server minted (sql/007), behind `PostgresEdge`.
public struct PostgresBrowserBindings: BrowserBindingStore {
    let pool: PostgresPool
    /// Records a browser binding id the server just minted (sql/007), by its SHA-256 hex.
    /// - Parameters:
    ///   - bindingHash: SHA-256 hex of the `zbb_…` cookie value (the value itself is never stored).
    ///   - lifetimeSeconds: how long the record may be adopted by a new sign-in.
    /// - Throws: `StoreUnavailable`.
    public func recordBrowserBinding(bindingHash: String, now: Date, lifetimeSeconds: Double) throws {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO browser_bindings (binding_hash, created_at, expires_at)
                VALUES ($1, to_timestamp($2::float8), to_timestamp($3::float8))
                """, [bindingHash, SQLTime.parameter(now), SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds))])
        }
    }

    /// Whether a binding id hashing to `bindingHash` was minted here and is on record until at least `until`.
    /// - Throws: `StoreUnavailable`.
    public func isBrowserBindingOnRecord(bindingHash: String, until: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                "SELECT 1 FROM browser_bindings WHERE binding_hash = $1 AND expires_at > to_timestamp($2::float8)",
                [bindingHash, SQLTime.parameter(until)]
            ).first != nil
        }
    }
}

extension PostgresStore {
    /// The browser binding ids on record.
    public var browserBindings: PostgresBrowserBindings { PostgresBrowserBindings(pool: pool) }

    /// Moves a live pending sign-in to the browser binding minted when the person authenticated, so only
    /// the browser that holds the new cookie continues it (docs/threat-model.md, "Planted browser cookies").
    /// - Parameter browserSessionID: the browser session that authenticated it, or nil when a second factor
    ///   is still due.
    /// - Throws: `StoreUnavailable`.
    public func rebindAuthorizationRequest(requestID: String, browserBindingHash: String, browserSessionID: String?) throws {
        try PostgresEdge.run {
            try pool.query(
                """
                UPDATE authorization_requests SET browser_binding_hash = $2, browser_session_id = COALESCE($3::uuid, browser_session_id)
                WHERE id = $1 AND completed_at IS NULL
                """, [requestID, browserBindingHash, browserSessionID])
        }
    }
}
