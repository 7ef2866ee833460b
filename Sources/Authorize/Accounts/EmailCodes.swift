import Foundation

/// What an emailed code is for (docs/protocol.md, "Email codes"). Raw values are `email_codes.purpose`.
public enum EmailCodePurpose: String, Sendable, Equatable, CaseIterable {
    /// Finishing a sign-up: the code verifies the address and signs the person in.
    case signUp = "sign_up"
    /// Verifying the address of an account that exists unverified (`requireVerifiedEmail`).
    case verifyEmail = "verify_email"
    /// "Forgot password?".
    case passwordReset = "password_reset"
    /// Moving the account to a new address (the code goes to the new one).
    case changeEmail = "change_email"

    /// What the email names as its purpose.
    public var sentence: String {
        switch self {
        case .signUp: "finish creating your ZevID account"
        case .verifyEmail: "verify your email address"
        case .passwordReset: "reset your ZevID password"
        case .changeEmail: "confirm your new email address"
        }
    }
}

/// The rules of emailed codes (docs/protocol.md, "Email codes"): one place for every number.
public enum EmailCodeRules {
    /// Digits in a code.
    public static let digits = 6
    /// How long a code is valid, in seconds.
    public static let lifetimeSeconds: Double = 600
    /// Wrong attempts that end a code.
    public static let maxAttempts = 5
    /// Codes an account is sent per rolling hour, and per rolling day.
    public static let perHour = 5
    public static let perDay = 10
    /// Codes of one account ended by wrong attempts within `lockWindowSeconds` that lock code entry.
    public static let lockAfterEndedCodes = 3
    /// The window of that count, and how long the lock lasts, in seconds.
    public static let lockWindowSeconds: Double = 86_400
    public static let lockSeconds: Double = 86_400

    /// A code drawn uniformly from `000000…999999` out of CSPRNG bytes (rejection sampling over 32-bit
    /// words, so no value is likelier than another), or nil when every word was rejected (try new bytes).
    public static func code(fromRandom bytes: [UInt8]) -> String? {
        let limit: UInt32 = 4_294_000_000  // the largest multiple of 10^6 below 2^32
        var index = 0
        while index + 4 <= bytes.count {
            let word = bytes[index..<index + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            index += 4
            if word < limit {
                let text = String(word % 1_000_000)
                return String(repeating: "0", count: digits - text.count) + text
            }
        }
        return nil
    }

    /// A new code from the CSPRNG (through `Secrets`: the 32 random bytes of a minted token).
    /// - Throws: when the CSPRNG fails.
    public static func newCode(secrets: any Secrets) throws -> String {
        for _ in 0..<8 {
            let token = try secrets.mintToken(prefix: "")
            if let bytes = base64URLBytes(token), let code = code(fromRandom: bytes) { return code }
        }
        throw CodeGenerationFailed()
    }

    /// How a code is stored: SHA-256 hex of the flow's id and the code, so equal codes of two flows differ.
    public static func digest(flowID: String, code: String, secrets: any Secrets) -> String {
        secrets.digest("email-code:\(flowID):\(code)")
    }

    /// What a person typed, as a code: six ASCII digits once spaces and dashes are dropped, else nil.
    public static func typed(_ input: String) -> String? {
        let kept = input.unicodeScalars.filter { $0 != " " && $0 != "-" && $0 != "\u{00A0}" }
        guard kept.count == digits, kept.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return String(String.UnicodeScalarView(kept))
    }

    /// Associated data sealing a code in the outbox to its flow.
    public static func sealingContext(flowID: String) -> [UInt8] { Array("zevauth:email-code:v1:\(flowID)".utf8) }

    private static func base64URLBytes(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}

/// The CSPRNG kept rejecting (it never does in practice).
public struct CodeGenerationFailed: Error, CustomStringConvertible {
    public var description: String { "The random number generator did not give a usable code." }
}

/// A flow on the hosted pages that waits for a code (one row of `email_codes`).
public struct EmailCodeFlowRecord: Sendable, Equatable {
    public let id: String
    /// The account, or nil for a flow that sends nothing (the page looks the same).
    public let userID: String?
    public let purpose: EmailCodePurpose
    /// SHA-256 hex of the browser binding the flow belongs to.
    public let browserBindingHash: String
    /// The pending app sign-in to continue, if any.
    public let authorizationRequestID: String?
    public let attempts: Int
    public let expiresAt: Date
    /// `used`, `replaced` or `attempts` once ended.
    public let endReason: String?
    /// A sign-up's chosen password hash.
    public let passwordHash: String?
    /// An address change's new address (as typed) and its key.
    public let newEmail: String?
    public let newEmailKey: String?
    /// When the second factor was given after the code (a reset of an account with MFA).
    public let secondFactorAt: Date?
    public let completed: Bool
    /// The account the flow was requested for, also when nothing was sent (over the limits): "Send a new
    /// code" asks again for it, and the limits decide from the window then (docs/protocol.md, "Email codes").
    public let requestedUserID: String?

    /// Creates a record (the store reads them; tests build them).
    public init(
        id: String, userID: String?, purpose: EmailCodePurpose, browserBindingHash: String, authorizationRequestID: String?,
        attempts: Int, expiresAt: Date, endReason: String?, passwordHash: String?, newEmail: String?, newEmailKey: String?,
        secondFactorAt: Date?, completed: Bool, requestedUserID: String? = nil
    ) {
        self.id = id
        self.userID = userID
        self.purpose = purpose
        self.browserBindingHash = browserBindingHash
        self.authorizationRequestID = authorizationRequestID
        self.attempts = attempts
        self.expiresAt = expiresAt
        self.endReason = endReason
        self.passwordHash = passwordHash
        self.newEmail = newEmail
        self.newEmailKey = newEmailKey
        self.secondFactorAt = secondFactorAt
        self.completed = completed
        self.requestedUserID = requestedUserID ?? userID
    }

    /// Whether the code was entered correctly and the flow has time left for its next steps.
    public func codeAccepted(now: Date) -> Bool { endReason == "used" && !completed && now < expiresAt }
}

/// A code to record, with its message (sealed) when it is sent.
public struct CodeIssue: Sendable {
    public let flowID: String
    /// The account, or nil when nothing is to be sent.
    public let userID: String?
    public let purpose: EmailCodePurpose
    public let browserBindingHash: String
    public let authorizationRequestID: String?
    public let codeHash: String
    /// The code sealed for the outbox (base64), bound to `flowID`; nil when nothing is sent.
    public let codeSealed: String?
    public let expiresAt: Date
    public let passwordHash: String?
    public let newEmail: String?
    public let newEmailKey: String?
}

/// What the issuing statement found.
public enum CodeIssueResult: Sendable, Equatable {
    /// Recorded, and its message queued.
    case queued
    /// Recorded as a flow that sends nothing: the account is over its hourly or daily count.
    case overLimit
}

/// What a code attempt's statement found.
public struct CodeAttemptFacts: Sendable, Equatable {
    /// The flow exists.
    public let found: Bool
    /// Code entry for the flow's account is locked now (before this attempt).
    public let locked: Bool
    /// The attempt was counted (the flow was live).
    public let counted: Bool
    /// The code matched.
    public let matched: Bool
    /// Attempts after this one.
    public let attempts: Int
    /// The flow's end after the attempt (`used`, `replaced`, `attempts`), or nil.
    public let endReason: String?
    /// The flow's code had expired.
    public let expired: Bool
    /// This attempt locked code entry for the account.
    public let lockedNow: Bool

    public init(
        found: Bool, locked: Bool, counted: Bool, matched: Bool, attempts: Int, endReason: String?, expired: Bool, lockedNow: Bool
    ) {
        self.found = found
        self.locked = locked
        self.counted = counted
        self.matched = matched
        self.attempts = attempts
        self.endReason = endReason
        self.expired = expired
        self.lockedNow = lockedNow
    }
}

/// What issuing and entering codes needs from storage.
public protocol EmailCodeStore: Sendable {
    /// In one transaction: counts the account's codes of the last hour and day; under both limits it ends
    /// the account's live code of the same purpose and records the new one with its outbox message; else,
    /// or with no account, records a flow that sends nothing.
    /// - Throws: `StoreUnavailable`.
    func issueCode(_ issue: CodeIssue, now: Date, perHour: Int, perDay: Int) throws -> CodeIssueResult
    /// The flow `id`, or nil. - Throws: `StoreUnavailable`.
    func codeFlow(id: String) throws -> EmailCodeFlowRecord?
    /// One attempt, atomically: a live flow's attempts grow by one; a match ends it `used`, the
    /// `maxAttempts`-th wrong one ends it `attempts`; when that makes `lockAfter` codes of the account ended
    /// by attempts within `lockWindowSeconds`, code entry is locked for `lockSeconds` and the notice queued.
    /// - Throws: `StoreUnavailable`.
    func attemptCode(
        id: String, codeHash: String, now: Date, maxAttempts: Int, lockAfter: Int, lockWindowSeconds: Double, lockSeconds: Double
    ) throws -> CodeAttemptFacts
}

/// The answer to a typed code, as the page words it.
public enum CodeAttemptOutcome: Sendable, Equatable {
    case accepted(EmailCodeFlowRecord)
    /// Wrong; this many tries are left (at least 1).
    case wrong(triesLeft: Int)
    /// Wrong, and that ended the code (or it had ended already): request a new one.
    case exhausted
    /// The code's 10 minutes passed: request a new one.
    case expired
    /// Code entry is locked for this account.
    case locked
    /// Not a flow of this browser.
    case unknown

    /// The decision from the statement's facts (docs/protocol.md, "Email codes").
    public static func decide(_ facts: CodeAttemptFacts, flow: EmailCodeFlowRecord?) -> CodeAttemptOutcome {
        guard facts.found, let flow else { return .unknown }
        if facts.locked { return .locked }
        if facts.counted, facts.matched { return .accepted(flow) }
        if facts.lockedNow { return .locked }
        if facts.expired { return .expired }
        if !facts.counted { return flow.endReason == "used" ? .unknown : .exhausted }
        let left = EmailCodeRules.maxAttempts - facts.attempts
        return left > 0 ? .wrong(triesLeft: left) : .exhausted
    }
}

/// Issuing and entering emailed codes (docs/protocol.md, "Email codes"): the code from the CSPRNG, stored
/// hashed and sealed for the outbox, the limits counted by the store's one transaction.
public struct EmailCodes: Sendable {
    let store: any EmailCodeStore
    let secrets: any Secrets
    let sealer: any SecretSealing

    /// - Parameters:
    ///   - store: the codes and the outbox.
    ///   - secrets: the CSPRNG, ids and digests.
    ///   - sealer: AES-256-GCM under the deployment's key, for the code in the outbox.
    public init(store: any EmailCodeStore, secrets: any Secrets, sealer: any SecretSealing) {
        self.store = store
        self.secrets = secrets
        self.sealer = sealer
    }

    /// What a new flow is about.
    public struct Request: Sendable {
        public var userID: String?
        public var purpose: EmailCodePurpose
        public var browserBindingHash: String
        public var authorizationRequestID: String?
        public var passwordHash: String?
        public var newEmail: String?
        public var newEmailKey: String?

        public init(
            userID: String?, purpose: EmailCodePurpose, browserBindingHash: String, authorizationRequestID: String? = nil,
            passwordHash: String? = nil, newEmail: String? = nil, newEmailKey: String? = nil
        ) {
            self.userID = userID
            self.purpose = purpose
            self.browserBindingHash = browserBindingHash
            self.authorizationRequestID = authorizationRequestID
            self.passwordHash = passwordHash
            self.newEmail = newEmail
            self.newEmailKey = newEmailKey
        }
    }

    /// Starts a flow: a code is made whether or not anything is sent, so the work and the page are the same.
    /// - Returns: the flow's id and whether a message was queued.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG or sealing fails.
    public func issue(_ request: Request, now: Date) throws -> (flowID: String, result: CodeIssueResult, sent: Bool) {
        let flowID = secrets.newID()
        let code = try EmailCodeRules.newCode(secrets: secrets)
        let sealed = try Data(sealer.seal(Array(code.utf8), associatedData: EmailCodeRules.sealingContext(flowID: flowID)))
            .base64EncodedString()
        let issue = CodeIssue(
            flowID: flowID, userID: request.userID, purpose: request.purpose, browserBindingHash: request.browserBindingHash,
            authorizationRequestID: request.authorizationRequestID,
            codeHash: EmailCodeRules.digest(flowID: flowID, code: code, secrets: secrets),
            codeSealed: request.userID == nil ? nil : sealed, expiresAt: now.addingTimeInterval(EmailCodeRules.lifetimeSeconds),
            passwordHash: request.passwordHash, newEmail: request.newEmail, newEmailKey: request.newEmailKey)
        let result = try store.issueCode(issue, now: now, perHour: EmailCodeRules.perHour, perDay: EmailCodeRules.perDay)
        return (flowID, result, request.userID != nil && result == .queued)
    }

    /// The flow `id` when it belongs to the browser whose binding digest is `bindingHash`.
    /// - Throws: `StoreUnavailable`.
    public func flow(id: String, bindingHash: String) throws -> EmailCodeFlowRecord? {
        guard UUID(uuidString: id) != nil, let flow = try store.codeFlow(id: id.lowercased()) else { return nil }
        guard secrets.constantTimeEquals(Array(flow.browserBindingHash.utf8), Array(bindingHash.utf8)) else { return nil }
        return flow
    }

    /// Checks a typed code against the flow, counting the attempt atomically.
    /// - Throws: `StoreUnavailable`.
    public func enter(flow: EmailCodeFlowRecord, typed: String, now: Date) throws -> CodeAttemptOutcome {
        // Input that is not six digits still counts as a wrong attempt (a hash nothing matches).
        let code = EmailCodeRules.typed(typed) ?? "not-a-code"
        let facts = try store.attemptCode(
            id: flow.id, codeHash: EmailCodeRules.digest(flowID: flow.id, code: code, secrets: secrets), now: now,
            maxAttempts: EmailCodeRules.maxAttempts, lockAfter: EmailCodeRules.lockAfterEndedCodes,
            lockWindowSeconds: EmailCodeRules.lockWindowSeconds, lockSeconds: EmailCodeRules.lockSeconds)
        let after = facts.matched ? try store.codeFlow(id: flow.id) : flow
        return CodeAttemptOutcome.decide(facts, flow: after)
    }
}
