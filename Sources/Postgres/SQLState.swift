/// A PostgreSQL SQLSTATE error code: five characters, the first two naming the class.
///
/// The set is open (PostgreSQL adds codes, extensions and `RAISE … USING ERRCODE` invent their own), so this
/// is a string-backed struct with named constants rather than an enum. Translate the codes you care about
/// into domain errors at the store edge.
///
/// Source: PostgreSQL 15 documentation, Appendix A "PostgreSQL Error Codes".
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The five-character code, for example `"23505"`.
    public let rawValue: String

    /// Wraps a code as reported in the `C` (`PG_DIAG_SQLSTATE`) field of an error response.
    /// - Parameter rawValue: The five-character code; it is not validated.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Wraps a code, for example `SQLState("23505")`.
    /// - Parameter rawValue: The five-character code; it is not validated.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Wraps a code written as a string literal, so constants read `SQLState = "23505"`.
    /// - Parameter value: The five-character code; it is not validated.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The two-character class, for example `"23"` (integrity constraint violation) for `"23505"`.
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// Whether the code says the connection itself is gone or unusable for the server's work: class `08`
    /// (connection exception), `57P01`…`57P03` (admin shutdown, crash shutdown, cannot connect now), or
    /// `25006` (read-only transaction: the connection reached a standby, or a primary that was demoted or set
    /// read-only, so every write on it would fail the same way until it is replaced).
    public var isConnectionError: Bool {
        errorClass == "08" || self == .adminShutdown || self == .crashShutdown || self == .cannotConnectNow
            || self == .readOnlySQLTransaction
    }

    /// The code itself.
    public var description: String { rawValue }

    // MARK: Class 23 — integrity constraint violation
    /// `23505` unique_violation: a UNIQUE or PRIMARY KEY constraint rejected the row.
    public static let uniqueViolation = SQLState("23505")
    /// `23503` foreign_key_violation.
    public static let foreignKeyViolation = SQLState("23503")
    /// `23514` check_violation.
    public static let checkViolation = SQLState("23514")
    /// `23502` not_null_violation.
    public static let notNullViolation = SQLState("23502")
    /// `23P01` exclusion_violation.
    public static let exclusionViolation = SQLState("23P01")

    // MARK: Class 22 — data exception
    /// `22P02` invalid_text_representation: a text parameter did not parse as the column type.
    public static let invalidTextRepresentation = SQLState("22P02")
    /// `22001` string_data_right_truncation: a value is too long for its column.
    public static let stringDataRightTruncation = SQLState("22001")
    /// `22021` character_not_in_repertoire: for example a NUL byte in a text parameter.
    public static let characterNotInRepertoire = SQLState("22021")

    // MARK: Class 25 / 40 — transactions
    /// `25P02` in_failed_sql_transaction: a statement ran (or COMMIT was attempted) after an error in the
    /// same transaction.
    public static let inFailedSQLTransaction = SQLState("25P02")
    /// `25006` read_only_sql_transaction: a write on a standby (hot standby, in recovery) or in a read-only
    /// transaction (`default_transaction_read_only`).
    public static let readOnlySQLTransaction = SQLState("25006")
    /// `40001` serialization_failure: retry the whole transaction.
    public static let serializationFailure = SQLState("40001")
    /// `40P01` deadlock_detected: retry the whole transaction.
    public static let deadlockDetected = SQLState("40P01")

    // MARK: Class 42 — syntax error or access rule violation
    /// `42P01` undefined_table.
    public static let undefinedTable = SQLState("42P01")
    /// `42703` undefined_column.
    public static let undefinedColumn = SQLState("42703")
    /// `42601` syntax_error.
    public static let syntaxError = SQLState("42601")

    // MARK: Class P0 — PL/pgSQL
    /// `P0001` raise_exception: `RAISE EXCEPTION` without an explicit ERRCODE.
    public static let raiseException = SQLState("P0001")

    // MARK: Class 57 / 08 — operator intervention, connection exception
    /// `57014` query_canceled, for example by `statement_timeout`.
    public static let queryCanceled = SQLState("57014")
    /// `57P01` admin_shutdown: the backend was terminated (`pg_terminate_backend`, fast shutdown).
    public static let adminShutdown = SQLState("57P01")
    /// `57P02` crash_shutdown.
    public static let crashShutdown = SQLState("57P02")
    /// `57P03` cannot_connect_now: the server is starting up or shutting down.
    public static let cannotConnectNow = SQLState("57P03")
    /// `08006` connection_failure.
    public static let connectionFailure = SQLState("08006")
    /// `08001` sqlclient_unable_to_establish_sqlconnection.
    public static let unableToEstablishConnection = SQLState("08001")
}
