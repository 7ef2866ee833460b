import Authorize
import Crypto
import Foundation

/// Apple's client secret for a provider of kind `apple` (docs/federation.md, "Apple's client secret"): an
/// ES256 JWT (`AppleClientSecret`) signed with the provider's `.p8` key through `Crypto.SigningKey.sign`,
/// the signer of ES256 ID tokens.
///
/// Each instance keeps the secrets it minted in memory, keyed by the provider's id and `updatedAt` (so an
/// edit of the provider on any instance is a new key here), and mints again when fewer than 30 days of the
/// held one remain. Nothing is stored: instances mint their own, all equally valid for Apple.
public final class AppleClientSecretMinter: @unchecked Sendable {
    private struct Held {
        let secret: String
        let expiresAt: Date
    }

    private let providers: UpstreamProviders
    private let lock = NSLock()
    private var held: [String: Held] = [:]

    /// - Parameter providers: opens the sealed private key (`ZEVAUTH_ENCRYPTION_KEY`).
    public init(providers: UpstreamProviders) { self.providers = providers }

    /// Why no secret could be minted. Carries no key material.
    public enum Failure: Error, Equatable, Sendable {
        /// The provider is not of kind `apple`.
        case notApple
        /// The sealed key does not open under this server's key, or is no P-256 key.
        case keyUnavailable
    }

    /// The client secret to send for `provider` at `now`: the held one while more than 30 days of it
    /// remain, else a fresh one.
    /// - Throws: `Failure`; `Crypto.SigningError` when OpenSSL fails to sign.
    public func secret(for provider: UpstreamProviderRecord, now: Date) throws -> String {
        guard provider.kind == .apple, let teamID = provider.appleTeamID, let keyID = provider.appleKeyID,
            let sealed = provider.sealedApplePrivateKey
        else { throw Failure.notApple }
        let cacheKey = "\(provider.id)@\(provider.updatedAt.timeIntervalSince1970)"
        if let current = lock.withLock({ held[cacheKey] }), !AppleClientSecret.needsRenewal(expiresAt: current.expiresAt, now: now) {
            return current.secret
        }
        guard let der = providers.open(sealed, providerID: provider.id, field: ProviderFields.privateKey),
            let key = try? Crypto.SigningKey.load(pkcs8: der, type: .p256)
        else { throw Failure.keyUnavailable }
        let input = AppleClientSecret.signingInput(teamID: teamID, keyID: keyID, servicesID: provider.clientID, now: now)
        let secret = JWS.compact(signingInput: input, signature: try key.sign(input))
        lock.withLock {
            // Older versions of this provider are dropped with the new one's arrival.
            held = held.filter { !$0.key.hasPrefix(provider.id + "@") }
            held[cacheKey] = Held(secret: secret, expiresAt: AppleClientSecret.expiresAt(mintedAt: now))
        }
        return secret
    }
}
