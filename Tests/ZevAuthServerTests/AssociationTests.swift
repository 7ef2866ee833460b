import Association
import Foundation
import HTTPServer
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Mobile apps and association files end to end (docs/protocol.md#apps): apps through the admin API, limits
/// held by PostgreSQL, the generated and served files, checks against a local HTTPS server (test CA,
/// loopback), the scheduler, production gating and the consent page's device name.
@Suite struct AssociationTests {
    static let teamID = "ABCDE12345"
    static let otherTeamID = "ZYXWV98765"
    static let fingerprint = "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99"
    static let aasaPath = "/.well-known/apple-app-site-association"
    static let assetLinksPath = "/.well-known/assetlinks.json"

    /// A project with a verified link domain on the local HTTPS server, link callbacks in both environments.
    struct Setup {
        let https: TestHTTPSServer
        let server: TestServer
        let clock: ManualClock
        let fixture: Fixture
        let domain: String

        init(allowPrivate: Bool = true, timeoutMilliseconds: Int = 3000, extraDomains: [String] = [], hosted: Bool = false) throws {
            let https = try TestHTTPSServer()
            let domain = "l\(UUID().uuidString.prefix(8).lowercased()).acme.test"
            let clock = ManualClock(Date())
            server = try TestServer(clock: clock) { configuration in
                configuration.outbound = https.outbound(
                    for: [domain] + extraDomains, allowPrivate: allowPrivate, timeoutMilliseconds: timeoutMilliseconds)
                configuration.outboundPort = https.port
            }
            fixture = try Fixture.make(
                store: server.store, development: ["https://\(domain)/app/cb"], production: ["https://\(domain)/app/cb"],
                verifiedDomains: [domain])
            if hosted {
                _ = try server.store.markDomainVerified(projectID: fixture.projectID, domain: domain, hosted: true, now: Date())
            }
            self.https = https
            self.clock = clock
            self.domain = domain
        }

        func call(_ method: String, _ path: String, token: String?, json: Any? = nil) throws -> TestResponse {
            var headers: [(String, String)] = [("Content-Type", "application/json")]
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
            return try server.client.send(method, path, headers: headers, body: body)
        }

        func addIOS(_ bundle: String = "com.acme.app", team: String = AssociationTests.teamID, token: String? = nil) throws -> TestResponse
        {
            try call(
                "POST", "/v1/admin/apps", token: token ?? fixture.productionSecret,
                json: ["platform": "ios", "bundleId": bundle, "teamId": team])
        }

        func addAndroid(_ package: String = "com.acme.app", fingerprints: [String] = [AssociationTests.fingerprint], token: String? = nil)
            throws -> TestResponse
        {
            try call(
                "POST", "/v1/admin/apps", token: token ?? fixture.productionSecret,
                json: ["platform": "android", "packageName": package, "sha256CertFingerprints": fingerprints])
        }

        /// Publishes the files the server generates for this domain.
        func publishGeneratedFiles() throws {
            let files = try call("GET", "/v1/admin/association-files?domain=\(domain)", token: fixture.productionSecret)
            #expect(files.status == 200)
            let aasa = try JSONSerialization.data(withJSONObject: files.json["appleAppSiteAssociation"] ?? [:])
            let assetLinks = try JSONSerialization.data(withJSONObject: files.json["assetlinks"] ?? [])
            https.set(AssociationTests.aasaPath, body: Array(aasa))
            https.set(AssociationTests.assetLinksPath, body: Array(assetLinks))
        }

        func check(_ id: String) throws -> [String: Any] {
            let response = try call("POST", "/v1/admin/apps/\(id)/check", token: fixture.productionSecret)
            #expect(response.status == 200)
            return response.json["link"] as? [String: Any] ?? [:]
        }

        func startProduction() throws -> TestResponse {
            try server.browser().get(
                startTarget([
                    ("client_id", fixture.productionKey), ("redirect_uri", "https://\(domain)/app/cb"), ("state", "s"),
                    ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
                ]), headers: [("Accept", "application/json")])
        }
    }

    static func codes(_ link: [String: Any]) -> [String] {
        (link["problems"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
    }

    // MARK: Limits

    @Test func twentyConcurrentIOSCreatesLeaveExactlyTen() throws {
        let setup = try Setup()
        let statuses = Mutex20()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let response = try? setup.addIOS("com.acme.app\(index)")
            statuses.append(response?.status ?? -1, response?.json["error"] as? String)
        }
        #expect(statuses.values.filter { $0.0 == 201 }.count == 10)
        #expect(statuses.values.filter { $0.0 == 400 && $0.1 == "native_app_limit" }.count == 10)
        // An 11th row by plain SQL is refused too, by the constraint name the store maps.
        let environment = try #require(try setup.server.store.environment(publishableKey: setup.fixture.productionKey))
        do {
            try TestDatabase.pool.query(
                "INSERT INTO mobile_apps (environment_id, platform, team_id, bundle_id, created_at) VALUES ($1, 'ios', $2, 'com.sql.app', now())",
                [environment.id, Self.teamID])
            Issue.record("an 11th iOS app was inserted")
        } catch let error as PostgresError {
            #expect(error.constraint == "native_app_limit")
        }
    }

    @Test func aSecondTeamAndASixthFingerprintAreRefused() throws {
        let setup = try Setup()
        #expect(try setup.addIOS().status == 201)
        let mismatch = try setup.addIOS("com.acme.other", team: Self.otherTeamID)
        #expect(mismatch.status == 400)
        #expect(mismatch.json["error"] as? String == "native_app_team_mismatch")
        let six = (0..<6).map { String(format: "%02X", $0) + String(Self.fingerprint.dropFirst(2)) }
        let tooMany = try setup.addAndroid(fingerprints: six)
        #expect(tooMany.json["error"] as? String == "native_app_limit")
        let five = try setup.addAndroid(fingerprints: Array(six.prefix(5)))
        #expect(five.status == 201)
        let id = try #require(five.json["id"] as? String)
        do {
            try TestDatabase.pool.query(
                "INSERT INTO android_fingerprints (app_id, fingerprint, position) VALUES ($1, $2, 9)", [id, six[5]])
            Issue.record("a 6th fingerprint was inserted")
        } catch let error as PostgresError {
            #expect(error.constraint == "native_app_limit")
        }
        let patched = try setup.call(
            "PATCH", "/v1/admin/apps/\(id)", token: setup.fixture.productionSecret, json: ["sha256CertFingerprints": six])
        #expect(patched.json["error"] as? String == "native_app_limit")
    }

    @Test func validationNamesTheFieldAndOtherEnvironmentsAppsAreNotFound() throws {
        let setup = try Setup()
        let badBundle = try setup.addIOS("com.acme app")
        #expect(badBundle.status == 400)
        #expect(badBundle.json["error"] as? String == "invalid_request")
        #expect((badBundle.json["error_description"] as? String)?.hasPrefix("bundleId") == true)
        let sha1 = try setup.addAndroid(fingerprints: ["AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"])
        #expect(sha1.status == 400)
        #expect((sha1.json["error_description"] as? String)?.contains("SHA-1") == true)
        let created = try setup.addAndroid(fingerprints: [Self.fingerprint.lowercased().replacingOccurrences(of: ":", with: "")])
        #expect(created.status == 201)
        #expect(created.json["sha256CertFingerprints"] as? [String] == [Self.fingerprint])
        let id = try #require(created.json["id"] as? String)
        #expect(try setup.call("GET", "/v1/admin/apps/\(id)", token: setup.fixture.developmentSecret).status == 404)
        #expect(try setup.call("DELETE", "/v1/admin/apps/\(id)", token: setup.fixture.developmentSecret).status == 404)
        let list = try setup.call("GET", "/v1/admin/apps?limit=1", token: setup.fixture.productionSecret)
        #expect((list.json["items"] as? [Any])?.count == 1)
        // The custom-scheme exception is the operator's.
        let bySecret = try setup.call(
            "PATCH", "/v1/admin/apps/\(id)", token: setup.fixture.productionSecret, json: ["productionCustomScheme": "com.acme.app"])
        #expect(bySecret.status == 403)
        let badScheme = try setup.call(
            "PATCH", "/v1/admin/apps/\(id)", token: TestServer.operatorToken, json: ["productionCustomScheme": "acme"])
        #expect(badScheme.status == 400)
        let byOperator = try setup.call(
            "PATCH", "/v1/admin/apps/\(id)", token: TestServer.operatorToken, json: ["productionCustomScheme": "com.acme.app"])
        #expect(byOperator.json["productionCustomScheme"] as? String == "com.acme.app")
        #expect(try setup.call("DELETE", "/v1/admin/apps/\(id)", token: setup.fixture.productionSecret).status == 204)
    }

    // MARK: Files

    @Test func theAdminFilesAreTheGeneratorsOutputWhicheverEnvironmentAsks() throws {
        let setup = try Setup(hosted: true)
        #expect(try setup.addIOS(token: setup.fixture.developmentSecret).status == 201)
        #expect(try setup.addAndroid().status == 201)
        let ios = IOSApp(teamID: try TeamID.parse(Self.teamID).get(), bundleID: try BundleID.parse("com.acme.app").get())
        let android = AndroidApp(
            packageName: try PackageName.parse("com.acme.app").get(),
            fingerprints: [try CertificateFingerprint.parse(Self.fingerprint, field: "f").get()])
        let expectedAASA = try AssociationGenerator.appleAppSiteAssociation([(ios, ["/app/cb"])])
        let expectedAssetLinks = AssociationGenerator.assetLinks([android])
        for secret in [setup.fixture.productionSecret, setup.fixture.developmentSecret] {
            let files = try setup.call("GET", "/v1/admin/association-files?domain=\(setup.domain)", token: secret)
            #expect(files.status == 200)
            let aasa = try JSONSerialization.jsonObject(with: Data(expectedAASA)) as? NSDictionary
            let assetLinks = try JSONSerialization.jsonObject(with: Data(expectedAssetLinks)) as? NSArray
            #expect((files.json["appleAppSiteAssociation"] as? NSDictionary) == aasa)
            #expect((files.json["assetlinks"] as? NSArray) == assetLinks)
        }
        // Served by Host (in process: the test client always sends its own Host), byte for byte, with an
        // ETag and a short cache; never a redirect.
        func get(_ path: String, _ headers: [(String, String)]) -> HTTPResponse {
            setup.server.app.handle(HTTPRequest(method: "GET", path: path, headers: HTTPHeaders(headers)))
        }
        let served = get(Self.aasaPath, [("Host", "\(setup.domain.uppercased()):443")])
        #expect(served.status == 200)
        #expect(served.body == expectedAASA)
        #expect(served.headers["Content-Type"] == "application/json")
        #expect(served.headers["Cache-Control"] == "public, max-age=300")
        let etag = try #require(served.headers["ETag"])
        #expect(get(Self.aasaPath, [("Host", setup.domain), ("If-None-Match", etag)]).status == 304)
        #expect(get(Self.assetLinksPath, [("Host", setup.domain)]).body == expectedAssetLinks)
        let unknown = get(Self.aasaPath, [("Host", "unknown.example.com")])
        #expect(unknown.status == 404)
        #expect(unknown.headers["Location"] == nil)
    }

    // MARK: Checks

    @Test func goodFilesVerifyAndADisappearingFileTurnsTheAppUnverifiedThenBack() throws {
        let setup = try Setup()
        let created = try setup.addIOS()
        #expect((created.json["link"] as? [String: Any])?["status"] as? String == "not_verified")
        #expect(Self.codes(created.json["link"] as? [String: Any] ?? [:]) == ["file_missing"])
        let id = try #require(created.json["id"] as? String)
        try setup.publishGeneratedFiles()
        let verified = try setup.check(id)
        #expect(verified["status"] as? String == "verified")
        #expect(try setup.startProduction().status == 303)

        setup.https.remove(Self.aasaPath)
        let missing = try setup.check(id)
        #expect(missing["status"] as? String == "not_verified")
        #expect(Self.codes(missing) == ["file_missing"])
        // Production sign-ins to that domain's link stop at once.
        let refused = try setup.startProduction()
        #expect(refused.status == 403)
        #expect(refused.json["error"] as? String == "native_redirect_not_verified")

        try setup.publishGeneratedFiles()
        #expect(try setup.check(id)["status"] as? String == "verified")
        #expect(try setup.startProduction().status == 303)
    }

    @Test func aTransientFailureIsRetriedBeforeAVerifiedAppTurnsUnverified() throws {
        let setup = try Setup()
        let id = try #require(try setup.addAndroid().json["id"] as? String)
        try setup.publishGeneratedFiles()
        #expect(try setup.check(id)["status"] as? String == "verified")
        setup.https.set(Self.assetLinksPath, status: 503, contentType: "text/plain", body: Array("busy".utf8))
        for _ in 0..<2 {
            let link = try setup.check(id)
            #expect(link["status"] as? String == "verified")
            #expect(Self.codes(link) == ["http_status"])
        }
        #expect(try setup.check(id)["status"] as? String == "not_verified")
    }

    enum Variant: String, CaseIterable, Sendable {
        case fileMissing, redirected, httpStatus, tooLarge, notJSON, appIDMissing, pathNotCovered, webcredentialsMissing
        case androidContentType, packageMissing, fingerprintMissing, relationMissing, dynamicRulesExcludePath
    }

    /// Every problem code of docs/protocol.md#problem-codes from a broken variant served over real HTTPS.
    @Test(arguments: Variant.allCases)
    func eachBrokenVariantReportsItsCode(variant: Variant) throws {
        let setup = try Setup()
        let ios =
            variant.rawValue.hasPrefix("android")
                || [.packageMissing, .fingerprintMissing, .relationMissing, .dynamicRulesExcludePath].contains(variant)
            ? false : true
        let created = ios ? try setup.addIOS() : try setup.addAndroid()
        let id = try #require(created.json["id"] as? String)
        let appID = "\(Self.teamID).com.acme.app"
        let path = ios ? Self.aasaPath : Self.assetLinksPath
        func json(_ value: Any) -> [UInt8] { Array((try? JSONSerialization.data(withJSONObject: value)) ?? Data()) }
        let statement: (String, [String], [String]) -> [String: Any] = { package, fingerprints, relations in
            [
                "relation": relations,
                "target": ["namespace": "android_app", "package_name": package, "sha256_cert_fingerprints": fingerprints],
            ]
        }
        let expected: String
        switch variant {
        case .fileMissing:
            setup.https.remove(path)
            expected = "file_missing"
        case .redirected:
            setup.https.set(path, status: 301, body: [], location: "https://www.\(setup.domain)\(path)")
            expected = "redirected"
        case .httpStatus:
            setup.https.set(path, status: 403, contentType: "text/plain", body: Array("no".utf8))
            expected = "http_status"
        case .tooLarge:
            setup.https.set(path, body: Array(repeating: UInt8(ascii: " "), count: 131_073))
            expected = "too_large"
        case .notJSON:
            setup.https.set(path, body: [0xEF, 0xBB, 0xBF] + Array("{\"applinks\":{\"details\":[],}}".utf8))
            expected = "not_json"
        case .appIDMissing:
            setup.https.set(
                path, body: json(["applinks": ["details": [["appIDs": ["\(Self.otherTeamID).com.acme.app"], "components": [["/": "*"]]]]]]))
            expected = "app_id_missing"
        case .pathNotCovered:
            setup.https.set(path, body: json(["applinks": ["details": [["appIDs": [appID], "components": [["/": "/elsewhere/*"]]]]]]))
            expected = "path_not_covered"
        case .webcredentialsMissing:
            setup.https.set(path, body: json(["applinks": ["details": [["appIDs": [appID], "components": [["/": "*"]]]]]]))
            expected = "webcredentials_missing"
        case .androidContentType:
            setup.https.set(
                path, contentType: "text/plain",
                body: json([statement("com.acme.app", [Self.fingerprint], ["delegate_permission/common.handle_all_urls"])]))
            expected = "content_type"
        case .packageMissing:
            setup.https.set(
                path, body: json([statement("com.other.app", [Self.fingerprint], ["delegate_permission/common.handle_all_urls"])]))
            expected = "package_missing"
        case .fingerprintMissing:
            setup.https.set(
                path,
                body: json([statement("com.acme.app", [Self.fingerprint.lowercased()], ["delegate_permission/common.handle_all_urls"])]))
            expected = "fingerprint_missing"
        case .relationMissing:
            setup.https.set(
                path, body: json([statement("com.acme.app", [Self.fingerprint], ["delegate_permission/common.get_login_creds"])]))
            expected = "relation_missing"
        case .dynamicRulesExcludePath:
            var excluding = statement("com.acme.app", [Self.fingerprint], ["delegate_permission/common.handle_all_urls"])
            excluding["relation_extensions"] = [
                "delegate_permission/common.handle_all_urls": [
                    "dynamic_app_link_components": [["/": "/app/*", "exclude": true], ["/": "*"]]
                ]
            ]
            setup.https.set(path, body: json([excluding]))
            expected = "dynamic_rules_exclude_path"
        }
        let link = try setup.check(id)
        #expect(Self.codes(link).contains(expected), "\(variant): \(Self.codes(link))")
        let warningOnly: Set<Variant> = [.webcredentialsMissing, .dynamicRulesExcludePath]
        #expect(link["status"] as? String == (warningOnly.contains(variant) ? "verified" : "not_verified"))
        if variant == .redirected {
            let message = (link["problems"] as? [[String: Any]])?.first?["message"] as? String ?? ""
            #expect(message.contains("https://www.\(setup.domain)"))
        }
    }

    @Test func transportFailuresReportTLSTimeoutDNSAndRefusedAddresses() throws {
        // A name the certificate does not cover: tls_error.
        let foreign = "l\(UUID().uuidString.prefix(8).lowercased()).other.example"
        let tls = try Setup(extraDomains: [foreign])
        _ = try tls.server.store.addDomain(projectID: tls.fixture.projectID, domain: foreign, verificationToken: "t", now: Date())
        _ = try tls.server.store.markDomainVerified(projectID: tls.fixture.projectID, domain: foreign, hosted: nil, now: Date())
        let environment = try #require(try tls.server.store.environment(publishableKey: tls.fixture.productionKey))
        _ = try tls.server.store.addCallback(environmentID: environment.id, uri: "https://\(foreign)/cb", kind: "link", now: Date())
        let tlsApp = try #require(try tls.addIOS().json["id"] as? String)
        #expect(Self.codes(try tls.check(tlsApp)).contains("tls_error"))

        let slow = try Setup(timeoutMilliseconds: 300)
        slow.https.set(Self.aasaPath, body: Array("{}".utf8), delaySeconds: 2)
        let slowApp = try #require(try slow.addIOS().json["id"] as? String)
        #expect(Self.codes(try slow.check(slowApp)) == ["timeout"])

        let refused = try Setup(allowPrivate: false)
        let refusedApp = try #require(try refused.addIOS().json["id"] as? String)
        #expect(Self.codes(try refused.check(refusedApp)) == ["address_refused"])

        // RFC 6761 `.invalid` never resolves.
        let nowhere = "l\(UUID().uuidString.prefix(8).lowercased()).nowhere.invalid"
        let dns = try Setup()
        let fixture = try Fixture.make(store: dns.server.store, production: ["https://\(nowhere)/cb"], verifiedDomains: [nowhere])
        let created = try dns.call(
            "POST", "/v1/admin/apps", token: fixture.productionSecret,
            json: ["platform": "ios", "bundleId": "com.acme.app", "teamId": Self.teamID])
        #expect(Self.codes(created.json["link"] as? [String: Any] ?? [:]) == ["dns_error"])
    }

    // MARK: Scheduler

    @Test func twoSchedulersOnOneDatabaseFetchEachDueDomainOncePerRound() throws {
        let setup = try Setup()
        _ = try setup.addIOS()
        _ = try setup.addAndroid()
        try setup.publishGeneratedFiles()
        let before = (
            setup.https.requestCount(host: setup.domain, path: Self.aasaPath),
            setup.https.requestCount(host: setup.domain, path: Self.assetLinksPath)
        )
        let second = try TestServer(clock: setup.clock) { configuration in
            configuration.outbound = setup.https.outbound(for: [setup.domain])
            configuration.outboundPort = setup.https.port
        }
        // A day later the domain is due: both instances run a round at once.
        setup.clock.advance(by: 26 * 3600)
        let schedulers = [
            LinkScheduler(context: setup.server.context, scope: [setup.domain]),
            LinkScheduler(context: second.context, scope: [setup.domain]),
        ]
        let checked = Mutex20()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let domains = (try? schedulers[index].runRound()) ?? []
            checked.append(domains.count, nil)
        }
        #expect(checked.values.map(\.0).reduce(0, +) == 1)
        #expect(setup.https.requestCount(host: setup.domain, path: Self.aasaPath) == before.0 + 1)
        #expect(setup.https.requestCount(host: setup.domain, path: Self.assetLinksPath) == before.1 + 1)
        // Nothing is due again in the same instant.
        #expect(try schedulers[0].runRound().isEmpty)
        #expect(try schedulers[1].runRound().isEmpty)
    }

    // MARK: Consent

    @Test func theConsentPageNamesTheDeviceForAVerifiedApp() throws {
        let setup = try Setup()
        let id = try #require(try setup.addIOS().json["id"] as? String)
        try setup.publishGeneratedFiles()
        #expect(try setup.check(id)["status"] as? String == "verified")
        let browser = setup.server.browser()
        let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
        let start = try browser.get(
            startTarget([
                ("client_id", setup.fixture.productionKey), ("redirect_uri", "https://\(setup.domain)/app/cb"), ("state", "s"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]), headers: [("User-Agent", iPhone)])
        #expect(start.status == 303)
        let signIn = try browser.get(try #require(start.header("location")), headers: [("User-Agent", iPhone)])
        let requestID = try #require(hiddenField("request", in: signIn.text))
        let posted = try browser.postForm(
            "/v1/auth/zevid/signin",
            [
                ("request", requestID), ("csrf", hiddenField("csrf", in: signIn.text) ?? ""), ("email", setup.fixture.email),
                ("password", setup.fixture.password),
            ])
        let consent = try browser.get(try #require(posted.header("location")), headers: [("User-Agent", iPhone)])
        #expect(consent.text.contains("Acme on iPhone"))
        let desktop = try browser.get(try #require(posted.header("location")), headers: [("User-Agent", "Mozilla/5.0 (X11; Linux x86_64)")])
        #expect(!desktop.text.contains("Acme on"))
    }

    // MARK: Domains

    @Test func aSecretKeyVerifiesADomainByItsTokenFile() throws {
        let setup = try Setup()
        let domain = "v\(UUID().uuidString.prefix(8).lowercased()).acme.test"
        let server = try TestServer { configuration in
            configuration.outbound = setup.https.outbound(for: [domain])
            configuration.outboundPort = setup.https.port
        }
        let added = try server.client.send(
            "POST", "/v1/admin/domains", headers: [("Authorization", "Bearer \(setup.fixture.productionSecret)")],
            body: Array(try JSONSerialization.data(withJSONObject: ["domain": domain])))
        let token = try #require(added.json["verificationToken"] as? String)
        let path = "/v1/admin/domains/\(domain)/verify"
        let auth = [("Authorization", "Bearer \(setup.fixture.productionSecret)")]
        let missing = try server.client.send("POST", path, headers: auth)
        #expect(missing.status == 400)
        setup.https.set("/.well-known/zevauth-domain-verification", contentType: "text/plain", body: Array("\(token)\n".utf8))
        let verified = try server.client.send("POST", path, headers: auth)
        #expect(verified.status == 200)
        #expect(verified.json["verified"] as? Bool == true)
    }
}

/// A small locked list for results gathered from concurrent work.
final class Mutex20: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(Int, String?)] = []
    func append(_ value: Int, _ text: String?) { lock.withLock { items.append((value, text)) } }
    var values: [(Int, String?)] { lock.withLock { items } }
}
