import Crypto
import Encoding
import Foundation
import HTTPServer
import PostgresStore

/// The checks the hosted sign-in and the account pages share: the rate-limited password check, the
/// second factor (TOTP or a recovery code), and sealing TOTP secrets at rest.
struct AccountSecurity: Sendable {
    let context: ServerContext

    /// How long a sign-in may wait for its second factor, in seconds.
    static let mfaChallengeLifetimeSeconds: Double = 600

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

    /// Counts the attempt against the account and the client address, then verifies the password with
    /// Argon2id; an unknown email costs one dummy verification so timing does not reveal accounts.
    /// - Throws: `PostgresError`.
    /// - Parameter account: when set (a signed-in person confirming their password), the address must lead
    ///   to this account id, else the answer is `.wrong`.
    func checkPassword(email: String, password: String, request: HTTPRequest, account: String? = nil) throws -> PasswordCheck {
        let limiter = RateLimiter(context: context)
        let address = ClientAddress.of(request, configuration: context.configuration)
        if case .limited(let seconds) = try limiter.hit(.passwordPerAddress, key: address) { return .limited(seconds) }
        guard let normalized = EmailAddress(email)?.key else { return .invalidEmail }
        if case .limited(let seconds) = try limiter.hit(.passwordPerAccount, key: Self.accountKey(normalized)) {
            return .limited(seconds)
        }
        let user = try context.store.user(emailNormalized: normalized)
        let matches: Bool
        if let user, !user.closed, password.utf8.count <= 1024 {
            matches = (try? context.passwordHasher.verify(password, against: user.passwordHash)) ?? false
        } else {
            _ = try? context.passwordHasher.verifyDummy(password)
            matches = false
        }
        guard let user, matches, account == nil || account == user.id else { return .wrong }
        return .ok(user)
    }

    /// The per-account rate-limit key: a hash of the normalized email, so unknown addresses are limited
    /// the same way (no difference to observe) and no address is stored in the counters.
    static func accountKey(_ normalizedEmail: String) -> String {
        Crypto.hexSHA256("account:" + normalizedEmail)
    }

    // MARK: TOTP secrets at rest

    /// Associated data binding a sealed secret to its account: a box copied onto another row does not open.
    static func associatedData(userID: String) -> [UInt8] { Array("zevauth:totp:v1:\(userID)".utf8) }

    /// Seals a TOTP secret with AES-256-GCM under `ZEVAUTH_ENCRYPTION_KEY`.
    /// - Returns: base64 of `nonce ‖ ciphertext ‖ tag`.
    static func seal(secret: [UInt8], userID: String, key: [UInt8]) throws -> String {
        Data(try Crypto.aesGCMSeal(key: key, plaintext: secret, associatedData: associatedData(userID: userID))).base64EncodedString()
    }

    /// Opens a sealed TOTP secret. - Throws: `Crypto.SealError` (wrong key, altered row, other account's box).
    static func open(sealed: String, userID: String, key: [UInt8]) throws -> [UInt8] {
        guard let bytes = Data(base64Encoded: sealed) else { throw Crypto.SealError.authenticationFailed }
        return try Crypto.aesGCMOpen(key: key, sealed: Array(bytes), associatedData: associatedData(userID: userID))
    }

    /// The Key URI authenticator apps read (Google Authenticator's "Key Uri Format"): label
    /// `ZevAuth:<email>`, Base32 secret without padding, issuer, and the parameters spelled out.
    static func otpauthURI(email: String, secret: [UInt8]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label = "ZevAuth:" + (email.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=ZevAuth&algorithm=SHA1&digits=6&period=30"
    }

    // MARK: Recovery codes

    /// Ten new recovery codes, `zrc_XXXXX-XXXXX`: 50 bits each (10 Base32 characters) from the CSPRNG.
    static func newRecoveryCodes() throws -> [String] {
        try (0..<10).map { _ in
            let characters = Array(Base32.encode(try Crypto.randomBytes(7)).prefix(10))
            return "zrc_" + String(characters[0..<5]) + "-" + String(characters[5..<10])
        }
    }

    /// The canonical form of a typed recovery code (upper-case, no spaces or hyphens, with its prefix), or
    /// nil when it cannot be one. Its SHA-256 is what is stored.
    static func canonicalRecoveryCode(_ typed: String) -> String? {
        var text = typed.uppercased().filter { $0 != " " && $0 != "-" }
        if text.hasPrefix("ZRC_") { text.removeFirst(4) }
        guard text.count == 10, Base32.decode(text)?.isEmpty == false else { return nil }
        return "zrc_" + text
    }

    // MARK: Second factor

    /// The outcome of a second-factor attempt.
    enum SecondFactor {
        case accepted
        case rejected
        case limited(Int)
        /// A factor is enrolled but the server has no encryption key to read it.
        case unavailable
    }

    /// Checks a TOTP code (one step of drift; a used step never again) or an unused recovery code,
    /// counted against the account's MFA limit first.
    /// - Throws: `PostgresError`.
    func verifySecondFactor(userID: String, input: String) throws -> SecondFactor {
        if case .limited(let seconds) = try RateLimiter(context: context).hit(.mfaPerAccount, key: userID) { return .limited(seconds) }
        let typed = input.filter { $0 != " " }
        if typed.count == 6, typed.allSatisfy(\.isASCII), typed.allSatisfy(\.isNumber) {
            guard let key = context.configuration.encryptionKey else { return .unavailable }
            guard let factor = try context.store.totpFactor(userID: userID), factor.confirmed else { return .rejected }
            guard let secret = try? Self.open(sealed: factor.secretSealed, userID: userID, key: key) else { return .unavailable }
            guard let step = TOTP.matchingStep(secret: secret, code: typed, atUnixSeconds: context.clock.now().timeIntervalSince1970)
            else { return .rejected }
            return try context.store.useTOTPStep(userID: userID, step: step) ? .accepted : .rejected
        }
        guard let canonical = Self.canonicalRecoveryCode(typed) else { return .rejected }
        return try context.store.useRecoveryCode(userID: userID, codeHash: Crypto.hexSHA256(canonical), now: context.clock.now())
            ? .accepted : .rejected
    }
}
