import Authorize
import Foundation
import Testing

/// Tenancy's decisions without a database: the admin caller, session-setting bounds, pages, domain names
/// and the one private-use scheme rule.
@Suite struct TenancyTests {
    struct Lookup: SecretKeyLookupStore {
        let environment: EnvironmentRecord
        func environment(secretKeyHash: String) throws -> EnvironmentRecord? { secretKeyHash == "d:sk_test_live" ? environment : nil }
    }

    struct PlainSecrets: Secrets {
        func mintToken(prefix: String) throws -> String { prefix + "minted" }
        func digest(_ text: String) -> String { "d:" + text }
        func sha256(_ bytes: [UInt8]) -> [UInt8] { bytes }
        func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
        func newID() -> String { "id" }
    }

    static let environment = EnvironmentRecord(
        id: "e1", projectID: "p1", projectName: "Acme", kind: .production, publishableKey: "pk_live_x", sessionMaxAgeDays: 90,
        sessionIdleDays: 30, accessTokenTTLMinutes: 15, refreshReuseGraceSeconds: 10)

    @Test func theAdminCallerIsTheOperatorALiveSecretKeyOrNobody() throws {
        let resolve = ResolveAdminCaller(
            store: Lookup(environment: Self.environment), secrets: PlainSecrets(), operatorToken: "zop_operator")
        #expect(try resolve(bearer: "zop_operator") == .operator)
        #expect(try resolve(bearer: "sk_test_live") == .environment(Self.environment, keyHash: "d:sk_test_live"))
        #expect(try resolve(bearer: "sk_test_revoked") == nil)
        #expect(try resolve(bearer: "pk_test_live") == nil)
        #expect(try resolve(bearer: nil) == nil)
    }

    @Test func sessionSettingsAreCheckedAgainstTheirBounds() {
        #expect(
            (try? UpdateSessionSettings.update([.sessionMaxAgeDays: 90, .refreshReuseGraceSeconds: 0]).get())
                == SessionSettingsUpdate(sessionMaxAgeDays: 90, refreshReuseGraceSeconds: 0))
        for (setting, value) in [
            (SessionSetting.sessionMaxAgeDays, 91), (.sessionIdleDays, 0), (.accessTokenTtlMinutes, 4), (.refreshReuseGraceSeconds, 61),
        ] {
            #expect(UpdateSessionSettings.update([setting: value]) == .failure(SessionSettingOutOfBounds(setting: setting)))
        }
        #expect(
            SessionSetting.sessionIdleDays.rule
                == "must be a whole number from 1 to 30 days (a session may be shortened, never lengthened past 30 days)")
    }

    @Test func aPageHasANextCursorOnlyWhenARowIsLeft() {
        #expect(Page(rows: ["a", "b", "c"], limit: 2, id: { $0 }).nextCursor == "b")
        #expect(Page(rows: ["a", "b"], limit: 2, id: { $0 }).nextCursor == nil)
        #expect(Page(rows: ["a", "b", "c"], limit: 2, id: { $0 }).items == ["a", "b"])
    }

    @Test func projectKeysHaveTheirEnvironmentsPrefixes() throws {
        struct Keep: ProjectCreationStore {
            func createProject(
                name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, owner: NewProjectOwner?, now: Date,
                audit: AuditEntry
            ) throws -> String {
                #expect(development.secretKeyHash == "d:sk_test_minted")
                #expect(production.secretKeySuffix == "nted")
                return "p1"
            }
        }
        let project = try CreateProject(store: Keep(), secrets: PlainSecrets())(
            name: "Acme", now: Date(), audit: AuditEntry(actor: .operatorToken, action: "test", clientAddress: nil, at: Date()))
        #expect(project.development.publishableKey == "pk_test_minted")
        #expect(project.production.secretKey == "sk_live_minted")
    }

    @Test func domainNamesAreLowerCasedHostNames() {
        #expect(DomainName.normalize("Acme.Example") == "acme.example")
        for bad in ["acme", "acme..example", "-acme.example", "10.0.0.1", "https://acme.example", "acme.example:443", ""] {
            #expect(DomainName.normalize(bad) == nil, "\(bad)")
        }
    }

    @Test func theProductionSchemeExceptionUsesTheRedirectURISchemeRule() {
        for good in ["com.acme.app", "com.acme-1.app+x"] { #expect(RedirectURI.isPrivateUseScheme(good), "\(good)") }
        for bad in ["acme", "Com.acme.app", "com..app", ".com.acme", "https", "http", "javascript", "com.acme.app:/x", "com.acme/app", ""] {
            #expect(!RedirectURI.isPrivateUseScheme(bad), "\(bad)")
        }
    }
}
