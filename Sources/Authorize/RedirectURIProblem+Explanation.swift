extension RedirectURIProblem {
    /// A sentence for the admin API's `error_description` (it never repeats the URI itself).
    public var explanation: String {
        switch self {
        case .empty: return "it is empty"
        case .tooLong: return "it is longer than \(RedirectURI.maximumLength) bytes"
        case .invalidCharacter: return "it contains a character a URI cannot hold (space, control, non-ASCII or one of \\ < > ^ ` { | })"
        case .malformedPercentEncoding: return "a % is not followed by two hexadecimal digits"
        case .relative: return "it is relative; give an absolute URI with a scheme"
        case .invalidScheme: return "the scheme is not valid"
        case .schemeNotLowercase: return "the scheme must be lower case"
        case .forbiddenScheme: return "javascript:, data:, file:, vbscript:, blob: and about: are never redirect URIs"
        case .schemeNotReverseDomain:
            return "a custom scheme must be a reverse domain name with a dot, such as com.acme.app (RFC 8252 §7.1)"
        case .httpNotLoopback: return "http is allowed only on 127.0.0.1, [::1] or localhost (RFC 8252 §7.3)"
        case .fragment: return "it has a fragment (#), which a redirect URI must not have (RFC 6749 §3.1.2)"
        case .userinfo: return "it has userinfo (user@host)"
        case .emptyHost: return "the host is empty"
        case .percentEncodedHost: return "the host is percent-encoded"
        case .ipLiteralHost: return "an https callback needs a DNS name, not an IP address"
        case .invalidHost: return "the host must be a lower-case DNS name such as acme.com"
        case .invalidPort: return "the port must be a number from 1 to 65535 without leading zeros"
        case .missingPath: return "it needs a path, such as /callback"
        case .dotSegment: return "its path has . or .. segments"
        case .responseParameterInQuery:
            return "its query already carries a parameter the sign-in response adds (code, state, iss, error, "
                + "error_description, error_uri, id_token or session_state), so the redirect would carry two values "
                + "(RFC 6749 §3.1.2, RFC 9207 §2)"
        }
    }
}
