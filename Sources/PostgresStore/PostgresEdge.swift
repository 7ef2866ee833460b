import Authorize
import Postgres

/// The one place a `PostgresError` becomes a domain error, at the store's edge, so nothing above
/// PostgresStore knows libpq exists (docs/architecture.md):
/// - a broken or unreachable connection, or no pooled connection in time → `StoreUnavailable` (a
///   connection failure carries libpq's first line as its `detail`: it names the host or socket, never the
///   password);
/// - SQLSTATE 22021 (a value `text` cannot hold) → `StoreError.unstorableInput`;
/// - anything else → `StoreFault`: a fault of the server, logged by kind, SQLSTATE and constraint only.
public enum PostgresEdge {
    /// Runs `body`, translating its `PostgresError`s as above; domain errors pass through unchanged. Its
    /// duration and failure go to the installed `StatementObserver` (metrics), if any.
    /// - Throws: `StoreUnavailable`, `StoreError`, `StoreFault`, or the domain errors `body` throws.
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
        case .connection:
            return StoreUnavailable(reason: "connection", detail: error.message.split(separator: "\n").first.map(String.init) ?? "")
        case .poolTimeout: return StoreUnavailable(reason: "pool_timeout")
        case .query:
            if error.sqlState == .characterNotInRepertoire { return StoreError.unstorableInput }
            return StoreFault(kind: "\(error.kind)", sqlState: error.sqlState?.rawValue, constraint: error.constraint)
        }
    }

    /// `error` in its domain form when it is a `PostgresError` (a statement not run through `run`), else
    /// `error` itself.
    public static func domain(_ error: any Error) -> any Error {
        (error as? PostgresError).map(translate) ?? error
    }
}
