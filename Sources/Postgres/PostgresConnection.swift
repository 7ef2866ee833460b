internal import CLibPQ
import Dispatch
import Foundation

/// One libpq connection (`PGconn`), used by one caller at a time.
///
/// libpq lets a connection move between threads but not be used by two at once; this class does no locking
/// of its own, hence `@unchecked Sendable`. `PostgresPool` hands each connection to one caller at a time.
/// The connection is closed (`PQfinish`) when the object is released.
///
/// Every new connection sets `TimeZone` to `UTC` and `DateStyle` to `ISO, MDY`, so `timestamptz` text is
/// always `2026-11-30 11:16:16.123456+00`, and installs a notice processor so server NOTICEs and WARNINGs do
/// not reach stderr.
public final class PostgresConnection: @unchecked Sendable {
    /// The libpq connection; internal so `PostgresListener` can wait on its socket for notifications.
    let handle: OpaquePointer
    /// The deadline and preparation settings this connection was opened with.
    public let options: PostgresConnectionOptions
    /// While set (`withoutDeadline`), statements wait for their answer as long as it takes.
    private var deadlineLifted = false
    /// Set when a statement outlived its deadline: the connection is mid-statement and must not be lent
    /// again (`isHealthy` turns false).
    private var abandoned = false
    /// Statements prepared on this connection by `query(prepared:_:)`, in the order prepared: the SQL text,
    /// its server-side name, and the column names of its last result (reused while they stay the same).
    /// Only one thread uses a connection at a time (the pool's rule), so no lock is needed.
    ///
    /// A list searched with `==` rather than a dictionary: the hot statements are constants, and comparing a
    /// string with the very same string is one check of its storage, where a dictionary hashes all of its
    /// several kilobytes on every call.
    private var prepared: [PreparedStatement] = []
    /// At most this many statements are prepared per connection; past it, statements run unprepared.
    public static let maximumPreparedStatements = 32

    /// Connects, blocking until the connection is made or fails (`PQconnectdbParams`), with the default
    /// options (`PostgresConnectionOptions()`).
    /// - Parameter url: A libpq connection string or URI, for example
    ///   `postgresql:///zevauth?host=/tmp/pg&port=5433&user=postgres`. It never appears in errors.
    /// - Throws: `PostgresError` (`.connection`) with libpq's message when the connection fails, or when the
    ///   session settings cannot be applied.
    public convenience init(url: String) throws {
        try self.init(url: url, options: PostgresConnectionOptions())
    }

    /// Connects with `options`, blocking until the connection is made or fails (`PQconnectdbParams`).
    ///
    /// The options' connection defaults (`connect_timeout`, `tcp_user_timeout`, keepalives) come before the
    /// URL, so a value the URL names wins (libpq's rule for an expanded `dbname`); several hosts and
    /// `target_session_attrs=read-write` in the URL are libpq's own: it tries each host in turn and keeps
    /// the first that accepts writes.
    /// - Parameters:
    ///   - url: A libpq connection string or URI. It never appears in errors.
    ///   - options: The connection defaults, the statement deadline and whether statements are prepared.
    /// - Throws: `PostgresError` (`.connection`) with libpq's message when the connection fails, or when the
    ///   session settings cannot be applied.
    public init(url: String, options: PostgresConnectionOptions) throws {
        let defaults = options.connectionDefaults
        let keywords = defaults.map(\.0) + ["dbname"]
        let values = defaults.map(\.1) + [url]
        let keywordCopies = keywords.map { strdup($0) }
        let valueCopies = values.map { strdup($0) }
        defer {
            keywordCopies.forEach { free($0) }
            valueCopies.forEach { free($0) }
        }
        let connected = (keywordCopies.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keywordPointers in
            (valueCopies.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 1)
            }
        }
        guard let handle = connected else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = PostgresError.connectionMessage(handle)
            PQfinish(handle)
            throw PostgresError(kind: .connection, sqlState: .unableToEstablishConnection, message: message)
        }
        // Without a processor, libpq prints NOTICE and WARNING messages to stderr. The closure captures
        // nothing, as C function pointers must.
        _ = PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
        self.options = options
        do {
            var setup = "SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, MDY'"
            if options.statementTimeoutMilliseconds > 0 {
                setup += "; SET statement_timeout = \(options.statementTimeoutMilliseconds)"
            }
            _ = try run(sent: PQsendQuery(handle, setup) == 1, deadline: clientDeadline())
        } catch let error as PostgresError {
            throw PostgresError(
                kind: .connection, sqlState: error.sqlState ?? .unableToEstablishConnection,
                message: "session setup failed: \(error.message)")
        }
    }

    deinit { PQfinish(handle) }

    /// Runs one statement with text parameters (`PQexecParams`) and returns its rows.
    ///
    /// Parameters are sent separately from the SQL text (`$1`, `$2`, …), so no value is ever spliced into
    /// SQL. Results are requested in text format.
    /// - Parameters:
    ///   - sql: One SQL statement with `$n` placeholders.
    ///   - parameters: The values in text form; `nil` is SQL NULL. Cast in SQL where the type is ambiguous
    ///     (`$1::int`).
    /// - Returns: The rows and the affected-row count.
    /// - Throws: `PostgresError` — `.query` with the SQLSTATE (and constraint) when the server rejects the
    ///   statement, `.connection` when the connection is lost. A parameter containing a NUL byte is refused
    ///   before sending (`22021`), since PostgreSQL text cannot hold one.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        for (position, parameter) in parameters.enumerated() where parameter?.utf8.contains(0) == true {
            throw PostgresError(
                kind: .query, sqlState: .characterNotInRepertoire,
                message: "parameter $\(position + 1) contains a NUL byte")
        }
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let sent = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQsendQueryParams(handle, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
        }
        return try run(sent: sent == 1, deadline: clientDeadline())
    }

    /// Runs one statement like `query(_:_:)`, but prepared once per connection (`PQprepare`, then
    /// `PQexecPrepared`), so PostgreSQL parses and plans it once instead of on every call. For the few hot
    /// statements (the exchange, the refresh, the session lookup); their text must be constant.
    /// - Parameters:
    ///   - sql: One constant SQL statement with `$n` placeholders.
    ///   - parameters: The values in text form; `nil` is SQL NULL.
    /// - Returns: The rows and the affected-row count.
    ///
    /// With `PostgresConnectionOptions.preparedStatements` off (PgBouncer in transaction mode, where a
    /// later statement may reach another server connection), this is `query(_:_:)`: an unnamed statement.
    /// - Throws: `PostgresError`, as `query(_:_:)`; a statement that fails to prepare is not remembered.
    @discardableResult
    public func query(prepared sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        guard options.preparedStatements else { return try query(sql, parameters) }
        let index: Int
        if let existing = prepared.firstIndex(where: { $0.sql == sql }) {
            index = existing
        } else if prepared.count < Self.maximumPreparedStatements {
            let candidate = "zevauth_\(prepared.count)"
            _ = try run(
                sent: PQsendPrepare(handle, candidate, sql, Int32(parameters.count), nil) == 1, deadline: clientDeadline())
            prepared.append(PreparedStatement(sql: sql, name: candidate))
            index = prepared.count - 1
        } else {
            return try query(sql, parameters)
        }
        let name = prepared[index].name
        for (position, parameter) in parameters.enumerated() where parameter?.utf8.contains(0) == true {
            throw PostgresError(
                kind: .query, sqlState: .characterNotInRepertoire,
                message: "parameter $\(position + 1) contains a NUL byte")
        }
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let sent = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQsendQueryPrepared(handle, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        return try run(sent: sent == 1, deadline: clientDeadline(), statement: index)
    }

    /// Runs a script of several statements separated by semicolons (`PQexec`), without parameters.
    ///
    /// For migrations and session setup only; anything with values goes through `query(_:_:)`. Inside a
    /// transaction the whole script runs in it; outside one, the statements run in one implicit transaction.
    /// A script has no client-side deadline (a migration may take long; run `SET LOCAL statement_timeout = 0`
    /// first to lift the server's too).
    /// - Parameter script: The SQL text.
    /// - Throws: `PostgresError` for the first statement that fails.
    public func execute(script: String) throws {
        _ = try run(sent: PQsendQuery(handle, script) == 1, deadline: nil)
    }

    /// Runs `body` with the statement deadline lifted: the client waits as long as it takes, and, inside a
    /// transaction, the server's `statement_timeout` is 0 until it ends (`SET LOCAL`). For migrations,
    /// whose scripts, lock waits and steps may take longer than any request should.
    /// - Throws: what `body` throws, or `PostgresError` from the `SET LOCAL`.
    public func withoutDeadline<T>(_ body: () throws -> T) throws -> T {
        let previous = deadlineLifted
        deadlineLifted = true
        defer { deadlineLifted = previous }
        if !isIdleOutsideTransaction { try execute(script: "SET LOCAL statement_timeout = 0") }
        return try body()
    }

    /// Whether libpq considers the connection usable (`PQstatus == CONNECTION_OK`) and no statement was
    /// abandoned at its deadline on it. A backend that died since the last call is only noticed when the
    /// connection is next used (or checked by the pool).
    public var isHealthy: Bool { !abandoned && PQstatus(handle) == CONNECTION_OK }

    /// Whether a connection that sat idle in the pool is still usable, without a round trip.
    ///
    /// An idle connection has nothing to read unless something happened: a terminated backend sends a FATAL
    /// error and closes the socket; a restarted server just closes it. `PQstatus` learns of neither until
    /// the socket is read, and one `PQconsumeInput` only buffers the error without seeing the EOF behind it.
    /// So any pending input, hang-up or socket error at checkout means "discard and reconnect".
    func checkAlive() -> Bool {
        guard isHealthy else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        return ready == 0
    }

    /// Whether the connection is outside any transaction block (`PQTRANS_IDLE`).
    var isIdleOutsideTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Monotonic nanoseconds (a vDSO clock read, no system call).
    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// When a statement sent now must have answered: `PostgresConnectionOptions.clientDeadlineMilliseconds`
    /// from now, or nil (wait as long as it takes) when the options set no statement timeout.
    private func clientDeadline() -> UInt64? {
        let milliseconds = options.clientDeadlineMilliseconds
        guard milliseconds > 0, !deadlineLifted else { return nil }
        return Self.now() + UInt64(milliseconds) * 1_000_000
    }

    /// Waits for the answer to what was just sent (`PQsend…`), never past `deadline`, and turns its results
    /// into rows or a thrown error, clearing every `PGresult`.
    ///
    /// The wait is a `poll()` on the connection's socket, so a server that stopped answering (frozen, or a
    /// network that drops packets) cannot hold the caller past the deadline. Past it, the connection is
    /// abandoned (`isHealthy` false, so the pool discards it) and `.timeout` is thrown: whether the
    /// statement ran is unknown. Of several results (a script), the first error wins, else the last result.
    /// `statement`: the index in `prepared` of the statement that was sent, whose column names are reused.
    private func run(sent: Bool, deadline: UInt64?, statement: Int? = nil) throws -> PostgresResult {
        guard sent else { throw PostgresError.from(result: nil, connection: handle) }
        var answer: PostgresResult?
        var failure: PostgresError?
        while true {
            try waitUntilReadable(deadline: deadline)
            guard let result = PQgetResult(handle) else { break }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                answer = rows(of: result, columns: columns(of: result, statement: statement))
            } else if failure == nil {
                failure = PostgresError.from(result: result, connection: handle)
            }
        }
        if let failure { throw failure }
        guard let answer else { throw PostgresError.from(result: nil, connection: handle) }
        return answer
    }

    /// Reads input until libpq has a whole result (`PQisBusy` false), waiting on the socket at most until
    /// `deadline` (monotonic nanoseconds; nil: no limit).
    private func waitUntilReadable(deadline: UInt64?) throws {
        while PQisBusy(handle) == 1 {
            var timeout: Int32 = -1
            if let deadline {
                let now = Self.now()
                guard now < deadline else { throw abandon() }
                timeout = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard descriptor.fd >= 0 else { throw PostgresError.from(result: nil, connection: handle) }
            let ready = poll(&descriptor, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            guard PQconsumeInput(handle) == 1 else { throw PostgresError.from(result: nil, connection: handle) }
        }
    }

    /// Marks the connection unusable after a missed deadline and returns the error to throw.
    private func abandon() -> PostgresError {
        abandoned = true
        return PostgresError(
            kind: .timeout,
            message: "the database did not answer within \(options.clientDeadlineMilliseconds) ms")
    }

    /// The column names of a successful `PGresult`: those remembered for the prepared statement at index
    /// `statement` when the result has exactly the same names in the same order, else read anew (and
    /// remembered for it).
    private func columns(of result: OpaquePointer, statement: Int?) -> PostgresColumns {
        let columnCount = PQnfields(result)
        if let statement, let known = prepared[statement].columns, known.names.count == Int(columnCount),
            known.names.indices.allSatisfy({ position in
                known.names[position].withCString { strcmp($0, PQfname(result, Int32(position))) == 0 }
            })
        {
            return known
        }
        let columns = PostgresColumns(names: (0..<columnCount).map { String(cString: PQfname(result, $0)) })
        if let statement { prepared[statement].columns = columns }
        return columns
    }

    /// The rows of a successful `PGresult` (not cleared here), with its column names `columns`.
    private func rows(of result: OpaquePointer, columns: PostgresColumns) -> PostgresResult {
        let columnCount = PQnfields(result)
        let rows = (0..<PQntuples(result)).map { row in
            PostgresRow(
                columns: columns,
                values: (0..<columnCount).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                })
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresResult(rows: rows, rowsAffected: affected, commandTag: String(cString: PQcmdStatus(result)))
    }
}

/// A statement prepared on one connection (`PostgresConnection.query(prepared:_:)`).
private struct PreparedStatement {
    /// The statement's SQL text.
    let sql: String
    /// Its server-side name (`zevauth_N`).
    let name: String
    /// The column names of its last result.
    var columns: PostgresColumns?
}

/// How a `PostgresConnection` connects and how long its statements may take (docs/operations.md,
/// "Database deadlines").
public struct PostgresConnectionOptions: Sendable, Equatable {
    /// `connect_timeout` in seconds when the URL names none (libpq's minimum is 2): bounds each host's
    /// connection attempt, so an unreachable or frozen server cannot hold a caller for the kernel's TCP
    /// timeout. Default 5.
    public var connectTimeoutSeconds: Int = 5
    /// The server-side `statement_timeout` set on every connection, in milliseconds; 0 sets none (and
    /// turns the client-side deadline off too). Default 5000.
    public var statementTimeoutMilliseconds: Int = 5000
    /// Whether `query(prepared:_:)` prepares its statements on the server (`PQprepare`); off for PgBouncer in
    /// transaction mode. Default on.
    public var preparedStatements: Bool = true
    /// The `application_name` the connection reports (`pg_stat_activity`), unless the URL names one. Default
    /// nil: libpq's default (none). `PostgresListener` sets `zevauth-listener`.
    public var applicationName: String?

    /// The defaults above.
    public init() {}

    /// How long the client waits for a statement's answer: the server's timeout plus one second, so the
    /// server normally cancels first (a clean `57014`, the connection kept), and the client's own wait on
    /// the socket only decides when the server does not answer at all. 0 when there is no statement timeout.
    public var clientDeadlineMilliseconds: Int {
        statementTimeoutMilliseconds > 0 ? statementTimeoutMilliseconds + 1000 : 0
    }

    /// The libpq keywords given before the URL (so the URL's own values win): `connect_timeout`; over TCP,
    /// `tcp_user_timeout` (unacknowledged data for longer than the client deadline breaks the connection)
    /// and keepalives (a peer that vanished is noticed within about 11 s of silence).
    var connectionDefaults: [(String, String)] {
        var defaults = [("connect_timeout", String(max(2, connectTimeoutSeconds)))]
        if let applicationName { defaults.append(("application_name", applicationName)) }
        if clientDeadlineMilliseconds > 0 { defaults.append(("tcp_user_timeout", String(clientDeadlineMilliseconds))) }
        defaults += [("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3")]
        return defaults
    }
}
