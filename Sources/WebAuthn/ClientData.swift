import Encoding

/// The ceremony a `clientDataJSON` says it belongs to (WebAuthn Level 3 §5.8.1, `type`).
public enum CeremonyType: String, Sendable, Equatable {
    /// Registration: `navigator.credentials.create()`.
    case create = "webauthn.create"
    /// Authentication: `navigator.credentials.get()`.
    case get = "webauthn.get"
}

/// The members of a `clientDataJSON` that the checks read (WebAuthn Level 3 §5.8.1), parsed once.
///
/// Parsing is strict JSON (`JSONValue.parse`: no byte order mark, no duplicate member, well-formed UTF-8).
/// `type`, `challenge` and `origin` must be strings, `challenge` canonical unpadded base64url; `crossOrigin`
/// may be absent or a boolean; `topOrigin`, when present, must be a string. Other members (such as
/// `tokenBinding` or the `other_keys_can_be_added_here` that browsers add) are ignored, as §5.8.1 asks.
/// Whether the values are acceptable is decided by the ceremonies, not here.
public struct CollectedClientData: Sendable, Equatable {
    /// `type`, as sent; a value other than the two ceremony types is kept as nil.
    public let type: CeremonyType?
    /// `challenge`, decoded from base64url.
    public let challenge: [UInt8]
    /// `origin`, as sent.
    public let origin: String
    /// `crossOrigin`; absent reads as false.
    public let crossOrigin: Bool
    /// Whether `topOrigin` is present.
    public let hasTopOrigin: Bool

    /// Parses the bytes of `clientDataJSON` exactly as the browser sent them.
    /// - Throws: `WebAuthnError.malformedClientData`.
    public init(json: [UInt8]) throws(WebAuthnError) {
        guard let value = try? JSONValue.parse(json, maxDepth: 8), case .object = value,
            case .string(let type)? = value["type"], case .string(let challengeText)? = value["challenge"],
            let challenge = Base64URL.decodeCanonical(challengeText), case .string(let origin)? = value["origin"]
        else { throw .malformedClientData }
        let crossOrigin: Bool
        switch value["crossOrigin"] {
        case nil: crossOrigin = false
        case .bool(let flag)?: crossOrigin = flag
        default: throw .malformedClientData
        }
        switch value["topOrigin"] {
        case nil: hasTopOrigin = false
        case .string?: hasTopOrigin = true
        default: throw .malformedClientData
        }
        self.type = CeremonyType(rawValue: type)
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
    }
}
