/// Why a pasted identifier was refused: the admin API field it came from and a sentence saying exactly what
/// is wrong, ready to send as `error_description` with 400 `invalid_request` (docs/protocol.md#admin-validation,
/// docs/protocol.md#app-identifiers).
///
/// A `message` never repeats the pasted value (an `error_description` echoes no request input,
/// docs/protocol.md): it names the field, a position, or the one refused character (`describe`).
public struct IdentifierProblem: Error, Sendable, Equatable {
    /// The request field, e.g. `teamId`, `bundleId`, `packageName` or `sha256CertFingerprints[1]`.
    public let field: String
    /// A full sentence, ending with a full stop, naming the field and the defect, e.g. "sha256CertFingerprints[1] is 20 bytes long:
    /// that is a SHA-1 fingerprint; paste the SHA-256 one."
    public let message: String

    /// Creates a problem for `field` with a user-facing `message`.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// An Apple Developer Team ID: exactly 10 characters `A-Z 0-9`, stored upper-cased.
///
/// Source: docs/association.md#apple-identifiers (every Apple example is 10 upper-case letters and digits; the
/// character set is not published, so `^[A-Z0-9]{10}$` after upper-casing is the suggested check) and
/// docs/protocol.md#app-identifiers ("10 characters `A-Z0-9`, upper-cased on input").
public struct TeamID: Sendable, Hashable {
    /// The canonical value: 10 characters of `A-Z 0-9`.
    public let value: String

    /// Trims surrounding whitespace, upper-cases, then requires exactly 10 ASCII letters or digits.
    /// - Returns: the team ID, or a problem for field `teamId`.
    public static func parse(_ raw: String) -> Result<TeamID, IdentifierProblem> {
        let field = "teamId"
        let text = trimmed(raw).uppercased()
        if text.isEmpty {
            return .failure(
                IdentifierProblem(field: field, message: "teamId is empty: enter the 10-character Team ID from Membership details."))
        }
        if let bad = text.unicodeScalars.first(where: { !isUpperAlnum($0) }) {
            return .failure(
                IdentifierProblem(
                    field: field,
                    message: "teamId contains \(describe(bad)): a Team ID is 10 letters or digits (e.g. from Membership details)."))
        }
        guard text.unicodeScalars.count == 10 else {
            return .failure(
                IdentifierProblem(
                    field: field,
                    message: "teamId is \(text.unicodeScalars.count) characters long: a Team ID is exactly 10 letters or digits."))
        }
        return .success(TeamID(value: text))
    }
}

/// An iOS bundle identifier, kept exactly as typed (after trimming surrounding whitespace).
///
/// Rules: 1…155 ASCII letters, digits, `-` and `.`; no leading, trailing or doubled dot. Apple documents the
/// character set (a UTI: `A-Z a-z 0-9 - .`, docs/association.md#apple-identifiers, Apple glossary "Bundle ID") but no
/// maximum length; 155 is the cap of docs/protocol.md#app-identifiers. A value that starts with a Team ID
/// (`ABCDE12345.com.acme.app`) is refused with a hint to enter only the bundle ID
/// (docs/association.md#registration-normalisation; ZITADEL and Auth0 give the same advice). Case is kept: Apple calls
/// bundle IDs case-insensitive, but the App ID in the AASA is compared as written.
public struct BundleID: Sendable, Hashable {
    /// The bundle ID as typed, e.g. `com.acme.app`.
    public let value: String

    /// The longest accepted bundle ID, in characters (docs/protocol.md#app-identifiers; Apple publishes no limit).
    public static let maximumLength = 155

    /// Trims surrounding whitespace and validates.
    /// - Returns: the bundle ID, or a problem for field `bundleId`.
    public static func parse(_ raw: String) -> Result<BundleID, IdentifierProblem> {
        let field = "bundleId"
        let text = trimmed(raw)
        let scalars = Array(text.unicodeScalars)
        if scalars.isEmpty {
            return .failure(
                IdentifierProblem(field: field, message: "bundleId is empty: enter the app's bundle identifier, e.g. com.acme.app."))
        }
        if let bad = scalars.first(where: { !(isAlnum($0) || $0 == "-" || $0 == ".") }) {
            return .failure(
                IdentifierProblem(
                    field: field, message: "bundleId contains \(describe(bad)): only letters, digits, '-' and '.' are allowed."))
        }
        if scalars.count > maximumLength {
            return .failure(
                IdentifierProblem(
                    field: field, message: "bundleId is \(scalars.count) characters long: at most \(maximumLength) are allowed."))
        }
        if scalars.first == "." || scalars.last == "." {
            return .failure(IdentifierProblem(field: field, message: "bundleId starts or ends with '.'."))
        }
        if text.contains("..") {
            return .failure(IdentifierProblem(field: field, message: "bundleId contains an empty part ('..')."))
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 1, looksLikeTeamID(parts[0]) {
            let rest = parts.dropFirst().joined(separator: ".")
            return .failure(
                IdentifierProblem(
                    field: field,
                    message:
                        "bundleId looks like a full App ID (Team ID \(parts[0]) followed by the bundle ID): enter only the bundle ID (\(rest)); the Team ID goes in teamId."
                ))
        }
        return .success(BundleID(value: text))
    }

    /// A first part of 10 upper-case letters and digits with at least one digit: a pasted Team ID.
    private static func looksLikeTeamID(_ part: Substring) -> Bool {
        part.unicodeScalars.count == 10 && part.unicodeScalars.allSatisfy(isUpperAlnum)
            && part.unicodeScalars.contains(where: { ("0"..."9").contains($0) })
    }
}

/// An Android application ID (the `applicationId`, which assetlinks.json names as `package_name`), kept
/// exactly as typed after trimming.
///
/// Rules (docs/association.md#android-package-names, Android "Configure the app module"): at least two segments
/// separated by `.`, each starting with an ASCII letter and made of `[a-zA-Z0-9_]`. Java keywords are NOT refused: the
/// `applicationId` is not a Java package name, and published assetlinks.json files list one with a `final` segment. At
/// most 255 characters (no primary source gives a maximum; this is a defensive cap). Package names are case-sensitive:
/// AOSP compares them with `String.equals`.
public struct PackageName: Sendable, Hashable {
    /// The package name as typed, e.g. `com.acme.app`.
    public let value: String

    /// The longest accepted package name, in characters (a defensive cap; Android documents none).
    public static let maximumLength = 255

    /// Trims surrounding whitespace and validates.
    /// - Returns: the package name, or a problem for field `packageName`.
    public static func parse(_ raw: String) -> Result<PackageName, IdentifierProblem> {
        let field = "packageName"
        let text = trimmed(raw)
        let rule = "package names need at least two segments, each starting with a letter; only letters, digits and _ are allowed"
        if text.isEmpty {
            return .failure(IdentifierProblem(field: field, message: "packageName is empty: enter the applicationId, e.g. com.acme.app."))
        }
        if let bad = text.unicodeScalars.first(where: { !(isAlnum($0) || $0 == "_" || $0 == ".") }) {
            return .failure(IdentifierProblem(field: field, message: "packageName contains \(describe(bad)): \(rule)."))
        }
        if text.unicodeScalars.count > maximumLength {
            return .failure(
                IdentifierProblem(
                    field: field,
                    message: "packageName is \(text.unicodeScalars.count) characters long: at most \(maximumLength) are allowed."))
        }
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        if segments.count < 2 {
            return .failure(IdentifierProblem(field: field, message: "packageName has a single segment: \(rule)."))
        }
        for (index, segment) in segments.enumerated() {
            guard let first = segment.unicodeScalars.first else {
                return .failure(IdentifierProblem(field: field, message: "packageName has an empty segment: \(rule)."))
            }
            if !isLetter(first) {
                return .failure(
                    IdentifierProblem(
                        field: field, message: "packageName segment \(index + 1) does not start with a letter: \(rule)."))
            }
        }
        return .success(PackageName(value: text))
    }
}

/// The SHA-256 fingerprint of an Android signing certificate, in assetlinks.json's canonical form.
///
/// Input may be pasted in any format: any letter case, colons or not, spaces, and a leading `SHA256:`,
/// `SHA-256:` or `SHA256 Fingerprint=` label as keytool and OpenSSL print it
/// (docs/association.md#registration-normalisation). Refused: a 20-byte value (SHA-1), a 16-byte value (MD5), any other
/// length, a non-hex character, all zeros, and Google's documentation example
/// (docs/association.md#android-fingerprints). Base64 is not accepted.
public struct CertificateFingerprint: Sendable, Hashable {
    /// 32 bytes as upper-case hex pairs joined by `:` (95 characters), the only form Android's verifier
    /// matches (docs/association.md#android-fingerprints: AOSP compares with `Set.contains`).
    public let canonical: String

    /// The example fingerprint from Google's Digital Asset Links documentation, refused because people ship it.
    public static let googleDocumentationExample =
        "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    /// Normalises and validates one pasted fingerprint.
    /// - Parameters:
    ///   - raw: the pasted text.
    ///   - field: the request field named in the problem, e.g. `sha256CertFingerprints[0]`.
    /// - Returns: the fingerprint, or a problem saying what is wrong.
    public static func parse(_ raw: String, field: String) -> Result<CertificateFingerprint, IdentifierProblem> {
        var text = trimmed(raw)
        for label in ["sha256 fingerprint=", "sha-256 fingerprint=", "sha256:", "sha-256:", "sha256 ", "sha-256 "]
        where text.lowercased().hasPrefix(label) {
            text = String(text.dropFirst(label.count))
            break
        }
        var digits: [UInt8] = []
        for scalar in text.unicodeScalars {
            if scalar == ":" || scalar.properties.isWhitespace { continue }
            guard let digit = hexValue(scalar) else {
                return .failure(
                    IdentifierProblem(
                        field: field,
                        message:
                            "\(field) contains \(describe(scalar)): a fingerprint is hexadecimal digits (0-9, A-F), optionally separated by colons."
                    ))
            }
            digits.append(digit)
        }
        if digits.isEmpty {
            return .failure(IdentifierProblem(field: field, message: "\(field) is empty: paste the certificate's SHA-256 fingerprint."))
        }
        if digits.count % 2 == 1 {
            return .failure(
                IdentifierProblem(
                    field: field,
                    message: "\(field) has \(digits.count) hex digits, an odd number: a SHA-256 fingerprint has 64 (32 bytes)."
                ))
        }
        let bytes = digits.count / 2
        switch bytes {
        case 32: break
        case 20:
            return .failure(
                IdentifierProblem(field: field, message: "\(field) is 20 bytes long: that is a SHA-1 fingerprint; paste the SHA-256 one."))
        case 16:
            return .failure(
                IdentifierProblem(field: field, message: "\(field) is 16 bytes long: that is an MD5 fingerprint; paste the SHA-256 one."))
        default:
            return .failure(
                IdentifierProblem(
                    field: field, message: "\(field) is \(bytes) bytes long: a SHA-256 fingerprint is 32 bytes (64 hex digits)."))
        }
        let hex = Array("0123456789ABCDEF")
        var pairs: [String] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            pairs.append(String([hex[Int(digits[index])], hex[Int(digits[index + 1])]]))
        }
        let canonical = pairs.joined(separator: ":")
        if canonical == googleDocumentationExample {
            return .failure(
                IdentifierProblem(
                    field: field,
                    message: "\(field) is the example from Google's documentation (14:6D:E9:…:44:E5), not your certificate's fingerprint."))
        }
        if digits.allSatisfy({ $0 == 0 }) {
            return .failure(
                IdentifierProblem(field: field, message: "\(field) is all zeros: that is a placeholder, not a certificate's fingerprint."))
        }
        return .success(CertificateFingerprint(canonical: canonical))
    }

    /// The canonical form of `text` if it is exactly 64 hex digits once colons and whitespace are removed, in any
    /// case; `nil` otherwise. Used by the assetlinks judge to say that a fingerprint is present but not canonical.
    static func normalised(_ text: String) -> String? {
        var digits: [Character] = []
        for scalar in text.unicodeScalars {
            if scalar == ":" || scalar.properties.isWhitespace { continue }
            guard hexValue(scalar) != nil else { return nil }
            digits.append(Character(String(scalar).uppercased()))
        }
        guard digits.count == 64 else { return nil }
        return stride(from: 0, to: 64, by: 2).map { String(digits[$0...$0 + 1]) }.joined(separator: ":")
    }
}

/// Validation of the `sha256CertFingerprints` list of an Android app.
public enum Fingerprints {
    /// Parses every fingerprint (fields `sha256CertFingerprints[i]`), then refuses an empty list and any
    /// certificate listed twice (compared canonically), naming both indexes. The limit of 5 per app is not
    /// checked here: PostgreSQL enforces it (docs/protocol.md#app-limits, `native_app_limit`).
    /// - Returns: the canonical fingerprints in the order given, or the first problem found.
    public static func parse(_ raws: [String]) -> Result<[CertificateFingerprint], IdentifierProblem> {
        if raws.isEmpty {
            return .failure(
                IdentifierProblem(
                    field: "sha256CertFingerprints",
                    message: "sha256CertFingerprints is empty: list the SHA-256 fingerprint of at least one signing certificate."))
        }
        var parsed: [CertificateFingerprint] = []
        var firstIndex: [String: Int] = [:]
        for (index, raw) in raws.enumerated() {
            let field = "sha256CertFingerprints[\(index)]"
            switch CertificateFingerprint.parse(raw, field: field) {
            case .failure(let problem):
                return .failure(problem)
            case .success(let fingerprint):
                if let earlier = firstIndex[fingerprint.canonical] {
                    return .failure(
                        IdentifierProblem(
                            field: field,
                            message: "\(field) is the same certificate as sha256CertFingerprints[\(earlier)]; list each one once."))
                }
                firstIndex[fingerprint.canonical] = index
                parsed.append(fingerprint)
            }
        }
        return .success(parsed)
    }
}

/// A registered iOS app: its Team ID and bundle ID.
public struct IOSApp: Sendable, Equatable {
    /// The Apple Developer Team ID, the App ID prefix for almost every app (docs/association.md#apple-identifiers).
    public let teamID: TeamID
    /// The bundle ID, as typed.
    public let bundleID: BundleID
    /// The App ID `TEAMID.bundle.id`, as listed in `applinks.details[].appIDs` and `webcredentials.apps`.
    public var appID: String { "\(teamID.value).\(bundleID.value)" }

    /// Creates an app from validated identifiers.
    public init(teamID: TeamID, bundleID: BundleID) {
        self.teamID = teamID
        self.bundleID = bundleID
    }
}

/// A registered Android app: its package name and the SHA-256 fingerprints of its signing certificates.
public struct AndroidApp: Sendable, Equatable {
    /// The application ID (`package_name` in assetlinks.json).
    public let packageName: PackageName
    /// Every registered certificate, canonical; a verified file must list all of them
    /// (docs/association.md#android-evaluation).
    public let fingerprints: [CertificateFingerprint]

    /// Creates an app from validated identifiers.
    public init(packageName: PackageName, fingerprints: [CertificateFingerprint]) {
        self.packageName = packageName
        self.fingerprints = fingerprints
    }
}

// MARK: - Character helpers

func trimmed(_ text: String) -> String {
    let scalars = Array(text.unicodeScalars)
    guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
    else { return "" }
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars[start...end])
    return String(view)
}

func isLetter(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
func isAlnum(_ scalar: Unicode.Scalar) -> Bool { isLetter(scalar) || ("0"..."9").contains(scalar) }
func isUpperAlnum(_ scalar: Unicode.Scalar) -> Bool { ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) }

func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
    switch scalar {
    case "0"..."9": return UInt8(scalar.value - 48)
    case "a"..."f": return UInt8(scalar.value - 87)
    case "A"..."F": return UInt8(scalar.value - 55)
    default: return nil
    }
}

/// Names a character for a message: printable ones quoted, others as `U+XXXX`.
func describe(_ scalar: Unicode.Scalar) -> String {
    if scalar.value >= 0x21, scalar.value < 0x7F { return "'\(scalar)'" }
    if scalar == " " { return "a space" }
    let hex = String(scalar.value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
