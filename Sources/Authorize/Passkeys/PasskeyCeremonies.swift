import Encoding
import Foundation
import WebAuthn

/// The functions the passkey use cases need from C libraries, injected by the server (docs/passkeys.md,
/// "Layers"): the WebAuthn primitives (libcbor's decoder, OpenSSL's SHA-256, comparison and signature
/// checks) and libcbor's encoder, which writes a credential's `COSE_Key` for storage.
public struct PasskeyCrypto: Sendable {
    /// The primitives `WebAuthn` verifies with.
    public let primitives: WebAuthn.Primitives
    /// Encodes a CBOR value (`CBOR.encode`); nil when it cannot.
    public let encodeCBOR: @Sendable (CBORValue) -> [UInt8]?

    /// The set of functions.
    public init(primitives: WebAuthn.Primitives, encodeCBOR: @escaping @Sendable (CBORValue) -> [UInt8]?) {
        self.primitives = primitives
        self.encodeCBOR = encodeCBOR
    }

    /// The stored `COSE_Key` bytes read back, or nil when they no longer decode.
    func key(_ bytes: [UInt8]) -> COSEKey? {
        guard let (value, length) = try? primitives.decodeCBORItem(bytes[...]), length == bytes.count else { return nil }
        return try? COSEKey(cbor: value)
    }
}

/// The relying party as configured (`ZEVAUTH_PASSKEY_RP_ID`, docs/passkeys.md, "Relying party").
public struct RelyingParty: Sendable, Equatable {
    /// The RP ID: the issuer's host or a registrable parent of it.
    public let id: String
    /// The one accepted origin: the issuer's (`https://id.example.com`).
    public let origin: String

    /// A relying party (the configuration has checked `id` against the issuer).
    public init(id: String, origin: String) {
        self.id = id
        self.origin = origin
    }
}

/// What issuing and consuming a ceremony's challenge needs from storage.
public protocol PasskeyChallengeStore: Sendable {
    /// Stores a challenge by the hex SHA-256 of its bytes, unused, expiring `lifetimeSeconds` after `now`.
    /// - Parameter userID: the account creating a passkey (`register`), nil for a sign-in.
    /// - Throws: `StoreUnavailable`.
    func issuePasskeyChallenge(
        hash: String, purpose: PasskeyPurpose, userID: String?, bindingHash: String, now: Date, lifetimeSeconds: Double
    ) throws
    /// Marks the challenge used, in one statement, when it exists with this purpose and binding, is unused
    /// and unexpired at `now`. - Returns: whether it was consumed, and for `register` its account.
    /// - Throws: `StoreUnavailable`.
    func consumePasskeyChallenge(hash: String, purpose: PasskeyPurpose, bindingHash: String, now: Date) throws -> (
        consumed: Bool, userID: String?
    )
}

/// A fresh challenge: 32 bytes from the CSPRNG (through `Secrets`, which mints 32-byte tokens).
func freshChallenge(_ secrets: any Secrets) throws -> [UInt8] {
    guard let bytes = Base64URL.decodeCanonical(try secrets.mintToken(prefix: "")), bytes.count == PasskeyRules.challengeBytes else {
        throw PasskeyRandomFailure()
    }
    return bytes
}

/// The CSPRNG answered something other than 32 bytes (never expected).
struct PasskeyRandomFailure: Error {}

/// The challenge a response's `clientDataJSON` carries, consumed for `purpose` and this browser, or the
/// failure to answer. The JSON is parsed here only to find the challenge; the ceremony checks it again.
func consumeChallenge(
    clientDataJSON: [UInt8], purpose: PasskeyPurpose, bindingHash: String, store: any PasskeyChallengeStore, secrets: any Secrets,
    now: Date
) throws -> Result<(challenge: [UInt8], userID: String?), PasskeyFailure> {
    guard let client = try? CollectedClientData(json: clientDataJSON) else { return .failure(.invalid) }
    let hash = Base16.lowercase(secrets.sha256(client.challenge))
    let consumed = try store.consumePasskeyChallenge(hash: hash, purpose: purpose, bindingHash: bindingHash, now: now)
    guard consumed.consumed else { return .failure(.challengeExpired) }
    return .success((client.challenge, consumed.userID))
}

/// Lower-case hex, as challenge digests are stored (like every other digest, `Secrets.digest`).
enum Base16 {
    static func lowercase(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return text
    }
}
