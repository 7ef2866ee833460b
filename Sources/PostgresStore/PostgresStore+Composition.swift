import Authorize
import Postgres

/// What the server's composition code (the `serve`, `migrate` and `dev` commands) needs from PostgreSQL,
/// so it names only PostgresStore's types: the pool behind a store and the migrations (readiness is
/// `isReady()`). The first use of the database reports an unreachable one as
/// `StoreUnavailable(reason: "connection")` with libpq's first line as `detail`.
extension PostgresStore {
    /// A store over a new connection pool (connections open lazily, on first use).
    /// - Parameters:
    ///   - url: a libpq connection URI (`postgresql://…`) or key/value string.
    ///   - size: pooled connections, at least 1 (normally one per HTTP worker).
    ///   - sharedConnections: connections shared by threads that hold no slot of their own (the pool's default
    ///     when nil).
    ///   - statementTimeoutMilliseconds: every statement's deadline (`statement_timeout`, and the client's
    ///     wait one second past it); 0 for none. Default 5000 (docs/operations.md, "Database deadlines").
    ///   - preparedStatements: whether the hot statements are prepared on the server; false for PgBouncer in
    ///     transaction mode (`ZEVAUTH_DATABASE_PREPARED=false`).
    ///   - listenURL: where the store's one configuration listener connects (PostgreSQL directly or through
    ///     session pooling), so the start's client and the exchange's environment are read from memory
    ///     (`ConfigurationSnapshot`; docs/operations.md, "Configuration in memory"); nil (the default) for
    ///     no listener: every lookup reads PostgreSQL.
    public static func connect(
        url: String, size: Int, sharedConnections: Int? = nil, statementTimeoutMilliseconds: Int = 5000,
        preparedStatements: Bool = true, listenURL: String? = nil
    ) -> PostgresStore {
        var options = PostgresConnectionOptions()
        options.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        options.preparedStatements = preparedStatements
        let pool = PostgresPool(url: url, size: size, sharedConnections: sharedConnections ?? 2, options: options)
        guard let listenURL else { return PostgresStore(pool: pool) }
        let configuration = ConfigurationSnapshot(pool: pool)
        configuration.startListening(url: listenURL, options: options, probe: ConfigurationSnapshot.probe(pool: pool))
        return PostgresStore(pool: pool, configuration: configuration)
    }

    /// Applies `migrator`'s pending migrations and its steps (see `Migrator.apply(to:note:)`).
    /// - Parameter note: receives the steps' lines for the operator.
    /// - Returns: the migrations applied by this call.
    /// - Throws: `StoreUnavailable` when PostgreSQL cannot be reached; `MigrationError`; a failing script's
    ///   error, whose description names the SQLSTATE and PostgreSQL's message.
    public func applyMigrations(_ migrator: Migrator, note: (String) -> Void = { _ in }) throws -> [Migration] {
        try Self.reaching { try migrator.apply(to: pool, note: note) }
    }

    /// The migrations `applyMigrations` would run now (`zevauth serve` refuses to start unless none).
    /// - Throws: `StoreUnavailable` when PostgreSQL cannot be reached; `MigrationError`.
    public func pendingMigrations(_ migrator: Migrator) throws -> [Migration] {
        try Self.reaching { try migrator.pending(in: pool) }
    }

    /// Runs `work`, translating only a connection failure (other errors stay as they are: an operator
    /// running migrations needs PostgreSQL's message for a failing script).
    private static func reaching<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch let error as PostgresError where error.kind == .connection {
            throw PostgresEdge.translate(error)
        }
    }
}
