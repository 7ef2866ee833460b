/// One decoded CBOR data item (RFC 8949 §3), as the `CBOR` module builds it from libcbor's decoder.
///
/// The value type lives here, in a pure module, so that pure modules (WebAuthn) can read CBOR without
/// importing the C library: they take a decoding function (`CBORItemDecoder`) injected by the caller,
/// and production passes `CBOR.decodeItem` (docs/passkeys.md, "Layers").
///
/// Only definite-length items exist here: the decoder refuses indefinite lengths (RFC 8949 §3.2.2).
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0: an unsigned integer.
    case unsigned(UInt64)
    /// Major type 1: the negative integer `-1 - n`, holding `n` (so `.negative(0)` is -1).
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (well-formed UTF-8, RFC 8949 §3.1).
    case text(String)
    /// Major type 4: an array, elements in order.
    case array([CBORValue])
    /// Major type 5: a map, entries in the order encoded; no key appears twice (RFC 8949 §5.6: the decoder
    /// refuses duplicates).
    case map([Entry])
    /// Major type 6: a tag number and the item it tags.
    case tagged(UInt64, CBORValue)
    /// Major type 7: `false` or `true`.
    case bool(Bool)
    /// Major type 7: `null`.
    case null
    /// Major type 7: `undefined`.
    case undefined
    /// Major type 7: a half, single or double precision float, widened to `Double`.
    case float(Double)

    /// One key/value pair of a map.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public let key: CBORValue
        /// The value.
        public let value: CBORValue

        /// A pair.
        public init(_ key: CBORValue, _ value: CBORValue) {
            self.key = key
            self.value = value
        }
    }

    /// The integer this value is (major type 0 or 1), when it fits `Int64`; nil otherwise.
    public var integer: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    /// An integer as a CBOR value: `.unsigned` for 0 and above, `.negative` below.
    public static func int(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The value of the entry whose key is `key`, when this is a map; nil for a missing key or a non-map.
    public subscript(key: CBORValue) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }
}

/// Why CBOR bytes were refused: what went wrong (`reason`) and where (`offset`, a zero-based byte offset
/// into the input, the start of the item concerned). It never quotes the input.
public struct CBORDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The rule the input broke.
    public enum Reason: Equatable, Sendable {
        /// No bytes at all.
        case empty
        /// More bytes than the decoder's limit (`CBOR.maxInputBytes`).
        case tooLarge
        /// The input ends inside an item (RFC 8949 §3: not well-formed).
        case truncated
        /// libcbor refused the bytes: a reserved additional-information value or another head it cannot read
        /// (RFC 8949 §3, Appendix F).
        case malformed
        /// An indefinite-length string, array or map, or a "break" (RFC 8949 §3.2): CTAP2 canonical CBOR,
        /// which WebAuthn requires, has only definite lengths.
        case indefiniteLength
        /// Arrays, maps and tags nest deeper than the decoder's limit (`CBOR.maxDepth`).
        case tooDeep
        /// A map holds the same key twice (RFC 8949 §5.6); the offset is the second key's.
        case duplicateMapKey
        /// A text string that is not well-formed UTF-8 (RFC 8949 §3.1).
        case invalidUTF8
        /// Bytes follow the top-level item (RFC 8949 §5.1: one encoded data item, nothing after it).
        case trailingBytes
    }

    /// What rule was broken.
    public let reason: Reason
    /// The zero-based byte offset of the problem.
    public let offset: Int

    /// Creates an error; the decoder is the only producer outside tests.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "The CBOR data is not valid: \(reason) at byte \(offset)." }
}

/// Decodes the one CBOR item at the start of `bytes`, returning it and how many bytes it took; bytes after
/// it are left to the caller (authenticator data carries a COSE key followed by more data). Production
/// passes `CBOR.decodeItem`.
public typealias CBORItemDecoder = @Sendable (_ bytes: ArraySlice<UInt8>) throws(CBORDecodingError) -> (value: CBORValue, length: Int)
