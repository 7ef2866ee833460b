import Authorize
import Foundation
import HTTPServer
import Postgres
import PostgresStore
import Synchronization
import ZevAuthServer

/// ZevID accounts in memory: every store protocol of Sources/Authorize/Accounts, for in-process handler
/// tests (`FakeAccounts.context`). It keeps what PostgreSQL would, and a log of the session-ending events.
public final class FakeAccounts: AllAccountStores {
    /// The rows, as the fake holds them.
    public struct State: Sendable {
        public var users: [String: UserRecord] = [:]
        public var keys: [String: String] = [:]
        public var closedAt: [String: Date] = [:]
        /// Live browser sessions by token hash.
        public var browserSessions: [String: BrowserSessionRecord] = [:]
        public var factors: [String: TOTPFactorRecord] = [:]
        public var recoveryCodes: [String: Set<String>] = [:]
        public var challenges: [String: MFAChallengeRecord] = [:]
        public var connectedApps: [String: [ConnectedApp]] = [:]
        /// What ended, in order: `signOut bs…`, `signOutEverywhere u…`, `removeApp u… e…`, `close u…`, `password u…`.
        public var events: [String] = []
    }

    public let state = Mutex(State())
    private let auditStore = FakeTenancyStore()
    private let counter = Mutex(0)

    public init() {}

    private func nextID(_ prefix: String) -> String {
        let n = counter.withLock {
            $0 += 1; return $0
        }
        return String(format: "%@-0000-0000-0000-%012d", prefix, n)
    }

    /// Adds an open account and returns it.
    @discardableResult
    public func addUser(email: String, name: String = "Pat Person", passwordHash: String) -> UserRecord {
        let user = UserRecord(
            id: UUID().uuidString.lowercased(), email: email, name: name, imageURL: nil, passwordHash: passwordHash, closed: false)
        state.withLock {
            $0.users[user.id] = user
            $0.keys[email.lowercased()] = user.id
        }
        return user
    }

    /// Signs `user` in in a browser: the cookie value to send (its digest under `secrets` is stored).
    public func signIn(_ user: UserRecord, secrets: any Secrets = OpenSSLSecrets()) -> String {
        let token = "zbs_" + UUID().uuidString
        let session = BrowserSessionRecord(id: UUID().uuidString.lowercased(), userID: user.id, authTime: Date(), ended: false)
        state.withLock { $0.browserSessions[secrets.digest(token)] = session }
        return token
    }

    // MARK: Accounts

    public func createUser(
        email: EmailAddress, name: DisplayName, passwordHash: String, now: Date, audit: AuditEntry?
    ) throws -> UserRecord {
        try state.withLock { state in
            if state.keys[email.key] != nil { throw StoreError.duplicate(constraint: "users_email_unique") }
            let user = UserRecord(
                id: UUID().uuidString.lowercased(), email: email.typed, name: name.text, imageURL: nil, passwordHash: passwordHash,
                closed: false)
            state.users[user.id] = user
            state.keys[email.key] = user.id
            return user
        }
    }

    public func user(emailKey: String) throws -> UserRecord? {
        state.withLock { state in state.keys[emailKey].flatMap { state.users[$0] } }
    }

    public func user(id: String) throws -> UserRecord? { state.withLock { $0.users[id] } }

    private static func endEverything(_ state: inout State, userID: String) {
        state.browserSessions = state.browserSessions.filter { $0.value.userID != userID }
        for (id, challenge) in state.challenges where challenge.userID == userID {
            state.challenges[id] = MFAChallengeRecord(
                id: id, userID: userID, browserBindingHash: challenge.browserBindingHash,
                authorizationRequestID: challenge.authorizationRequestID, expiresAt: challenge.expiresAt, completed: true)
        }
    }

    public func changePassword(userID: String, passwordHash: String, newBrowserSessionTokenHash: String, now: Date) throws -> String {
        state.withLock { state in
            if let user = state.users[userID] {
                state.users[userID] = UserRecord(
                    id: user.id, email: user.email, name: user.name, imageURL: user.imageURL, passwordHash: passwordHash,
                    closed: user.closed)
            }
            Self.endEverything(&state, userID: userID)
            let id = UUID().uuidString.lowercased()
            state.browserSessions[newBrowserSessionTokenHash] = BrowserSessionRecord(id: id, userID: userID, authTime: now, ended: false)
            state.events.append("password \(userID)")
            return id
        }
    }

    public func signOutEverywhere(userID: String, now: Date) throws {
        state.withLock { state in
            Self.endEverything(&state, userID: userID)
            state.events.append("signOutEverywhere \(userID)")
        }
    }

    public func removeApp(userID: String, app: ConnectedAppID, now: Date) throws -> Int {
        state.withLock { state in
            let apps = state.connectedApps[userID] ?? []
            let removed = apps.filter { $0.id == app }
            state.connectedApps[userID] = apps.filter { $0.id != app }
            switch app {
            case .environment(let environmentID): state.events.append("removeApp \(userID) \(environmentID)")
            case .webClient(let clientID): state.events.append("removeApp \(userID) client \(clientID)")
            }
            return removed.reduce(0) { $0 + $1.liveSessions }
        }
    }

    public func closeUser(id: String, now: Date, audit: AuditEntry) throws -> (UserRecord, Date)? {
        state.withLock { state in
            guard let user = state.users[id] else { return nil }
            let closed = UserRecord(
                id: user.id, email: user.email, name: user.name, imageURL: user.imageURL, passwordHash: user.passwordHash, closed: true)
            state.users[id] = closed
            let at = state.closedAt[id] ?? now
            state.closedAt[id] = at
            Self.endEverything(&state, userID: id)
            state.events.append("close \(id)")
            return (closed, at)
        }
    }

    public func connectedApps(userID: String) throws -> [ConnectedApp] { state.withLock { $0.connectedApps[userID] ?? [] } }

    // MARK: Browser sessions

    public func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
        state.withLock { state in
            let id = UUID().uuidString.lowercased()
            state.browserSessions[tokenHash] = BrowserSessionRecord(id: id, userID: userID, authTime: now, ended: false)
            return id
        }
    }

    public func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
        state.withLock { state in
            guard let session = state.browserSessions[tokenHash], state.users[session.userID]?.closed == false else { return nil }
            return session
        }
    }

    public func endBrowserSession(id: String, now: Date) throws -> Int {
        state.withLock { state in
            state.browserSessions = state.browserSessions.filter { $0.value.id != id }
            state.events.append("signOut \(id)")
            return 0
        }
    }

    // MARK: Second factors

    public func totpFactor(userID: String) throws -> TOTPFactorRecord? { state.withLock { $0.factors[userID] } }

    public func unusedRecoveryCodes(userID: String) throws -> Int { state.withLock { $0.recoveryCodes[userID]?.count ?? 0 } }

    public func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool {
        state.withLock { state in
            if state.factors[userID]?.confirmed == true { return false }
            state.factors[userID] = TOTPFactorRecord(secretSealed: secretSealed, confirmed: false, lastUsedStep: nil)
            return true
        }
    }

    public func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool {
        state.withLock { state in
            guard let factor = state.factors[userID], !factor.confirmed else { return false }
            state.factors[userID] = TOTPFactorRecord(secretSealed: factor.secretSealed, confirmed: true, lastUsedStep: step)
            state.recoveryCodes[userID] = Set(recoveryCodeHashes)
            return true
        }
    }

    public func useTOTPStep(userID: String, step: Int64) throws -> Bool {
        state.withLock { state in
            guard let factor = state.factors[userID], factor.confirmed, (factor.lastUsedStep ?? Int64.min) < step else { return false }
            state.factors[userID] = TOTPFactorRecord(secretSealed: factor.secretSealed, confirmed: true, lastUsedStep: step)
            return true
        }
    }

    public func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool {
        state.withLock { $0.recoveryCodes[userID]?.remove(codeHash) != nil }
    }

    public func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String {
        state.withLock { state in
            let id = UUID().uuidString.lowercased()
            state.challenges[id] = MFAChallengeRecord(
                id: id, userID: userID, browserBindingHash: browserBindingHash, authorizationRequestID: authorizationRequestID,
                expiresAt: now.addingTimeInterval(lifetimeSeconds), completed: false)
            return id
        }
    }

    public func mfaChallenge(id: String) throws -> MFAChallengeRecord? { state.withLock { $0.challenges[id] } }

    public func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String? {
        state.withLock { state in
            guard let challenge = state.challenges[id], !challenge.completed, challenge.expiresAt > now else { return nil }
            state.challenges[id] = MFAChallengeRecord(
                id: id, userID: challenge.userID, browserBindingHash: challenge.browserBindingHash,
                authorizationRequestID: challenge.authorizationRequestID, expiresAt: challenge.expiresAt, completed: true)
            let sessionID = UUID().uuidString.lowercased()
            state.browserSessions[browserSessionTokenHash] = BrowserSessionRecord(
                id: sessionID, userID: challenge.userID, authTime: now, ended: false)
            return sessionID
        }
    }

    /// The in-memory browser bindings of `context(clock:log:)`.
    public let browserBindings = FakeBrowserBindings()

    /// The in-memory audit log of `context(clock:log:)`: the person's own events.
    public var auditLog: FakeTenancyStore { auditStore }

    /// A context whose accounts area is this fake and whose other areas have no database: a request that
    /// reaches PostgreSQL (another area's store, the rate limiter) answers 503.
    public func context(clock: any Clock = SystemClock(), log: any LogSink = CapturingLog()) -> ServerContext {
        var configuration = ServerConfiguration(
            databaseURL: "postgresql://127.0.0.1:1/unreachable", issuer: "http://127.0.0.1:0", operatorToken: TestServer.operatorToken)
        configuration.encryptionKey = TestServer.encryptionKey
        let unreachable = PostgresStore(pool: PostgresPool(url: configuration.databaseURL, size: 1))
        // The person's own events ("Recent activity") go to an in-memory audit log.
        var tenancy = TenancyPorts(unreachable)
        tenancy.audit = auditLog
        tenancy.auditLog = auditLog
        // The account page mints a browser binding, lists passkeys and linked providers: in memory, with none.
        var roundTrip = RoundTripPorts(unreachable)
        roundTrip.browserBindings = browserBindings
        var accounts = AccountsPorts(all: self)
        accounts.passkeys = NoPasskeys()
        accounts.upstream = NoUpstream()
        return ServerContext(
            configuration: configuration, store: unreachable,
            roundTrip: roundTrip, tenancy: tenancy, accounts: accounts, clock: clock,
            passwordHasher: testPasswordHasher, log: log)
    }
}
