import Authorize
import Crypto
import Encoding
import Foundation
import HTTPServer

/// The edge of the checks the hosted sign-in and the account pages share: the rate limits around the
/// password check (`AccountSignIn`) and the second factor (`VerifySecondFactor`), and the `otpauth://` link.
struct AccountSecurity: Sendable {
    let context: ServerContext

    /// How long a sign-in may wait for its second factor, in seconds (`AccountRules`).
    static let mfaChallengeLifetimeSeconds: Double = AccountRules.mfaChallengeLifetimeSeconds

    /// The outcome of a password attempt.
    enum PasswordCheck {
        case ok(UserRecord)
        /// Wrong email or password (one answer for both, at the same cost).
        case wrong
        /// The email is not an address this server accepts (`EmailAddress`): the form's 400.
        case invalidEmail
        /// Over a password rate limit; try again after this many seconds.
        case limited(Int)
    }

    /// Counts the attempt against the client address, parses the address (once, here), counts it against
    /// the account, then runs `AccountSignIn` (Argon2id; an unknown email costs one dummy verification).
    /// - Parameter account: when set (a signed-in person confirming their password), the address must lead
    ///   to this account id, else the answer is `.wrong`.
    /// - Throws: `StoreUnavailable`.
    func checkPassword(email: String, password: String, request: HTTPRequest, account: String? = nil) throws -> PasswordCheck {
        let limiter = RateLimiter(context: context)
        let address = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try limiter.hit(.passwordPerAddress, key: address) { return .limited(seconds) }
        guard let email = EmailAddress(email) else { return .invalidEmail }
        if case .limited(let seconds) = try limiter.hit(.passwordPerAccount, key: Self.accountKey(email.key)) {
            return .limited(seconds)
        }
        let signIn = AccountSignIn(store: context.accounts.signIn, passwords: context.accountPasswords)
        switch try signIn(email: email, password: password, expectedAccount: account) {
        case .verified(let user): return .ok(user)
        case .wrong:
            // A failed password of an existing account is one of its security events (docs/console.md,
            // "Audit log"); an unknown address has no one to record it for.
            if let user = try context.accounts.signIn.user(emailKey: email.key), account == nil || account == user.id {
                try PersonalActivity(context: context).record("signin.failed_password", userID: user.id, request)
            }
            return .wrong
        }
    }

    /// The per-account rate-limit key: a hash of the normalized email, so unknown addresses are limited
    /// the same way (no difference to observe) and no address is stored in the counters.
    static func accountKey(_ normalizedEmail: String) -> String {
        Crypto.hexSHA256("account:" + normalizedEmail)
    }

    /// The Key URI authenticator apps read (Google Authenticator's "Key Uri Format"): label
    /// `ZevAuth:<email>`, Base32 secret without padding, issuer, and the parameters spelled out.
    static func otpauthURI(email: String, secret: [UInt8]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label = "ZevAuth:" + (email.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=ZevAuth&algorithm=SHA1&digits=6&period=30"
    }

    /// The outcome of a second-factor attempt.
    enum SecondFactor {
        case accepted
        case rejected
        case limited(Int)
        /// A factor is enrolled but the server has no encryption key to read it.
        case unavailable
    }

    /// Counts the attempt against the account's MFA limit, then runs `VerifySecondFactor` on the code as
    /// parsed here (`SecondFactorCode`).
    /// - Throws: `StoreUnavailable`.
    func verifySecondFactor(userID: String, input: String) throws -> SecondFactor {
        if case .limited(let seconds) = try RateLimiter(context: context).hit(.mfaPerAccount, key: userID) { return .limited(seconds) }
        let verify = VerifySecondFactor(
            store: context.accounts.secondFactor, codes: context.oneTimePasswords, sealer: context.totpSealer, secrets: context.secrets)
        switch try verify(userID: userID, code: SecondFactorCode(input), now: context.clock.now()) {
        case .accepted: return .accepted
        case .rejected: return .rejected
        case .unavailable: return .unavailable
        }
    }
}
