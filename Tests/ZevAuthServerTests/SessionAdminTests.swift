import Authorize
import Foundation
import PostgresStore
import Synchronization
import Testing
import ZevAuthServer
import ZevAuthTesting

/// docs/protocol.md#admin-settings: the session settings (shorten, never lengthen; 400 naming the field) and
/// secret-key rotation (a new key works at once, the old one until revoked, never zero keys).
@Suite struct SessionAdminTests {
    func make() throws -> SessionDriver {
        return try SessionDriver.started()
    }

    @Test func settingsAnswerTheDefaultsAndAcceptShorterValues() throws {
        let driver = try make()
        let secret = driver.fixture.developmentSecret
        let current = try driver.sendJSON("GET", "/v1/admin/settings", bearer: secret)
        #expect(current.status == 200)
        #expect(current.json["sessionMaxAgeDays"] as? Int == 90)
        #expect(current.json["sessionIdleDays"] as? Int == 30)
        #expect(current.json["accessTokenTtlMinutes"] as? Int == 15)
        #expect(current.json["refreshReuseGraceSeconds"] as? Int == 0)
        let patched = try driver.sendJSON(
            "PATCH", "/v1/admin/settings", bearer: secret,
            ["sessionMaxAgeDays": 30, "sessionIdleDays": 1, "accessTokenTtlMinutes": 60, "refreshReuseGraceSeconds": 60])
        #expect(patched.status == 200)
        #expect(patched.json["sessionIdleDays"] as? Int == 1)
        // Only this environment changed.
        #expect(
            try driver.sendJSON("GET", "/v1/admin/settings", bearer: driver.fixture.productionSecret).json["sessionIdleDays"] as? Int == 30)
    }

    @Test(arguments: [
        ("sessionMaxAgeDays", "91"), ("sessionMaxAgeDays", "0"), ("sessionIdleDays", "31"), ("accessTokenTtlMinutes", "4"),
        ("accessTokenTtlMinutes", "61"), ("refreshReuseGraceSeconds", "-1"), ("refreshReuseGraceSeconds", "61"),
        ("sessionIdleDays", "1.5"), ("sessionIdleDays", "true"), ("sessionIdleDays", "\"7\""),
    ])
    func lengtheningOrOutOfBoundsIsRefusedNamingTheField(field: String, json: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        let driver = try make()
        // A valid change beside the bad one (or replaced by it), to show nothing is half-applied.
        var body: [String: Any] = ["sessionIdleDays": 10]
        body[field] = value
        let response = try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: driver.fixture.developmentSecret, body)
        #expect(response.status == 400)
        #expect(response.json["error"] as? String == "invalid_request")
        #expect((response.json["error_description"] as? String ?? "").hasPrefix(field + " "))
        // Nothing changed, not even the valid field.
        #expect(
            try driver.sendJSON("GET", "/v1/admin/settings", bearer: driver.fixture.developmentSecret).json["sessionIdleDays"] as? Int
                == 30)
    }

    @Test func settingsNeedTheEnvironmentsSecretKey() throws {
        let driver = try make()
        #expect(try driver.sendJSON("GET", "/v1/admin/settings", bearer: nil).status == 401)
        #expect(try driver.sendJSON("GET", "/v1/admin/settings", bearer: driver.fixture.developmentKey).status == 401)
        #expect(try driver.sendJSON("PATCH", "/v1/admin/settings", bearer: TestServer.operatorToken, ["sessionIdleDays": 7]).status == 403)
    }

    @Test func rotatingSecretKeys() throws {
        let driver = try make()
        let old = driver.fixture.developmentSecret
        let created = try driver.sendJSON("POST", "/v1/admin/keys", bearer: old)
        #expect(created.status == 201)
        let new = try #require(created.json["secretKey"] as? String)
        let newID = try #require(created.json["id"] as? String)
        #expect(new.hasPrefix("sk_test_"))
        #expect(created.json["createdAt"] is String)
        // Both work at once.
        #expect(try driver.sendJSON("GET", "/v1/admin/settings", bearer: new).status == 200)
        #expect(try driver.sendJSON("GET", "/v1/admin/settings", bearer: old).status == 200)
        // The list has both, without any key; `current` marks the caller.
        let list = try driver.sendJSON("GET", "/v1/admin/keys", bearer: new)
        #expect(list.status == 200)
        #expect(!list.text.contains(new) && !list.text.contains(old))
        let items = try #require(list.json["items"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items.first { $0["id"] as? String == newID }?["current"] as? Bool == true)
        #expect(items.first { $0["id"] as? String == newID }?["suffix"] as? String == String(new.suffix(4)))
        let oldID = try #require(items.first { $0["id"] as? String != newID }?["id"] as? String)
        // Revoke the old key with the new one: the old stops working.
        #expect(try driver.sendJSON("DELETE", "/v1/admin/keys/\(oldID)", bearer: new).status == 204)
        #expect(try driver.sendJSON("GET", "/v1/admin/settings", bearer: old).status == 401)
        let after = try driver.sendJSON("GET", "/v1/admin/keys", bearer: new)
        #expect((after.json["items"] as? [[String: Any]])?.first { $0["id"] as? String == oldID }?["revokedAt"] is String)
        // The last live key cannot be revoked, not even by itself.
        let last = try driver.sendJSON("DELETE", "/v1/admin/keys/\(newID)", bearer: new)
        #expect(last.status == 409 && last.json["error"] as? String == "conflict")
        // Unknown ids and another environment's keys are not found.
        #expect(try driver.sendJSON("DELETE", "/v1/admin/keys/\(UUID().uuidString)", bearer: new).status == 404)
        #expect(try driver.sendJSON("DELETE", "/v1/admin/keys/not-a-uuid", bearer: new).status == 404)
        #expect(try driver.sendJSON("DELETE", "/v1/admin/keys/\(newID)", bearer: driver.fixture.productionSecret).status == 404)
        // A production key is sk_live_.
        let live = try driver.sendJSON("POST", "/v1/admin/keys", bearer: driver.fixture.productionSecret)
        #expect((live.json["secretKey"] as? String)?.hasPrefix("sk_live_") == true)
    }

    @Test func concurrentRevocationsOfTheLastTwoKeysLeaveOneLive() throws {
        let driver = try make()
        let old = driver.fixture.developmentSecret
        let created = try driver.sendJSON("POST", "/v1/admin/keys", bearer: old)
        let new = try #require(created.json["secretKey"] as? String)
        let items = try #require(try driver.sendJSON("GET", "/v1/admin/keys", bearer: new).json["items"] as? [[String: Any]])
        let ids = items.compactMap { $0["id"] as? String }
        #expect(ids.count == 2)
        // At the store, where both revocations can truly run at once (over HTTP the loser's own key may
        // already be revoked when it authenticates).
        let store = driver.server.store
        let environment = try #require(try store.environment(publishableKey: driver.fixture.developmentKey))
        let outcomes = Mutex<[SecretKeyRevocation]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            if let outcome = try? store.revokeSecretKey(environmentID: environment.id, id: ids[index], now: Date()) {
                outcomes.withLock { $0.append(outcome) }
            }
        }
        let all = outcomes.withLock { $0 }
        #expect(all.filter { $0 == .revoked }.count == 1)
        #expect(all.filter { $0 == .lastKey }.count == 1)
        let live = [old, new].filter { key in (try? driver.sendJSON("GET", "/v1/admin/settings", bearer: key).status) == 200 }
        #expect(live.count == 1)
    }
}
