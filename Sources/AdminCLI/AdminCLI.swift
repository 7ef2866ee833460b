import Encoding
import Fetch
import Foundation

/// The admin commands of `zevauth`, talking to a running server's admin API (docs/openapi.yaml) through
/// ``HTTPClient``. Every command is one row of ``AdminCLI/commands``: its words, operand, flags, credential
/// and what it sends; the usage and each command's `--help` are generated from that table.
///
/// Common flags: `--server URL` (else `ZEVAUTH_ISSUER`), `--operator-token T` (else `ZEVAUTH_OPERATOR_TOKEN`),
/// `--secret-key K` (else `ZEVAUTH_SECRET_KEY`), `--json` (print the server's JSON answer instead of a table).
/// A server error prints one sentence with its `error` and `error_description` and exits 1; a bad command
/// line exits 2; `--help` prints the usage of the commands named so far and exits 0.
public struct AdminCLI {
    /// The client used for every call.
    public let client: HTTPClient
    /// The process environment (or a test's).
    public let environment: [String: String]
    /// Where tables and JSON go (stdout).
    public let write: (String) -> Void
    /// Where errors go (stderr).
    public let writeError: (String) -> Void
    /// Reads a password when none was given on the command line (a no-echo prompt, or stdin).
    public let readPassword: (_ passwordStdin: Bool) -> String?

    /// A CLI over `client`.
    public init(
        client: HTTPClient = HTTPClient(), environment: [String: String], write: @escaping (String) -> Void,
        writeError: @escaping (String) -> Void, readPassword: @escaping (_ passwordStdin: Bool) -> String? = AdminCLI.defaultReadPassword
    ) {
        self.client = client
        self.environment = environment
        self.write = write
        self.writeError = writeError
        self.readPassword = readPassword
    }

    // MARK: The command table

    /// Which credential a call needs.
    enum Credential: String {
        case `operator` = "operator token"
        case secretKey = "secret key"
        /// The operator token or a secret key of the project named (members): the secret key when both are set.
        case either = "operator token or the project's secret key"
    }

    /// A flag of one command: `--name VALUE`, repeatable when `repeats`.
    struct Option {
        let name: String
        let placeholder: String
        var repeats = false
        var required = true
    }

    /// What a command sends, decided from its parsed command line.
    struct Call {
        let method: HTTPClientRequest.Method
        let path: String
        var body: [String: Any]? = nil
        let render: ([String: Any]) -> String
    }

    /// One admin command.
    struct Command {
        /// The words after `zevauth`, e.g. `["app", "add", "ios"]`.
        let words: [String]
        /// The positional operand (`APP_ID`), if the command takes one.
        var operand: String? = nil
        var options: [Option] = []
        let credential: Credential
        let summary: String
        /// Builds the call; throws for a command line the table cannot check alone.
        let call: (Invocation) throws(UsageError) -> Call

        /// `zevauth app show APP_ID`, then the flags.
        var synopsis: String {
            var parts = ["zevauth"] + words
            if let operand { parts.append(operand) }
            for option in options {
                let flag = "\(option.name) \(option.placeholder)" + (option.repeats ? " [\(option.name) …]" : "")
                parts.append(option.required ? flag : "[\(flag)]")
            }
            return parts.joined(separator: " ")
        }
    }

    /// A parsed command line of one command.
    struct Invocation {
        let flags: Flags
        /// The operand as given (never empty); the server validates it and explains a bad one.
        let operand: String?
        func value(_ name: String) -> String? { flags.one(name) }
        func required(_ name: String) throws(UsageError) -> String { try flags.required(name) }
        func values(_ name: String) -> [String] { flags.values[name] ?? [] }
        /// `?cursor=&limit=` of a list call, from `--cursor` and `--limit`.
        var paging: String {
            let pairs = [("cursor", value("--cursor")), ("limit", value("--limit"))].compactMap { name, value in value.map { (name, $0) } }
            return pairs.isEmpty ? "" : "?" + FormURLEncoding.encode(pairs)
        }
        /// `/v1/admin/projects/{id}/members` for `--project-id`, the id as one path segment.
        func membersPath() throws(UsageError) -> String {
            "/v1/admin/projects/\(FormURLEncoding.percentEncodeUnreserved(try required("--project-id")))/members"
        }
        /// The operand as given, for a request body and for what the CLI prints.
        var id: String { operand ?? "" }
        /// The operand as one RFC 3986 path segment (§3.3): every byte but the unreserved characters
        /// percent-encoded, so `/`, `?`, `%`, spaces and non-ASCII reach the server as data and get its
        /// own 400 or 404 sentence.
        var pathID: String { FormURLEncoding.percentEncodeUnreserved(id) }
    }

    /// `--project-id ID` of the members commands.
    static let projectOption = Option(name: "--project-id", placeholder: "ID")

    static let pagingOptions = [
        Option(name: "--limit", placeholder: "N", required: false), Option(name: "--cursor", placeholder: "CURSOR", required: false),
    ]

    /// The settings `settings set` may change, as flag → JSON field (docs/openapi.yaml, `/v1/admin/settings`).
    static let settingFlags: [(flag: String, field: String)] = [
        ("--session-max-age-days", "sessionMaxAgeDays"), ("--session-idle-days", "sessionIdleDays"),
        ("--access-token-ttl-minutes", "accessTokenTtlMinutes"), ("--refresh-reuse-grace-seconds", "refreshReuseGraceSeconds"),
    ]

    /// The field flags of `providers create` and `providers update`, as flag → JSON member; the secrets
    /// come from files (`--client-secret-file`, `--private-key-file`), never from the command line, where
    /// other users and the shell history could read them (docs/federation.md, "Providers").
    static let providerFlags: [(flag: String, field: String)] = [
        ("--slug", "slug"), ("--name", "displayName"), ("--issuer", "issuer"), ("--client-id", "clientId"), ("--team-id", "teamId"),
        ("--key-id", "keyId"),
    ]

    static let providerOptions =
        providerFlags.map { Option(name: $0.flag, placeholder: $0.flag == "--issuer" ? "URL" : "VALUE", required: false) } + [
            Option(name: "--client-secret-file", placeholder: "PATH", required: false),
            Option(name: "--private-key-file", placeholder: "KEY.p8", required: false),
        ]

    /// The provider fields of a command line: the plain flags as given, the client secret as its file's
    /// text without the final line break, the `.p8` file's text whole.
    static func providerFields(_ invocation: Invocation) throws(UsageError) -> [String: Any] {
        var body: [String: Any] = [:]
        for (flag, field) in providerFlags {
            if let value = invocation.value(flag) { body[field] = value }
        }
        if let path = invocation.value("--client-secret-file") {
            var secret = try readFile(path, flag: "--client-secret-file")
            while secret.hasSuffix("\n") || secret.hasSuffix("\r") { secret.removeLast() }
            body["clientSecret"] = secret
        }
        if let path = invocation.value("--private-key-file") { body["privateKey"] = try readFile(path, flag: "--private-key-file") }
        return body
    }

    /// The flags of `clients create` and `clients update` (docs/protocol.md, "Web clients"): the redirect
    /// URIs repeat; `--jwks-file` reads the key set from a file.
    static func webClientOptions(creating: Bool) -> [Option] {
        [
            Option(name: "--name", placeholder: "NAME", required: creating),
            Option(name: "--redirect-uri", placeholder: "URI", repeats: true, required: creating),
            Option(name: "--post-logout-redirect-uri", placeholder: "URI", repeats: true, required: false),
            Option(name: "--auth-method", placeholder: "client_secret_basic|client_secret_post|private_key_jwt", required: false),
            Option(name: "--jwks-file", placeholder: "JWKS.json", required: false),
            Option(name: "--jwks-uri", placeholder: "URL", required: false),
            Option(name: "--require-pkce", placeholder: "true|false", required: false),
            Option(name: "--require-par", placeholder: "true|false", required: false),
        ]
    }

    /// The web client fields of a command line.
    static func webClientFields(_ invocation: Invocation) throws(UsageError) -> [String: Any] {
        var body: [String: Any] = [:]
        if let name = invocation.value("--name") { body["name"] = name }
        let redirects = invocation.values("--redirect-uri")
        if !redirects.isEmpty { body["redirectUris"] = redirects }
        let logouts = invocation.values("--post-logout-redirect-uri")
        if !logouts.isEmpty { body["postLogoutRedirectUris"] = logouts }
        if let method = invocation.value("--auth-method") { body["tokenEndpointAuthMethod"] = method }
        if let uri = invocation.value("--jwks-uri") { body["jwksUri"] = uri }
        if let path = invocation.value("--jwks-file") {
            let text = try readFile(path, flag: "--jwks-file")
            guard let jwks = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw UsageError(message: "--jwks-file \(path) is not a JSON object")
            }
            body["jwks"] = jwks
        }
        if let flag = invocation.value("--require-pkce") {
            guard flag == "true" || flag == "false" else { throw UsageError(message: "--require-pkce takes true or false") }
            body["requirePkce"] = flag == "true"
        }
        if let flag = invocation.value("--require-par") {
            guard flag == "true" || flag == "false" else { throw UsageError(message: "--require-par takes true or false") }
            body["requirePushedAuthorizationRequests"] = flag == "true"
        }
        return body
    }

    /// A secret file's text (UTF-8).
    static func readFile(_ path: String, flag: String) throws(UsageError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError(message: "\(flag) \(path) cannot be read as a UTF-8 text file")
        }
        return text
    }

    /// Every admin command, in usage order.
    static var commands: [Command] {
        [
            Command(
                words: ["project", "create"],
                options: [
                    Option(name: "--name", placeholder: "NAME"), Option(name: "--owner-email", placeholder: "EMAIL", required: false),
                ],
                credential: .operator,
                summary: "create a project and print both environments' keys (shown only now); --owner-email names its first owner"
            ) { invocation throws(UsageError) in
                var body: [String: Any] = ["name": try invocation.required("--name")]
                if let owner = invocation.value("--owner-email") { body["ownerEmail"] = owner }
                return Call(method: .post, path: "/v1/admin/projects", body: body, render: Render.project)
            },
            Command(
                words: ["project", "list"], options: pagingOptions, credential: .operator, summary: "list the deployment's projects"
            ) { invocation in
                Call(method: .get, path: "/v1/admin/projects" + invocation.paging, render: Render.projects)
            },
            Command(
                words: ["user", "create"],
                options: [
                    Option(name: "--email", placeholder: "EMAIL"), Option(name: "--name", placeholder: "NAME"),
                    Option(name: "--password", placeholder: "P", required: false),
                ],
                credential: .operator, summary: "create a ZevID account (the password from --password, --password-stdin or a prompt)"
            ) { invocation throws(UsageError) in
                // The password is read by `run` (it needs the CLI's reader); here only the fields.
                Call(
                    method: .post, path: "/v1/admin/users",
                    body: ["email": try invocation.required("--email"), "name": try invocation.required("--name")], render: Render.object)
            },
            Command(
                words: ["user", "list"], options: [Option(name: "--email", placeholder: "EMAIL")], credential: .operator,
                summary: "find the account with this email (compared as the server normalises addresses)"
            ) { invocation throws(UsageError) in
                Call(
                    method: .post, path: "/v1/admin/users/search", body: ["email": try invocation.required("--email")], render: Render.users
                )
            },
            Command(
                words: ["user", "close"], operand: "USER_ID", credential: .operator, summary: "close an account and end all its sessions"
            ) { invocation in
                Call(method: .post, path: "/v1/admin/users/\(invocation.pathID)/close", body: [:], render: Render.object)
            },
            Command(
                words: ["members", "list"], options: [projectOption] + pagingOptions, credential: .either,
                summary: "list a project's members and their roles"
            ) { invocation throws(UsageError) in
                Call(method: .get, path: try invocation.membersPath() + invocation.paging, render: Render.members)
            },
            Command(
                words: ["members", "add"],
                options: [projectOption, Option(name: "--email", placeholder: "EMAIL"), Option(name: "--role", placeholder: "ROLE")],
                credential: .either, summary: "add an account to a project as owner, admin or viewer"
            ) { invocation throws(UsageError) in
                Call(
                    method: .post, path: try invocation.membersPath(),
                    body: ["email": try invocation.required("--email"), "role": try invocation.required("--role")], render: Render.member)
            },
            Command(
                words: ["members", "set-role"], operand: "USER_ID", options: [projectOption, Option(name: "--role", placeholder: "ROLE")],
                credential: .either, summary: "change a member's role (a project keeps at least one owner)"
            ) { invocation throws(UsageError) in
                Call(
                    method: .patch, path: try invocation.membersPath() + "/\(invocation.pathID)",
                    body: ["role": try invocation.required("--role")], render: Render.member)
            },
            Command(
                words: ["members", "remove"], operand: "USER_ID", options: [projectOption], credential: .either,
                summary: "remove a member (a project keeps at least one owner)"
            ) { invocation throws(UsageError) in
                Call(
                    method: .delete, path: try invocation.membersPath() + "/\(invocation.pathID)",
                    render: { _ in "removed member \(invocation.id)" })
            },
            Command(
                words: ["operators", "add"], options: [Option(name: "--email", placeholder: "EMAIL")], credential: .operator,
                summary: "mark an account an operator"
            ) { invocation throws(UsageError) in
                Call(
                    method: .post, path: "/v1/admin/operators", body: ["email": try invocation.required("--email")],
                    render: { "operator \(Render.text($0["userId"]))  \(Render.text($0["email"]))" })
            },
            Command(words: ["operators", "remove"], operand: "USER_ID", credential: .operator, summary: "remove an operator's mark") {
                invocation in
                Call(
                    method: .delete, path: "/v1/admin/operators/\(invocation.pathID)",
                    render: { _ in "removed operator \(invocation.id)" })
            },
            Command(
                words: ["domain", "add"], operand: "DOMAIN", credential: .secretKey,
                summary: "add a project domain; prints the token to publish"
            ) { invocation in
                Call(method: .post, path: "/v1/admin/domains", body: ["domain": invocation.id], render: Render.domain)
            },
            Command(words: ["domain", "list"], credential: .secretKey, summary: "list the project's domains") { _ in
                Call(method: .get, path: "/v1/admin/domains", render: Render.domains)
            },
            Command(
                words: ["domain", "verify"], operand: "DOMAIN", credential: .secretKey,
                summary: "fetch the published token and mark the domain verified"
            ) { invocation in
                Call(method: .post, path: "/v1/admin/domains/\(invocation.pathID)/verify", body: [:], render: Render.object)
            },
            Command(
                words: ["domain", "mark-hosted"], operand: "DOMAIN", options: [Option(name: "--project-id", placeholder: "ID")],
                credential: .operator, summary: "mark a domain verified and served by this deployment"
            ) { invocation throws(UsageError) in
                Call(
                    method: .post, path: "/v1/admin/domains/\(invocation.pathID)/verify",
                    body: ["projectId": try invocation.required("--project-id"), "hosted": true], render: Render.object)
            },
            Command(
                words: ["callback", "add"], options: [Option(name: "--uri", placeholder: "URI")], credential: .secretKey,
                summary: "register a redirect URI"
            ) { invocation throws(UsageError) in
                Call(method: .post, path: "/v1/admin/callbacks", body: ["uri": try invocation.required("--uri")], render: Render.object)
            },
            Command(
                words: ["callback", "list"], options: pagingOptions, credential: .secretKey, summary: "list the registered redirect URIs"
            ) {
                invocation in
                Call(method: .get, path: "/v1/admin/callbacks" + invocation.paging, render: Render.callbacks)
            },
            Command(words: ["callback", "remove"], operand: "CALLBACK_ID", credential: .secretKey, summary: "remove a redirect URI") {
                invocation in
                Call(
                    method: .delete, path: "/v1/admin/callbacks/\(invocation.pathID)", render: { _ in "removed callback \(invocation.id)" })
            },
            Command(
                words: ["app", "add", "ios"],
                options: [Option(name: "--bundle-id", placeholder: "ID"), Option(name: "--team-id", placeholder: "TEAM")],
                credential: .secretKey, summary: "register an iOS app; prints its first link check"
            ) { invocation throws(UsageError) in
                Call(
                    method: .post, path: "/v1/admin/apps",
                    body: [
                        "platform": "ios", "bundleId": try invocation.required("--bundle-id"),
                        "teamId": try invocation.required("--team-id"),
                    ],
                    render: Render.app)
            },
            Command(
                words: ["app", "add", "android"],
                options: [
                    Option(name: "--package-name", placeholder: "PKG"), Option(name: "--fingerprint", placeholder: "SHA256", repeats: true),
                ],
                credential: .secretKey, summary: "register an Android app; prints its first link check"
            ) { invocation throws(UsageError) in
                let fingerprints = invocation.values("--fingerprint")
                guard !fingerprints.isEmpty else {
                    throw UsageError(message: "--fingerprint is required (repeat it for each signing certificate)")
                }
                return Call(
                    method: .post, path: "/v1/admin/apps",
                    body: [
                        "platform": "android", "packageName": try invocation.required("--package-name"),
                        "sha256CertFingerprints": fingerprints,
                    ],
                    render: Render.app)
            },
            Command(words: ["app", "list"], options: pagingOptions, credential: .secretKey, summary: "list the environment's apps") {
                invocation in
                Call(method: .get, path: "/v1/admin/apps" + invocation.paging, render: Render.apps)
            },
            Command(words: ["app", "show"], operand: "APP_ID", credential: .secretKey, summary: "show an app and its link state") {
                invocation in
                Call(method: .get, path: "/v1/admin/apps/\(invocation.pathID)", render: Render.app)
            },
            Command(words: ["app", "remove"], operand: "APP_ID", credential: .secretKey, summary: "remove an app") { invocation in
                Call(method: .delete, path: "/v1/admin/apps/\(invocation.pathID)", render: { _ in "removed app \(invocation.id)" })
            },
            Command(words: ["app", "check"], operand: "APP_ID", credential: .secretKey, summary: "check the app's link again now") {
                invocation in
                Call(method: .post, path: "/v1/admin/apps/\(invocation.pathID)/check", body: [:], render: Render.check)
            },
            Command(
                words: ["association-files"], options: [Option(name: "--domain", placeholder: "DOMAIN")], credential: .secretKey,
                summary: "show the association files generated for a domain"
            ) { invocation throws(UsageError) in
                Call(
                    method: .get,
                    path: "/v1/admin/association-files?" + FormURLEncoding.encode([("domain", try invocation.required("--domain"))]),
                    render: Render.associationFiles)
            },
            Command(
                words: ["keys", "create"], credential: .secretKey,
                summary: "create a secret key (shown only now); the old one works until revoked"
            ) {
                _ in
                Call(method: .post, path: "/v1/admin/keys", body: [:], render: Render.object)
            },
            Command(words: ["keys", "list"], options: pagingOptions, credential: .secretKey, summary: "list the environment's secret keys")
            {
                invocation in
                Call(method: .get, path: "/v1/admin/keys" + invocation.paging, render: Render.keys)
            },
            Command(words: ["keys", "revoke"], operand: "KEY_ID", credential: .secretKey, summary: "revoke a secret key") { invocation in
                Call(method: .delete, path: "/v1/admin/keys/\(invocation.pathID)", render: { _ in "revoked key \(invocation.id)" })
            },
            Command(words: ["settings", "show"], credential: .secretKey, summary: "show the environment's session settings") { _ in
                Call(method: .get, path: "/v1/admin/settings", render: Render.object)
            },
            Command(
                words: ["settings", "set"],
                options: settingFlags.map { Option(name: $0.flag, placeholder: "N", required: false) } + [
                    Option(name: "--id-token-signing-alg", placeholder: "RS256|ES256", required: false)
                ],
                credential: .secretKey, summary: "change session settings (at least one flag)"
            ) { invocation throws(UsageError) in
                var body: [String: Any] = [:]
                for (flag, field) in settingFlags {
                    guard let text = invocation.value(flag) else { continue }
                    guard let number = Int(text) else { throw UsageError(message: "\(flag) takes a whole number") }
                    body[field] = number
                }
                // The ID tokens' algorithm (docs/protocol.md, "OpenID Connect"); the server judges the value.
                if let algorithm = invocation.value("--id-token-signing-alg") { body["idTokenSigningAlg"] = algorithm }
                guard !body.isEmpty else { throw UsageError(message: "settings set needs at least one setting flag") }
                return Call(method: .patch, path: "/v1/admin/settings", body: body, render: Render.object)
            },
            Command(words: ["providers", "list"], options: pagingOptions, credential: .operator, summary: "list the upstream providers") {
                invocation in
                Call(method: .get, path: "/v1/admin/providers" + invocation.paging, render: Render.providers)
            },
            Command(
                words: ["providers", "create"], options: [Option(name: "--kind", placeholder: "apple|google|oidc")] + providerOptions,
                credential: .operator,
                summary: "add Sign in with Apple (--client-id SERVICES_ID --team-id --key-id --private-key-file KEY.p8), Google "
                    + "(--client-id --client-secret-file) or an OpenID provider (also --slug --name --issuer); secrets are read from files"
            ) { invocation throws(UsageError) in
                var body = try providerFields(invocation)
                body["kind"] = try invocation.required("--kind")
                return Call(method: .post, path: "/v1/admin/providers", body: body, render: Render.provider)
            },
            Command(
                words: ["providers", "show"], operand: "PROVIDER_ID", credential: .operator, summary: "show a provider (never a secret)"
            ) {
                invocation in
                Call(method: .get, path: "/v1/admin/providers/\(invocation.pathID)", render: Render.provider)
            },
            Command(
                words: ["providers", "update"], operand: "PROVIDER_ID", options: providerOptions, credential: .operator,
                summary: "change a provider's fields (at least one flag); a secret is replaced only when its file is given"
            ) { invocation throws(UsageError) in
                let body = try providerFields(invocation)
                guard !body.isEmpty else { throw UsageError(message: "providers update needs at least one field flag") }
                return Call(method: .patch, path: "/v1/admin/providers/\(invocation.pathID)", body: body, render: Render.provider)
            },
            Command(
                words: ["providers", "delete"], operand: "PROVIDER_ID", credential: .operator,
                summary: "delete a provider (projects stop showing it; its linked identities are unlinked)"
            ) { invocation in
                Call(
                    method: .delete, path: "/v1/admin/providers/\(invocation.pathID)", render: { _ in "deleted provider \(invocation.id)" })
            },
            Command(
                words: ["clients", "list"], options: pagingOptions, credential: .secretKey, summary: "list the environment's web clients"
            ) {
                invocation in
                Call(method: .get, path: "/v1/admin/clients" + invocation.paging, render: Render.webClients)
            },
            Command(
                words: ["clients", "create"], options: webClientOptions(creating: true), credential: .secretKey,
                summary: "register a web client; prints its client secret once"
            ) { invocation throws(UsageError) in
                Call(method: .post, path: "/v1/admin/clients", body: try webClientFields(invocation), render: Render.webClient)
            },
            Command(
                words: ["clients", "show"], operand: "CLIENT_ID", credential: .secretKey, summary: "show a web client (never a secret)"
            ) {
                invocation in
                Call(method: .get, path: "/v1/admin/clients/\(invocation.pathID)", render: Render.webClient)
            },
            Command(
                words: ["clients", "update"], operand: "CLIENT_ID", options: webClientOptions(creating: false), credential: .secretKey,
                summary: "change a web client's fields (lists are replaced whole)"
            ) { invocation throws(UsageError) in
                let body = try webClientFields(invocation)
                guard !body.isEmpty else { throw UsageError(message: "clients update needs at least one field flag") }
                return Call(method: .patch, path: "/v1/admin/clients/\(invocation.pathID)", body: body, render: Render.webClient)
            },
            Command(words: ["clients", "delete"], operand: "CLIENT_ID", credential: .secretKey, summary: "delete a web client") {
                invocation in
                Call(
                    method: .delete, path: "/v1/admin/clients/\(invocation.pathID)", render: { _ in "deleted web client \(invocation.id)" })
            },
            Command(
                words: ["clients", "rotate-secret"], operand: "CLIENT_ID", credential: .secretKey,
                summary: "add a client secret (printed once); the old one works until revoked"
            ) { invocation in
                Call(method: .post, path: "/v1/admin/clients/\(invocation.pathID)/secrets", body: [:], render: Render.webClientSecret)
            },
            Command(
                words: ["clients", "revoke-secret"], operand: "CLIENT_ID", options: [Option(name: "--secret-id", placeholder: "ID")],
                credential: .secretKey, summary: "revoke one of a web client's secrets"
            ) { invocation throws(UsageError) in
                let secretID = FormURLEncoding.percentEncodeUnreserved(try invocation.required("--secret-id"))
                return Call(
                    method: .delete, path: "/v1/admin/clients/\(invocation.pathID)/secrets/\(secretID)",
                    render: { "revoked secret \(Render.text($0["id"])) of web client \(invocation.id)" })
            },
            Command(
                words: ["signing-keys", "list"], credential: .operator, summary: "list the ID-token signing keys (next, current, retired)"
            ) {
                _ in
                Call(method: .get, path: "/v1/admin/signing-keys", render: Render.signingKeys)
            },
            Command(
                words: ["signing-keys", "rotate"], credential: .operator,
                summary: "promote the next signing keys and make new next keys (once published for 300 s)"
            ) { _ in
                Call(method: .post, path: "/v1/admin/signing-keys/rotate", body: [:], render: Render.signingKeys)
            },
            Command(
                words: ["signing-keys", "revoke"], operand: "KID", credential: .operator,
                summary: "revoke a compromised signing key at once (its next key signs from now on)"
            ) { invocation in
                Call(
                    method: .post, path: "/v1/admin/signing-keys/\(invocation.pathID)/revoke", body: [:],
                    render: {
                        "revoked signing key \(Render.text($0["kid"]))" + (($0["promotedKid"] as? String).map { "; \($0) signs now" } ?? "")
                    })
            },
        ]
    }

    // MARK: Usage

    /// The flags every admin command takes.
    static let commonUsage = """
        common flags: --server URL (ZEVAUTH_ISSUER)  --operator-token T (ZEVAUTH_OPERATOR_TOKEN)
                      --secret-key sk_… (ZEVAUTH_SECRET_KEY)  --json (the server's JSON instead of a table)  --help
        """

    /// The usage of the commands whose words start with `prefix` (all of them for `[]`).
    static func usage(for prefix: [String]) -> String {
        let chosen = commands.filter { Array($0.words.prefix(prefix.count)) == prefix }
        let lines = chosen.map { "  \($0.synopsis)\n      \($0.summary) (\($0.credential.rawValue))" }
        return "admin commands (talk to a running server's admin API):\n" + lines.joined(separator: "\n") + "\n" + commonUsage + "\n"
    }

    /// The usage text of every admin command.
    public static var usage: String { usage(for: []) }

    /// Whether `command` (the first argument of `zevauth`) is an admin command.
    public static func handles(_ command: String?) -> Bool { commands.contains { $0.words.first == command } }

    // MARK: Parsing

    /// A command-line problem (exit 2).
    struct UsageError: Error { let message: String }

    /// Parsed flags: single values, repeated values, switches, and positional words.
    struct Flags {
        var values: [String: [String]] = [:]
        var switches: Set<String> = []
        var positional: [String] = []
        /// A flag that ended the command line without its value (`app list --limit`); reported by
        /// `check` after unknown options, so `--bogus` as the last word still gets "has no option".
        var missingValue: String? = nil

        static let switchNames: Set<String> = ["--json", "--password-stdin", "--help", "-h"]
        static let common: Set<String> = ["--server", "--operator-token", "--secret-key"]

        init(_ arguments: [String]) {
            var index = 0
            while index < arguments.count {
                let word = arguments[index]
                if Self.switchNames.contains(word) {
                    switches.insert(word)
                } else if word.hasPrefix("--") {
                    guard index + 1 < arguments.count else {
                        missingValue = word
                        break
                    }
                    values[word, default: []].append(arguments[index + 1])
                    index += 1
                } else {
                    positional.append(word)
                }
                index += 1
            }
        }

        func one(_ name: String) -> String? { values[name]?.last }

        func required(_ name: String) throws(UsageError) -> String {
            guard let value = one(name), !value.isEmpty else { throw UsageError(message: "\(name) is required") }
            return value
        }

        var wantsHelp: Bool { switches.contains("--help") || switches.contains("-h") }
    }

    /// The command the positional words name (the longest match), with the words left over.
    static func command(for words: [String]) -> (Command, rest: [String])? {
        commands.filter { Array(words.prefix($0.words.count)) == $0.words }.max { $0.words.count < $1.words.count }
            .map { ($0, Array(words.dropFirst($0.words.count))) }
    }

    // MARK: Running

    /// Runs one admin command.
    /// - Parameter arguments: the arguments after `zevauth`, e.g. `["project", "create", "--name", "Acme"]`.
    /// - Returns: 0 on success (and for `--help`), 1 when the server refused or could not be reached, 2 for a
    ///   bad command line.
    public func run(_ arguments: [String]) -> Int32 {
        let flags = Flags(arguments)
        guard let (command, rest) = Self.command(for: flags.positional) else {
            let known = flags.positional.prefix { word in Self.commands.contains { $0.words.contains(word) } }
            if flags.wantsHelp {
                write(Self.usage(for: Array(known)))
                return 0
            }
            writeError(
                "zevauth: there is no admin command \"\(flags.positional.prefix(2).joined(separator: " "))\".\n"
                    + Self.usage(for: Array(known.prefix(1))))
            return 2
        }
        if flags.wantsHelp {
            write(Self.usage(for: command.words))
            return 0
        }
        do throws(UsageError) {
            let invocation = try Self.check(command, flags: flags, rest: rest)
            var call = try command.call(invocation)
            if command.words == ["user", "create"] {
                guard let password = flags.one("--password") ?? readPassword(flags.switches.contains("--password-stdin")),
                    !password.isEmpty
                else {
                    throw UsageError(message: "a password is required (--password, --password-stdin, or type it at the prompt)")
                }
                call.body?["password"] = password
            }
            return send(call, flags: flags, credential: command.credential)
        } catch {
            writeError("zevauth: \(error.message).\n" + Self.usage(for: command.words))
            return 2
        }
    }

    /// Checks the flags and the operand against the command's row of the table.
    static func check(_ command: Command, flags: Flags, rest: [String]) throws(UsageError) -> Invocation {
        let allowed = Set(command.options.map(\.name)).union(Flags.common)
        let given = flags.values.keys.sorted() + (flags.missingValue.map { [$0] } ?? [])
        if let unknown = given.first(where: { !allowed.contains($0) }) {
            throw UsageError(message: "\(command.words.joined(separator: " ")) has no option \(unknown)")
        }
        if let flag = flags.missingValue { throw UsageError(message: "\(flag) needs a value") }
        if flags.switches.contains("--password-stdin") && command.words != ["user", "create"] {
            throw UsageError(message: "only user create takes --password-stdin")
        }
        for option in command.options where !option.repeats && (flags.values[option.name]?.count ?? 0) > 1 {
            throw UsageError(message: "\(option.name) is given twice")
        }
        let operand: String?
        if let name = command.operand {
            let words = command.words.joined(separator: " ")
            guard rest.count == 1, let word = rest.first else {
                let given = rest.isEmpty ? "none was given" : "\(rest.count) words were given"
                throw UsageError(message: "\(words) takes one \(name), but \(given)")
            }
            guard !word.isEmpty else { throw UsageError(message: "the \(name) given to \(words) is empty") }
            operand = word
        } else {
            guard rest.isEmpty else {
                let words = command.words.joined(separator: " ")
                throw UsageError(message: "\(words) takes no word after it, but \"\(rest[0])\" was given")
            }
            operand = nil
        }
        return Invocation(flags: flags, operand: operand)
    }

    /// One admin call: the server, the credential, the JSON body; prints a table (or the JSON) or the error.
    private func send(_ call: Call, flags: Flags, credential preferred: Credential) -> Int32 {
        guard var server = flags.one("--server") ?? environment["ZEVAUTH_ISSUER"], !server.isEmpty else {
            writeError("zevauth: name the server with --server URL or ZEVAUTH_ISSUER.")
            return 2
        }
        while server.hasSuffix("/") { server.removeLast() }
        let operatorToken = flags.one("--operator-token") ?? environment["ZEVAUTH_OPERATOR_TOKEN"]
        let secretKey = flags.one("--secret-key") ?? environment["ZEVAUTH_SECRET_KEY"]
        // An operator command never falls back to a secret key (with one, `domain verify` would fetch the
        // token instead of marking the domain); a secret-key command shows the server's 403 for the operator's.
        let credential = preferred == .operator ? operatorToken : (secretKey ?? operatorToken)  // `.either` as `.secretKey`
        guard let credential, !credential.isEmpty else {
            let wanted: String
            switch preferred {
            case .operator: wanted = "--operator-token or ZEVAUTH_OPERATOR_TOKEN"
            case .secretKey: wanted = "--secret-key or ZEVAUTH_SECRET_KEY"
            case .either: wanted = "--secret-key (ZEVAUTH_SECRET_KEY) or --operator-token (ZEVAUTH_OPERATOR_TOKEN)"
            }
            writeError("zevauth: this command needs \(wanted).")
            return 2
        }
        var headers = [("Authorization", "Bearer \(credential)"), ("Accept", "application/json")]
        var bytes: [UInt8] = []
        if let body = call.body {
            bytes = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map(Array.init) ?? []
            headers.append(("Content-Type", "application/json"))
        }
        let response: HTTPClientResponse
        do {
            response = try client.send(HTTPClientRequest(call.method, server + call.path, headers: headers, body: bytes))
        } catch {
            writeError("zevauth: no answer from \(server): \(error.description)")
            return 1
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard (200..<300).contains(response.status) else {
            let code = json?["error"] as? String ?? "http_\(response.status)"
            let description = json?["error_description"] as? String ?? "The server answered \(response.status)."
            writeError("zevauth: \(response.status) \(code): \(description)")
            return 1
        }
        if flags.switches.contains("--json") {
            write(response.body.isEmpty ? "{}" : response.text)
        } else {
            write(call.render(json ?? [:]))
        }
        return 0
    }

    /// Reads a password: from stdin when asked (one line), else with a no-echo prompt on the terminal
    /// (`getpass`), else one line of stdin.
    public static func defaultReadPassword(_ passwordStdin: Bool) -> String? {
        if !passwordStdin, isatty(STDIN_FILENO) == 1, let raw = getpass("Password: ") {
            return String(cString: raw)
        }
        return readLine(strippingNewline: true)
    }
}

/// Readable tables of the admin API's answers.
enum Render {
    /// Aligned columns; the first row is the header.
    static func table(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = Array(repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            .joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func text(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "-"
        case let string as String: return string
        case let number as NSNumber:
            // JSONSerialization gives a JSON boolean as an NSNumber of objCType "c".
            return number.objCType.pointee == CChar(UInt8(ascii: "c")) ? (number.boolValue ? "true" : "false") : number.stringValue
        case let array as [Any]: return array.map { text($0) }.joined(separator: ", ")
        default: return "\(value!)"
        }
    }

    /// FIELD / VALUE rows of a flat object, keys sorted.
    static func object(_ json: [String: Any]) -> String {
        table([["FIELD", "VALUE"]] + json.keys.sorted().map { [$0, text(json[$0])] })
    }

    /// A new project: its id and name, then both environments' keys.
    static func project(_ json: [String: Any]) -> String {
        var rows = [["ENVIRONMENT", "PUBLISHABLE KEY", "SECRET KEY (shown once)"]]
        for name in ["development", "production"] {
            let keys = json[name] as? [String: Any]
            rows.append([name, text(keys?["publishableKey"]), text(keys?["secretKey"])])
        }
        return "project \(text(json["id"]))  \(text(json["name"]))\n" + table(rows)
    }

    /// An app: identifiers, then its link status and problems.
    static func app(_ json: [String: Any]) -> String {
        var rows = [["FIELD", "VALUE"]]
        for key in ["id", "platform", "bundleId", "teamId", "appId", "packageName", "sha256CertFingerprints", "productionCustomScheme"]
        where json[key] != nil {
            rows.append([key, text(json[key])])
        }
        return table(rows) + "\n" + check(json["link"] as? [String: Any] ?? [:])
    }

    /// A `link` object (or an answer carrying one): status, times, and a problem table.
    static func check(_ json: [String: Any]) -> String {
        let link = json["link"] as? [String: Any] ?? json
        var out = table([
            ["LINK", "CHECKED AT", "NEXT CHECK AT"], [text(link["status"]), text(link["checkedAt"]), text(link["nextCheckAt"])],
        ])
        let problems = link["problems"] as? [[String: Any]] ?? []
        if problems.isEmpty && text(link["status"]) == "pending" {
            // Nothing was checked: an app is checked on the domains of its environment's link callbacks.
            out += "\nnot checked yet: register an https callback on a verified project domain (zevauth callback add), then check again"
        } else if problems.isEmpty {
            out += "\nno problems"
        } else {
            out += "\n" + table([["PROBLEM", "MESSAGE"]] + problems.map { [text($0["code"]), text($0["message"])] })
        }
        return out
    }

    /// A list answer (`{"items": […], "nextCursor": …}`) as a table of `columns` (header, field), or
    /// `empty` when there is no item; a following page is named with the `--cursor` that fetches it.
    static func list(_ json: [String: Any], empty: String, _ columns: [(String, ([String: Any]) -> String)]) -> String {
        let items = json["items"] as? [[String: Any]] ?? []
        var out = items.isEmpty ? empty : table([columns.map(\.0)] + items.map { item in columns.map { $0.1(item) } })
        if let next = json["nextCursor"] as? String, !next.isEmpty { out += "\nmore: repeat with --cursor \(next)" }
        return out
    }

    static func field(_ name: String) -> ([String: Any]) -> String { { text($0[name]) } }

    static func projects(_ json: [String: Any]) -> String {
        list(
            json, empty: "no projects",
            [
                ("ID", field("id")), ("NAME", field("name")), ("CREATED AT", field("createdAt")),
                ("DEVELOPMENT KEY", { text(($0["development"] as? [String: Any])?["publishableKey"]) }),
                ("PRODUCTION KEY", { text(($0["production"] as? [String: Any])?["publishableKey"]) }),
            ])
    }

    static func members(_ json: [String: Any]) -> String {
        list(
            json, empty: "no members",
            [
                ("USER ID", field("userId")), ("EMAIL", field("email")), ("NAME", field("name")), ("ROLE", field("role")),
                ("ADDED AT", field("addedAt")),
            ])
    }

    static func member(_ json: [String: Any]) -> String {
        "member \(text(json["userId"]))  \(text(json["email"]))  \(text(json["role"]))"
    }

    static func users(_ json: [String: Any]) -> String {
        list(
            json, empty: "no account has this email",
            [("ID", field("id")), ("EMAIL", field("email")), ("NAME", field("name")), ("CLOSED", field("closed"))])
    }

    static func callbacks(_ json: [String: Any]) -> String {
        list(
            json, empty: "no callbacks",
            [("ID", field("id")), ("KIND", field("kind")), ("URI", field("uri")), ("CREATED AT", field("createdAt"))])
    }

    static func domains(_ json: [String: Any]) -> String {
        list(
            json, empty: "no domains",
            [
                ("DOMAIN", field("domain")), ("VERIFIED", field("verified")), ("HOSTED", field("hosted")),
                ("TOKEN URL", field("verificationUrl")),
            ])
    }

    /// A new domain, and what to publish where.
    static func domain(_ json: [String: Any]) -> String {
        object(json) + "\npublish the token as the whole body of \(text(json["verificationUrl"])), then run zevauth domain verify "
            + text(json["domain"])
    }

    static func apps(_ json: [String: Any]) -> String {
        list(
            json, empty: "no apps",
            [
                ("ID", field("id")), ("PLATFORM", field("platform")),
                ("APP", { text($0["appId"] ?? $0["packageName"]) }),
                ("LINK", { text(($0["link"] as? [String: Any])?["status"]) }),
            ])
    }

    static func providers(_ json: [String: Any]) -> String {
        list(
            json, empty: "no providers",
            [
                ("ID", field("id")), ("KIND", field("kind")), ("SLUG", field("slug")), ("NAME", field("displayName")),
                ("ISSUER", field("issuer")), ("CLIENT ID", field("clientId")),
            ])
    }

    /// A provider: its fields in the API's order; secrets only as whether one is stored.
    static func provider(_ json: [String: Any]) -> String {
        let keys = [
            "id", "kind", "slug", "displayName", "issuer", "clientId", "hasClientSecret", "teamId", "keyId", "hasPrivateKey", "createdAt",
            "updatedAt",
        ]
        return table([["FIELD", "VALUE"]] + keys.filter { json[$0] != nil }.map { [$0, text(json[$0])] })
    }

    static func webClients(_ json: [String: Any]) -> String {
        list(
            json, empty: "no web clients",
            [
                ("CLIENT ID", field("clientId")), ("NAME", field("name")), ("AUTH METHOD", field("tokenEndpointAuthMethod")),
                ("REDIRECT URIS", { (($0["redirectUris"] as? [Any]) ?? []).map { text($0) }.joined(separator: " ") }),
            ])
    }

    /// A web client: its fields, its secrets by id and last 4 characters, and the client secret when the
    /// answer carries it (creation only), with a reminder that it is shown once.
    static func webClient(_ json: [String: Any]) -> String {
        var rows = [["FIELD", "VALUE"]]
        for key in [
            "clientId", "name", "tokenEndpointAuthMethod", "requirePkce", "requirePushedAuthorizationRequests", "jwksUri", "createdAt",
            "updatedAt",
        ]
        where json[key] != nil {
            rows.append([key, text(json[key])])
        }
        for key in ["redirectUris", "postLogoutRedirectUris"] {
            rows.append([key, ((json[key] as? [Any]) ?? []).map { text($0) }.joined(separator: " ")])
        }
        if json["jwks"] is [String: Any] { rows.append(["jwks", "(a key set)"]) }
        for secret in json["secrets"] as? [[String: Any]] ?? [] {
            rows.append([
                "secret " + text(secret["id"]),
                "…" + text(secret["suffix"]) + ((secret["revokedAt"] as? String).map { " revoked \($0)" } ?? ""),
            ])
        }
        var out = table(rows)
        if let secret = json["clientSecret"] as? String {
            out += "\nclient secret (shown only now): \(secret)"
        }
        return out
    }

    static func webClientSecret(_ json: [String: Any]) -> String {
        var out = object(json.filter { $0.key != "clientSecret" })
        if let secret = json["clientSecret"] as? String { out += "\nclient secret (shown only now): \(secret)" }
        return out
    }

    static func signingKeys(_ json: [String: Any]) -> String {
        list(
            json, empty: "no signing keys",
            [
                ("KID", field("kid")), ("ALG", field("alg")), ("STATE", field("state")), ("CREATED AT", field("createdAt")),
                ("ACTIVATES AT", field("activatesAt")), ("RETIRES AT", field("retiresAt")),
            ])
    }

    static func keys(_ json: [String: Any]) -> String {
        list(
            json, empty: "no keys",
            [
                ("ID", field("id")), ("SUFFIX", { "…" + text($0["suffix"]) }), ("CREATED AT", field("createdAt")),
                ("REVOKED AT", field("revokedAt")), ("CURRENT", field("current")),
            ])
    }

    /// The two association files: the iOS app ids of `applinks` and the Android packages with their
    /// certificate fingerprints.
    static func associationFiles(_ json: [String: Any]) -> String {
        var rows = [["FILE", "APP", "DETAIL"]]
        let applinks = (json["appleAppSiteAssociation"] as? [String: Any])?["applinks"] as? [String: Any]
        for detail in applinks?["details"] as? [[String: Any]] ?? [] {
            let ids = detail["appIDs"] as? [Any] ?? [detail["appID"] as Any]
            let components =
                (detail["components"] as? [[String: Any]])?.map { text($0["/"]) } ?? (detail["paths"] as? [Any])?.map { text($0) }
            for id in ids { rows.append(["apple-app-site-association", text(id), "paths " + (components ?? []).joined(separator: ", ")]) }
        }
        for statement in json["assetlinks"] as? [[String: Any]] ?? [] {
            let target = statement["target"] as? [String: Any]
            rows.append(["assetlinks.json", text(target?["package_name"]), text(target?["sha256_cert_fingerprints"])])
        }
        return rows.count == 1 ? "no app is listed for this domain (register apps and an https callback on it)" : table(rows)
    }
}
