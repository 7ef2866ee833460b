import Crypto
import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// A session's first token pair is written with the session row (docs/decisions.md, "The first token pair
/// lives on the session row"): the exchange writes one row, and the first pair works everywhere a token is
/// read (refresh, the current session, introspection, revocation), found through the views of sql/021.
@Suite struct FirstTokenPairTests {
    /// Signs in and exchanges; answers the server, the fixture and the session object of the answer.
    static func exchanged() throws -> (ExchangeTests.Issued, [String: Any]) {
        let issued = try ExchangeTests.issue()
        let response = try issued.driver.exchange(
            clientID: issued.fixture.developmentKey,
            fields: ["code": issued.code, "codeVerifier": issued.pkce.verifier, "redirectUri": ExchangeTests.redirect])
        #expect(response.status == 200)
        return (issued, try #require(response.json["session"] as? [String: Any]))
    }

    @Test func theExchangeWritesTheFirstPairIntoTheSessionRowAndNoTokenRows() throws {
        let (_, session) = try Self.exchanged()
        let sessionID = try #require(session["id"] as? String)
        let access = try #require(session["accessToken"] as? String)
        let refresh = try #require(session["refreshToken"] as? String)
        let row = try TestDatabase.pool.query(
            """
            SELECT s.first_access_token_hash, s.first_refresh_token_hash,
                   s.first_access_expires_at > s.created_at AS expires_later,
                   (SELECT count(*) FROM access_tokens WHERE session_id = s.id) AS access_rows,
                   (SELECT count(*) FROM refresh_tokens WHERE session_id = s.id) AS refresh_rows
            FROM sessions s WHERE s.id = $1
            """, [sessionID]
        ).rows[0]
        #expect(row["first_access_token_hash"] == Crypto.hexSHA256(access))
        #expect(row["first_refresh_token_hash"] == Crypto.hexSHA256(refresh))
        #expect(try row.bool("expires_later"))
        #expect(try row.int("access_rows") == 0)
        #expect(try row.int("refresh_rows") == 0)
    }

    @Test func theFirstPairIsReadEverywhereATokenIs() throws {
        let (issued, session) = try Self.exchanged()
        let client = issued.server.client
        let key = issued.fixture.developmentKey
        let access = try #require(session["accessToken"] as? String)
        let refresh = try #require(session["refreshToken"] as? String)
        // The current session by the first access token.
        let current = try client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(access)")])
        #expect(current.status == 200)
        // Introspection by a secret key.
        let secret = issued.fixture.developmentSecret
        let introspected = try client.send(
            "POST", "/oauth2/introspect",
            headers: [("Authorization", "Bearer \(secret)"), ("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(access)".utf8))
        #expect(introspected.json["active"] as? Bool == true)
        // The first refresh token rotates once (generation 1 → 2) and its replay then revokes the session.
        let refreshBody = try JSONSerialization.data(withJSONObject: ["refreshToken": refresh])
        let rotated = try client.send(
            "POST", "/v1/auth/session/refresh",
            headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")], body: Array(refreshBody))
        #expect(rotated.status == 200)
        let newAccess = try #require((rotated.json["session"] as? [String: Any])?["accessToken"] as? String)
        #expect(try client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(newAccess)")]).status == 200)
        let replayed = try client.send(
            "POST", "/v1/auth/session/refresh",
            headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")], body: Array(refreshBody))
        #expect(replayed.status == 400)
        #expect(replayed.json["error"] as? String == "invalid_grant")
        #expect(try client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(newAccess)")]).status == 401)
    }

    @Test func revokingByTheFirstRefreshTokenEndsTheSession() throws {
        let (issued, session) = try Self.exchanged()
        let client = issued.server.client
        let access = try #require(session["accessToken"] as? String)
        let refresh = try #require(session["refreshToken"] as? String)
        let body = try JSONSerialization.data(withJSONObject: ["token": refresh])
        let revoked = try client.send(
            "POST", "/v1/auth/session/revoke",
            headers: [("Authorization", "Bearer \(issued.fixture.developmentKey)"), ("Content-Type", "application/json")],
            body: Array(body))
        #expect(revoked.status == 200)
        #expect(try client.send("GET", "/v1/auth/session", headers: [("Authorization", "Bearer \(access)")]).status == 401)
    }
}
