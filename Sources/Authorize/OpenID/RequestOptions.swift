import Encoding

/// The OpenID Connect request options of a start (OpenID Connect Core 1.0 §3.1.2.1, §6;
/// docs/protocol.md, "prompt, max_age and hints"): what the person must do (`prompt`, `max_age`), who the
/// client thinks is signing in (`id_token_hint`, `login_hint`), and the parameters the server refuses or
/// ignores. Parsed once, as the start's last check (docs/protocol.md#start-check-8), so its errors are
/// redirected with `state` and `iss`. `request` and `request_uri` are refused earlier, by
/// `StartValidator.checkRequestObject` (docs/protocol.md#start-check-4).
public struct RequestOptions: Sendable, Equatable {
    /// The `prompt` values (OpenID Connect Core §3.1.2.1), as a set.
    public struct Prompts: OptionSet, Sendable, Equatable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `none`: never show a page; answer a code or `login_required`/`consent_required`/`interaction_required`.
        public static let noInteraction = Prompts(rawValue: 1)
        /// `login`: ask for the password even when the browser is signed in.
        public static let login = Prompts(rawValue: 2)
        /// `consent`: show the consent page even when consent is remembered.
        public static let consent = Prompts(rawValue: 4)
    }

    /// The `prompt` values asked for (empty when none was given).
    public var prompts: Prompts
    /// `max_age` in seconds (0 or more): the longest time since the person last authenticated that may skip
    /// the password; nil when absent.
    public var maxAgeSeconds: Int?
    /// `id_token_hint` as sent (a compact JWS the hint reader checks); never put into a URL or a log line.
    /// `response_mode=form_post`: the answer goes back as an auto-submitting form (OAuth 2.0 Form Post
    /// Response Mode; web clients only).
    public var formPost = false
    public var idTokenHint: String?
    /// `login_hint`, kept when at most `loginHintMaximumLength` scalars with no control character, to
    /// pre-fill the email field; never put into a URL or a log line.
    public var loginHint: String?

    /// No option: every start before OpenID Connect's parameters.
    public init(prompts: Prompts = [], maxAgeSeconds: Int? = nil, idTokenHint: String? = nil, loginHint: String? = nil) {
        self.prompts = prompts
        self.maxAgeSeconds = maxAgeSeconds
        self.idTokenHint = idTokenHint
        self.loginHint = loginHint
    }

    /// Whether the person must type the password (and give the second factor when enrolled) even with a
    /// signed-in browser: `prompt=login` or `max_age=0`.
    public var forcesSignIn: Bool { prompts.contains(.login) }

    /// The longest `login_hint` kept, in Unicode scalars (RFC 5321 §4.5.3.1: a path is at most 256 octets;
    /// 320 leaves room for the 64 + 255 local part and domain).
    public static let loginHintMaximumLength = 320

    /// The largest `max_age` accepted, in seconds (about 317 years; anything longer than a session lives
    /// means the same).
    public static let maxAgeMaximum = 9_999_999_999

    /// Parses the options from a start's unique, form-decoded parameters.
    ///
    /// Refused with `invalid_request` (redirected): `prompt` with an unknown value, or `none` with another
    /// value (§3.1.2.1); `max_age` that is not a decimal number of seconds, 0 or more; `response_mode` other
    /// than `query` or `form_post` (OAuth 2.0 Multiple Response Types §2.1, OAuth 2.0 Form Post Response
    /// Mode; `StartValidator` keeps `form_post` for web clients). `request` and `request_uri`
    /// are not read here: the start refused them before its state check (docs/protocol.md#start-check-4).
    /// `display`, `ui_locales`, `claims_locales` are
    /// accepted and ignored. An empty value counts as missing; a `login_hint` or `id_token_hint` that is
    /// too long, holds a control character or could not be decoded is ignored (a hint never fails a start).
    /// - Parameters:
    ///   - parameters: each name once, decoded (`StartValidator` has refused duplicates).
    ///   - undecodable: the names whose value could not be decoded.
    /// - Returns: the options, or the error to redirect.
    public static func parse(_ parameters: [String: String], undecodable: Set<String> = []) -> Result<RequestOptions, OAuthError> {
        func present(_ name: String) -> String? {
            guard let value = parameters[name], !value.isEmpty else { return nil }
            return value
        }
        var options = RequestOptions()
        if let mode = present("response_mode") {
            if asksFormPost(parameters) {
                options.formPost = true
            } else if !mode.utf8.elementsEqual("query".utf8) {
                return .failure(OAuthError(.invalidRequest, "response_mode must be query or form_post."))
            }
        }
        if let prompt = present("prompt") {
            switch parsePrompts(prompt) {
            case .failure(let error): return .failure(error)
            case .success(let prompts): options.prompts = prompts
            }
        }
        if let maxAge = present("max_age") {
            guard maxAge.utf8.count <= 10, maxAge.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let seconds = Int(maxAge), seconds <= maxAgeMaximum
            else {
                return .failure(OAuthError(.invalidRequest, "max_age must be a whole number of seconds, 0 or more."))
            }
            options.maxAgeSeconds = seconds
            // §3.1.2.1: max_age=0 is the same as prompt=login.
            if seconds == 0 { options.prompts.insert(.login) }
        }
        if let claims = present("claims"), undecodable.contains("claims") || !isClaimsRequest(claims) {
            return .failure(
                OAuthError(
                    .invalidRequest,
                    "claims must be a JSON object whose userinfo and id_token members map claim names to null or an object."))
        }
        if !undecodable.contains("id_token_hint"), let hint = present("id_token_hint"), isPrintableASCII(hint, limit: 16_384) {
            options.idTokenHint = hint
        }
        if !undecodable.contains("login_hint"), let hint = present("login_hint") {
            options.loginHint = checkLoginHint(hint)
        }
        return .success(options)
    }

    /// OpenID Connect Core §5.5: `claims` is a JSON object (at most 16 KiB) whose members `userinfo` and
    /// `id_token`, when present, are objects mapping each claim name to `null` or an object (with
    /// `essential`, `value`, `values`); other members are ignored. The request is read only to be checked:
    /// a claim is returned where the granted scopes put it (docs/protocol.md, "The claims parameter"), so
    /// a requested claim the scopes did not grant — essential or not — is left out, and a claim the server
    /// does not have (such as `acr`) is never invented.
    static func isClaimsRequest(_ text: String) -> Bool {
        guard text.utf8.count <= 16_384, let value = try? JSONValue.parse(Array(text.utf8)), value.isObject else { return false }
        for member in ["userinfo", "id_token"] {
            guard let requested = value[member] else { continue }
            guard case .object(let claims) = requested else { return false }
            for (_, request) in claims {
                switch request {
                case .null, .object: continue
                default: return false
                }
            }
        }
        return true
    }

    /// Whether a start asks for no interaction: `prompt` holds `none`, however the rest of it reads. Used
    /// to answer even the start's own redirected errors with a direct 303 (§3.1.2.1).
    public static func asksNoInteraction(_ parameters: [String: String]) -> Bool {
        guard let prompt = parameters["prompt"] else { return false }
        return prompt.split(separator: " ", omittingEmptySubsequences: true).contains("none")
    }

    /// Whether a start asks for OAuth 2.0 Form Post Response Mode: `response_mode` is exactly `form_post`,
    /// as `parse` reads it. Used to send even the start's own redirected errors the way the request asked
    /// (Form Post Response Mode §2), including errors found before the options are parsed.
    public static func asksFormPost(_ parameters: [String: String]) -> Bool {
        parameters["response_mode"]?.utf8.elementsEqual("form_post".utf8) == true
    }

    /// §3.1.2.1: a space-delimited, case-sensitive list of `none`, `login`, `consent` (and
    /// `select_account`, which has no meaning for a server with one account per browser and is accepted);
    /// `none` alone.
    static func parsePrompts(_ value: String) -> Result<Prompts, OAuthError> {
        var prompts: Prompts = []
        var count = 0
        for word in value.split(separator: " ", omittingEmptySubsequences: true) {
            count += 1
            switch word {
            case "none": prompts.insert(.noInteraction)
            case "login": prompts.insert(.login)
            case "consent": prompts.insert(.consent)
            case "select_account": break
            default: return .failure(OAuthError(.invalidRequest, "prompt holds a value this server does not know."))
            }
        }
        if prompts.contains(.noInteraction) && count > 1 {
            return .failure(OAuthError(.invalidRequest, "prompt=none cannot be combined with another value."))
        }
        return .success(prompts)
    }

    /// Keeps a `login_hint` of at most 320 scalars with no control character; otherwise nil.
    static func checkLoginHint(_ hint: String) -> String? {
        var count = 0
        for scalar in hint.unicodeScalars {
            count += 1
            if count > loginHintMaximumLength || scalar.properties.generalCategory == .control { return nil }
        }
        return hint
    }

    private static func isPrintableASCII(_ value: String, limit: Int) -> Bool {
        value.utf8.count <= limit && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
