import Authorize
import IDNA

/// The edge's parse of an email address: `Authorize.EmailAddress`'s rule with libidn2's IDNA conversion
/// (docs/protocol.md, "Email addresses"). Everything after the edge takes the parsed `EmailAddress`.
extension EmailAddress {
    /// Parses an address.
    ///
    /// - Parameter text: the address as entered; surrounding spaces are ignored.
    /// - Returns: nil when it is not an address this server accepts (`parse(_:)` says why).
    public init?(_ text: String) {
        guard case .success(let address) = Self.parse(text) else { return nil }
        self = address
    }

    /// Parses an address, saying which part is refused (`EmailAddress.Problem`).
    /// - Parameter text: the address as entered; surrounding spaces are ignored.
    public static func parse(_ text: String) -> Result<EmailAddress, Problem> {
        parse(text, domainToASCII: IDNA.toASCII)
    }
}
