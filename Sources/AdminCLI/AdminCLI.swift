import Encoding
import Fetch
import Foundation

/// The day-to-day admin commands of `zevauth` (issue 5, item 5), talking to a running server's admin API
/// (PRODUCT.md "Admin API") through ``HTTPClient``:
///
/// - `project create --name N` (operator token)
/// - `user create --email E --name N [--password P | --password-stdin]` (operator token; prompts when neither)
/// - `callback add --uri U` (secret key)
/// - `app add ios --bundle-id B --team-id T` / `app add android --package-name P --fingerprint F [--fingerprint F …]` (secret key)
/// - `app check ID` (secret key)
///
/// Common flags: `--server URL` (else `ZEVAUTH_ISSUER`), `--operator-token T` (else `ZEVAUTH_OPERATOR_TOKEN`),
/// `--secret-key K` (else `ZEVAUTH_SECRET_KEY`), `--json` (print the server's JSON answer instead of a table).
/// A server error prints its `error` and `error_description` and exits 1; a bad command line exits 2.
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

    /// The usage text.
    public static let usage = """
        admin commands (talk to a running server's admin API):
          zevauth project create --name NAME                                   operator token
          zevauth user create --email EMAIL --name NAME [--password P | --password-stdin]   operator token
          zevauth callback add --uri URI                                       secret key
          zevauth app add ios --bundle-id ID --team-id TEAM                    secret key
          zevauth app add android --package-name PKG --fingerprint SHA256 [--fingerprint …]   secret key
          zevauth app check APP_ID                                             secret key
        common flags: --server URL (ZEVAUTH_ISSUER)  --operator-token T (ZEVAUTH_OPERATOR_TOKEN)
                      --secret-key sk_… (ZEVAUTH_SECRET_KEY)  --json

        """

    /// Whether `command` (the first argument of `zevauth`) is an admin command.
    public static func handles(_ command: String?) -> Bool { ["project", "user", "callback", "app"].contains(command ?? "") }

    /// A command-line problem (exit 2).
    struct UsageError: Error { let message: String }

    /// Parsed flags: single values, repeated values, switches, and positional words.
    struct Flags {
        var values: [String: [String]] = [:]
        var switches: Set<String> = []
        var positional: [String] = []

        static let switchNames: Set<String> = ["--json", "--password-stdin"]

        init(_ arguments: [String]) throws(UsageError) {
            var index = 0
            while index < arguments.count {
                let word = arguments[index]
                if Self.switchNames.contains(word) {
                    switches.insert(word)
                } else if word.hasPrefix("--") {
                    guard index + 1 < arguments.count else { throw UsageError(message: "\(word) needs a value") }
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

        func only(_ allowed: Set<String>) throws(UsageError) {
            let common: Set<String> = ["--server", "--operator-token", "--secret-key"]
            for name in values.keys where !allowed.contains(name) && !common.contains(name) {
                throw UsageError(message: "unknown option \(name)")
            }
        }
    }

    /// Which credential a call prefers.
    enum Credential { case `operator`, secretKey }

    /// Runs one admin command.
    /// - Parameter arguments: the arguments after `zevauth`, e.g. `["project", "create", "--name", "Acme"]`.
    /// - Returns: 0 on success, 1 when the server refused or could not be reached, 2 for a bad command line.
    public func run(_ arguments: [String]) -> Int32 {
        do {
            let flags = try Flags(arguments)
            return try dispatch(flags)
        } catch {
            writeError("zevauth: \(error.message)\n" + Self.usage)
            return 2
        }
    }

    private func dispatch(_ flags: Flags) throws(UsageError) -> Int32 {
        let words = flags.positional
        switch (words.first, words.dropFirst().first) {
        case ("project", "create"):
            try flags.only(["--name"])
            return call(.post, "/v1/admin/projects", ["name": try flags.required("--name")], flags, .operator, render: Render.project)
        case ("user", "create"):
            try flags.only(["--email", "--name", "--password"])
            let email = try flags.required("--email")
            let name = try flags.required("--name")
            guard let password = flags.one("--password") ?? readPassword(flags.switches.contains("--password-stdin")), !password.isEmpty
            else {
                throw UsageError(message: "a password is required (--password, --password-stdin, or type it at the prompt)")
            }
            return call(
                .post, "/v1/admin/users", ["email": email, "name": name, "password": password], flags, .operator, render: Render.object)
        case ("callback", "add"):
            try flags.only(["--uri"])
            return call(.post, "/v1/admin/callbacks", ["uri": try flags.required("--uri")], flags, .secretKey, render: Render.object)
        case ("app", "add"):
            switch words.dropFirst(2).first {
            case "ios":
                try flags.only(["--bundle-id", "--team-id"])
                let body = ["platform": "ios", "bundleId": try flags.required("--bundle-id"), "teamId": try flags.required("--team-id")]
                return call(.post, "/v1/admin/apps", body, flags, .secretKey, render: Render.app)
            case "android":
                try flags.only(["--package-name", "--fingerprint"])
                let fingerprints = flags.values["--fingerprint"] ?? []
                guard !fingerprints.isEmpty else {
                    throw UsageError(message: "--fingerprint is required (repeat it for each signing certificate)")
                }
                let body: [String: Any] = [
                    "platform": "android", "packageName": try flags.required("--package-name"), "sha256CertFingerprints": fingerprints,
                ]
                return call(.post, "/v1/admin/apps", body, flags, .secretKey, render: Render.app)
            default:
                throw UsageError(message: "app add takes ios or android")
            }
        case ("app", "check"):
            try flags.only([])
            guard let id = words.dropFirst(2).first, !id.isEmpty, id.utf8.allSatisfy({ FormURLEncoding.isUnreserved($0) }) else {
                throw UsageError(message: "app check takes the app's id")
            }
            return call(.post, "/v1/admin/apps/\(id)/check", [:], flags, .secretKey, render: Render.check)
        default:
            throw UsageError(message: "unknown admin command \(words.prefix(2).joined(separator: " "))")
        }
    }

    /// One admin call: the server, the credential, the JSON body; prints a table (or the JSON) or the error.
    private func call(
        _ method: HTTPClientRequest.Method, _ path: String, _ body: [String: Any], _ flags: Flags, _ preferred: Credential,
        render: ([String: Any]) -> String
    ) -> Int32 {
        guard var server = flags.one("--server") ?? environment["ZEVAUTH_ISSUER"], !server.isEmpty else {
            writeError("zevauth: name the server with --server URL or ZEVAUTH_ISSUER")
            return 2
        }
        while server.hasSuffix("/") { server.removeLast() }
        let operatorToken = flags.one("--operator-token") ?? environment["ZEVAUTH_OPERATOR_TOKEN"]
        let secretKey = flags.one("--secret-key") ?? environment["ZEVAUTH_SECRET_KEY"]
        let credential = preferred == .operator ? (operatorToken ?? secretKey) : (secretKey ?? operatorToken)
        guard let credential, !credential.isEmpty else {
            let wanted = preferred == .operator ? "--operator-token or ZEVAUTH_OPERATOR_TOKEN" : "--secret-key or ZEVAUTH_SECRET_KEY"
            writeError("zevauth: this command needs \(wanted)")
            return 2
        }
        let bytes = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map(Array.init) ?? []
        let response: HTTPClientResponse
        do {
            response = try client.send(
                HTTPClientRequest(
                    method, server + path,
                    headers: [
                        ("Authorization", "Bearer \(credential)"), ("Content-Type", "application/json"), ("Accept", "application/json"),
                    ],
                    body: bytes))
        } catch {
            writeError("zevauth: no answer from \(server): \(error.description)")
            return 1
        }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        guard (200..<300).contains(response.status) else {
            let code = json?["error"] as? String ?? "http_\(response.status)"
            let description = json?["error_description"] as? String ?? "the server answered \(response.status)"
            writeError("zevauth: \(response.status) \(code): \(description)")
            return 1
        }
        if flags.switches.contains("--json") {
            write(response.text)
        } else {
            write(render(json ?? [:]))
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
}
