import Authorize
import Encoding
import Foundation
import Testing

/// Client authentication at the token endpoint for web clients, pure (docs/protocol.md, "Web clients:
/// client authentication"): each method, a wrong secret, another client's secret, the wrong method, two
/// methods at once, Basic with form-encoded characters, and the assertion's claims.
@Suite struct ClientAuthenticationTests {
    /// "SHA-256" is the bytes themselves, so a stored digest is the secret's hex.
    struct HexSecrets: Secrets {
        func mintToken(prefix: String) throws -> String { prefix + UUID().uuidString }
        func digest(_ text: String) -> String { Self.hex(Array(text.utf8)) }
        func sha256(_ bytes: [UInt8]) -> [UInt8] { bytes }
        func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
        func newID() -> String { UUID().uuidString.lowercased() }
        static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    }

    final class Store: ClientAuthenticationStore, @unchecked Sendable {
        var clients: [String: AuthenticatingClient] = [:]
        var usedIDs: Set<String> = []
        func authenticatingClient(clientID: String, now: Date) throws -> AuthenticatingClient? { clients[clientID] }
        func useAssertionID(clientID: String, jti: String, expiresAt: Date) throws -> Bool { usedIDs.insert(clientID + " " + jti).inserted }
    }

    /// Verifies a signature equal to the bytes `good`.
    struct Verifier: ClientAssertionVerifier {
        func verifies(_ assertion: JWS.Parsed, client: WebClientRecord) throws -> Bool { assertion.signature == Array("good".utf8) }
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let audiences: Set<String> = ["https://id.example/oauth2/token", "https://id.example"]

    static func client(_ id: String, _ method: TokenEndpointAuthMethod, secrets: [String] = []) -> AuthenticatingClient {
        AuthenticatingClient(
            client: WebClientRecord(
                clientID: id, environmentID: "env", name: "Site", redirectURIs: ["https://site.example/cb"], postLogoutRedirectURIs: [],
                authMethod: method, jwks: method == .privateKeyJWT ? "{\"keys\":[]}" : nil, jwksURI: nil, requirePKCE: true,
                createdAt: now, updatedAt: now),
            publishableKey: "pk_test_env", liveSecretHashes: secrets.map(HexSecrets().digest))
    }

    func authentication() -> (ClientAuthentication, Store) {
        let store = Store()
        store.clients["zc_basic"] = Self.client("zc_basic", .clientSecretBasic, secrets: ["zcs_old", "zcs_new"])
        store.clients["zc_post"] = Self.client("zc_post", .clientSecretPost, secrets: ["zcs_post"])
        store.clients["zc_jwt"] = Self.client("zc_jwt", .privateKeyJWT)
        return (ClientAuthentication(store: store, verifier: Verifier(), secrets: HexSecrets()), store)
    }

    static func basic(_ id: String, _ secret: String) -> String {
        "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()
    }

    static func presented(
        authorization: [String] = [], clientID: String? = nil, secret: String? = nil, type: String? = nil, assertion: String? = nil
    ) -> PresentedClientCredentials {
        PresentedClientCredentials(
            authorization: authorization, clientID: clientID, clientSecret: secret, assertionType: type, assertion: assertion)
    }

    static func assertion(_ claims: [String: Any], signature: String = "good", alg: String = "ES256") throws -> String {
        let header = Base64URL.encode(Array("{\"alg\":\"\(alg)\",\"kid\":\"k1\"}".utf8))
        let payload = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: claims)))
        return header + "." + payload + "." + Base64URL.encode(Array(signature.utf8))
    }

    static func claims(
        _ id: String = "zc_jwt", aud: Any = "https://id.example/oauth2/token", exp: Double = 120, jti: String = UUID().uuidString
    ) -> [String: Any] {
        ["iss": id, "sub": id, "aud": aud, "exp": Int(now.timeIntervalSince1970 + exp), "jti": jti, "iat": Int(now.timeIntervalSince1970)]
    }

    func refusal(_ result: Result<AuthenticatedClient, ClientAuthenticationFailure>) -> ClientAuthenticationFailure? {
        if case .failure(let failure) = result { return failure }
        return nil
    }

    @Test func eachSecretMethodAuthenticatesWithAnyLiveSecret() throws {
        let (auth, _) = authentication()
        for secret in ["zcs_old", "zcs_new"] {
            let basic = try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_basic", secret)]), audiences: Self.audiences, now: Self.now)
            #expect(try basic.get().client.clientID == "zc_basic")
            #expect(try basic.get().method == .clientSecretBasic)
            #expect(try basic.get().publishableKey == "pk_test_env")
        }
        let post = try auth.authenticate(Self.presented(clientID: "zc_post", secret: "zcs_post"), audiences: Self.audiences, now: Self.now)
        #expect(try post.get().method == .clientSecretPost)
    }

    @Test func aWrongSecretOrAnotherClientsSecretIsInvalidClientWithTheBasicChallenge() throws {
        let (auth, _) = authentication()
        for secret in ["zcs_wrong", "zcs_post", "", "zcs_old "] {
            let failure = refusal(
                try auth.authenticate(
                    Self.presented(authorization: [Self.basic("zc_basic", secret)]), audiences: Self.audiences, now: Self.now))
            #expect(failure?.error.code == .invalidClient)
            #expect(failure?.basicTried == true)
        }
        let post = refusal(
            try auth.authenticate(Self.presented(clientID: "zc_post", secret: "zcs_old"), audiences: Self.audiences, now: Self.now))
        #expect(post?.error.code == .invalidClient)
        #expect(post?.basicTried == false)
        let unknown = refusal(
            try auth.authenticate(Self.presented(clientID: "zc_nobody", secret: "zcs_post"), audiences: Self.audiences, now: Self.now))
        #expect(unknown?.error.code == .invalidClient)
    }

    @Test func onlyTheRegisteredMethodIsAccepted() throws {
        let (auth, _) = authentication()
        // The basic client's right secret, sent in the body.
        let posted = refusal(
            try auth.authenticate(Self.presented(clientID: "zc_basic", secret: "zcs_old"), audiences: Self.audiences, now: Self.now))
        #expect(posted?.error.code == .invalidClient)
        #expect(posted?.error.description == "This client authenticates with client_secret_basic only.")
        // The post client's right secret, sent with Basic: the challenge names Basic.
        let basic = refusal(
            try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_post", "zcs_post")]), audiences: Self.audiences, now: Self.now))
        #expect(basic?.error.code == .invalidClient)
        #expect(basic?.basicTried == true)
        // A signed assertion for a secret client.
        let jwt = refusal(
            try auth.authenticate(
                Self.presented(type: ClientAuthentication.jwtBearerType, assertion: try Self.assertion(Self.claims("zc_post"))),
                audiences: Self.audiences, now: Self.now))
        #expect(jwt?.error.code == .invalidClient)
        // No credentials at all.
        #expect(
            refusal(try auth.authenticate(Self.presented(clientID: "zc_basic"), audiences: Self.audiences, now: Self.now))?.error.code
                == .invalidClient)
    }

    @Test func twoMethodsAtOnceAreInvalidRequest() throws {
        let (auth, _) = authentication()
        let both = refusal(
            try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_basic", "zcs_old")], clientID: "zc_basic", secret: "zcs_old"),
                audiences: Self.audiences, now: Self.now))
        #expect(both?.error.code == .invalidRequest)
        let withAssertion = refusal(
            try auth.authenticate(
                Self.presented(clientID: "zc_post", secret: "zcs_post", type: ClientAuthentication.jwtBearerType, assertion: "a.b.c"),
                audiences: Self.audiences, now: Self.now))
        #expect(withAssertion?.error.code == .invalidRequest)
        let twoHeaders = refusal(
            try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_basic", "zcs_old"), Self.basic("zc_basic", "zcs_new")]),
                audiences: Self.audiences, now: Self.now))
        #expect(twoHeaders?.error.code == .invalidRequest)
        // Basic beside a different client_id in the body.
        let mismatched = refusal(
            try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_basic", "zcs_old")], clientID: "zc_post"), audiences: Self.audiences,
                now: Self.now))
        #expect(mismatched?.error.code == .invalidRequest)
    }

    @Test func basicCredentialsAreFormDecodedBeforeTheyAreCompared() throws {
        // RFC 6749 §2.3.1: each part is application/x-www-form-urlencoded before base64.
        #expect(ClientAuthentication.basicCredentials(Self.basic("zc%5Fbasic", "a%2Bb+c%3Ad"))! == ("zc_basic", "a+b c:d"))
        #expect(ClientAuthentication.basicCredentials("basic " + Data("zc_x:s:t".utf8).base64EncodedString())! == ("zc_x", "s:t"))
        #expect(ClientAuthentication.basicCredentials("Basic !!!") == nil)
        #expect(ClientAuthentication.basicCredentials("Basic " + Data("no-colon".utf8).base64EncodedString()) == nil)
        #expect(ClientAuthentication.basicCredentials("Basic " + Data(":secret".utf8).base64EncodedString()) == nil)
        #expect(ClientAuthentication.basicCredentials("Basic " + Data("zc_x:%zz".utf8).base64EncodedString()) == nil)

        let (auth, store) = authentication()
        store.clients["zc_basic"] = Self.client("zc_basic", .clientSecretBasic, secrets: ["a+b c:d"])
        let encoded = try auth.authenticate(
            Self.presented(authorization: [Self.basic("zc%5Fbasic", "a%2Bb+c%3Ad")]), audiences: Self.audiences, now: Self.now)
        #expect(try encoded.get().client.clientID == "zc_basic")
        // The same secret not form-encoded: `+` reads as a space, so it is another secret.
        let raw = refusal(
            try auth.authenticate(
                Self.presented(authorization: [Self.basic("zc_basic", "a+b c:d")]), audiences: Self.audiences, now: Self.now))
        #expect(raw?.error.code == .invalidClient)
    }

    @Test func aSignedAssertionAuthenticatesOnceWithEitherAudience() throws {
        let (auth, _) = authentication()
        for aud: Any in ["https://id.example/oauth2/token", ["https://other.example", "https://id.example"]] {
            let token = try Self.assertion(Self.claims(aud: aud, jti: "j-\(UUID())"))
            let first = try auth.authenticate(
                Self.presented(type: ClientAuthentication.jwtBearerType, assertion: token), audiences: Self.audiences, now: Self.now)
            #expect(try first.get().method == .privateKeyJWT)
            let replay = refusal(
                try auth.authenticate(
                    Self.presented(type: ClientAuthentication.jwtBearerType, assertion: token), audiences: Self.audiences, now: Self.now))
            #expect(replay?.error.description == "The client assertion was used before (its jti is single use).")
        }
        // client_id beside the assertion must be its subject.
        let named = try auth.authenticate(
            Self.presented(clientID: "zc_jwt", type: ClientAuthentication.jwtBearerType, assertion: try Self.assertion(Self.claims())),
            audiences: Self.audiences, now: Self.now)
        #expect(try named.get().client.clientID == "zc_jwt")
        let other = refusal(
            try auth.authenticate(
                Self.presented(clientID: "zc_post", type: ClientAuthentication.jwtBearerType, assertion: try Self.assertion(Self.claims())),
                audiences: Self.audiences, now: Self.now))
        #expect(other?.error.code == .invalidClient)
    }

    static func failingClaims(_ label: String) -> [String: Any] {
        switch label {
        case "wrong aud": claims(aud: "https://elsewhere.example/token")
        case "expired": claims(exp: -1)
        case "too far ahead": claims(exp: 3661)
        case "iss not the client": claims().merging(["iss": "zc_other"]) { $1 }
        case "no jti": claims().filter { $0.key != "jti" }
        case "no exp": claims().filter { $0.key != "exp" }
        default: claims().merging(["iat": 1_800_000_500]) { $1 }
        }
    }

    @Test(arguments: ["wrong aud", "expired", "too far ahead", "iss not the client", "no jti", "no exp", "iat in the future"])
    func anAssertionWhoseClaimsFailIsInvalidClient(_ label: String) throws {
        let (auth, store) = authentication()
        let claims = Self.failingClaims(label)
        let failure = refusal(
            try auth.authenticate(
                Self.presented(type: ClientAuthentication.jwtBearerType, assertion: try Self.assertion(claims)), audiences: Self.audiences,
                now: Self.now))
        #expect(failure?.error.code == .invalidClient, "\(label)")
        #expect(store.usedIDs.isEmpty, "a refused assertion spends no jti")
    }

    @Test func anAssertionSignedByAnotherKeyOrWithAnotherAlgorithmIsRefused() throws {
        let (auth, _) = authentication()
        for token in [try Self.assertion(Self.claims(), signature: "forged"), try Self.assertion(Self.claims(), alg: "HS256")] {
            let failure = refusal(
                try auth.authenticate(
                    Self.presented(type: ClientAuthentication.jwtBearerType, assertion: token), audiences: Self.audiences, now: Self.now))
            #expect(failure?.error.code == .invalidClient)
        }
        let wrongType = refusal(
            try auth.authenticate(
                Self.presented(
                    type: "urn:ietf:params:oauth:client-assertion-type:saml2-bearer", assertion: try Self.assertion(Self.claims())),
                audiences: Self.audiences, now: Self.now))
        #expect(wrongType?.error.code == .invalidClient)
    }

    @Test func aRequestNamesAWebClientOnlyByAzcIdentifier() throws {
        #expect(ClientAuthentication.namedWebClient(Self.presented(clientID: "pk_test_abc")) == nil)
        #expect(ClientAuthentication.namedWebClient(Self.presented(authorization: [Self.basic("pk_test_abc", "")])) == nil)
        #expect(ClientAuthentication.namedWebClient(Self.presented(clientID: "zc_post", secret: "x")) == "zc_post")
        #expect(ClientAuthentication.namedWebClient(Self.presented(authorization: [Self.basic("zc%5Fbasic", "x")])) == "zc_basic")
        #expect(
            ClientAuthentication.namedWebClient(
                Self.presented(type: ClientAuthentication.jwtBearerType, assertion: try Self.assertion(Self.claims()))) == "zc_jwt")
    }
}
