import Encoding

/// A six-digit TOTP code as typed (RFC 6238 §4, 6 digits), parsed once at the edge: spaces are dropped,
/// what remains must be exactly six ASCII digits.
public struct TOTPCode: Sendable, Equatable {
    /// The six digits.
    public let digits: String

    /// - Returns: nil when, without spaces, `typed` is not six ASCII digits.
    public init?(_ typed: String) {
        let text = typed.filter { $0 != " " }
        guard text.utf8.count == 6, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        digits = text
    }
}

/// A recovery code, `zrc_XXXXX-XXXXX` (10 Base32 characters, 50 bits), in its canonical form: upper-case,
/// no spaces or hyphens, with its prefix. Its SHA-256 (`Secrets.digest`) is what is stored.
public struct RecoveryCode: Sendable, Equatable {
    /// `zrc_` followed by the 10 upper-case Base32 characters.
    public let canonical: String

    /// Parses a typed code: case, spaces and hyphens do not matter, the `zrc_` prefix is optional.
    /// - Returns: nil when it cannot be a recovery code.
    public init?(_ typed: String) {
        var text = typed.uppercased().filter { $0 != " " && $0 != "-" }
        if text.hasPrefix("ZRC_") { text.removeFirst(4) }
        guard text.count == 10, Base32.decode(text)?.isEmpty == false else { return nil }
        canonical = "zrc_" + text
    }

    /// The form shown to the person once: `zrc_XXXXX-XXXXX`.
    public var display: String {
        let characters = Array(canonical.dropFirst(4))
        return "zrc_" + String(characters[0..<5]) + "-" + String(characters[5..<10])
    }

    /// Ten new codes, 50 bits each (the first 10 Base32 characters of 7 random bytes).
    /// - Throws: when the CSPRNG fails.
    public static func generate(with random: any OneTimePasswords) throws -> [RecoveryCode] {
        try (0..<10).map { _ in
            let text = String(Base32.encode(try random.randomBytes(7)).prefix(10))
            guard let code = RecoveryCode(text) else { throw RecoveryCodeGenerationFailed() }
            return code
        }
    }
}

/// Ten Base32 characters always make a recovery code; thrown only if that ever stops holding.
struct RecoveryCodeGenerationFailed: Error {}

/// What a person typed at the second-factor step, parsed once at the edge.
public enum SecondFactorCode: Sendable, Equatable {
    case totp(TOTPCode)
    case recovery(RecoveryCode)

    /// Six digits are a TOTP code; otherwise a recovery code; nil when it is neither (answered as a wrong code).
    public init?(_ typed: String) {
        if let code = TOTPCode(typed) {
            self = .totp(code)
        } else if let code = RecoveryCode(typed) {
            self = .recovery(code)
        } else {
            return nil
        }
    }
}
