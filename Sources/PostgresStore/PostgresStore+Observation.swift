import Postgres
import Synchronization

/// Why a statement run through `PostgresEdge.run` failed, as a fixed set a metric can count
/// (`zevauth_db_errors_total{kind}`, docs/operations.md, "Metrics"). Never carries the statement's inputs.
public enum StatementFailure: Int, CaseIterable, Sendable {
    /// The database was out of reach or the connection broke.
    case connection
    /// No pooled connection became free in time.
    case poolTimeout
    /// A value PostgreSQL's `text` cannot hold (SQLSTATE 22021).
    case unstorableInput
    /// A unique, foreign-key or check constraint refused the row (SQLSTATE class 23).
    case constraint
    /// A serialization failure or deadlock (40001, 40P01).
    case conflict
    /// Anything else PostgreSQL refused.
    case query
    /// The statement outlived its deadline: the server's `statement_timeout` (57014) or the client's wait.
    case timeout

    /// The metric label: `connection`, `pool_timeout`, `unstorable_input`, `constraint`, `conflict`, `query`,
    /// `timeout`.
    public var label: String {
        ["connection", "pool_timeout", "unstorable_input", "constraint", "conflict", "query", "timeout"][rawValue]
    }

    init(_ error: PostgresError) {
        switch error.kind {
        case .connection: self = .connection
        case .poolTimeout: self = .poolTimeout
        case .timeout: self = .timeout
        case .query:
            let state = error.sqlState?.rawValue ?? ""
            if state == "57014" {
                self = .timeout
            } else if state == "22021" {
                self = .unstorableInput
            } else if state.hasPrefix("23") {
                self = .constraint
            } else if state == "40001" || state == "40P01" {
                self = .conflict
            } else {
                self = .query
            }
        }
    }
}

/// Receives the duration and failure of every statement run through `PostgresEdge.run`; the server sets
/// one to feed its metrics (`PostgresEdge.observe(with:)`).
public final class StatementObserver: Sendable {
    let observe: @Sendable (_ nanoseconds: Int, _ failure: StatementFailure?) -> Void

    /// - Parameter observe: called on the statement's thread after it ends, with its wall-clock duration in
    ///   nanoseconds and its failure (nil on success). Must be cheap and must not block.
    public init(_ observe: @escaping @Sendable (_ nanoseconds: Int, _ failure: StatementFailure?) -> Void) {
        self.observe = observe
    }
}

extension PostgresEdge {
    /// The process's one observer, set once; read without a lock on every statement.
    static let observer = AtomicLazyReference<StatementObserver>()

    /// Installs `observer` for the whole process unless one is installed already.
    /// - Returns: the observer in effect (the first one installed).
    @discardableResult
    public static func observe(with observer: StatementObserver) -> StatementObserver {
        Self.observer.storeIfNil(observer)
    }

    /// Runs `body`, reporting its duration and failure to the observer when one is installed.
    static func observed<T>(_ body: () throws -> T) throws -> T {
        guard let observer = observer.load() else { return try body() }
        let start = ContinuousClock.now
        func elapsed() -> Int {
            let duration = ContinuousClock.now - start
            return Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
        }
        do {
            let value = try body()
            observer.observe(elapsed(), nil)
            return value
        } catch let error as PostgresError {
            observer.observe(elapsed(), StatementFailure(error))
            throw error
        } catch {
            observer.observe(elapsed(), nil)
            throw error
        }
    }
}

extension PostgresStore {
    /// The connection pool's state now: idle, lent out and the most that may be open (for metrics).
    public var poolOccupancy: (idle: Int, inUse: Int, size: Int) { pool.occupancy }
}
