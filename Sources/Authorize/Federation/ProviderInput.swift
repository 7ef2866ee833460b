import Foundation

/// A provider's fields as the admin API or the console received them, each rule judged once
/// (`ProviderFields`), in the order `ProviderFields.fields(of:)` gives (docs/federation.md, "Providers").
/// The result holds plain secrets: `UpstreamProviders` seals them before anything is stored.
public struct ProviderInput: Sendable, Equatable {
    public var slug: String?
    public var displayName: String?
    public var issuer: String?
    public var clientID: String?
    public var clientSecret: String?
    public var teamID: String?
    public var keyID: String?
    /// The PKCS#8 DER read from the `.p8` PEM (not yet known to be a P-256 key: the edge loads it).
    public var privateKeyDER: [UInt8]?

    public init() {}

    /// What a request's fields are checked against: the kind, and whether `http://` issuers are allowed.
    public struct Rules: Sendable {
        public let kind: UpstreamProviderKind
        public let allowHTTPIssuer: Bool
        public init(kind: UpstreamProviderKind, allowHTTPIssuer: Bool) {
            self.kind = kind
            self.allowHTTPIssuer = allowHTTPIssuer
        }
    }

    /// Judges `fields` (member → string value) for a provider of `rules.kind`.
    /// - Parameters:
    ///   - fields: the request's members other than `kind`, already known to be strings.
    ///   - creating: a create needs every field of the kind (`slug` defaults to the kind for `apple` and
    ///     `google`); an update takes any of them and changes only those.
    /// - Returns: the parsed fields, or the first problem: a member the kind does not take (named by the
    ///   sentence listing the ones it takes, since the unknown name is request input), a missing field, or
    ///   a field's rule.
    public static func parse(_ fields: [String: String], rules: Rules, creating: Bool) -> Result<ProviderInput, ProviderFieldProblem> {
        let allowed = ProviderFields.fields(of: rules.kind)
        if fields.keys.contains(where: { !allowed.contains($0) }) {
            return .failure(
                ProviderFieldProblem(
                    field: "The body",
                    rule: "has a member a provider of kind \(rules.kind.rawValue) does not take; it takes "
                        + allowed.joined(separator: ", ")))
        }
        var input = ProviderInput()
        for field in allowed {
            guard let raw = fields[field] else {
                if creating && !(field == ProviderFields.slug && rules.kind != .oidc) {
                    return .failure(ProviderFieldProblem(field: field, rule: "is required (a string)"))
                }
                continue
            }
            switch field {
            case ProviderFields.slug:
                switch ProviderFields.slug(raw) {
                case .success(let value): input.slug = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.displayName:
                switch ProviderFields.displayName(raw) {
                case .success(let value): input.displayName = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.issuer:
                switch ProviderFields.issuer(raw, allowHTTP: rules.allowHTTPIssuer) {
                case .success(let value): input.issuer = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.clientID:
                switch ProviderFields.clientID(raw) {
                case .success(let value): input.clientID = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.clientSecret:
                switch ProviderFields.clientSecret(raw) {
                case .success(let value): input.clientSecret = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.teamID:
                switch ProviderFields.teamID(raw) {
                case .success(let value): input.teamID = value
                case .failure(let problem): return .failure(problem)
                }
            case ProviderFields.keyID:
                switch ProviderFields.keyID(raw) {
                case .success(let value): input.keyID = value
                case .failure(let problem): return .failure(problem)
                }
            default:
                switch ProviderFields.privateKey(raw) {
                case .success(let value): input.privateKeyDER = value
                case .failure(let problem): return .failure(problem)
                }
            }
        }
        if creating {
            input.slug = input.slug ?? rules.kind.rawValue
            input.displayName = input.displayName ?? rules.kind.fixedDisplayName
            input.issuer = input.issuer ?? rules.kind.fixedIssuer
        }
        return .success(input)
    }

    /// Whether no field was given (an update that would change nothing).
    public var isEmpty: Bool { self == ProviderInput() }
}

/// Loads a PKCS#8 DER as an EC private key on P-256, at the edge (OpenSSL): the check behind
/// `ProviderFields.notP256`.
public protocol P256KeyLoading: Sendable {
    /// Whether `der` is a PKCS#8 EC private key on P-256.
    func isP256PrivateKey(_ der: [UInt8]) -> Bool
}

/// Managing the deployment's providers (docs/federation.md, "Providers"): every secret is sealed with
/// AES-256-GCM under `ZEVAUTH_ENCRYPTION_KEY` before it is stored, bound to the provider's id and the field
/// (`associatedData(providerID:field:)`), as TOTP secrets are bound to their account.
public struct UpstreamProviders: Sendable {
    public let store: any UpstreamProviderStore
    public let sealer: any SecretSealing
    public let keys: any P256KeyLoading

    public init(store: any UpstreamProviderStore, sealer: any SecretSealing, keys: any P256KeyLoading) {
        self.store = store
        self.sealer = sealer
        self.keys = keys
    }

    /// Associated data binding a sealed secret to its provider and column (a box copied onto another row
    /// or into the other column does not open).
    public static func associatedData(providerID: String, field: String) -> [UInt8] {
        Array("zevauth:upstream-provider:v1:\(providerID):\(field)".utf8)
    }

    /// The stored form of a secret: base64 of `nonce ‖ ciphertext ‖ tag`. - Throws: what the sealer throws.
    public func seal(_ secret: [UInt8], providerID: String, field: String) throws -> String {
        Data(try sealer.seal(secret, associatedData: Self.associatedData(providerID: providerID, field: field))).base64EncodedString()
    }

    /// The secret inside a stored box, or nil when it does not open (wrong key, altered row, another
    /// provider's or column's box, not base64).
    public func open(_ sealed: String, providerID: String, field: String) -> [UInt8]? {
        guard let bytes = Data(base64Encoded: sealed) else { return nil }
        return try? sealer.open(Array(bytes), associatedData: Self.associatedData(providerID: providerID, field: field))
    }

    /// The columns to write for `input`: plain fields as given, secrets sealed for `providerID`.
    /// - Throws: `ProviderFieldProblem` (`ProviderFields.notP256`) for a private key OpenSSL does not load
    ///   as P-256; what the sealer throws.
    public func columns(_ input: ProviderInput, providerID: String) throws -> UpstreamProviderColumns {
        if let der = input.privateKeyDER, !keys.isP256PrivateKey(der) { throw ProviderFields.notP256 }
        return UpstreamProviderColumns(
            slug: input.slug, displayName: input.displayName, issuer: input.issuer, clientID: input.clientID,
            appleTeamID: input.teamID, appleKeyID: input.keyID,
            sealedClientSecret: try input.clientSecret.map {
                try seal(Array($0.utf8), providerID: providerID, field: ProviderFields.clientSecret)
            },
            sealedApplePrivateKey: try input.privateKeyDER.map { try seal($0, providerID: providerID, field: ProviderFields.privateKey) })
    }

    /// Creates a provider of `kind` from a create's `input` (`ProviderInput.parse(_:rules:creating: true)`).
    /// - Parameter id: the new provider's id (a fresh UUID, lower-case), which the secrets are bound to.
    /// - Throws: `ProviderFieldProblem`, `ProviderRefusal.slugTaken`, `StoreUnavailable`.
    public func create(id: String, kind: UpstreamProviderKind, _ input: ProviderInput, now: Date, audit: AuditEntry) throws
        -> UpstreamProviderRecord
    {
        try store.createProvider(id: id, kind: kind, try columns(input, providerID: id), now: now, audit: audit.targeting(id))
    }

    /// Changes the fields `input` gives; a secret is replaced only when given.
    /// - Throws: `ProviderFieldProblem`, `ProviderRefusal.noProvider`, `.slugTaken`, `StoreUnavailable`.
    public func update(id: String, _ input: ProviderInput, now: Date, audit: AuditEntry) throws -> UpstreamProviderRecord {
        try store.updateProvider(id: id, try columns(input, providerID: id), now: now, audit: audit.targeting(id))
    }
}

extension AuditEntry {
    /// This entry with `target` set.
    func targeting(_ target: String) -> AuditEntry {
        AuditEntry(
            actor: actor, action: action, target: target, projectID: projectID, environmentID: environmentID,
            subjectUserID: subjectUserID, clientAddress: clientAddress, outcome: outcome, at: at)
    }
}
