import Authorize
import Postgres

/// The one place a `PostgresError` becomes a domain error, at the store's edge, so nothing above
/// PostgresStore knows libpq exists (docs/architecture.md):
/// - a broken or unreachable connection, a server that accepts no writes (SQLSTATE 25006: a standby or a
///   demoted primary), a statement past its deadline (the server's `statement_timeout`, 57014, or the
///   client's wait), or no pooled connection in time → `StoreUnavailable`, which the edge answers 503 with
///   `Retry-After` (a connection failure carries libpq's first line as its `detail`: it names the host or
///   socket, never the password);
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

    /// Runs a read that writes nothing and goes through `run` itself (or answers from memory), such as the
    /// environment's settings read before an exchange or a refresh: a `StoreUnavailable` it throws is never
    /// in doubt (nothing can have landed), so a grant answers 503 at once instead of settling a write that was
    /// never sent. Observes nothing itself, so each statement is counted once.
    /// - Throws: what `body` throws, a `StoreUnavailable` without `inDoubt`.
    public static func notInDoubt<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreUnavailable where error.inDoubt {
            throw StoreUnavailable(reason: error.reason, detail: error.detail)
        }
    }

    /// The domain form of `error` (see the type's rules).
    public static func translate(_ error: PostgresError) -> any Error {
        switch error.kind {
        case .connection:
            if error.sqlState == .readOnlySQLTransaction { return StoreUnavailable(reason: "read_only") }
            return StoreUnavailable(
                reason: "connection", detail: error.message.split(separator: "\n").first.map(String.init) ?? "",
                inDoubt: error.mayHaveRun)
        case .poolTimeout: return StoreUnavailable(reason: "pool_timeout")
        case .timeout: return StoreUnavailable(reason: "statement_deadline", inDoubt: true)
        case .query:
            if error.sqlState == .characterNotInRepertoire { return StoreError.unstorableInput }
            if error.sqlState == .queryCanceled { return StoreUnavailable(reason: "statement_timeout") }
            return StoreFault(kind: "\(error.kind)", sqlState: error.sqlState?.rawValue, constraint: error.constraint)
        }
    }

    /// `error` in its domain form when it is a `PostgresError` (a statement not run through `run`), else
    /// `error` itself.
    public static func domain(_ error: any Error) -> any Error {
        (error as? PostgresError).map(translate) ?? error
    }
}
