import Foundation

/// A person's or project's display name, parsed once at the edge (docs/protocol.md#admin-validation): the one
/// rule for every name field (`POST /v1/admin/projects`, `POST /v1/admin/users`, the sign-up form).
///
/// Surrounding whitespace is dropped; what remains is 1 to 200 Unicode scalars (counted as PostgreSQL's
/// `char_length` counts them, so a letter followed by thousands of combining marks is thousands long, not
/// one), with no control character (Unicode category Cc) and no bidirectional control (U+061C, U+200E,
/// U+200F, U+202A–U+202E, U+2066–U+2069: `Unicode.Scalar.Properties.isBidiControl`), which could make an
/// app name read differently on the consent page (Unicode Technical Report #36 §2.1).
public struct DisplayName: Sendable, Equatable {
    /// The name, trimmed.
    public let text: String

    /// The most Unicode scalars a name may have.
    public static let maximumLength = 200

    /// What the admin API says after the field name (`name must be …`).
    public static let rule = "must be 1 to \(maximumLength) characters without control or bidirectional-control characters"

    /// Parses a name as received.
    /// - Parameter raw: the field's value.
    /// - Returns: nil when, trimmed, it is empty, longer than 200 scalars, or holds a refused character.
    public init?(_ raw: String) {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        let scalars = text.unicodeScalars
        guard !scalars.isEmpty, scalars.count <= Self.maximumLength, !scalars.contains(where: Self.isRefused) else { return nil }
        self.text = text
    }

    /// Cc controls and bidirectional controls.
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.properties.isBidiControl
    }
}
