import Association
import Authorize
import Foundation
import HTTPServer
import Postgres
import PostgresStore
import Testing
import ZevAuthServer
import ZevAuthTesting

/// The admin handlers of tenancy and apps, in process over the fake tenancy ports: no socket, no PostgreSQL.
@Suite struct TenancyHandlerTests {
    let fake = FakeTenancyStore()
    let fetcher = FakeFetcher()
    let app: ZevAuthApp
    let seeded: (development: EnvironmentRecord, developmentSecret: String, production: EnvironmentRecord, productionSecret: String)

    init() {
        let configuration = ServerConfiguration(
            databaseURL: "postgresql:///unused", issuer: "http://127.0.0.1:0", operatorToken: TestServer.operatorToken)
        let unused = PostgresStore(pool: PostgresPool(url: "postgresql:///unused", size: 1))
        let context = ServerContext(
            configuration: configuration, store: unused,
            roundTrip: RoundTripPorts(unused), tenancy: TenancyPorts(fake: fake, fetcher: fetcher), accounts: AccountsPorts(),
            secrets: FakeSecrets(), log: CapturingLog())
        app = ZevAuthApp(context: context)
        seeded = fake.seedProject()
    }

    func send(_ method: String, _ path: String, bearer: String, json: String? = nil) -> (status: Int, body: [String: Any]) {
        var headers = HTTPHeaders([("Authorization", "Bearer \(bearer)")])
        if json != nil { headers.set("Content-Type", "application/json") }
        let response = app.handle(HTTPRequest(method: method, path: path, headers: headers, body: Array((json ?? "").utf8)))
        let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, body)
    }

    @Test func registeringAnIOSAppAnswersItsTypedFields() {
        let created = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"ios","bundleId":"com.acme.app","teamId":"abcde12345"}"#)
        #expect(created.status == 201)
        #expect(created.body["platform"] as? String == "ios")
        #expect(created.body["teamId"] as? String == "ABCDE12345")
        #expect(created.body["appId"] as? String == "ABCDE12345.com.acme.app")
        #expect(created.body["productionCustomScheme"] is NSNull)
        let link = created.body["link"] as? [String: Any]
        #expect(link?["status"] as? String == "pending")
        #expect(link?["checkedAt"] is NSNull)
    }

    @Test func theAppLimitsAndTheTeamRuleAreTheirErrors() {
        let other = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"ios","bundleId":"com.acme.a","teamId":"ABCDE12345"}"#)
        #expect(other.status == 201)
        let mismatch = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"ios","bundleId":"com.acme.b","teamId":"ZZZZZ99999"}"#)
        #expect(mismatch.status == 400)
        #expect(mismatch.body["error"] as? String == "native_app_team_mismatch")
        let duplicate = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"ios","bundleId":"COM.acme.a","teamId":"ABCDE12345"}"#)
        #expect(duplicate.status == 409)
        for index in 0..<9 {
            _ = send(
                "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
                json: #"{"platform":"ios","bundleId":"com.acme.n\#(index)","teamId":"ABCDE12345"}"#)
        }
        let eleventh = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"ios","bundleId":"com.acme.z","teamId":"ABCDE12345"}"#)
        #expect(eleventh.status == 400)
        #expect(eleventh.body["error"] as? String == "native_app_limit")
    }

    @Test func theOperatorsSchemeExceptionFollowsTheRedirectURISchemeRule() {
        let created = send(
            "POST", "/v1/admin/apps", bearer: seeded.productionSecret,
            json: #"{"platform":"ios","bundleId":"com.acme.app","teamId":"ABCDE12345"}"#)
        let id = created.body["id"] as? String ?? ""
        for bad in ["acme", "Com.acme.app", "com..app", "https", "com.acme.app:x"] {
            let refused = send(
                "PATCH", "/v1/admin/apps/\(id)", bearer: TestServer.operatorToken, json: #"{"productionCustomScheme":"\#(bad)"}"#)
            #expect(refused.status == 400, "\(bad)")
            #expect(refused.body["error"] as? String == "invalid_request")
        }
        let set = send(
            "PATCH", "/v1/admin/apps/\(id)", bearer: TestServer.operatorToken, json: #"{"productionCustomScheme":"com.acme.app"}"#)
        #expect(set.status == 200)
        #expect(set.body["productionCustomScheme"] as? String == "com.acme.app")
    }

    @Test func anAndroidAppOnAServedDomainIsVerifiedAtOnce() {
        let fingerprint = (0..<32).map { String(format: "%02X", $0 + 1) }.joined(separator: ":")
        fake.state.withLock { $0.linkCallbacks.append((seeded.development.id, "acme.example", "/auth/callback")) }
        let file =
            #"[{"relation":["delegate_permission/common.handle_all_urls","delegate_permission/common.get_login_creds"],"target":{"namespace":"android_app","package_name":"com.acme.app","sha256_cert_fingerprints":["\#(fingerprint)"]}}]"#
        fetcher.answers.withLock {
            $0["acme.example/.well-known/assetlinks.json"] = .success(
                FetchedFile(status: 200, contentType: "application/json", body: Array(file.utf8)))
        }
        let created = send(
            "POST", "/v1/admin/apps", bearer: seeded.developmentSecret,
            json: #"{"platform":"android","packageName":"com.acme.app","sha256CertFingerprints":["\#(fingerprint.lowercased())"]}"#)
        #expect(created.status == 201)
        #expect(created.body["sha256CertFingerprints"] as? [String] == [fingerprint])
        let link = created.body["link"] as? [String: Any]
        #expect(link?["status"] as? String == "verified")
        #expect(link?["domains"] as? [String] == ["acme.example"])
        #expect(fetcher.requests.withLock { $0 } == ["acme.example/.well-known/assetlinks.json"])
    }

    @Test func settingsAreBoundedAndAnsweredWhole() {
        let refused = send("PATCH", "/v1/admin/settings", bearer: seeded.developmentSecret, json: #"{"sessionIdleDays":31}"#)
        #expect(refused.status == 400)
        #expect(
            (refused.body["error_description"] as? String)?.hasPrefix("sessionIdleDays must be a whole number from 1 to 30 days") == true)
        let changed = send("PATCH", "/v1/admin/settings", bearer: seeded.developmentSecret, json: #"{"accessTokenTtlMinutes":5}"#)
        #expect(changed.status == 200)
        #expect(changed.body["accessTokenTtlMinutes"] as? Int == 5)
        #expect(changed.body["sessionMaxAgeDays"] as? Int == 90)
        #expect(
            Set(changed.body.keys) == [
                "sessionMaxAgeDays", "sessionIdleDays", "accessTokenTtlMinutes", "refreshReuseGraceSeconds", "idTokenSigningAlg",
                "requireVerifiedEmail", "requirePushedAuthorizationRequests", "requireDPoP",
            ])
        #expect(changed.body["idTokenSigningAlg"] as? String == "RS256")
        #expect(changed.body["requireVerifiedEmail"] as? Bool == false)
        #expect(changed.body["requirePushedAuthorizationRequests"] as? Bool == false)
        #expect(changed.body["requireDPoP"] as? Bool == false)
    }

    @Test func keysRotateButTheLastLiveOneStays() {
        let listed = send("GET", "/v1/admin/keys", bearer: seeded.developmentSecret)
        let items = listed.body["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1)
        #expect(items.first?["current"] as? Bool == true)
        #expect(items.first?["revokedAt"] is NSNull)
        #expect(listed.body["nextCursor"] is NSNull)
        let only = items.first?["id"] as? String ?? ""
        #expect(send("DELETE", "/v1/admin/keys/\(only)", bearer: seeded.developmentSecret).status == 409)
        let created = send("POST", "/v1/admin/keys", bearer: seeded.developmentSecret)
        #expect(created.status == 201)
        #expect((created.body["secretKey"] as? String)?.hasPrefix("sk_test_") == true)
        #expect(send("DELETE", "/v1/admin/keys/\(only)", bearer: seeded.developmentSecret).status == 204)
        #expect(send("GET", "/v1/admin/keys", bearer: seeded.developmentSecret).status == 401)
    }

    @Test func domainsCarryTheirTokenAndRefuseADuplicate() {
        let added = send("POST", "/v1/admin/domains", bearer: seeded.developmentSecret, json: #"{"domain":"Acme.Example"}"#)
        #expect(added.status == 201)
        #expect(added.body["domain"] as? String == "acme.example")
        #expect(added.body["verified"] as? Bool == false)
        #expect(added.body["verificationUrl"] as? String == "https://acme.example/.well-known/zevauth-domain-verification")
        #expect((added.body["verificationToken"] as? String)?.hasPrefix("zdv_") == true)
        #expect(send("POST", "/v1/admin/domains", bearer: seeded.productionSecret, json: #"{"domain":"acme.example"}"#).status == 409)
        let marked = send(
            "POST", "/v1/admin/domains/acme.example/verify", bearer: TestServer.operatorToken,
            json: #"{"projectId":"\#(seeded.development.projectID)","hosted":true}"#)
        #expect(marked.status == 200)
        #expect(marked.body["hosted"] as? Bool == true)
    }

    @Test func theOperatorListsProjectsWithPublishableKeysOnly() {
        fake.seedProject(name: "Second")
        let first = send("GET", "/v1/admin/projects", bearer: TestServer.operatorToken + "", json: nil)
        #expect(first.status == 200)
        let page = app.handle(
            HTTPRequest(
                method: "GET", path: "/v1/admin/projects", rawQuery: "limit=1",
                headers: HTTPHeaders([("Authorization", "Bearer \(TestServer.operatorToken)")])))
        let body = (try? JSONSerialization.jsonObject(with: Data(page.body))) as? [String: Any] ?? [:]
        let items = body["items"] as? [[String: Any]] ?? []
        #expect(items.count == 1)
        #expect(body["nextCursor"] as? String == items.first?["id"] as? String)
        #expect((items.first?["development"] as? [String: Any])?["publishableKey"] as? String == seeded.development.publishableKey)
        #expect((items.first?["development"] as? [String: Any])?["secretKey"] == nil)
    }
}
