/// Base64url without padding (RFC 4648 §5), as PKCE (RFC 7636 §3, Appendix A) and every minted
/// credential use it.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes as base64url with no `=` padding.
    /// - Parameter bytes: any bytes.
    /// - Returns: `ceil(4 * n / 3)` characters of `A-Z a-z 0-9 - _`.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let chunk = UInt32(input[index]) << 16
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
        } else if rest == 2 {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Strictly decodes unpadded base64url: rejects `=`, `+`, `/`, whitespace, a length of 1 mod 4, and
    /// non-zero trailing bits (so every byte string has exactly one accepted encoding).
    /// - Parameter text: the encoded string.
    /// - Returns: the bytes, or `nil` when `text` is not canonical base64url.
    public static func decodeCanonical(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        if values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 4 <= values.count {
            let chunk =
                UInt32(values[index]) << 18 | UInt32(values[index + 1]) << 12
                | UInt32(values[index + 2]) << 6 | UInt32(values[index + 3])
            out.append(UInt8(chunk >> 16 & 0xFF))
            out.append(UInt8(chunk >> 8 & 0xFF))
            out.append(UInt8(chunk & 0xFF))
            index += 4
        }
        let rest = values.count - index
        if rest == 2 {
            guard values[index + 1] & 0x0F == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
        } else if rest == 3 {
            guard values[index + 2] & 0x03 == 0 else { return nil }
            out.append(values[index] << 2 | values[index + 1] >> 4)
            out.append((values[index + 1] & 0x0F) << 4 | values[index + 2] >> 2)
        }
        return out
    }
}
