import Authorize
import Postgres

/// The one place a `PostgresError` becomes a domain error, at the store's edge, so nothing above
/// PostgresStore knows libpq exists (docs/architecture.md):
/// - a broken or unreachable connection, or no pooled connection in time → `StoreUnavailable`;
/// - SQLSTATE 22021 (a value `text` cannot hold) → `StoreError.unstorableInput`;
/// - anything else is rethrown as it is: a fault of the server, logged by kind and SQLSTATE only.
public enum PostgresEdge {
    /// Runs `body`, translating its `PostgresError`s as above; domain errors pass through unchanged. Its
    /// duration and failure go to the installed `StatementObserver` (metrics), if any.
    /// - Throws: `StoreUnavailable`, `StoreError`, the domain errors `body` throws, or `PostgresError`
    ///   for a statement the server got wrong.
    public static func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try observed(body)
        } catch let error as PostgresError {
            throw translate(error)
        }
    }

    /// The domain form of `error` (see the type's rules).
    public static func translate(_ error: PostgresError) -> any Error {
        switch error.kind {
        case .connection: return StoreUnavailable(reason: "connection")
        case .poolTimeout: return StoreUnavailable(reason: "pool_timeout")
        default:
            if error.sqlState == .characterNotInRepertoire { return StoreError.unstorableInput }
            return error
        }
    }
}
