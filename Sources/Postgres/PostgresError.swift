internal import CLibPQ

/// An error from PostgreSQL or from this wrapper around libpq.
///
/// The text never contains parameter values: only the server's primary message (`PG_DIAG_MESSAGE_PRIMARY`),
/// with the echoed input cut off for data exceptions (class `22`, whose primary message quotes the value that
/// failed to parse), or libpq's connection error message. The `DETAIL` field, which repeats key values
/// (`Key (email)=(…) already exists`), is never read.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable {
        /// The connection could not be made, was lost, or reached a server that accepts no writes now
        /// (SQLSTATE class `08`, `57P01`…`57P03`, `25006`, or libpq reported a broken connection). The pool
        /// discards such a connection and opens a fresh one on the next use; nothing is retried.
        case connection
        /// The server did not answer a statement within the client-side deadline
        /// (`PostgresConnectionOptions.clientDeadlineMilliseconds`). Whether the statement ran is unknown;
        /// the connection is abandoned and the pool discards it.
        case timeout
        /// The server rejected a statement, or a row value could not be read as the requested type.
        case query
        /// No pooled connection became free within `PostgresPool`'s acquire timeout.
        case poolTimeout
    }

    /// What failed.
    public let kind: Kind
    /// The SQLSTATE the server reported, if any (`nil` for client-side failures).
    public let sqlState: SQLState?
    /// The violated constraint's name (`PG_DIAG_CONSTRAINT_NAME`), for constraint violations.
    public let constraint: String?
    /// The primary message; never includes parameter values.
    public let message: String

    /// Creates an error; the store layer and tests use this to build expected values.
    /// - Parameters:
    ///   - kind: What failed.
    ///   - sqlState: The server's SQLSTATE, if any.
    ///   - constraint: The violated constraint, if any.
    ///   - message: A message that must not contain parameter values.
    public init(kind: Kind, sqlState: SQLState? = nil, constraint: String? = nil, message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.constraint = constraint
        self.message = message
    }

    /// Whether the statement may have run although no answer came back: the client's deadline passed, or
    /// the connection broke while a statement was under way (no SQLSTATE, or the backend was terminated,
    /// `57P01`/`57P02`). False when the connection could not be made (`08001`, `57P03`), when the server
    /// refused the write (`25006`) and for every `.query` error (the statement failed and rolled back).
    public var mayHaveRun: Bool {
        switch kind {
        case .timeout: return true
        case .query, .poolTimeout: return false
        case .connection:
            guard let sqlState else { return true }
            return sqlState == .adminShutdown || sqlState == .crashShutdown || sqlState == .connectionFailure
        }
    }

    /// `PostgreSQL <kind> error [SQLSTATE] [(constraint …)]: message`.
    public var description: String {
        var text = "PostgreSQL \(kind) error"
        if let sqlState { text += " \(sqlState)" }
        if let constraint { text += " (constraint \(constraint))" }
        return text + ": " + message
    }
}

// MARK: - The error funnel

extension PostgresError {
    /// The one place a failed libpq call becomes a Swift error.
    ///
    /// - Parameters:
    ///   - result: The failed `PGresult`, or `nil` when libpq returned none (out of memory, connection lost).
    ///     Not cleared here; the caller owns it.
    ///   - connection: The `PGconn` the result came from, for `PQerrorMessage` and `PQstatus`.
    static func from(result: OpaquePointer?, connection: OpaquePointer?) -> PostgresError {
        let sqlState = result.flatMap { field($0, CLibPQ_DIAG_SQLSTATE) }.map(SQLState.init(rawValue:))
        let constraint = result.flatMap { field($0, CLibPQ_DIAG_CONSTRAINT_NAME) }
        var message = result.flatMap { field($0, CLibPQ_DIAG_MESSAGE_PRIMARY) } ?? connectionMessage(connection)
        if sqlState?.errorClass == "22" { message = redactingEchoedInput(message) }
        let connectionLost = connection.map { PQstatus($0) != CONNECTION_OK } ?? true
        let lost = (sqlState?.isConnectionError ?? false) || (sqlState == nil && connectionLost)
        let kind: Kind = lost ? .connection : .query
        return PostgresError(kind: kind, sqlState: sqlState, constraint: constraint, message: message)
    }

    /// `PQerrorMessage` without its trailing newline (libpq ends every message with one).
    static func connectionMessage(_ connection: OpaquePointer?) -> String {
        guard let connection, let pointer = PQerrorMessage(connection) else { return "unknown libpq error" }
        var text = String(cString: pointer)
        while let last = text.last, last.isNewline || last == " " { text.removeLast() }
        return text.isEmpty ? "unknown libpq error" : text
    }

    private static func field(_ result: OpaquePointer, _ code: Int32) -> String? {
        guard let pointer = PQresultErrorField(result, code) else { return nil }
        return String(cString: pointer)
    }

    // Data exceptions echo the rejected input: `invalid input syntax for type uuid: "…"`. Keep the part
    // before the quoted value, so no parameter value reaches a log line.
    private static func redactingEchoedInput(_ message: String) -> String {
        guard let range = message.range(of: ": \"") else { return message }
        return String(message[..<range.lowerBound])
    }
}
