import Encoding
import Foundation

/// What a session was granted and how its sign-in was authenticated, as the exchange and the refresh read it
/// from their one statement (docs/protocol.md, "OpenID Connect").
public struct SessionGrant: Sendable, Equatable {
    /// The granted scope (`.none` for a plain OAuth sign-in).
    public var scope: GrantedScope
    /// The start's `nonce`, on the code exchange only (nil on a refresh).
    public var nonce: String?
    /// How the ZevID browser session was authenticated.
    public var methods: AuthenticationMethods
    /// When the person last authenticated (the browser session's `auth_time`).
    public var authTime: Date
    /// The environment's `idTokenSigningAlg`.
    public var algorithm: SigningAlgorithm
    /// When the account's profile was last updated (`updated_at`).
    public var profileUpdatedAt: Date
    /// Whether the account's email address is verified (by an emailed code; docs/protocol.md, "Email verification").
    public var emailVerified: Bool

    /// A grant from its parts.
    public init(
        scope: GrantedScope, nonce: String? = nil, methods: AuthenticationMethods = .password, authTime: Date,
        algorithm: SigningAlgorithm = .rs256, profileUpdatedAt: Date, emailVerified: Bool = false
    ) {
        self.scope = scope
        self.nonce = nonce
        self.methods = methods
        self.authTime = authTime
        self.algorithm = algorithm
        self.profileUpdatedAt = profileUpdatedAt
        self.emailVerified = emailVerified
    }

    /// No scope: no ID token, no userinfo.
    public static let plain = SessionGrant(
        scope: .none, authTime: Date(timeIntervalSince1970: 0), profileUpdatedAt: Date(timeIntervalSince1970: 0))
}

/// The claims of an ID token (OpenID Connect Core §2, §3.1.3.6, §5.1), written once with `JSONWriter` in a
/// fixed order. Pure: the signature is the `IDTokenSigner` port's.
public struct IDTokenClaims: Sendable, Equatable, JSONEncodable {
    /// How long an ID token is valid after `iat`, in seconds.
    public static let lifetimeSeconds = 3600

    public let issuer: String
    public let subject: String
    /// The publishable key (`aud`, one string, and `azp`).
    public let clientID: String
    public let issuedAt: Int
    public let authTime: Int
    public let nonce: String?
    public let methods: [String]
    /// The app session's id (`sid`).
    public let sessionID: String
    /// `at_hash` (OpenID Connect Core §3.3.2.11).
    public let accessTokenHash: String
    public let user: SessionUser
    public let scope: GrantedScope
    public let profileUpdatedAt: Int
    public let emailVerified: Bool

    /// The claims of the ID token issued for `session`, with `at_hash` of its access token
    /// (`IDTokenClaims.accessTokenHash`).
    /// - Parameters:
    ///   - issuer: `ZEVAUTH_ISSUER`, byte for byte.
    ///   - clientID: the publishable key the code or refresh token was presented with.
    ///   - now: the issue time (`iat`; `exp` is `iat` + 3600).
    public init(issuer: String, clientID: String, session: IssuedSession, accessTokenHash: String, now: Date) {
        self.issuer = issuer
        self.subject = session.user.id
        self.clientID = clientID
        self.issuedAt = Int(now.timeIntervalSince1970)
        self.authTime = Int(session.grant.authTime.timeIntervalSince1970)
        self.nonce = session.grant.nonce
        self.methods = session.grant.methods.values
        self.sessionID = session.sessionID
        self.accessTokenHash = accessTokenHash
        self.user = session.user
        self.scope = session.grant.scope
        self.profileUpdatedAt = Int(session.grant.profileUpdatedAt.timeIntervalSince1970)
        self.emailVerified = session.grant.emailVerified
    }

    /// `at_hash` for an RS256 or ES256 token (OpenID Connect Core §3.3.2.11): the base64url of the left
    /// half (16 bytes) of the SHA-256 of the access token's ASCII bytes.
    public static func accessTokenHash(_ accessToken: String, sha256: ([UInt8]) -> [UInt8]) -> String {
        Base64URL.encode(sha256(Array(accessToken.utf8)).prefix(16))
    }

    /// The claims as one compact JSON object.
    public var bytes: [UInt8] { JSONWriter.encode(self, capacity: 512) }

    public func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("iss", issuer)
            object.field("sub", subject)
            object.field("aud", clientID)
            object.field("azp", clientID)
            object.field("iat", issuedAt)
            object.field("exp", issuedAt + Self.lifetimeSeconds)
            object.field("auth_time", authTime)
            object.fieldIfPresent("nonce", nonce)
            object.field("amr", methods)
            object.field("sid", sessionID)
            object.field("at_hash", accessTokenHash)
            if scope.profile { UserClaims.profile(of: user, updatedAt: profileUpdatedAt, into: &object) }
            if scope.email { UserClaims.email(of: user, verified: emailVerified, into: &object) }
        }
    }
}

/// The claims of the `profile` and `email` scopes (OpenID Connect Core §5.1, §5.4), shared by the ID token
/// and userinfo.
public enum UserClaims {
    /// `name`, `picture` (only when the account has an image), `updated_at` (Unix seconds).
    public static func profile(of user: SessionUser, updatedAt: Int, into object: inout JSONObjectWriter) {
        object.field("name", user.name)
        object.fieldIfPresent("picture", user.imageURL)
        object.field("updated_at", updatedAt)
    }

    /// `email`, `email_verified`.
    public static func email(of user: SessionUser, verified: Bool, into object: inout JSONObjectWriter) {
        object.field("email", user.email)
        object.field("email_verified", verified)
    }
}

/// Signs the ID token of a session just issued or refreshed (docs/protocol.md, "OpenID Connect"): the claims
/// built here, the signature through the `IDTokenSigner` port with the environment's algorithm.
public struct IssueIDToken: Sendable {
    let signer: any IDTokenSigner
    let sha256: @Sendable ([UInt8]) -> [UInt8]

    /// - Parameters:
    ///   - signer: the current signing keys.
    ///   - sha256: SHA-256 (for `at_hash`).
    public init(signer: any IDTokenSigner, sha256: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        self.signer = signer
        self.sha256 = sha256
    }

    /// The compact JWS for `session`, or nil when its sign-in was not an OpenID one (no `openid` scope).
    /// - Throws: `StoreUnavailable` when the signing keys cannot be read.
    public func callAsFunction(issuer: String, clientID: String, session: IssuedSession, accessToken: String, now: Date) throws
        -> String?
    {
        guard session.grant.scope.openID else { return nil }
        let claims = IDTokenClaims(
            issuer: issuer, clientID: clientID, session: session,
            accessTokenHash: IDTokenClaims.accessTokenHash(accessToken, sha256: sha256), now: now)
        return try signer.sign(claims: claims.bytes, algorithm: session.grant.algorithm, now: now)
    }
}
