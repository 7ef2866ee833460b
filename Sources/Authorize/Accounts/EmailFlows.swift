import Foundation

/// Whose account a sign-up's address leads to.
public enum SignUpTarget: Sendable, Equatable {
    /// A new self-sign-up account, unverified.
    case created(userID: String)
    /// An earlier self-sign-up of this address that was never verified: it gets a new code.
    case unverifiedSelfSignUp(userID: String)
    /// Any other account (verified, or made by the operator): it gets a notice, the page looks the same.
    case existing(userID: String)
}

/// Where an address change ends.
public enum EmailChangeResult: Sendable, Equatable {
    case changed(oldEmail: String)
    /// The new address has an account by now.
    case taken
    /// The flow was completed already, or is not this account's.
    case over
}

/// What the email flows need from storage beyond the codes themselves.
public protocol EmailFlowStore: Sendable {
    /// Creates an unverified self-sign-up account for `email` unless the address has one (no unique
    /// violation is ever raised), and says whose account the address leads to.
    /// - Throws: `StoreUnavailable`.
    func signUpAccount(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date) throws -> SignUpTarget
    /// Finishes a sign-up flow once: the address is verified, the flow's password applies, and a browser
    /// session starts. - Returns: its id, or nil when the flow was completed already.
    /// - Throws: `StoreUnavailable`.
    func completeSignUp(flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date) throws -> String?
    /// Marks the account's address verified and the flow completed. - Returns: false when it was completed.
    /// - Throws: `StoreUnavailable`.
    func completeVerification(flowID: String, userID: String, now: Date) throws -> Bool
    /// Records that the second factor was given after the code (a reset of an account with MFA).
    /// - Throws: `StoreUnavailable`.
    func recordSecondFactor(flowID: String, now: Date) throws
    /// Sets the new password, ends every session of the account (app sessions and ZevID browser sessions)
    /// and starts a browser session here, once. - Returns: its id, or nil when the flow was completed.
    /// - Throws: `StoreUnavailable`.
    func completeReset(flowID: String, userID: String, passwordHash: String, browserSessionTokenHash: String, now: Date) throws -> String?
    /// Moves the account to the flow's new address (verified), once.
    /// - Throws: `StoreUnavailable`.
    func completeEmailChange(flowID: String, userID: String, now: Date) throws -> EmailChangeResult
}

/// Sign-up with an emailed code (docs/protocol.md, "Sign-up"): the same Argon2id work, the same flow and
/// the same page whether or not the address has an account.
public struct SignUpWithCode: Sendable {
    let store: any EmailFlowStore
    let codes: EmailCodes
    let passwords: any PasswordHashingPort
    let notices: any SecurityNotices

    /// - Parameters:
    ///   - store: accounts as the flows see them.
    ///   - codes: issues the code.
    ///   - passwords: Argon2id.
    ///   - notices: tells an existing account that someone tried.
    public init(store: any EmailFlowStore, codes: EmailCodes, passwords: any PasswordHashingPort, notices: any SecurityNotices) {
        self.store = store
        self.codes = codes
        self.passwords = passwords
        self.notices = notices
    }

    /// - Returns: the code flow the page continues with (one exists in every case).
    /// - Throws: `StoreUnavailable`, or what hashing and the CSPRNG throw.
    public func callAsFunction(
        email: EmailAddress, name: DisplayName, password: NewPassword, bindingHash: String, authorizationRequestID: String?, now: Date
    ) throws -> String {
        let hash = try passwords.hash(password.text)
        let target = try store.signUpAccount(email: email, name: name, passwordHash: hash, now: now)
        var request = EmailCodes.Request(
            userID: nil, purpose: .signUp, browserBindingHash: bindingHash, authorizationRequestID: authorizationRequestID,
            passwordHash: hash)
        switch target {
        case .created(let id), .unverifiedSelfSignUp(let id):
            request.userID = id
        case .existing(let id):
            try notices.queue(.signUpAttempted, userID: id, now: now)
        }
        return try codes.issue(request, now: now).flowID
    }
}

/// The common-password check of new passwords (docs/protocol.md, "Sign-up"): the list is data shipped
/// with the server (`Sources/Authorize/Accounts/CommonPasswords.swift`), compared case-insensitively.
public enum CommonPasswords {
    /// Whether `password` is on the list.
    public static func contains(_ password: String) -> Bool { set.contains(password.lowercased()) }

    static let set: Set<String> = Set(CommonPasswordList.entries.map { $0.lowercased() })
}
