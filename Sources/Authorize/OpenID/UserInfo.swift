import Encoding
import Foundation

/// `GET`/`POST /oauth2/userinfo` (OpenID Connect Core §5.3; docs/protocol.md, "OpenID Connect"): the claims
/// of the granted scopes for the session a live access token belongs to. The session comes from the
/// `CurrentSessionStore` port (the same live-token rule as `GET /v1/auth/session`).
public struct UserInfo: Sendable {
    /// What userinfo answers.
    public enum Outcome: Sendable, Equatable {
        /// Not a live access token (unknown, expired, revoked, a refresh token): 401 `invalid_token`.
        case invalidToken
        /// A live access token whose session was not granted `openid`: 403 `insufficient_scope`.
        case insufficientScope
        /// 200 with these claims.
        case claims(UserInfoClaims)
    }

    let sessions: CurrentSession

    /// - Parameters:
    ///   - store: live sessions by access token.
    ///   - secrets: digests the token.
    public init(store: any CurrentSessionStore, secrets: any Secrets) {
        sessions = CurrentSession(store: store, secrets: secrets)
    }

    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(accessToken: String, now: Date) throws -> Outcome {
        Self.outcome(for: try sessions(accessToken: accessToken, now: now))
    }

    /// The answer for the live session a token belongs to (nil: none), when the caller looked it up itself
    /// (a DPoP-bound token's binding is checked between the two; docs/dpop.md, "Resources").
    public static func outcome(for session: IssuedSession?) -> Outcome {
        guard let session else { return .invalidToken }
        guard session.grant.scope.openID else { return .insufficientScope }
        return .claims(UserInfoClaims(session: session))
    }
}

/// The userinfo body: `sub`, then the `profile` and `email` claims when granted (OpenID Connect Core §5.3.2).
public struct UserInfoClaims: Sendable, Equatable, JSONEncodable {
    public let user: SessionUser
    public let grant: SessionGrant

    /// The claims for `session`.
    public init(session: IssuedSession) {
        user = session.user
        grant = session.grant
    }

    public func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("sub", user.id)
            if grant.scope.profile {
                UserClaims.profile(of: user, updatedAt: Int(grant.profileUpdatedAt.timeIntervalSince1970), into: &object)
            }
            if grant.scope.email { UserClaims.email(of: user, verified: grant.emailVerified, into: &object) }
        }
    }
}
