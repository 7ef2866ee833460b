import Foundation

/// One trip to an upstream provider and back, as stored (sql/025, `upstream_flows`).
public struct UpstreamFlowRecord: Sendable, Equatable {
    /// A UUID, lower-case.
    public let id: String
    public let providerID: String
    /// The SHA-256 hex digest of the binding cookie of the browser that started it.
    public let browserBindingHash: String
    /// The raw nonce and the PKCE verifier, sealed (`UpstreamFlowSecrets`).
    public let sealedNonce: String
    public let sealedCodeVerifier: String
    /// The pending ZevAuth sign-in it continues; nil for the account area.
    public let authorizationRequestID: String?
    public let expiresAt: Date
    /// Apple's form_post: the code (sealed) and the name of its `user` field, parked until the GET.
    public let postedCodeSealed: String?
    public let postedName: String?
    public let used: Bool

    public init(
        id: String, providerID: String, browserBindingHash: String, sealedNonce: String, sealedCodeVerifier: String,
        authorizationRequestID: String?, expiresAt: Date, postedCodeSealed: String?, postedName: String?, used: Bool
    ) {
        self.id = id
        self.providerID = providerID
        self.browserBindingHash = browserBindingHash
        self.sealedNonce = sealedNonce
        self.sealedCodeVerifier = sealedCodeVerifier
        self.authorizationRequestID = authorizationRequestID
        self.expiresAt = expiresAt
        self.postedCodeSealed = postedCodeSealed
        self.postedName = postedName
        self.used = used
    }
}

/// A link waiting for its confirmation (sql/025, `upstream_link_confirmations`).
public struct LinkConfirmationRecord: Sendable, Equatable {
    public let id: String
    public let providerID: String
    public let issuer: String
    public let subject: String
    /// The address the upstream asserted (shown on /account once linked).
    public let email: String?
    /// The account whose address it asserted, which must sign in and confirm.
    public let userID: String
    public let authorizationRequestID: String?
    public let createdAt: Date
    public let expiresAt: Date
    public let used: Bool

    public init(
        id: String, providerID: String, issuer: String, subject: String, email: String?, userID: String, authorizationRequestID: String?,
        createdAt: Date, expiresAt: Date, used: Bool
    ) {
        self.id = id
        self.providerID = providerID
        self.issuer = issuer
        self.subject = subject
        self.email = email
        self.userID = userID
        self.authorizationRequestID = authorizationRequestID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.used = used
    }
}

/// An identity linked to an account, as `/account` lists it.
public struct LinkedIdentity: Sendable, Equatable {
    /// The link's id (a UUID), named by the Unlink form.
    public let id: String
    public let providerID: String
    /// NAME of "Continue with NAME".
    public let providerName: String
    /// The address the upstream last asserted, if any.
    public let email: String?
    public let createdAt: Date
    public let lastUsedAt: Date

    public init(id: String, providerID: String, providerName: String, email: String?, createdAt: Date, lastUsedAt: Date) {
        self.id = id
        self.providerID = providerID
        self.providerName = providerName
        self.email = email
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// What unlinking did.
public enum UnlinkOutcome: Sendable, Equatable {
    case unlinked
    /// Refused: it is the account's last way to sign in (`UpstreamAccountRules.mayUnlink`).
    case lastWayToSignIn
    /// No link of this account has the id.
    case notFound
}

/// What the upstream sign-in needs from storage: accounts found by their link or address, an account
/// created and linked in one transaction, links made, listed and removed. Every write that changes an
/// account's ways to sign in writes its audit row in the same transaction.
public protocol UpstreamIdentityStore: Sendable {
    /// The account the identity (provider, issuer, `sub`) is linked to, open or closed, or nil; a found link's
    /// `last_used_at` and asserted address are brought up to date.
    /// - Throws: `StoreUnavailable`.
    func linkedAccount(_ identity: UpstreamIdentity, now: Date) throws -> UserRecord?
    /// The account whose address key is `emailKey`, open or closed, or nil.
    /// - Throws: `StoreUnavailable`.
    func user(emailKey: String) throws -> UserRecord?
    /// Creates an account without a password (`UserRecord.noPassword`) under `email`, its address verified
    /// now when `verified`, and links `identity` to it, in one transaction with the audit rows
    /// `account.create` and `upstream.link`.
    /// - Throws: `StoreError.duplicate(constraint:)` when the address has an account or the identity is
    ///   linked (a concurrent sign-in won); `StoreUnavailable`.
    func createLinkedAccount(
        email: EmailAddress, name: DisplayName, verified: Bool, identity: UpstreamIdentity, now: Date, clientAddress: String?
    )
        throws -> UserRecord
    /// Links `identity` to `userID` with the audit row `upstream.link`.
    /// - Returns: false when the identity is already linked (to this or another account): a link never moves.
    /// - Throws: `StoreUnavailable`.
    func linkIdentity(
        providerID: String, issuer: String, subject: String, email: String?, userID: String, now: Date, clientAddress: String?
    )
        throws -> Bool
    /// The identities linked to `userID`, oldest first.
    /// - Throws: `StoreUnavailable`.
    func linkedIdentities(userID: String) throws -> [LinkedIdentity]
    /// Removes the link `id` of `userID` with the audit row `upstream.unlink`, in a transaction that locks the
    /// account and asks `allowed(hasPassword, passkeys, linkedIdentities)` first, so two removals at once
    /// cannot both pass the rule.
    /// - Throws: `StoreUnavailable`.
    func unlinkIdentity(
        id: String, userID: String, now: Date, clientAddress: String?,
        allowed: (_ hasPassword: Bool, _ passkeys: Int, _ identities: Int) -> Bool
    ) throws -> UnlinkOutcome
}

/// Finds or makes the account an upstream identity signs in to (docs/federation.md, "Accounts"): the
/// decision is `UpstreamAccountRules.decide`; this runs it over storage. The hosted flow and the native
/// token exchange both call it after the ID token is verified.
public struct ResolveUpstreamAccount: Sendable {
    /// Where the identity goes.
    public enum Outcome: Sendable, Equatable {
        /// Sign in to this open account; `created` when this sign-in made it.
        case signIn(UserRecord, created: Bool)
        /// The account with the address must sign in and confirm before the identity is linked.
        case confirmLink(UserRecord)
        /// The account is closed: no sign-in (the page says the same as for a closed account's password).
        case closed
        case refused(UpstreamAccountRefusal)
    }

    let store: any UpstreamIdentityStore
    let domainToASCII: @Sendable (String) -> String?

    /// - Parameters:
    ///   - store: links and accounts.
    ///   - domainToASCII: IDNA's ToASCII, as `EmailAddress.parse` takes it.
    public init(store: any UpstreamIdentityStore, domainToASCII: @escaping @Sendable (String) -> String?) {
        self.store = store
        self.domainToASCII = domainToASCII
    }

    /// - Parameter clientAddress: for the audit rows of a created account.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(_ identity: UpstreamIdentity, now: Date, clientAddress: String?) throws -> Outcome {
        // A concurrent sign-in of the same identity or address may win the insert; the second pass then
        // finds its link or its account.
        for _ in 0..<2 {
            let linked = try store.linkedAccount(identity, now: now)
            let address = UpstreamAccountRules.address(identity.email, domainToASCII: domainToASCII)
            let withAddress = try address.flatMap { try store.user(emailKey: $0.key) }
            switch UpstreamAccountRules.decide(
                identity: identity, address: address, linkedAccount: linked?.id, accountWithAddress: withAddress?.id)
            {
            case .signIn:
                guard let linked, !linked.closed else { return .closed }
                return .signIn(linked, created: false)
            case .confirmLink:
                guard let withAddress, !withAddress.closed else { return .closed }
                return .confirmLink(withAddress)
            case .refuse(let refusal):
                return .refused(refusal)
            case .create(let email, let verified, let name):
                do {
                    let user = try store.createLinkedAccount(
                        email: email, name: name, verified: verified, identity: identity, now: now, clientAddress: clientAddress)
                    return .signIn(user, created: true)
                } catch StoreError.duplicate {
                    continue
                }
            }
        }
        throw StoreError.duplicate(constraint: "upstream sign-in raced twice")
    }
}

/// How the hosted flow seals what it must send again later (sql/025): the raw nonce, the PKCE verifier and
/// a parked form_post code, each bound to its flow and field, under the deployment's key.
public enum UpstreamFlowSecrets {
    /// Associated data of `field` (`nonce`, `verifier`, `code`) of flow `flowID`.
    public static func associatedData(flowID: String, field: String) -> [UInt8] {
        Array("zevauth:upstream-flow:v1:\(flowID):\(field)".utf8)
    }

    /// The stored form: base64 of `nonce ‖ ciphertext ‖ tag`. - Throws: what `sealer` throws.
    public static func seal(_ text: String, flowID: String, field: String, with sealer: any SecretSealing) throws -> String {
        Data(try sealer.seal(Array(text.utf8), associatedData: associatedData(flowID: flowID, field: field))).base64EncodedString()
    }

    /// The text of a stored box, or nil when it does not open (another key, row or field).
    public static func open(_ stored: String, flowID: String, field: String, with sealer: any SecretSealing) -> String? {
        guard let sealed = Data(base64Encoded: stored),
            let plain = try? sealer.open(Array(sealed), associatedData: associatedData(flowID: flowID, field: field))
        else { return nil }
        return String(bytes: plain, encoding: .utf8)
    }
}

/// What the hosted flow's trips to the provider need from storage (sql/025): each flow is created once,
/// parked once (Apple's form_post) and consumed once, each in one statement.
public protocol UpstreamFlowStore: Sendable {
    /// The provider whose slug is `slug`, or nil.
    /// - Throws: `StoreUnavailable`.
    func provider(slug: String) throws -> UpstreamProviderRecord?
    /// The providers the sign-in page of project `projectID` shows, in order (none for an unknown project).
    /// - Throws: `StoreUnavailable`.
    func shownProviders(projectID: String) throws -> [UpstreamProviderRecord]
    /// Every provider of the deployment, in creation order (the account area's sign-in page).
    /// - Throws: `StoreUnavailable`.
    func allProviders() throws -> [UpstreamProviderRecord]
    /// Stores a new flow under the digest of its state, living `lifetimeSeconds`.
    /// - Throws: `StoreUnavailable`.
    func createUpstreamFlow(_ flow: UpstreamFlowRecord, stateHash: String, now: Date) throws
    /// Parks Apple's form_post code (sealed) and name on the live, unused, not yet parked flow of `stateHash`.
    /// - Returns: false when no such flow exists (unknown, expired, used or parked already).
    /// - Throws: `StoreUnavailable`.
    func parkPostedCode(stateHash: String, sealedCode: String, name: String?, now: Date) throws -> Bool
    /// Consumes the live, unused flow of `stateHash` that belongs to the browser of `bindingHash`, in one
    /// `UPDATE … RETURNING`. - Returns: the flow, or nil (then `upstreamFlow(stateHash:)` says why).
    /// - Throws: `StoreUnavailable`.
    func consumeUpstreamFlow(stateHash: String, bindingHash: String, now: Date) throws -> UpstreamFlowRecord?
    /// The flow of `stateHash` whatever its state, or nil.
    /// - Throws: `StoreUnavailable`.
    func upstreamFlow(stateHash: String) throws -> UpstreamFlowRecord?
    /// Ends the flow of `stateHash` unused (the upstream answered an error). - Throws: `StoreUnavailable`.
    func endUpstreamFlow(stateHash: String, now: Date) throws
    /// Stores a link waiting for confirmation under the digest of its cookie.
    /// - Throws: `StoreUnavailable`.
    func createLinkConfirmation(_ confirmation: LinkConfirmationRecord, tokenHash: String) throws
    /// The confirmation whose cookie digests to `tokenHash`, whatever its state, or nil.
    /// - Throws: `StoreUnavailable`.
    func linkConfirmation(tokenHash: String) throws -> LinkConfirmationRecord?
    /// Marks the live, unused confirmation `id` used. - Returns: false when it was not (used, expired).
    /// - Throws: `StoreUnavailable`.
    func useLinkConfirmation(id: String, now: Date) throws -> Bool
    /// Detaches the browser session from the pending sign-in `requestID`, so its page asks for a sign-in
    /// again (a link confirmation needs one). - Throws: `StoreUnavailable`.
    func detachBrowserSession(requestID: String) throws
    /// A second-factor challenge whose first factor was the upstream sign-in (`amr` `fed …`).
    /// - Returns: the challenge id. - Throws: `StoreUnavailable`.
    func createFederatedMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String
    /// Starts a browser session authenticated by the upstream sign-in (`amr` `fed`). - Returns: its id.
    /// - Throws: `StoreUnavailable`.
    func createFederatedBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String
}
