import Authorize
import Postgres

/// The Swift step of migration 008: registered callbacks and pending sign-ins written before it get the
/// parts of their parsed redirect URI (`RedirectURI.parse`, the parser registration and the start use), so
/// neither is parsed again once stored. A callback the current rules refuse keeps NULL parts: it is never
/// matched, only listed and deleted; such a pending sign-in can no longer continue (it would have expired
/// within 10 minutes anyway). Idempotent: it touches only rows without parts that the parser accepts.
public enum CallbackMigration {
    /// The step completing migration 008.
    public static let step = MigrationStep(version: 8) { connection in try run(connection) }

    static func run(_ connection: PostgresConnection) throws -> [String] {
        let rows = try connection.query("SELECT id, uri FROM callbacks WHERE scheme IS NULL").rows
        var parsed = 0
        for row in rows {
            guard case .success(let uri) = RedirectURI.parse(try row.string("uri")) else { continue }
            try connection.query(
                "UPDATE callbacks SET kind = $2, scheme = $3, host = $4, port = $5::integer, path_and_query = $6 WHERE id = $1",
                [try row.string("id"), uri.kind.rawValue, uri.scheme, uri.host, uri.port.map(String.init), uri.pathAndQuery])
            parsed += 1
        }
        let pending = try connection.query(
            "SELECT id, redirect_uri FROM authorization_requests WHERE redirect_scheme IS NULL AND completed_at IS NULL"
        ).rows
        for row in pending {
            guard case .success(let uri) = RedirectURI.parse(try row.string("redirect_uri")) else { continue }
            try connection.query(
                """
                UPDATE authorization_requests SET redirect_scheme = $2, redirect_host = $3, redirect_port = $4::integer,
                    redirect_path_and_query = $5
                WHERE id = $1
                """, [try row.string("id"), uri.scheme, uri.host, uri.port.map(String.init), uri.pathAndQuery])
        }
        let refused = rows.count - parsed
        return refused == 0 ? [] : ["\(refused) registered callbacks break the current redirect URI rules and are never redirected to."]
    }
}
