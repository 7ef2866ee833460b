/// What every store port may throw besides its own domain errors, and the cryptographic edge use cases
/// need. Use cases live in pure modules: they reach PostgreSQL only through the store protocol declared
/// beside each of them, and randomness and hashing only through `Secrets` (docs/architecture.md).

/// The database is out of reach for now: a connection could not be made or broke, the pool had no connection
/// in time, or the server it reached accepts no writes. Nothing was decided; the edge answers 503 with
/// `Retry-After` (docs/protocol.md#json-error-body). It carries no input and no SQL.
public struct StoreUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short reason for the log (`connection`, `pool_timeout`, `read_only`, `statement_timeout`,
    /// `statement_deadline`), never shown to a client.
    public let reason: String
    /// For `connection`: the first line of the driver's connection message, which names the host or socket
    /// and never the password (what an operator needs to fix `ZEVAUTH_DATABASE_URL`); nil otherwise. Never
    /// shown to a client; not part of equality.
    public let detail: String?
    /// Whether a write may have landed although no answer came: the connection broke, or the answer was
    /// not back by the deadline, after the statement was sent. A grant settles such a write itself
    /// (`Settle`); otherwise nothing was written. Not part of equality.
    public let inDoubt: Bool

    /// - Parameters:
    ///   - reason: a short reason for the log.
    ///   - detail: the safe first line of the connection failure, if any.
    ///   - inDoubt: whether the statement was sent and its fate is unknown.
    public init(reason: String, detail: String? = nil, inDoubt: Bool = false) {
        self.reason = reason
        self.detail = detail
        self.inDoubt = inDoubt
    }

    public var description: String { "The database is unavailable (\(reason))." }

    public static func == (a: StoreUnavailable, b: StoreUnavailable) -> Bool { a.reason == b.reason }
}

/// A statement the database refused for a reason no domain error names (a fault of the server, not of the
/// request): the edge answers 500 and logs `kind`, `sqlState` and `constraint`, never the statement or its
/// inputs.
public struct StoreFault: Error, Sendable, Equatable, CustomStringConvertible {
    /// The driver's failure kind (`query`, …).
    public let kind: String
    /// The five-character SQLSTATE, if the server reported one.
    public let sqlState: String?
    /// The violated constraint's name, if any.
    public let constraint: String?

    /// - Parameters:
    ///   - kind: the driver's failure kind.
    ///   - sqlState: the SQLSTATE, if any.
    ///   - constraint: the constraint's name, if any.
    public init(kind: String, sqlState: String?, constraint: String?) {
        self.kind = kind
        self.sqlState = sqlState
        self.constraint = constraint
    }

    /// `postgres kind=… sqlstate=… constraint=…` (`-` for an absent value): the log's debug detail.
    public var logDetail: String {
        "postgres kind=\(kind) sqlstate=\(sqlState ?? "-") constraint=\(constraint ?? "-")"
    }

    public var description: String { "The database refused a statement (\(logDetail))." }
}

/// Refusals a store reports as domain facts, by constraint name or SQLSTATE, never by parsing message text.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A unique constraint refused a duplicate (`constraint` names which), answered as 409 `conflict`.
    case duplicate(constraint: String)
    /// A referenced row does not exist (or belongs to someone else).
    case notFound
    /// A value PostgreSQL's `text` cannot hold reached the store (SQLSTATE 22021): the request's fault,
    /// answered 400 `invalid_request`. Edges check values with `StorableText` first; this is the second line.
    case unstorableInput

    /// A sentence for the console or the log, never the case name.
    public var description: String {
        switch self {
        case .duplicate(let constraint): "A row with the same value exists already (constraint \(constraint))."
        case .notFound: "The referenced row does not exist."
        case .unstorableInput: "The request holds a character no field accepts."
        }
    }
}

/// Fresh secrets and their at-rest form, for use cases that mint or check tokens, codes and keys.
/// The server implements it over OpenSSL (`OpenSSLSecrets`); tests may use a deterministic one.
public protocol Secrets: Sendable {
    /// `prefix` followed by the base64url form of 32 bytes from the CSPRNG (43 characters).
    /// - Throws: when the CSPRNG fails (never silently weaker).
    func mintToken(prefix: String) throws -> String
    /// The lower-case hex SHA-256 of `text`'s UTF-8 bytes: how tokens, codes and keys are stored
    /// (docs/threat-model.md).
    func digest(_ text: String) -> String
    /// SHA-256 of `bytes` (32 bytes), e.g. for PKCE (RFC 7636 §4.2).
    func sha256(_ bytes: [UInt8]) -> [UInt8]
    /// Whether `a` and `b` are equal, in time independent of where they differ.
    func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool
    /// A new random UUID in its lower-case text form (`8-4-4-4-12` hex digits), for row ids chosen by the server.
    func newID() -> String
}
