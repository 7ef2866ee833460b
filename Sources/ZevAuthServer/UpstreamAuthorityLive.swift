import Authorize
import Crypto
import Encoding
import Fetch
import Foundation

/// The upstream OpenID providers reached through the outbound fetcher with all its guards (private
/// addresses refused unless `ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`, HTTPS verified, no redirect followed, the
/// outbound timeouts, a size cap per document): discovery, key sets and the token endpoint
/// (docs/federation.md, "Discovery and keys", "Verifying an upstream ID token").
///
/// Discovery documents and key sets are cached in memory per instance for their `Cache-Control: max-age`,
/// bounded to 5 minutes…24 hours (`UpstreamCaching`): a cache, not state, so instances stay interchangeable.
/// A token whose `kid` the cached set lacks fetches the set again, at most once a minute per key set.
public final class UpstreamAuthorityLive: UpstreamAuthority, @unchecked Sendable {
    /// The largest discovery document or key set read: 256 KiB.
    public static let documentMaximumBytes = 262_144
    /// The largest token endpoint answer read: 64 KiB.
    public static let tokenAnswerMaximumBytes = 65_536

    private struct Held<Value> {
        let value: Value
        let fetchedAt: Date
        let until: Date
    }

    private let fetcher: HTTPSFetcher
    private let providers: UpstreamProviders
    private let minter: AppleClientSecretMinter
    private let clock: any Clock
    private let lock = NSLock()
    private var discoveries: [String: Held<UpstreamDiscovery>] = [:]
    private var keySets: [String: Held<UpstreamKeySet>] = [:]
    /// When each key set was last fetched because a token named a `kid` it lacked.
    private var unknownKeyRefetches: [String: Date] = [:]

    /// - Parameters:
    ///   - fetcher: the outbound fetcher (`ZEVAUTH_OUTBOUND_*`).
    ///   - providers: opens a provider's sealed client secret.
    ///   - minter: Apple's client secrets.
    ///   - clock: "now" for the caches and the token checks.
    public init(fetcher: HTTPSFetcher, providers: UpstreamProviders, minter: AppleClientSecretMinter, clock: any Clock) {
        self.fetcher = fetcher
        self.providers = providers
        self.minter = minter
        self.clock = clock
    }

    // MARK: The port

    public func authorizationURL(
        provider: UpstreamProviderRecord, redirectURI: String, state: String, nonce: String, codeChallenge: String
    ) throws(UpstreamFailure) -> String {
        let discovery = try discovery(of: provider)
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI), ("state", state),
            ("nonce", nonce), ("code_challenge", codeChallenge), ("code_challenge_method", "S256"),
        ]
        if provider.kind == .apple {
            // Apple posts the answer when a scope is asked for (Apple, "Incorporating Sign in with Apple into
            // other platforms": `response_mode` must be `form_post` with `name` or `email`).
            pairs += [("scope", "name email"), ("response_mode", "form_post")]
        } else {
            pairs.append(("scope", "openid email profile"))
        }
        let separator = discovery.authorizationEndpoint.contains("?") ? "&" : "?"
        return discovery.authorizationEndpoint + separator + FormURLEncoding.encode(pairs)
    }

    public func redeem(
        provider: UpstreamProviderRecord, code: String, codeVerifier: String, redirectURI: String, nonce: String
    ) throws(UpstreamFailure) -> UpstreamIdentity {
        let discovery = try discovery(of: provider)
        var pairs: [(String, String)] = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", codeVerifier),
        ]
        var headers: [(name: String, value: String)] = [("Content-Type", "application/x-www-form-urlencoded")]
        let now = clock.now()
        if provider.kind == .apple {
            // Apple takes its minted ES256 secret in the body (Apple, "Generate and validate tokens").
            guard let secret = try? minter.secret(for: provider, now: now) else { throw .providerUnavailable }
            pairs += [("client_id", provider.clientID), ("client_secret", secret)]
        } else {
            guard let sealed = provider.sealedClientSecret,
                let secret = providers.open(sealed, providerID: provider.id, field: ProviderFields.clientSecret)
            else { throw .providerUnavailable }
            let text = String(decoding: secret, as: UTF8.self)
            switch discovery.clientAuthentication {
            case .basic:
                // RFC 6749 §2.3.1: each part form-encoded, then joined by a colon and base64-encoded.
                let credentials =
                    FormURLEncoding.percentEncodeUnreserved(provider.clientID) + ":" + FormURLEncoding.percentEncodeUnreserved(text)
                headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
            case .post:
                pairs += [("client_id", provider.clientID), ("client_secret", text)]
            }
        }
        guard let target = Target(discovery.tokenEndpoint) else { throw .discovery }
        let answer: FetchedResponse
        switch fetcher.send(
            .post, host: target.host, port: target.port, path: target.path, headers: headers,
            body: Array(FormURLEncoding.encode(pairs).utf8),
            maxBytes: Self.tokenAnswerMaximumBytes)
        {
        case .failure: throw .providerUnavailable
        case .success(let response): answer = response
        }
        let document = try? JSONValue.parse(answer.body)
        guard answer.status == 200 else { throw .tokenEndpoint(Self.errorCode(document, status: answer.status)) }
        guard let idToken = document?["id_token"]?.stringValue else { throw .tokenEndpoint("no_id_token") }
        return try verify(
            idToken, provider: provider,
            expecting: UpstreamTokenExpectation(
                providerID: provider.id, issuer: provider.issuer, audiences: [provider.clientID], nonce: .exactly(nonce)))
    }

    public func verifyNative(
        provider: UpstreamProviderRecord, idToken: String, audiences: [String], rawNonce: String
    ) throws(UpstreamFailure) -> UpstreamIdentity {
        // Apple's sheet carries the SHA-256 hex of the app's raw nonce; Google's Credential Manager and other
        // providers carry the nonce as the app gave it (docs/federation.md, "Native Sign in with Apple and Google").
        let nonce: UpstreamTokenExpectation.Nonce = provider.kind == .apple ? .sha256Hex(of: rawNonce) : .exactly(rawNonce)
        return try verify(
            idToken, provider: provider,
            expecting: UpstreamTokenExpectation(providerID: provider.id, issuer: provider.issuer, audiences: audiences, nonce: nonce))
    }

    // MARK: Verification

    private func verify(_ idToken: String, provider: UpstreamProviderRecord, expecting: UpstreamTokenExpectation) throws(UpstreamFailure)
        -> UpstreamIdentity
    {
        let header = try UpstreamIDToken.header(idToken)
        let discovery = try discovery(of: provider)
        var keys = try keySet(at: discovery.jwksURI, refetchUnless: nil)
        if !keys.has(keyID: header.keyID) {
            keys = try keySet(at: discovery.jwksURI, refetchUnless: header.keyID)
        }
        return try UpstreamIDToken.verify(
            idToken, keys: keys, expecting: expecting, now: clock.now(), verify: Self.verifySignature,
            digest: { Crypto.hexSHA256($0) })
    }

    /// Whether `signature` over `input` verifies under `key` (OpenSSL, `Crypto.VerifyingKey`).
    static func verifySignature(_ key: UpstreamKey, _ input: [UInt8], _ signature: [UInt8]) -> Bool {
        let parameters: Crypto.PublicKeyParameters
        switch key.material {
        case .rsa(let n, let e): parameters = .rsa(n: n, e: e)
        case .p256(let x, let y): parameters = .p256(x: x, y: y)
        }
        return Crypto.VerifyingKey(parameters)?.verify(signature, of: input) ?? false
    }

    // MARK: Discovery and keys

    /// The provider's discovery document, cached (OpenID Connect Discovery 1.0 §4: `ISSUER` without a
    /// trailing slash, then `/.well-known/openid-configuration`).
    func discovery(of provider: UpstreamProviderRecord) throws(UpstreamFailure) -> UpstreamDiscovery {
        let now = clock.now()
        if let held = lock.withLock({ discoveries[provider.issuer] }), held.until > now { return held.value }
        let base = provider.issuer.hasSuffix("/") ? String(provider.issuer.dropLast()) : provider.issuer
        guard let (response, lifetime) = fetchDocument(base + "/.well-known/openid-configuration"), response.status == 200
        else { throw .discovery }
        let discovery = try UpstreamDiscovery.parse(response.body, issuer: provider.issuer)
        lock.withLock { discoveries[provider.issuer] = Held(value: discovery, fetchedAt: now, until: now.addingTimeInterval(lifetime)) }
        return discovery
    }

    /// The key set at `uri`: the cached one while fresh, else fetched again; with `refetchUnless` (a `kid`
    /// the cached set lacks) fetched again at once, unless a fetch for an unknown `kid` of this set happened
    /// less than a minute ago (`UpstreamCaching.unknownKeyRefetchSeconds`).
    private func keySet(at uri: String, refetchUnless keyID: String?) throws(UpstreamFailure) -> UpstreamKeySet {
        let now = clock.now()
        let (held, lastRefetch) = lock.withLock { (keySets[uri], unknownKeyRefetches[uri]) }
        if let held, held.until > now {
            guard keyID != nil, !held.value.has(keyID: keyID) else { return held.value }
            if let lastRefetch, now.timeIntervalSince(lastRefetch) < UpstreamCaching.unknownKeyRefetchSeconds { return held.value }
        }
        if keyID != nil { lock.withLock { unknownKeyRefetches[uri] = now } }
        guard let (response, lifetime) = fetchDocument(uri), response.status == 200 else { throw .jwks }
        let keys = try UpstreamKeySet.parse(response.body)
        lock.withLock { keySets[uri] = Held(value: keys, fetchedAt: now, until: now.addingTimeInterval(lifetime)) }
        return keys
    }

    /// A GET of `url` through the fetcher and how long its answer may be kept; nil when no answer came.
    private func fetchDocument(_ url: String) -> (FetchedResponse, Double)? {
        guard let target = Target(url),
            case .success(let response) = fetcher.send(
                .get, host: target.host, port: target.port, path: target.path, maxBytes: Self.documentMaximumBytes)
        else { return nil }
        return (response, UpstreamCaching.lifetime(cacheControl: response.header("Cache-Control")))
    }

    /// The `error` code of a token endpoint's refusal (RFC 6749 §5.2) when it is a plain code, else the
    /// status: never the description, which may echo what was sent.
    static func errorCode(_ document: JSONValue?, status: Int) -> String {
        if let code = document?["error"]?.stringValue, !code.isEmpty, code.count <= 64,
            code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "_" })
        {
            return code
        }
        return "status_\(status)"
    }

    /// An https URL taken apart for the fetcher.
    private struct Target {
        let host: String
        let port: Int
        let path: String

        init?(_ url: String) {
            guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host, !host.isEmpty,
                components.user == nil, components.fragment == nil
            else { return nil }
            self.host = host
            port = components.port ?? 443
            let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            self.path = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        }
    }
}
