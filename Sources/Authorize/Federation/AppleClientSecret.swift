import Encoding
import Foundation

/// Apple's client secret: an ES256 JWT the server mints from the provider's team ID, key ID and `.p8` key
/// and sends as `client_secret` to `https://appleid.apple.com/auth/token` (Apple, "Creating a client
/// secret"; a JWT client assertion in the shape of RFC 7523 §3). Pure: the signature comes from the caller
/// (`Crypto.SigningKey.sign`, the ES256 signer of ID tokens) over `JWS.signingInput`.
///
/// Apple refuses a secret whose `exp` is more than 15777000 seconds (6 months) after its `iat`. This
/// server mints one valid for 150 days and mints again when fewer than 30 days remain, so every secret it
/// sends has at least 30 days left (docs/federation.md, "Apple's client secret").
public enum AppleClientSecret {
    /// The audience Apple requires (`aud`).
    public static let audience = "https://appleid.apple.com"
    /// Apple's upper bound on `exp − iat`: 15777000 seconds (about 6 months).
    public static let maximumLifetimeSeconds: Double = 15_777_000
    /// The lifetime of a minted secret: 150 days.
    public static let lifetimeSeconds: Double = 150 * 86_400
    /// A held secret is minted again once fewer than this many seconds (30 days) of it remain.
    public static let renewBeforeSeconds: Double = 30 * 86_400

    /// The protected header `{"alg":"ES256","kid":KEY_ID}`, in that order.
    public static func header(keyID: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 48)
        writer.object { header in
            header.field("alg", SigningAlgorithm.es256.rawValue)
            header.field("kid", keyID)
        }
        return writer.bytes
    }

    /// The claims `{"iss":TEAM_ID,"iat","exp","aud":"https://appleid.apple.com","sub":SERVICES_ID}`, the
    /// times in whole seconds since 1970 (`iat` is `now` rounded down; `exp` = `iat` + `lifetimeSeconds`).
    public static func claims(teamID: String, servicesID: String, now: Date) -> [UInt8] {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        var writer = JSONWriter(capacity: 160)
        writer.object { claims in
            claims.field("iss", teamID)
            claims.field("iat", issuedAt)
            claims.field("exp", issuedAt + Int64(lifetimeSeconds))
            claims.field("aud", audience)
            claims.field("sub", servicesID)
        }
        return writer.bytes
    }

    /// The JWS signing input of a secret minted at `now` (RFC 7515 §5.1).
    public static func signingInput(teamID: String, keyID: String, servicesID: String, now: Date) -> [UInt8] {
        JWS.signingInput(header: header(keyID: keyID), payload: claims(teamID: teamID, servicesID: servicesID, now: now))
    }

    /// When a secret minted at `mintedAt` expires (its `exp`).
    public static func expiresAt(mintedAt: Date) -> Date {
        Date(timeIntervalSince1970: mintedAt.timeIntervalSince1970.rounded(.down) + lifetimeSeconds)
    }

    /// Whether a held secret that expires at `expiresAt` is to be minted again at `now`.
    public static func needsRenewal(expiresAt: Date, now: Date) -> Bool {
        expiresAt.timeIntervalSince(now) < renewBeforeSeconds
    }
}
