/// The client's `state`, after `application/x-www-form-urlencoded` decoding.
///
/// Valid when it is 1 to 512 Unicode scalars with no scalar of general category Cc (C0 controls, DEL,
/// C1 controls). This is wider than RFC 6749 §4.1.1's `1*VSCHAR` on purpose (docs/protocol.md#state): any
/// printable Unicode survives the round trip, re-encoded by `redirectQueryValue`.
public struct OAuthState: Sendable, Equatable {
    /// The decoded value, returned unchanged in the redirect.
    public let value: String

    /// The accepted length, in Unicode scalars.
    public static let lengthRange: ClosedRange<Int> = 1...512

    /// Validates a decoded `state`.
    /// - Parameter decoded: the value after form decoding (`+` is a space), already valid UTF-8.
    /// - Returns: `nil` when empty, longer than 512 scalars, or holding a control character
    ///   (the start answers `invalid_state`, docs/protocol.md#start-check-5).
    public init?(decoded: String) {
        let scalars = decoded.unicodeScalars
        var count = 0
        for scalar in scalars {
            count += 1
            if count > Self.lengthRange.upperBound || scalar.properties.generalCategory == .control { return nil }
        }
        guard Self.lengthRange.contains(count) else { return nil }
        self.value = decoded
    }
}
