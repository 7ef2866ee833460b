/// The scopes a sign-in was granted (docs/protocol.md, "OpenID Connect"): `openid`, `profile`, `email` and
/// `offline_access`. A requested `scope` is a space-separated list (RFC 6749 §3.3); unknown values are
/// ignored, and `profile`, `email` and `offline_access` are granted only together with `openid` (they only
/// shape the ID token and userinfo; refresh tokens are issued whatever the scope).
public struct GrantedScope: Sendable, Equatable {
    /// The known scope values, in the order a granted scope lists them.
    public static let known = ["openid", "profile", "email", "offline_access"]

    /// `openid`: an OpenID sign-in (an ID token on the exchange and each refresh; userinfo answers).
    public let openID: Bool
    /// `profile`: `name`, `picture`, `updated_at`.
    public let profile: Bool
    /// `email`: `email`, `email_verified`.
    public let email: Bool
    /// `offline_access`: asks for nothing more (refresh tokens are always issued).
    public let offlineAccess: Bool

    /// No scope granted (a plain OAuth sign-in).
    public static let none = GrantedScope(openID: false, profile: false, email: false, offlineAccess: false)

    /// A granted scope from its flags; the others are dropped without `openID`.
    public init(openID: Bool, profile: Bool, email: Bool, offlineAccess: Bool) {
        self.openID = openID
        self.profile = openID && profile
        self.email = openID && email
        self.offlineAccess = openID && offlineAccess
    }

    /// The scope granted for a requested `scope` (nil or empty: none). Values are compared byte for byte
    /// (scope tokens are case-sensitive, RFC 6749 §3.3); any run of spaces separates them.
    public init(requested: String?) {
        let values = Set((requested ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init))
        self.init(
            openID: values.contains("openid"), profile: values.contains("profile"), email: values.contains("email"),
            offlineAccess: values.contains("offline_access"))
    }

    /// The granted values, space-separated in the order of `known` (`""` when none): the token
    /// responses' `scope` (RFC 6749 §5.1), the native exchange's `session.scope`, and the stored form.
    public var value: String {
        zip(Self.known, [openID, profile, email, offlineAccess]).filter(\.1).map(\.0).joined(separator: " ")
    }
}

/// The `nonce` of an OpenID sign-in (OpenID Connect Core §3.1.2.1), echoed exactly in the ID token of the
/// code exchange. Valid under the `state` rules (docs/protocol.md#state): 1 to 512 Unicode scalars with no
/// control character (general category Cc).
public struct Nonce: Sendable, Equatable {
    /// The decoded value, as sent.
    public let value: String

    /// The accepted length, in Unicode scalars.
    public static let lengthRange: ClosedRange<Int> = 1...512

    /// Validates a decoded `nonce`. - Returns: nil when empty, over 512 scalars or holding a control
    /// character (the start answers `invalid_request`, `error_description` beginning `invalid_nonce`).
    public init?(decoded: String) {
        var count = 0
        for scalar in decoded.unicodeScalars {
            count += 1
            if count > Self.lengthRange.upperBound || scalar.properties.generalCategory == .control { return nil }
        }
        guard Self.lengthRange.contains(count) else { return nil }
        value = decoded
    }
}

/// How the person authenticated the ZevID browser session a sign-in used (`amr`, RFC 8176 §2): a password
/// (`pwd`), then a TOTP code (`otp`, `mfa`) or a recovery code (`mfa`); or a passkey, which is two factors
/// by itself (docs/passkeys.md, "Signing in").
public enum AuthenticationMethods: String, Sendable, Equatable, CaseIterable {
    /// The password alone: `["pwd"]`.
    case password = "pwd"
    /// The password and a TOTP code: `["pwd", "otp", "mfa"]`.
    case passwordAndTOTP = "pwd otp mfa"
    /// The password and a recovery code: `["pwd", "mfa"]`.
    case passwordAndRecoveryCode = "pwd mfa"
    /// A device-bound passkey (backup eligibility clear): `["hwk", "user", "mfa"]`.
    case deviceBoundPasskey = "hwk user mfa"
    /// A synced passkey (backup eligible): `["swk", "user", "mfa"]`.
    case syncedPasskey = "swk user mfa"
    /// An upstream OpenID provider (Apple, Google, …) alone: `["fed"]` (docs/federation.md, "Hosted sign-in").
    case federated = "fed"
    /// An upstream provider, then a TOTP code: `["fed", "otp", "mfa"]`.
    case federatedAndTOTP = "fed otp mfa"
    /// An upstream provider, then a recovery code: `["fed", "mfa"]`.
    case federatedAndRecoveryCode = "fed mfa"

    /// The `amr` values, in order.
    public var values: [String] { rawValue.split(separator: " ").map(String.init) }

    /// The methods stored as `rawValue`; anything else (a session made before they were recorded) reads as
    /// the password alone.
    public init(stored: String?) {
        self = stored.flatMap(Self.init(rawValue:)) ?? .password
    }

    /// The methods of a sign-in whose password (or, when `federated`, whose upstream provider's sign-in) was
    /// followed by `code` (a TOTP code, or a recovery code).
    public init(secondFactor code: SecondFactorCode?, federated: Bool = false) {
        switch (code, federated) {
        case (.recovery, false): self = .passwordAndRecoveryCode
        case (.recovery, true): self = .federatedAndRecoveryCode
        case (_, false): self = .passwordAndTOTP
        case (_, true): self = .federatedAndTOTP
        }
    }
}
