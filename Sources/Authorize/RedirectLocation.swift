import Encoding

/// The `Location` of a redirect to a client: the redirect URI exactly as requested, then `?` (or `&` when
/// it already has a query; nothing when it ends in a bare `?`), then the parameters, each name and value
/// percent-encoded leaving only RFC 3986 unreserved characters bare (`FormURLEncoding.encode`).
///
/// Source: RFC 6749 §4.1.2 and §3.1.2 ("MUST retain" the query component), RFC 9207 (`iss`),
/// docs/protocol.md#redirect-back and docs/protocol.md#state.
/// - Parameters:
///   - base: the requested redirect URI (for a loopback, with its own port).
///   - parameters: ordered `(name, value)` pairs; see `successRedirectParameters` and
///     `errorRedirectParameters`.
/// - Returns: the absolute URI to put in `Location`.
public func redirectLocation(base: RedirectURI, parameters: [(String, String)]) -> String {
    let separator: String
    if base.raw.hasSuffix("?") {
        separator = ""
    } else if base.pathAndQuery.contains("?") {
        separator = "&"
    } else {
        separator = "?"
    }
    return base.raw + separator + FormURLEncoding.encode(parameters)
}

/// The parameters of a successful authorization response, in order: `code`, `state`, `iss`
/// (RFC 6749 §4.1.2, RFC 9207 §2).
/// - Parameters:
///   - code: the authorization code (`hoc_…`).
///   - state: the client's state, returned with the same decoded value.
///   - issuer: the server's issuer identifier (`ZEVAUTH_ISSUER`).
public func successRedirectParameters(code: String, state: OAuthState, issuer: String) -> [(String, String)] {
    [("code", code), ("state", state.value), ("iss", issuer)]
}

/// The parameters of a redirected error, in order: `error`, `error_description`, `state` (when known),
/// `iss` (RFC 6749 §4.1.2.1, RFC 9207 §2; docs/protocol.md#start-order).
/// - Parameters:
///   - error: the error to report.
///   - state: the client's state; `nil` leaves `state` out.
///   - issuer: the server's issuer identifier.
///   - surface: `.zevAuth` for `/v1/auth/zevid/start`, `.standard(.authorize)` for `/oauth2/authorize`.
public func errorRedirectParameters(
    _ error: OAuthError, state: OAuthState?, issuer: String, surface: ErrorSurface
) -> [(String, String)] {
    var pairs = [("error", error.wireError(on: surface)), ("error_description", error.wireDescription(on: surface))]
    if let state { pairs.append(("state", state.value)) }
    pairs.append(("iss", issuer))
    return pairs
}
