import Foundation

/// What finishing a password sign-in needs from storage.
public protocol BrowserSignInStore: Sendable {
    /// The person's TOTP factor, confirmed or not. - Throws: `StoreUnavailable`.
    func totpFactor(userID: String) throws -> TOTPFactorRecord?
    /// Records a sign-in that now needs its second factor. - Returns: the challenge id (a UUID).
    /// - Throws: `StoreUnavailable`.
    func createMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String
    /// Starts a ZevID browser session under the digest of its cookie secret. - Returns: its id.
    /// - Throws: `StoreUnavailable`.
    func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String
}

/// After a correct password (docs/protocol.md#round-trip, "then TOTP when enrolled"): an account with a
/// confirmed TOTP factor gets a second-factor challenge bound to this browser (and to the pending app
/// sign-in, if any) before any browser session exists; any other account gets a browser session now.
public struct BrowserSignIn: Sendable {
    /// What the browser is sent to.
    public enum Outcome: Sendable, Equatable {
        /// Ask for the second factor at the MFA step with this challenge id.
        case secondFactor(challengeID: String)
        /// Signed in: `token` is the new browser-session cookie's secret (shown only to this browser).
        case signedIn(token: String, browserSessionID: String)
    }

    let store: any BrowserSignInStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: accounts' factors, challenges and browser sessions.
    ///   - secrets: mints the cookie secret and digests it and the binding for storage.
    public init(store: any BrowserSignInStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Parameters:
    ///   - user: the account whose password was just verified.
    ///   - binding: this browser's fresh binding secret (its cookie), to which a challenge is bound.
    ///   - authorizationRequestID: the pending app sign-in, or nil for the account area.
    /// - Throws: `StoreUnavailable`, or when the CSPRNG fails.
    public func callAsFunction(user: UserRecord, binding: String, authorizationRequestID: String?, now: Date) throws -> Outcome {
        if try store.totpFactor(userID: user.id)?.confirmed == true {
            let challenge = try store.createMFAChallenge(
                userID: user.id, browserBindingHash: secrets.digest(binding), authorizationRequestID: authorizationRequestID,
                now: now, lifetimeSeconds: AccountRules.mfaChallengeLifetimeSeconds)
            return .secondFactor(challengeID: challenge)
        }
        let token = try secrets.mintToken(prefix: AccountRules.browserSessionTokenPrefix)
        let id = try store.createBrowserSession(tokenHash: secrets.digest(token), userID: user.id, now: now)
        return .signedIn(token: token, browserSessionID: id)
    }
}
