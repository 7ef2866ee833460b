import Foundation

/// The conformance client's input (flags, or `--dev-json .zevauth/dev.json`; flags given win).
public struct Options: Sendable, Equatable {
    /// The deployment's issuer (`ZEVAUTH_ISSUER`), without a trailing slash.
    public var issuer = ""
    /// A development publishable key (`pk_test_…`) whose environment registered `redirectURI`.
    public var clientID = ""
    /// A registered redirect URI of that environment (a loopback one enables the any-port checks).
    public var redirectURI = ""
    /// A ZevID account's email.
    public var email = ""
    /// Its password (never printed).
    public var password = ""
    /// A production publishable key (`pk_live_…`): enables the production refusals.
    public var productionClientID: String?
    /// The account's TOTP secret (base32) when it enrolled a second factor.
    public var totpSecret: String?
    /// A secret key of the development environment: enables introspection and reading the reuse grace.
    public var secretKey: String?
    /// The operator token: enables throwaway fixtures (a project with custom-scheme and production callbacks).
    public var operatorToken: String?
    /// Hosted domains whose association files the deployment serves.
    public var associationHosts: [String] = []
    /// Also run the checks that wait (a code expiring after 60 s).
    public var slow = false
    /// Print machine-readable JSON instead of lines.
    public var json = false
    /// Write a JUnit XML report here.
    public var junitPath: String?
    /// An extra CA bundle (PEM) for an https deployment behind a private CA.
    public var caFile: String?
    /// The longest `Retry-After` honoured before a check is skipped, seconds.
    public var maxBackoffSeconds = 30
    /// Confidential web clients (docs/protocol.md, "Web clients"): each one's token exchange is checked with
    /// its own authentication method; the first also runs the Basic, Form Post and RP-Initiated Logout
    /// modules. From `--dev-json`'s `webClients`, or one client from the `--web-client-…` flags.
    public var webClients: [WebClient] = []

    /// A confidential web client the checks may use.
    public struct WebClient: Sendable, Equatable {
        /// Its `zc_…` client id.
        public var clientID: String
        /// `client_secret_basic`, `client_secret_post` or `private_key_jwt` (RFC 7591 §2).
        public var authMethod: String
        /// A registered redirect URI, matched byte for byte.
        public var redirectURI: String
        /// Its secret, for the secret methods (never printed).
        public var secret: String?
        /// Its private key as PEM PKCS#8 (P-256 or RSA), for `private_key_jwt` (never printed).
        public var privateKeyPEM: String?
        /// The `kid` of that key in the client's JWKS, sent in the assertion's header.
        public var keyID: String?
        /// A registered `post_logout_redirect_uri`, when the client has one.
        public var postLogoutRedirectURI: String?

        /// A web client.
        public init(
            clientID: String, authMethod: String, redirectURI: String, secret: String? = nil, privateKeyPEM: String? = nil,
            keyID: String? = nil, postLogoutRedirectURI: String? = nil
        ) {
            self.clientID = clientID
            self.authMethod = authMethod
            self.redirectURI = redirectURI
            self.secret = secret
            self.privateKeyPEM = privateKeyPEM
            self.keyID = keyID
            self.postLogoutRedirectURI = postLogoutRedirectURI
        }
    }

    /// Defaults; fill with ``parse(_:readFile:)``.
    public init() {}

    /// The usage text.
    public static let usage = """
        usage: zevauth-conformance --issuer URL --client-id pk_test_… --redirect-uri URI --email E --password P
                                   [--production-client-id pk_live_…] [--totp-secret BASE32] [--secret-key sk_…]
                                   [--operator-token T] [--association-host HOST …] [--slow] [--json] [--junit FILE]
                                   [--ca-file PEM] [--max-backoff SECONDS]
                                   [--web-client-id zc_… --web-client-redirect-uri URI
                                    (--web-client-secret S | --web-client-key-file KEY.pem [--web-client-key-id KID])
                                    [--web-client-auth-method METHOD] [--web-client-post-logout-redirect-uri URI]]
               zevauth-conformance --dev-json .zevauth/dev.json [flags that override it]

        """

    /// What went wrong with the command line.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        /// The message (names the flag).
        public let message: String
        /// The message.
        public var description: String { message }
    }

    /// Parses the command line.
    /// - Parameters:
    ///   - arguments: the arguments without the program name.
    ///   - readFile: reads a file's bytes (injected for tests).
    /// - Throws: ``Problem`` naming the flag that is unknown, lacks a value, or is required and missing.
    public static func parse(_ arguments: [String], readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) })
        throws
        -> Options
    {
        var options = Options()
        var flags: [String: String] = [:]
        var hosts: [String] = []
        var devJSON: String?
        var index = 0
        let valued: Set<String> = [
            "--issuer", "--client-id", "--redirect-uri", "--email", "--password", "--production-client-id", "--totp-secret",
            "--secret-key", "--operator-token", "--junit", "--ca-file", "--max-backoff", "--web-client-id", "--web-client-secret",
            "--web-client-key-file", "--web-client-key-id", "--web-client-auth-method", "--web-client-redirect-uri",
            "--web-client-post-logout-redirect-uri",
        ]
        while index < arguments.count {
            let flag = arguments[index]
            switch flag {
            case "--slow": options.slow = true
            case "--json": options.json = true
            case "--dev-json", "--association-host":
                guard index + 1 < arguments.count else { throw Problem(message: "\(flag) needs a value") }
                if flag == "--dev-json" { devJSON = arguments[index + 1] } else { hosts.append(arguments[index + 1].lowercased()) }
                index += 1
            default:
                guard valued.contains(flag) else { throw Problem(message: "unknown option \(flag)") }
                guard index + 1 < arguments.count else { throw Problem(message: "\(flag) needs a value") }
                flags[flag] = arguments[index + 1]
                index += 1
            }
            index += 1
        }
        if let devJSON {
            let data: Data
            do { data = try readFile(devJSON) } catch { throw Problem(message: "--dev-json: cannot read \(devJSON)") }
            guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw Problem(message: "--dev-json: \(devJSON) is not a JSON object")
            }
            let development = object["development"] as? [String: Any]
            let production = object["production"] as? [String: Any]
            let user = object["user"] as? [String: Any]
            let callbacks = object["callbacks"] as? [String] ?? []
            options.issuer = object["issuer"] as? String ?? ""
            options.clientID = development?["publishableKey"] as? String ?? ""
            options.secretKey = development?["secretKey"] as? String
            options.productionClientID = production?["publishableKey"] as? String
            options.operatorToken = object["operatorToken"] as? String
            options.email = user?["email"] as? String ?? ""
            options.password = user?["password"] as? String ?? ""
            options.redirectURI = callbacks.first(where: Verdicts.isLoopback) ?? callbacks.first ?? ""
            options.webClients = (object["webClients"] as? [[String: Any]] ?? []).compactMap { client in
                guard let id = client["clientId"] as? String, let method = client["tokenEndpointAuthMethod"] as? String,
                    let redirect = (client["redirectUris"] as? [String])?.first
                else { return nil }
                return WebClient(
                    clientID: id, authMethod: method, redirectURI: redirect, secret: client["clientSecret"] as? String,
                    privateKeyPEM: client["privateKeyPem"] as? String, keyID: client["keyId"] as? String,
                    postLogoutRedirectURI: (client["postLogoutRedirectUris"] as? [String])?.first)
            }
        }
        if let value = flags["--issuer"] { options.issuer = value }
        if let value = flags["--client-id"] { options.clientID = value }
        if let value = flags["--redirect-uri"] { options.redirectURI = value }
        if let value = flags["--email"] { options.email = value }
        if let value = flags["--password"] { options.password = value }
        if let value = flags["--production-client-id"] { options.productionClientID = value }
        if let value = flags["--totp-secret"] { options.totpSecret = value }
        if let value = flags["--secret-key"] { options.secretKey = value }
        if let value = flags["--operator-token"] { options.operatorToken = value }
        if let value = flags["--junit"] { options.junitPath = value }
        if let value = flags["--ca-file"] { options.caFile = value }
        if let value = flags["--max-backoff"] {
            guard let seconds = Int(value), (0...600).contains(seconds) else {
                throw Problem(message: "--max-backoff must be 0 to 600 seconds")
            }
            options.maxBackoffSeconds = seconds
        }
        if let id = flags["--web-client-id"] {
            options.webClients = [try webClient(id, flags: flags, readFile: readFile)]
        } else if let flag = flags.keys.sorted().first(where: { $0.hasPrefix("--web-client-") }) {
            throw Problem(message: "\(flag) needs --web-client-id")
        }
        options.associationHosts = hosts
        while options.issuer.hasSuffix("/") { options.issuer.removeLast() }
        for (name, value) in [
            ("--issuer", options.issuer), ("--client-id", options.clientID), ("--redirect-uri", options.redirectURI),
            ("--email", options.email), ("--password", options.password),
        ] where value.isEmpty {
            throw Problem(message: "\(name) is required (or give --dev-json)")
        }
        guard options.issuer.hasPrefix("http://") || options.issuer.hasPrefix("https://") else {
            throw Problem(message: "--issuer must be an http:// or https:// URL")
        }
        return options
    }

    /// The web client of the `--web-client-…` flags: a secret or a key file (the method defaults to
    /// `client_secret_basic` with a secret, `private_key_jwt` with a key) and a redirect URI.
    static func webClient(_ id: String, flags: [String: String], readFile: (String) throws -> Data) throws -> WebClient {
        guard let redirect = flags["--web-client-redirect-uri"] else { throw Problem(message: "--web-client-redirect-uri is required") }
        var pem: String?
        if let path = flags["--web-client-key-file"] {
            guard let data = try? readFile(path), let text = String(data: data, encoding: .utf8), text.contains("PRIVATE KEY-----") else {
                throw Problem(message: "--web-client-key-file: \(path) is not a readable PEM private key")
            }
            pem = text
        }
        let secret = flags["--web-client-secret"]
        let method = flags["--web-client-auth-method"] ?? (pem != nil ? "private_key_jwt" : "client_secret_basic")
        switch method {
        case "client_secret_basic", "client_secret_post":
            guard secret != nil else { throw Problem(message: "--web-client-auth-method \(method) needs --web-client-secret") }
        case "private_key_jwt":
            guard pem != nil else { throw Problem(message: "--web-client-auth-method private_key_jwt needs --web-client-key-file") }
        default:
            throw Problem(message: "--web-client-auth-method must be client_secret_basic, client_secret_post or private_key_jwt")
        }
        return WebClient(
            clientID: id, authMethod: method, redirectURI: redirect, secret: secret, privateKeyPEM: pem,
            keyID: flags["--web-client-key-id"], postLogoutRedirectURI: flags["--web-client-post-logout-redirect-uri"])
    }

    /// Every secret among the options (for the ``Redactor``).
    public var secrets: [String] {
        [password, totpSecret, secretKey, operatorToken].compactMap { $0 }
            + webClients.flatMap { [$0.secret, $0.privateKeyPEM].compactMap { $0 } }
    }
}
