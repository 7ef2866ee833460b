import Authorize
import Crypto
import Encoding
import Foundation

/// `SigningKeyMaker` over OpenSSL (`Crypto.SigningKey`) and AES-256-GCM under `ZEVAUTH_ENCRYPTION_KEY`:
/// RSA-2048 for RS256, P-256 for ES256; the kid is the key's RFC 7638 thumbprint.
struct OpenSSLSigningKeyMaker: SigningKeyMaker {
    let sealer: any SecretSealing

    func make(_ algorithm: SigningAlgorithm) throws -> NewSigningKey {
        let key = try Crypto.SigningKey.generate(SigningKeyRing.keyType(algorithm))
        let parameters = try key.publicParameters()
        let kid = Self.thumbprint(parameters)
        let sealed = try sealer.seal(try key.pkcs8(), associatedData: SigningKeyRing.associatedData(kid: kid))
        return NewSigningKey(
            kid: kid, algorithm: algorithm, publicJWK: Self.publicJWK(parameters, kid: kid, algorithm: algorithm),
            sealedPrivateKey: Data(sealed).base64EncodedString())
    }

    /// The RFC 7638 §3 thumbprint: SHA-256 of the required members in lexicographic order, no whitespace.
    static func thumbprint(_ parameters: Crypto.PublicKeyParameters) -> String {
        var writer = JSONWriter(capacity: 512)
        writer.object { jwk in
            switch parameters {
            case .rsa(let n, let e):
                jwk.field("e", Base64URL.encode(e))
                jwk.field("kty", "RSA")
                jwk.field("n", Base64URL.encode(n))
            case .p256(let x, let y):
                jwk.field("crv", "P-256")
                jwk.field("kty", "EC")
                jwk.field("x", Base64URL.encode(x))
                jwk.field("y", Base64URL.encode(y))
            }
        }
        return Base64URL.encode(Crypto.sha256(writer.bytes))
    }

    /// The public JWK as the JWKS lists it (RFC 7517 §4, RFC 7518 §6): `kty`, `kid`, `use: "sig"`, `alg`,
    /// then `n`/`e` or `crv`/`x`/`y`.
    static func publicJWK(_ parameters: Crypto.PublicKeyParameters, kid: String, algorithm: SigningAlgorithm) -> String {
        var writer = JSONWriter(capacity: 512)
        writer.object { jwk in
            switch parameters {
            case .rsa(let n, let e):
                jwk.field("kty", "RSA")
                jwk.field("kid", kid)
                jwk.field("use", "sig")
                jwk.field("alg", algorithm.rawValue)
                jwk.field("n", Base64URL.encode(n))
                jwk.field("e", Base64URL.encode(e))
            case .p256(let x, let y):
                jwk.field("kty", "EC")
                jwk.field("kid", kid)
                jwk.field("use", "sig")
                jwk.field("alg", algorithm.rawValue)
                jwk.field("crv", "P-256")
                jwk.field("x", Base64URL.encode(x))
                jwk.field("y", Base64URL.encode(y))
            }
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// The signing keys as this instance sees them: read from PostgreSQL (the truth every instance shares) and
/// kept for at most `freshSeconds`, re-read sooner for a kid it does not know (docs/operations.md, "Signing
/// keys"). It signs ID tokens with the current key (`IDTokenSigner`) and verifies `id_token_hint`s
/// against the published keys (`IDTokenHintReader`). Private keys are opened (AES-256-GCM, then PKCS#8)
/// once per key and never leave this type.
public final class SigningKeyRing: IDTokenSigner, IDTokenHintReader, @unchecked Sendable {
    /// How long a read of the keys is used before the next request re-reads them.
    static let freshSeconds: Double = 5
    /// The least time between two re-reads caused by an unknown kid (a flood of made-up kids costs at most
    /// one query a second).
    static let unknownKidRereadSeconds: Double = 1

    /// The keys in PostgreSQL.
    public let store: any SigningKeyStore
    /// Generates and seals new keys; nil without `ZEVAUTH_ENCRYPTION_KEY`.
    let maker: (any SigningKeyMaker)?
    let sealer: (any SecretSealing)?
    let issuer: String
    let clock: any Clock

    private struct Snapshot {
        let records: [SigningKeyRecord]
        let opened: [String: Crypto.SigningKey]
        let readAt: Double
    }

    private let lock = NSLock()
    private var snapshot: Snapshot?

    /// - Parameters:
    ///   - store: the keys in PostgreSQL.
    ///   - encryptionKey: `ZEVAUTH_ENCRYPTION_KEY` (32 bytes), or nil: then nothing is signed and every hint
    ///     is ignored.
    ///   - issuer: `ZEVAUTH_ISSUER`, the only `iss` a hint may carry.
    ///   - clock: the source of "now" for the keys' lifecycle.
    public init(store: any SigningKeyStore, encryptionKey: [UInt8]?, issuer: String, clock: any Clock) {
        self.store = store
        let sealer = encryptionKey.map { AESGCMSealer(key: $0) as any SecretSealing }
        self.sealer = sealer
        self.maker = sealer.map { OpenSSLSigningKeyMaker(sealer: $0) }
        self.issuer = issuer
        self.clock = clock
    }

    static func keyType(_ algorithm: SigningAlgorithm) -> Crypto.SigningKeyType {
        algorithm == .rs256 ? .rsa2048 : .p256
    }

    /// Associated data binding a sealed private key to its kid (a box copied onto another row does not open).
    static func associatedData(kid: String) -> [UInt8] { Array("zevauth:signing-key:v1:\(kid)".utf8) }

    private static func uptime() -> Double { ProcessInfo.processInfo.systemUptime }

    /// Forgets the keys read, so the next use re-reads them (after this instance rotated or revoked).
    public func invalidate() { lock.withLock { snapshot = nil } }

    /// The keys, re-read when the last read is older than `maxAge` seconds.
    private func keys(maxAge: Double) throws -> Snapshot {
        let now = Self.uptime()
        if let held = lock.withLock({ snapshot }), now - held.readAt < maxAge { return held }
        let records = try store.signingKeys(now: clock.now())
        let previous = lock.withLock { snapshot?.opened } ?? [:]
        var opened: [String: Crypto.SigningKey] = [:]
        for record in records {
            if let key = previous[record.kid] {
                opened[record.kid] = key
            } else if let key = open(record) {
                opened[record.kid] = key
            }
        }
        let fresh = Snapshot(records: records, opened: opened, readAt: now)
        lock.withLock { snapshot = fresh }
        return fresh
    }

    /// The private key of `record`, or nil when it does not open under this server's encryption key.
    private func open(_ record: SigningKeyRecord) -> Crypto.SigningKey? {
        guard let sealer, let box = Data(base64Encoded: record.sealedPrivateKey),
            let der = try? sealer.open(Array(box), associatedData: Self.associatedData(kid: record.kid))
        else { return nil }
        return try? Crypto.SigningKey.load(pkcs8: der, type: Self.keyType(record.algorithm))
    }

    /// The published keys (for the JWKS), read within the last few seconds.
    /// - Throws: `StoreUnavailable`.
    public func published() throws -> [SigningKeyRecord] {
        SigningKeyPolicy.published(try completeKeys().records, now: clock.now())
    }

    /// The keys, made first when an algorithm lacks its current or next key (a fresh database, or a read
    /// while another instance was storing the first set).
    private func completeKeys() throws -> Snapshot {
        let held = try keys(maxAge: Self.freshSeconds)
        if SigningKeyPolicy.isComplete(held.records) || maker == nil { return held }
        try ensureKeys()
        return try keys(maxAge: 0)
    }

    /// Makes the missing current and next keys (the first `serve`, or after a database was emptied).
    /// - Throws: `StoreUnavailable` (reason `no_encryption_key` without `ZEVAUTH_ENCRYPTION_KEY`).
    public func ensureKeys() throws {
        guard let maker else { throw StoreUnavailable(reason: "no_encryption_key") }
        try EnsureSigningKeys(store: store, maker: maker)(now: clock.now())
        invalidate()
    }

    /// A new key of `algorithm`, generated and sealed but not stored (tests race the store with these).
    /// - Throws: `StoreUnavailable` without an encryption key; OpenSSL failures.
    public func makeKey(_ algorithm: SigningAlgorithm) throws -> NewSigningKey {
        guard let maker else { throw StoreUnavailable(reason: "no_encryption_key") }
        return try maker.make(algorithm)
    }

    // MARK: IDTokenSigner

    public func sign(claims: [UInt8], algorithm: SigningAlgorithm, now: Date) throws -> String {
        guard maker != nil else { throw StoreUnavailable(reason: "no_encryption_key") }
        let held = try completeKeys()
        guard let record = SigningKeyPolicy.current(held.records, algorithm: algorithm), let key = held.opened[record.kid] else {
            throw StoreUnavailable(reason: "no_signing_keys")
        }
        let input = JWS.signingInput(header: JWS.protectedHeader(algorithm: algorithm, keyID: record.kid), payload: claims)
        return JWS.compact(signingInput: input, signature: try key.sign(input))
    }

    // MARK: IDTokenHintReader

    public func read(_ compact: String) -> IDTokenHint? {
        guard let parsed = JWS.parse(compact), let algorithm = SigningAlgorithm(rawValue: parsed.algorithm), let kid = parsed.keyID
        else { return nil }
        guard var held = try? keys(maxAge: Self.freshSeconds) else { return nil }
        if held.opened[kid] == nil {
            guard let reread = try? keys(maxAge: Self.unknownKidRereadSeconds) else { return nil }
            held = reread
        }
        let now = clock.now()
        // Only a published key (next, current, retired and not gone; never revoked), and only with its own
        // algorithm: `alg: none`, HS256 and a header naming the other algorithm are refused above or here.
        guard let record = held.records.first(where: { $0.kid == kid }), record.algorithm == algorithm,
            SigningKeyPolicy.isPublished(record, now: now), let key = held.opened[kid],
            key.verify(parsed.signature, of: parsed.signingInput)
        else { return nil }
        return IDTokenHint.fromVerifiedPayload(parsed.payload, issuer: issuer)
    }
}
