import Authorize
import Crypto
import Encoding
import Foundation
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Apple's client secret as the server mints it (docs/federation.md, "Apple's client secret"): the header
/// and claims exactly, an ES256 signature that verifies with the key's public half through the verifier of
/// ID tokens, `exp` within Apple's 6 months, and the per-instance cache keyed by the provider's version.
@Suite struct AppleClientSecretTests {
    let key: Crypto.SigningKey
    let providers: UpstreamProviders
    let record: UpstreamProviderRecord

    init() throws {
        key = try Crypto.SigningKey.generate(.p256)
        providers = UpstreamProviders(
            store: UnreachableProviderStore(), sealer: AESGCMSealerForTests(key: TestServer.encryptionKey), keys: NoKeys())
        let id = UUID().uuidString.lowercased()
        record = Self.record(
            id: id, sealedKey: try providers.seal(try key.pkcs8(), providerID: id, field: ProviderFields.privateKey),
            updatedAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    static func record(id: String, sealedKey: String, updatedAt: Date, kind: UpstreamProviderKind = .apple) -> UpstreamProviderRecord {
        UpstreamProviderRecord(
            id: id, kind: kind, slug: "apple", displayName: "Apple", issuer: "https://appleid.apple.com", clientID: "com.acme.signin",
            appleTeamID: "ABCDE12345", appleKeyID: "KEY1234567", sealedClientSecret: nil, sealedApplePrivateKey: sealedKey,
            createdAt: updatedAt, updatedAt: updatedAt)
    }

    @Test func headerAndClaimsAreExactAndTheSignatureVerifies() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let secret = try AppleClientSecretMinter(providers: providers).secret(for: record, now: now)
        let parsed = try #require(JWS.parse(secret))
        let parts = secret.split(separator: ".")
        #expect(
            String(decoding: try #require(Base64URL.decodeCanonical(String(parts[0]))), as: UTF8.self)
                == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(
            String(decoding: parsed.payload, as: UTF8.self)
                == #"{"iss":"ABCDE12345","iat":1800000000,"exp":1812960000,"aud":"https://appleid.apple.com","sub":"com.acme.signin"}"#)
        let verifier = try #require(Crypto.VerifyingKey(try key.publicParameters()))
        #expect(parsed.signature.count == 64)
        #expect(verifier.verify(parsed.signature, of: parsed.signingInput))
        let other = try #require(Crypto.VerifyingKey(try Crypto.SigningKey.generate(.p256).publicParameters()))
        #expect(!other.verify(parsed.signature, of: parsed.signingInput))
        let claims = try JSONValue.parse(parsed.payload)
        let lifetime = try #require(claims["exp"]?.intValue) - (try #require(claims["iat"]?.intValue))
        #expect(Double(lifetime) <= AppleClientSecret.maximumLifetimeSeconds)
    }

    @Test func aHeldSecretIsReusedUntilItsLastMonthOrAnEdit() throws {
        let minter = AppleClientSecretMinter(providers: providers)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try minter.secret(for: record, now: start)
        #expect(try minter.secret(for: record, now: start.addingTimeInterval(119 * 86_400)) == first)
        let renewed = try minter.secret(for: record, now: start.addingTimeInterval(121 * 86_400))
        #expect(renewed != first)
        let edited = Self.record(
            id: record.id, sealedKey: record.sealedApplePrivateKey!, updatedAt: record.updatedAt.addingTimeInterval(1))
        #expect(try minter.secret(for: edited, now: start.addingTimeInterval(121 * 86_400)) != renewed)
    }

    @Test func aKeySealedForAnotherProviderOrAnotherKindMintsNothing() throws {
        let minter = AppleClientSecretMinter(providers: providers)
        let moved = Self.record(id: UUID().uuidString.lowercased(), sealedKey: record.sealedApplePrivateKey!, updatedAt: record.updatedAt)
        #expect(throws: AppleClientSecretMinter.Failure.keyUnavailable) { try minter.secret(for: moved, now: Date()) }
        let google = Self.record(id: record.id, sealedKey: record.sealedApplePrivateKey!, updatedAt: record.updatedAt, kind: .google)
        #expect(throws: AppleClientSecretMinter.Failure.notApple) { try minter.secret(for: google, now: Date()) }
    }
}
