import Foundation

/// The store port of consent: issuing the code (which completes the pending sign-in) or ending it without
/// one (docs/protocol.md#consent-denied).
public protocol ConsentStore: Sendable {
    /// Issues a code for a pending sign-in and completes it, in one statement, so a pending sign-in yields
    /// at most one code; remembers consent when `rememberConsent` is set.
    /// - Parameters:
    ///   - codeHash: the code's digest (`Secrets.digest`; the code itself is never stored).
    ///   - lifetimeSeconds: 60 (docs/protocol.md#code-lifetime).
    /// - Returns: false when the pending sign-in is unknown, expired, completed, or not authenticated by
    ///   `browserSessionID`.
    /// - Throws: `StoreUnavailable`.
    func issueCode(
        requestID: String, browserSessionID: String, codeHash: String, rememberConsent: Bool, now: Date, lifetimeSeconds: Double
    ) throws -> Bool
    /// Ends a pending sign-in without a code (consent denied).
    /// - Returns: false when it had already ended.
    /// - Throws: `StoreUnavailable`.
    func completeAuthorizationRequest(id: String, now: Date) throws -> Bool
}

/// `POST /v1/auth/zevid/consent` and remembered consent: the person's answer for a pending sign-in.
public struct Consent: Sendable {
    /// Codes expire 60 seconds after issue (docs/protocol.md#code-lifetime).
    public static let codeLifetimeSeconds: Double = 60

    let store: any ConsentStore
    let secrets: any Secrets

    public init(store: any ConsentStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// Allows: mints the code and issues it. Consent is remembered only for a link (RFC 8252 §8.6,
    /// docs/protocol.md#remembered-consent).
    /// - Parameters:
    ///   - redirect: the pending sign-in's redirect URI (parsed at the start).
    ///   - browserSessionID: the browser session that authenticated the sign-in.
    /// - Returns: the code (`hoc_…`), or nil when the sign-in expired or was completed meanwhile.
    /// - Throws: `StoreUnavailable`; the CSPRNG's failure.
    public func allow(requestID: String, redirect: RedirectURI, browserSessionID: String, now: Date) throws -> String? {
        let code = try secrets.mintToken(prefix: "hoc_")
        let issued = try store.issueCode(
            requestID: requestID, browserSessionID: browserSessionID, codeHash: secrets.digest(code),
            rememberConsent: redirect.kind == .link, now: now, lifetimeSeconds: Self.codeLifetimeSeconds)
        return issued ? code : nil
    }

    /// Denies: ends the pending sign-in without a code.
    /// - Returns: false when a concurrent answer completed it first (one outcome per sign-in).
    /// - Throws: `StoreUnavailable`.
    public func deny(requestID: String, now: Date) throws -> Bool {
        try store.completeAuthorizationRequest(id: requestID, now: now)
    }
}
