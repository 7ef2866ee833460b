import Authorize
import Foundation
import PostgresStore

/// The store ports of ZevID accounts (users, browser sessions, TOTP, MFA challenges, connected apps): one
/// existential per use case's protocol (Sources/Authorize/Accounts), so handlers can be tested in process
/// with fakes (Tests/ZevAuthTesting/Fakes+Accounts.swift).
public struct AccountsPorts: Sendable {
    /// `CreateUser` and `SignUp`.
    public var createUser: any CreateUserStore
    /// `AccountSignIn` (the password check).
    public var signIn: any AccountSignInStore
    /// `BrowserSignIn` (second-factor challenge or browser session after a correct password).
    public var browserSignIn: any BrowserSignInStore
    /// `CurrentAccount` (the signed-in browser).
    public var current: any CurrentAccountStore
    /// `AccountOverview` (the account page).
    public var overview: any AccountOverviewStore
    /// `ChangePassword`.
    public var changePassword: any ChangePasswordStore
    /// `SignOut`.
    public var signOut: any SignOutStore
    /// `SignOutEverywhere`.
    public var signOutEverywhere: any SignOutEverywhereStore
    /// `RemoveConnectedApp`.
    public var removeApp: any RemoveConnectedAppStore
    /// `TOTPEnrolment`.
    public var totpEnrolment: any TOTPEnrolmentStore
    /// `VerifySecondFactor`.
    public var secondFactor: any SecondFactorStore
    /// `MFAChallenge`.
    public var mfaChallenges: any MFAChallengeStore
    /// `CloseUser`.
    public var closeUser: any CloseUserStore
    /// `FindUser` (the operator's account search).
    public var findUser: any FindUserStore
    /// The security notices queued for accounts' addresses (docs/protocol.md, "Security notices").
    public var notices: any SecurityNotices = UnconfiguredEmail()
    /// `ResetMFA` (the operator's MFA reset); `StoreUnavailable` until a store is given.
    public var mfaReset: any ResetMFAStore = UnconfiguredAccounts()
    /// `EmailCodes` (issuing and entering emailed codes).
    public var emailCodes: any EmailCodeStore = UnconfiguredEmail()
    /// The email flows (sign-up, verification, reset, address change) beyond the codes.
    public var emailFlows: any EmailFlowStore = UnconfiguredEmail()
    /// Passkeys (docs/passkeys.md): credentials, challenges and the offer; `StoreUnavailable` until given.
    public var passkeys: any PasskeyStores = UnconfiguredPasskeys()
    /// The hosted upstream sign-in (docs/federation.md): flows, links and the accounts it makes;
    /// `StoreUnavailable` until given.
    public var upstream: any UpstreamSignInStores = UnconfiguredUpstream()

    /// Every port answering `StoreUnavailable`, for contexts built without this area (their requests answer 503).
    public init() {
        self.init(all: UnconfiguredAccounts())
    }

    /// Every port served by one value (a test's fake, usually).
    public init(all store: some AllAccountStores) {
        createUser = store
        signIn = store
        browserSignIn = store
        current = store
        overview = store
        changePassword = store
        signOut = store
        signOutEverywhere = store
        removeApp = store
        totpEnrolment = store
        secondFactor = store
        mfaChallenges = store
        closeUser = store
        findUser = store
    }

    /// Every port backed by PostgreSQL: `accounts`, `browserSessions`, `mfa`, `accountSessions` and `email`
    /// (the outbox behind the notices, and the codes).
    /// - Parameter mailScope: the scope stamped on queued messages (tests); nil in a deployment.
    public init(_ store: PostgresStore, mailScope: String? = nil) {
        self.init()
        let email = store.email.scoped(mailScope)
        notices = email
        emailCodes = email
        emailFlows = email
        let accounts = store.accounts
        let both = store.accountSessions
        createUser = accounts
        signIn = accounts
        browserSignIn = both
        current = both
        overview = both
        changePassword = accounts
        signOut = store.browserSessions
        signOutEverywhere = accounts
        removeApp = accounts
        totpEnrolment = store.mfa
        secondFactor = store.mfa
        mfaChallenges = store.mfa
        closeUser = accounts
        findUser = accounts
        mfaReset = accounts
        passkeys = store.passkeys
        upstream = store.upstreamSignIn
    }
}

/// Every store protocol of the accounts area, for a fake that serves them all.
public typealias AllAccountStores = CreateUserStore & AccountSignInStore & BrowserSignInStore & CurrentAccountStore
    & AccountOverviewStore & ChangePasswordStore & SignOutStore & SignOutEverywhereStore & RemoveConnectedAppStore
    & TOTPEnrolmentStore & SecondFactorStore & MFAChallengeStore & CloseUserStore & FindUserStore

/// The ports of a context built without accounts (the operator's MFA reset among them): every call is
/// `StoreUnavailable`.
struct UnconfiguredAccounts: AllAccountStores, ResetMFAStore {
    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "accounts_not_configured") }
    func createUser(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date, audit: AuditEntry?) throws -> UserRecord {
        throw unavailable()
    }
    func user(emailKey: String) throws -> UserRecord? { throw unavailable() }
    func totpFactor(userID: String) throws -> TOTPFactorRecord? { throw unavailable() }
    func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String { throw unavailable() }
    func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String { throw unavailable() }
    func browserSession(tokenHash: String) throws -> BrowserSessionRecord? { throw unavailable() }
    func user(id: String) throws -> UserRecord? { throw unavailable() }
    func connectedApps(userID: String) throws -> [ConnectedApp] { throw unavailable() }
    func unusedRecoveryCodes(userID: String) throws -> Int { throw unavailable() }
    func changePassword(userID: String, passwordHash: String, newBrowserSessionTokenHash: String, now: Date) throws -> String {
        throw unavailable()
    }
    func endBrowserSession(id: String, now: Date) throws -> Int { throw unavailable() }
    func signOutEverywhere(userID: String, now: Date) throws { throw unavailable() }
    func removeApp(userID: String, app: ConnectedAppID, now: Date) throws -> Int { throw unavailable() }
    func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool { throw unavailable() }
    func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool { throw unavailable() }
    func useTOTPStep(userID: String, step: Int64) throws -> Bool { throw unavailable() }
    func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool { throw unavailable() }
    func mfaChallenge(id: String) throws -> MFAChallengeRecord? { throw unavailable() }
    func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String? { throw unavailable() }
    func closeUser(id: String, now: Date, audit: AuditEntry) throws -> (UserRecord, Date)? { throw unavailable() }
    func resetMFA(userID: String, now: Date, audit: AuditEntry) throws -> (user: UserRecord, hadFactor: Bool)? { throw unavailable() }
}

/// The email ports of a context built without them: queuing a notice does nothing (a fake's context has
/// no outbox); codes and flows are `StoreUnavailable`.
struct UnconfiguredEmail: SecurityNotices, EmailCodeStore, EmailFlowStore {
    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "email_not_configured") }
    func queue(_ notice: SecurityNotice, userID: String, now: Date) throws {}
    func issueCode(_ issue: CodeIssue, now: Date, perHour: Int, perDay: Int) throws -> CodeIssueResult { throw unavailable() }
    func codeFlow(id: String) throws -> EmailCodeFlowRecord? { throw unavailable() }
    func attemptCode(
        id: String, codeHash: String, now: Date, maxAttempts: Int, lockAfter: Int, lockWindowSeconds: Double, lockSeconds: Double
    ) throws -> CodeAttemptFacts { throw unavailable() }
    func signUpAccount(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date) throws -> SignUpTarget {
        throw unavailable()
    }
    func completeSignUp(flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date) throws
        -> String?
    { throw unavailable() }
    func completeVerification(flowID: String, userID: String, now: Date) throws -> Bool { throw unavailable() }
    func recordSecondFactor(flowID: String, now: Date) throws { throw unavailable() }
    func completeReset(flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date) throws
        -> String?
    { throw unavailable() }
    func completeEmailChange(flowID: String, userID: String, now: Date) throws -> EmailChangeResult { throw unavailable() }
}

/// The passkey ports of a context built without them: every call is `StoreUnavailable`.
struct UnconfiguredPasskeys: PasskeyStores {
    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "passkeys_not_configured") }
    func issuePasskeyChallenge(
        hash: String, purpose: PasskeyPurpose, userID: String?, bindingHash: String, now: Date, lifetimeSeconds: Double
    ) throws { throw unavailable() }
    func consumePasskeyChallenge(hash: String, purpose: PasskeyPurpose, bindingHash: String, now: Date) throws -> (
        consumed: Bool, userID: String?
    ) { throw unavailable() }
    func passkeyUserHandle(userID: String, candidate: [UInt8]) throws -> [UInt8] { throw unavailable() }
    func passkeys(userID: String) throws -> [PasskeyRecord] { throw unavailable() }
    func addPasskey(_ passkey: NewPasskey, userID: String, now: Date) throws -> PasskeyRecord? { throw unavailable() }
    func passkeyForSignIn(credentialID: [UInt8]) throws -> PasskeyForSignIn? { throw unavailable() }
    func recordPasskeyUse(id: String, signCount: UInt32, backedUp: Bool, now: Date) throws { throw unavailable() }
    func createBrowserSession(tokenHash: String, userID: String, now: Date, methods: AuthenticationMethods) throws -> String {
        throw unavailable()
    }
    func renamePasskey(userID: String, id: String, name: PasskeyName) throws -> Bool { throw unavailable() }
    func removePasskey(userID: String, id: String) throws -> PasskeyRecord? { throw unavailable() }
    func passkeyOfferFacts(userID: String) throws -> (count: Int, skippedAt: Date?) { throw unavailable() }
    func skipPasskeyOffer(userID: String, now: Date) throws { throw unavailable() }
    func passkeyCount(userID: String) throws -> Int { throw unavailable() }
}
