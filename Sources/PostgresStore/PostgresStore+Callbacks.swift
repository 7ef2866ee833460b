import Authorize
import Foundation
import Postgres

/// The registered callbacks (docs/protocol.md#admin-callbacks), stored parsed (sql/008), behind
/// `PostgresEdge`.
public struct PostgresCallbacks: CallbackStore {
    let pool: PostgresPool
    let tenancy: PostgresTenancy

    private static func callback(from row: PostgresRow) throws -> CallbackRecord {
        CallbackRecord(
            id: try row.string("id"), uri: try row.string("uri"),
            kind: RedirectKind(rawValue: try row.string("kind")) ?? .customScheme, createdAt: try row.date("created_at"))
    }

    /// Registers a parsed redirect URI for an environment, with its parts, so the start never parses it
    /// again (sql/008), with `audit` named after the new callback, in one transaction.
    /// - Throws: `StoreError.duplicate("callbacks_unique")` when it is registered already; `StoreUnavailable`.
    public func addCallback(environmentID: String, uri: RedirectURI, now: Date, audit: AuditEntry) throws -> CallbackRecord {
        try PostgresEdge.run {
            do {
                return try pool.transaction { connection in
                    let record = try Self.callback(
                        from: connection.query(
                            """
                            INSERT INTO callbacks (environment_id, uri, kind, scheme, host, port, path_and_query, created_at)
                            VALUES ($1, $2, $3, $4, $5, $6::integer, $7, to_timestamp($8::float8))
                            RETURNING id, uri, kind, created_at
                            """,
                            [
                                environmentID, uri.raw, uri.kind.rawValue, uri.scheme, uri.host, uri.port.map(String.init),
                                uri.pathAndQuery,
                                SQLTime.parameter(now),
                            ]
                        ).rows[0])
                    try AuditRows.insert(audit.naming(record.id), on: connection)
                    return record
                }
            } catch let error as PostgresError where error.sqlState == .uniqueViolation {
                // Inside the edge, so the refusal is the domain's before any translation.
                throw StoreError.duplicate(constraint: error.constraint ?? "callbacks_unique")
            }
        }
    }

    /// Registers a redirect URI given as text (the development seed and tests); it must parse. The audit
    /// row names the server as the actor.
    /// - Throws: `StoreError.unstorableInput` when it is not a redirect URI this server accepts; as above.
    public func addCallback(environmentID: String, uri: String, kind: String, now: Date) throws -> CallbackRecord {
        guard case .success(let parsed) = RedirectURI.parse(uri) else { throw StoreError.unstorableInput }
        return try addCallback(environmentID: environmentID, uri: parsed, now: now)
    }

    /// Registers a parsed redirect URI outside the admin API (the development seed and tests): the audit
    /// row names the server as the actor.
    /// - Throws: as `addCallback(environmentID:uri:now:audit:)`.
    public func addCallback(environmentID: String, uri: RedirectURI, now: Date) throws -> CallbackRecord {
        try addCallback(
            environmentID: environmentID, uri: uri, now: now, audit: .system("callback.add", environmentID: environmentID, now))
    }

    /// One page of an environment's callbacks in creation order.
    /// - Parameters:
    ///   - after: the id of the last item of the previous page (the cursor), or nil.
    ///   - limit: 1–100.
    public func callbacks(environmentID: String, after: String?, limit: Int) throws -> [CallbackRecord] {
        let cursor = after.flatMap { UUID(uuidString: $0) == nil ? nil : $0 }
        return try PostgresEdge.run {
            try pool.query(
                """
                SELECT id, uri, kind, created_at FROM callbacks
                WHERE environment_id = $1
                  AND ($2::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM callbacks WHERE id = $2::uuid))
                ORDER BY created_at, id LIMIT $3
                """, [environmentID, cursor, String(limit)]
            ).rows.map(Self.callback(from:))
        }
    }

    /// Deletes a callback of this environment, with `audit` in the same statement (a data-modifying CTE)
    /// when one is. - Returns: whether one was deleted.
    public func deleteCallback(environmentID: String, id: String, audit: AuditEntry) throws -> Bool {
        guard UUID(uuidString: id) != nil else { return false }
        return try PostgresEdge.run {
            try pool.query(
                AuditRows.sql(insertingAfter: "DELETE FROM callbacks WHERE environment_id = $11 AND id = $12 RETURNING id"),
                AuditRows.parameters(audit) + [environmentID, id]
            ).first != nil
        }
    }

    /// Whether the project proved ownership of `domain` (`PostgresTenancy.isDomainVerified`).
    public func isDomainVerified(projectID: String, domain: String) throws -> Bool {
        try tenancy.isDomainVerified(projectID: projectID, domain: domain)
    }
}

extension PostgresStore {
    /// The registered callbacks.
    public var callbacks: PostgresCallbacks { PostgresCallbacks(pool: pool, tenancy: tenancy) }

    /// See `PostgresCallbacks.addCallback(environmentID:uri:now:)`.
    public func addCallback(environmentID: String, uri: RedirectURI, now: Date) throws -> CallbackRecord {
        try callbacks.addCallback(environmentID: environmentID, uri: uri, now: now)
    }

    /// See `PostgresCallbacks.addCallback(environmentID:uri:kind:now:)`.
    public func addCallback(environmentID: String, uri: String, kind: String, now: Date) throws -> CallbackRecord {
        try callbacks.addCallback(environmentID: environmentID, uri: uri, kind: kind, now: now)
    }

    /// See `PostgresCallbacks.callbacks(environmentID:after:limit:)`.
    public func callbacks(environmentID: String, after: String?, limit: Int) throws -> [CallbackRecord] {
        try callbacks.callbacks(environmentID: environmentID, after: after, limit: limit)
    }
}
