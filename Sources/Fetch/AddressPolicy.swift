import Glibc

/// Which resolved addresses an outbound fetch may connect to (docs/threat-model.md: fetches to private,
/// loopback and link-local addresses are refused; the `address_refused` problem code).
///
/// Refused: everything in the IANA IPv4 and IPv6 special-purpose address registries that is not globally
/// reachable (RFC 6890 and its updates), multicast, IPv6 forms that embed a refused IPv4 address
/// (IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`), the deprecated forms that embed
/// any IPv4 address (IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96` of RFC 2765), and every
/// other IPv6 address outside the global unicast space `2000::/3` (RFC 4291 §2.4). Some registry entries
/// that are globally reachable anycast services sit inside a refused block (`192.0.0.9`, `2001:1::1`); an
/// association file never lives there, so the whole block is refused.
public enum AddressPolicy {
    /// Why `address` is refused, or `nil` when it is an allowed public address.
    ///
    /// - Parameter address: a numeric IPv4 (`203.0.113.7`) or IPv6 (`2001:db8::1`, no brackets) address.
    ///   Text that is not a numeric address (including `127.000.000.001`) is refused.
    /// - Returns: e.g. `"loopback (127.0.0.0/8)"`, or `nil`.
    public static func refusalReason(_ address: String) -> String? {
        guard let parsed = IPAddress(address) else { return "not a numeric IP address" }
        return refusalReason(parsed)
    }

    static func refusalReason(_ address: IPAddress) -> String? {
        switch address {
        case .v4(let bytes): return v4Reason(bytes)
        case .v6(let bytes): return v6Reason(bytes)
        }
    }

    private struct Range {
        let prefix: [UInt8]
        let bits: Int
        let why: String

        func contains(_ bytes: [UInt8]) -> Bool {
            var remaining = bits
            var index = 0
            while remaining > 0 {
                let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
                if bytes[index] & mask != prefix[index] & mask { return false }
                remaining -= 8
                index += 1
            }
            return true
        }
    }

    // RFC 6890 §2.2.2 (IANA IPv4 Special-Purpose Address Registry), plus multicast (RFC 5771).
    private static let v4Ranges: [Range] = [
        Range(prefix: [0, 0, 0, 0], bits: 8, why: "\"this network\" (0.0.0.0/8)"),
        Range(prefix: [10, 0, 0, 0], bits: 8, why: "private (10.0.0.0/8)"),
        Range(prefix: [100, 64, 0, 0], bits: 10, why: "shared address space, carrier-grade NAT (100.64.0.0/10)"),
        Range(prefix: [127, 0, 0, 0], bits: 8, why: "loopback (127.0.0.0/8)"),
        Range(prefix: [169, 254, 0, 0], bits: 16, why: "link-local (169.254.0.0/16)"),
        Range(prefix: [172, 16, 0, 0], bits: 12, why: "private (172.16.0.0/12)"),
        Range(prefix: [192, 0, 0, 0], bits: 24, why: "IETF protocol assignments (192.0.0.0/24)"),
        Range(prefix: [192, 0, 2, 0], bits: 24, why: "documentation (192.0.2.0/24)"),
        Range(prefix: [192, 88, 99, 0], bits: 24, why: "deprecated 6to4 relay anycast (192.88.99.0/24)"),
        Range(prefix: [192, 168, 0, 0], bits: 16, why: "private (192.168.0.0/16)"),
        Range(prefix: [198, 18, 0, 0], bits: 15, why: "benchmarking (198.18.0.0/15)"),
        Range(prefix: [198, 51, 100, 0], bits: 24, why: "documentation (198.51.100.0/24)"),
        Range(prefix: [203, 0, 113, 0], bits: 24, why: "documentation (203.0.113.0/24)"),
        Range(prefix: [224, 0, 0, 0], bits: 4, why: "multicast (224.0.0.0/4)"),
        Range(prefix: [255, 255, 255, 255], bits: 32, why: "broadcast (255.255.255.255)"),
        Range(prefix: [240, 0, 0, 0], bits: 4, why: "reserved (240.0.0.0/4)"),
    ]

    // RFC 6890 §2.2.3 (IANA IPv6 Special-Purpose Address Registry) and RFC 4291, RFC 9637.
    private static let v6Ranges: [Range] = [
        Range(prefix: v6([]), bits: 128, why: "unspecified (::)"),
        Range(prefix: v6([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), bits: 128, why: "loopback (::1)"),
        Range(prefix: v6([0x01, 0x00]), bits: 64, why: "discard-only (100::/64)"),
        Range(prefix: v6([0x01, 0x00, 0, 0, 0, 0, 0, 0x01]), bits: 64, why: "dummy prefix (100:0:0:1::/64)"),
        Range(prefix: v6([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]), bits: 48, why: "local-use NAT64 (64:ff9b:1::/48)"),
        Range(prefix: v6([0x20, 0x01, 0x00, 0x00]), bits: 32, why: "Teredo (2001::/32)"),
        Range(prefix: v6([0x20, 0x01, 0x00, 0x02, 0x00, 0x00]), bits: 48, why: "benchmarking (2001:2::/48)"),
        Range(prefix: v6([0x20, 0x01, 0x00, 0x00]), bits: 23, why: "IETF protocol assignments (2001::/23)"),
        Range(prefix: v6([0x20, 0x01, 0x0D, 0xB8]), bits: 32, why: "documentation (2001:db8::/32)"),
        Range(prefix: v6([0x3F, 0xFF]), bits: 20, why: "documentation (3fff::/20)"),
        Range(prefix: v6([0x5F, 0x00]), bits: 16, why: "segment routing SIDs (5f00::/16)"),
        Range(prefix: v6([0xFC]), bits: 7, why: "unique local, private (fc00::/7)"),
        Range(prefix: v6([0xFE, 0x80]), bits: 10, why: "link-local (fe80::/10)"),
        Range(prefix: v6([0xFE, 0xC0]), bits: 10, why: "deprecated site-local (fec0::/10)"),
        Range(prefix: v6([0xFF]), bits: 8, why: "multicast (ff00::/8)"),
    ]

    private static func v6(_ prefix: [UInt8]) -> [UInt8] { prefix + [UInt8](repeating: 0, count: 16 - prefix.count) }

    private static func v4Reason(_ bytes: [UInt8]) -> String? {
        v4Ranges.first { $0.contains(bytes) }?.why
    }

    private static func v6Reason(_ bytes: [UInt8]) -> String? {
        if let why = v6Ranges.first(where: { $0.contains(bytes) })?.why { return why }
        // Forms that carry an IPv4 address: judge the IPv4 address inside.
        let embedded: (String, [UInt8])?
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            embedded = ("IPv4-mapped (::ffff:0:0/96)", Array(bytes[12..<16]))
        } else if bytes[0..<8].allSatisfy({ $0 == 0 }) && bytes[8] == 0xFF && bytes[9] == 0xFF && bytes[10] == 0 && bytes[11] == 0 {
            embedded = ("IPv4-translated (::ffff:0:0:0/96)", Array(bytes[12..<16]))
        } else if bytes[0..<12].allSatisfy({ $0 == 0 }) {
            embedded = ("IPv4-compatible (::/96)", Array(bytes[12..<16]))
        } else if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            embedded = ("NAT64 (64:ff9b::/96)", Array(bytes[12..<16]))
        } else if bytes[0] == 0x20 && bytes[1] == 0x02 {
            embedded = ("6to4 (2002::/16)", Array(bytes[2..<6]))
        } else {
            embedded = nil
        }
        if let (form, v4) = embedded {
            if form.hasPrefix("IPv4-compatible") || form.hasPrefix("IPv4-translated") { return "deprecated \(form)" }
            if let why = v4Reason(v4) { return "\(form) of a refused IPv4 address: \(why)" }
            return nil
        }
        // RFC 4291 §2.4: global unicast is 2000::/3; everything else is reserved or special.
        guard bytes[0] & 0xE0 == 0x20 else { return "outside the global unicast space (2000::/3)" }
        return nil
    }
}

/// A numeric IP address, parsed and printed with `inet_pton`/`inet_ntop` (canonical text, no brackets).
enum IPAddress: Equatable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    var isV6: Bool {
        if case .v6 = self { return true }
        return false
    }

    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family: Int32
        let bytes: [UInt8]
        switch self {
        case .v4(let b):
            family = AF_INET
            bytes = b
        case .v6(let b):
            family = AF_INET6
            bytes = b
        }
        let ok = bytes.withUnsafeBytes { source in
            buffer.withUnsafeMutableBufferPointer { inet_ntop(family, source.baseAddress, $0.baseAddress, socklen_t($0.count)) != nil }
        }
        guard ok else { return "?" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// Host names accepted for a fetch or a resolve override: DNS names of letters, digits and hyphens
/// (RFC 1123 §2.1), labels of 1–63 characters, 253 characters at most, no IP literals in brackets.
enum HostName {
    static func isValid(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        }
    }
}
