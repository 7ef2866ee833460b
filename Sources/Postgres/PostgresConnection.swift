internal import CLibPQ
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
    private let handle: OpaquePointer
    /// Statements prepared on this connection by `query(prepared:_:)`: SQL text → server-side name. Only one
    /// thread uses a connection at a time (the pool's rule), so no lock is needed.
    private var preparedNames: [String: String] = [:]
    /// At most this many statements are prepared per connection; past it, statements run unprepared.
    public static let maximumPreparedStatements = 32

    /// Connects, blocking until the connection is made or fails (`PQconnectdb`).
    /// - Parameter url: A libpq connection string or URI, for example
    ///   `postgresql:///zevauth?host=/tmp/pg&port=5433&user=postgres`. It never appears in errors.
    /// - Throws: `PostgresError` (`.connection`) with libpq's message when the connection fails, or when the
    ///   session settings cannot be applied.
    public init(url: String) throws {
        guard let handle = PQconnectdb(url) else {
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
        do {
            try execute(script: "SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, MDY'")
        } catch let error as PostgresError {
            throw PostgresError(
                kind: .connection, sqlState: error.sqlState, message: "session setup failed: \(error.message)")
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
        let result = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQexecParams(handle, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
        }
        return try consume(result)
    }

    /// Runs one statement like `query(_:_:)`, but prepared once per connection (`PQprepare`, then
    /// `PQexecPrepared`), so PostgreSQL parses and plans it once instead of on every call. For the few hot
    /// statements (the exchange, the refresh, the session lookup); their text must be constant.
    /// - Parameters:
    ///   - sql: One constant SQL statement with `$n` placeholders.
    ///   - parameters: The values in text form; `nil` is SQL NULL.
    /// - Returns: The rows and the affected-row count.
    /// - Throws: `PostgresError`, as `query(_:_:)`; a statement that fails to prepare is not remembered.
    @discardableResult
    public func query(prepared sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        let name: String
        if let existing = preparedNames[sql] {
            name = existing
        } else if preparedNames.count < Self.maximumPreparedStatements {
            let candidate = "zevauth_\(preparedNames.count)"
            _ = try consume(PQprepare(handle, candidate, sql, Int32(parameters.count), nil))
            preparedNames[sql] = candidate
            name = candidate
        } else {
            return try query(sql, parameters)
        }
        for (position, parameter) in parameters.enumerated() where parameter?.utf8.contains(0) == true {
            throw PostgresError(
                kind: .query, sqlState: .characterNotInRepertoire,
                message: "parameter $\(position + 1) contains a NUL byte")
        }
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let result = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQexecPrepared(handle, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        return try consume(result)
    }

    /// Runs a script of several statements separated by semicolons (`PQexec`), without parameters.
    ///
    /// For migrations and session setup only; anything with values goes through `query(_:_:)`. Inside a
    /// transaction the whole script runs in it; outside one, the statements run in one implicit transaction.
    /// - Parameter script: The SQL text.
    /// - Throws: `PostgresError` for the first statement that fails.
    public func execute(script: String) throws {
        _ = try consume(PQexec(handle, script))
    }

    /// Whether libpq considers the connection usable (`PQstatus == CONNECTION_OK`). A backend that died
    /// since the last call is only noticed when the connection is next used (or checked by the pool).
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether a connection that sat idle in the pool is still usable, without a round trip.
    ///
    /// An idle connection has nothing to read unless something happened: a terminated backend sends a FATAL
    /// error and closes the socket; a restarted server just closes it. `PQstatus` learns of neither until
    /// the socket is read, and one `PQconsumeInput` only buffers the error without seeing the EOF behind it.
    /// So any pending input, hang-up or socket error at checkout means "discard and reconnect".
    func checkAlive() -> Bool {
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        return ready == 0
    }

    /// Whether the connection is outside any transaction block (`PQTRANS_IDLE`).
    var isIdleOutsideTransaction: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Turns a `PGresult` into rows or a thrown error, clearing it in every case.
    private func consume(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else { throw PostgresError.from(result: nil, connection: handle) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            throw PostgresError.from(result: result, connection: handle)
        }
        let columnCount = PQnfields(result)
        let columns = PostgresColumns(names: (0..<columnCount).map { String(cString: PQfname(result, $0)) })
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
