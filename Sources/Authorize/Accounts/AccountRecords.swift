import Foundation

/// A ZevID account's safe fields plus what sign-in needs. `passwordHash` never leaves the server.
public struct UserRecord: Sendable, Equatable {
    /// The account id (a UUID, lower-case).
    public let id: String
    /// The address as the person typed it (`EmailAddress.typed`), for display and for sending.
    public let email: String
    /// The display name (`DisplayName`).
    public let name: String
    public let imageURL: String?
    /// An Argon2id PHC string.
    public let passwordHash: String
    /// Whether an operator closed the account (docs/protocol.md#session-ends).
    public let closed: Bool
    /// Whether a code sent to the address was entered (`users.email_verified_at`; docs/protocol.md, "Email codes").
    public let emailVerified: Bool
    /// Whether the account was made on the hosted sign-up page; such an account signs in only once verified.
    public let selfSignedUp: Bool

    /// The `passwordHash` of an account without a password (made by an upstream sign-in, docs/federation.md,
    /// "Accounts"): not a PHC string, so it never verifies; "Forgot password?" sets one.
    public static let noPassword = "!"

    /// Whether the account has a password to sign in with.
    public var hasPassword: Bool { passwordHash != Self.noPassword }

    /// Creates a record (the store reads them; tests build them).
    public init(
        id: String, email: String, name: String, imageURL: String?, passwordHash: String, closed: Bool, emailVerified: Bool = false,
        selfSignedUp: Bool = false
    ) {
        self.id = id
        self.email = email
        self.name = name
        self.imageURL = imageURL
        self.passwordHash = passwordHash
        self.closed = closed
        self.emailVerified = emailVerified
        self.selfSignedUp = selfSignedUp
    }
}

/// A ZevID browser session with its account.
public struct BrowserSessionRecord: Sendable, Equatable {
    public let id: String
    public let userID: String
    /// When the person last entered their password in this browser.
    public let authTime: Date
    public let ended: Bool

    /// Creates a record (the store reads them; tests build them).
    public init(id: String, userID: String, authTime: Date, ended: Bool) {
        self.id = id
        self.userID = userID
        self.authTime = authTime
        self.ended = ended
    }
}

/// An app the person is connected to (live app sessions or remembered consent), for the account page's
/// "Connected apps" (docs/protocol.md#connected-apps): an environment's native apps, named by the project, or
/// one of its web clients, named by the client's registered name.
public struct ConnectedApp: Sendable, Equatable {
    public let environmentID: String
    public let projectName: String
    public let environmentKind: EnvironmentKind
    /// Unrevoked app sessions the person has with this app: the environment's native apps' sessions, or the
    /// web client's.
    public let liveSessions: Int
    /// The web client this entry stands for; nil for the environment's native apps.
    public var webClient: ConnectedWebClient?

    /// Creates a record (the store reads them; tests build them).
    public init(
        environmentID: String, projectName: String, environmentKind: EnvironmentKind, liveSessions: Int,
        webClient: ConnectedWebClient? = nil
    ) {
        self.environmentID = environmentID
        self.projectName = projectName
        self.environmentKind = environmentKind
        self.liveSessions = liveSessions
        self.webClient = webClient
    }

    /// The name the person knows the app by: the web client's registered name, else the project's.
    public var name: String { webClient?.name ?? projectName }

    /// What `Remove` names for this entry.
    public var id: ConnectedAppID { webClient.map { .webClient($0.clientID) } ?? .environment(environmentID) }
}

/// A web client on the account page: its `client_id` (`zc_…`) and registered name (sql/026).
public struct ConnectedWebClient: Sendable, Equatable {
    public let clientID: String
    public let name: String

    public init(clientID: String, name: String) {
        self.clientID = clientID
        self.name = name
    }
}

/// Which connected app `Remove` ends (docs/protocol.md#connected-apps).
public enum ConnectedAppID: Sendable, Equatable {
    /// An environment's native apps, by the environment's id (a UUID as the form sent it).
    case environment(String)
    /// One web client, by its `client_id` (`zc_…`, as the form sent it).
    case webClient(String)
}

/// A person's TOTP factor as stored: the sealed secret and its state.
public struct TOTPFactorRecord: Sendable, Equatable {
    /// Base64 of AES-256-GCM `nonce ‖ ciphertext ‖ tag` (`TOTPSecrets.seal`).
    public let secretSealed: String
    public let confirmed: Bool
    /// The last RFC 6238 time step accepted, or nil.
    public let lastUsedStep: Int64?

    /// Creates a record (the store reads them; tests build them).
    public init(secretSealed: String, confirmed: Bool, lastUsedStep: Int64?) {
        self.secretSealed = secretSealed
        self.confirmed = confirmed
        self.lastUsedStep = lastUsedStep
    }
}

/// A sign-in waiting for its second factor.
public struct MFAChallengeRecord: Sendable, Equatable {
    public let id: String
    public let userID: String
    /// SHA-256 hex of the browser binding secret the challenge was issued to.
    public let browserBindingHash: String
    /// The pending app sign-in it belongs to, or nil for the account area's own sign-in.
    public let authorizationRequestID: String?
    public let expiresAt: Date
    public let completed: Bool
    /// Whether the first factor was an upstream provider's sign-in rather than a password (sql/025), so the
    /// browser session records `amr` `fed` … rather than `pwd` ….
    public let federated: Bool

    /// Creates a record (the store reads them; tests build them).
    public init(
        id: String, userID: String, browserBindingHash: String, authorizationRequestID: String?, expiresAt: Date, completed: Bool,
        federated: Bool = false
    ) {
        self.id = id
        self.userID = userID
        self.browserBindingHash = browserBindingHash
        self.authorizationRequestID = authorizationRequestID
        self.expiresAt = expiresAt
        self.completed = completed
        self.federated = federated
    }
}

/// One account as the email-key recomputation sees it (docs/operations.md, "Accounts that share an address").
public struct EmailKeyRow: Sendable, Equatable {
    /// The account id (a UUID).
    public let id: String
    /// The address as typed.
    public let email: String
    /// The stored key, or nil for an account that has none.
    public let key: String?
    /// The rule that computed `key` (`users.email_key_rule`).
    public let rule: Int
    /// Whether the account is closed.
    public let closed: Bool
    /// When the account was created; earlier accounts keep a shared key.
    public let createdAt: Date

    /// Creates a row (the store reads them; tests build them).
    public init(id: String, email: String, key: String?, rule: Int, closed: Bool, createdAt: Date) {
        self.id = id
        self.email = email
        self.key = key
        self.rule = rule
        self.closed = closed
        self.createdAt = createdAt
    }
}
