import Foundation

/// Why a provider field was refused: the admin API field and a sentence that completes "FIELD …", sent as
/// `error_description` with 400 `invalid_request` (docs/federation.md, "Providers"). It never repeats the
/// value (a description echoes no request input, and some fields are secrets).
public struct ProviderFieldProblem: Error, Sendable, Equatable {
    /// The admin API member, e.g. `teamId`.
    public let field: String
    /// What the value breaks, completing "`field` …" (no final full stop).
    public let rule: String

    public init(field: String, rule: String) {
        self.field = field
        self.rule = rule
    }
}

/// The rules of each provider field, one function each (docs/federation.md, "Providers"). Every rule trims
/// surrounding white space first, except the secrets', which are kept exactly as given.
public enum ProviderFields {
    /// The admin API member names.
    public static let kind = "kind"
    public static let slug = "slug"
    public static let displayName = "displayName"
    public static let issuer = "issuer"
    public static let clientID = "clientId"
    public static let clientSecret = "clientSecret"
    public static let teamID = "teamId"
    public static let keyID = "keyId"
    public static let privateKey = "privateKey"

    /// The members a provider of `kind` takes, in the order their rules are judged.
    public static func fields(of kind: UpstreamProviderKind) -> [String] {
        switch kind {
        case .apple: [slug, clientID, teamID, keyID, privateKey]
        case .google: [slug, clientID, clientSecret]
        case .oidc: [slug, displayName, issuer, clientID, clientSecret]
        }
    }

    /// The most characters a slug has.
    public static let slugMaximum = 32

    /// `slug`: 1 to 32 of `a-z 0-9 -`, starting and ending with a letter or digit (stored lower-cased). It
    /// names the provider in URLs and in the CLI, so it is plain ASCII.
    public static func slug(_ raw: String) -> Result<String, ProviderFieldProblem> {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let rule = "must be 1 to \(slugMaximum) of a-z, 0-9 and -, starting and ending with a letter or digit"
        let allowed = text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        guard !text.isEmpty, text.unicodeScalars.count <= slugMaximum, allowed, text.first != "-", text.last != "-" else {
            return .failure(ProviderFieldProblem(field: slug, rule: rule))
        }
        return .success(text)
    }

    /// `displayName` (an `oidc` provider's NAME in "Continue with NAME"): `DisplayName`'s rule, at most 40
    /// characters so the button stays one line.
    public static func displayName(_ raw: String) -> Result<String, ProviderFieldProblem> {
        guard let name = DisplayName(raw), name.text.unicodeScalars.count <= 40 else {
            return .failure(
                ProviderFieldProblem(
                    field: displayName, rule: "must be 1 to 40 characters without control or bidirectional-control characters"))
        }
        return .success(name.text)
    }

    /// The most characters an issuer URL has.
    public static let issuerMaximum = 2048

    /// `issuer` of an `oidc` provider (OpenID Connect Discovery 1.0 §2: "a case-sensitive URL using the
    /// https scheme that contains scheme, host, and optionally, port number and path components and no
    /// query or fragment components"). Kept exactly as typed after trimming (issuers compare as strings).
    /// - Parameter allowHTTP: `http://` is accepted too: only when outbound fetches to private addresses
    ///   are allowed (`ZEVAUTH_OUTBOUND_ALLOW_PRIVATE`, for tests with a loopback upstream).
    public static func issuer(_ raw: String, allowHTTP: Bool) -> Result<String, ProviderFieldProblem> {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let rule =
            allowHTTP
            ? "must be an https (or, on this test server, http) URL with a host, and no query, fragment or user name"
            : "must be an https URL with a host, and no query, fragment or user name"
        // The scheme in lower case, as the upstream writes its `iss`: issuers are compared as strings.
        guard text.unicodeScalars.count <= issuerMaximum, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            text.hasPrefix("https://") || (allowHTTP && text.hasPrefix("http://")),
            let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil, components.user == nil, components.password == nil
        else { return .failure(ProviderFieldProblem(field: issuer, rule: rule)) }
        return .success(text)
    }

    /// The most characters a client ID has.
    public static let clientIDMaximum = 255

    /// `clientId` (Apple: the services ID): 1 to 255 visible ASCII characters.
    public static func clientID(_ raw: String) -> Result<String, ProviderFieldProblem> {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard isVisibleASCII(text, maximum: clientIDMaximum) else {
            return .failure(ProviderFieldProblem(field: clientID, rule: "must be 1 to \(clientIDMaximum) visible ASCII characters"))
        }
        return .success(text)
    }

    /// The most characters a client secret has.
    public static let clientSecretMaximum = 1024

    /// `clientSecret` (`google`, `oidc`): 1 to 1024 visible ASCII characters, kept exactly as given.
    public static func clientSecret(_ raw: String) -> Result<String, ProviderFieldProblem> {
        guard isVisibleASCII(raw, maximum: clientSecretMaximum) else {
            return .failure(
                ProviderFieldProblem(
                    field: clientSecret, rule: "must be 1 to \(clientSecretMaximum) visible ASCII characters, with no space"))
        }
        return .success(raw)
    }

    /// `teamId`: Apple's Developer Team ID, exactly 10 characters `A-Z0-9`, upper-cased on input (the rule
    /// of an iOS app's `teamId`, docs/protocol.md#app-identifiers).
    public static func teamID(_ raw: String) -> Result<String, ProviderFieldProblem> {
        appleIdentifier(raw, field: teamID, what: "a Team ID (Membership details)")
    }

    /// `keyId`: the ID Apple shows for the `.p8` key, exactly 10 characters `A-Z0-9`, upper-cased on input.
    public static func keyID(_ raw: String) -> Result<String, ProviderFieldProblem> {
        appleIdentifier(raw, field: keyID, what: "the Key ID shown beside the key in Certificates, Identifiers & Profiles")
    }

    /// The problem of a refused `keyId`.
    public static let keyIDProblem = ProviderFieldProblem(
        field: keyID, rule: "must be exactly 10 letters or digits: the Key ID shown beside the key in Certificates, Identifiers & Profiles")

    private static func appleIdentifier(_ raw: String, field: String, what: String) -> Result<String, ProviderFieldProblem> {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        guard text.unicodeScalars.count == 10, text.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else {
            return .failure(ProviderFieldProblem(field: field, rule: "must be exactly 10 letters or digits: \(what)"))
        }
        return .success(text)
    }

    /// The most bytes of `.p8` text read (a P-256 PKCS#8 key is about 250).
    public static let privateKeyMaximum = 4096

    /// `privateKey`: the `.p8` file Apple lets you download once, a PEM `PRIVATE KEY` block (RFC 7468 §10:
    /// PKCS#8 `PrivateKeyInfo`). This reads the PEM and returns the DER; whether it is an EC key on P-256
    /// is checked at the edge by loading it with OpenSSL (`KeyLoading`).
    public static func privateKey(_ raw: String) -> Result<[UInt8], ProviderFieldProblem> {
        let problem = ProviderFieldProblem(
            field: privateKey, rule: "must be the whole .p8 file: -----BEGIN PRIVATE KEY-----, the base64 lines, -----END PRIVATE KEY-----")
        guard raw.utf8.count <= privateKeyMaximum else { return .failure(problem) }
        let lines = raw.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count >= 3, lines.first == "-----BEGIN PRIVATE KEY-----", lines.last == "-----END PRIVATE KEY-----" else {
            return .failure(problem)
        }
        let body = lines.dropFirst().dropLast().joined()
        guard !body.isEmpty, body.unicodeScalars.allSatisfy({ $0.isASCII }), let der = Data(base64Encoded: body), !der.isEmpty else {
            return .failure(problem)
        }
        return .success(Array(der))
    }

    /// The rule `privateKey` breaks when its DER is not an EC private key on P-256.
    public static let notP256 = ProviderFieldProblem(
        field: privateKey, rule: "must be an EC private key on P-256 (the .p8 key Apple issues for Sign in with Apple)")

    private static func isVisibleASCII(_ text: String, maximum: Int) -> Bool {
        !text.isEmpty && text.unicodeScalars.count <= maximum && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }
}

extension ProviderFields {
    /// The member of `PUT /v1/admin/projects/{id}/providers`.
    public static let providerIDs = "providerIds"
    /// The most providers one sign-in page shows.
    public static let projectMaximum = 10

    /// `providerIds`: the providers a project's sign-in page shows, in order: at most 10 provider ids
    /// (UUIDs, stored lower-cased), none twice; an empty list shows none.
    public static func providerIDs(_ raw: [String]) -> Result<[String], ProviderFieldProblem> {
        let ids = raw.map { UUID(uuidString: $0.trimmingCharacters(in: .whitespaces))?.uuidString.lowercased() }
        guard raw.count <= projectMaximum, !ids.contains(nil), Set(ids).count == ids.count else {
            return .failure(
                ProviderFieldProblem(
                    field: providerIDs, rule: "must be a list of at most \(projectMaximum) provider ids, none given twice"))
        }
        return .success(ids.compactMap { $0 })
    }
}
