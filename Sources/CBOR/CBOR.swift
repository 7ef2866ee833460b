internal import CCBOR
import Encoding

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CBOR (RFC 8949) decoding through libcbor's streaming decoder, the only module that touches libcbor.
///
/// libcbor reads each item's head and payload (`cbor_stream_decode`); this module only assembles the
/// items it reports into a `CBORValue` and applies the limits WebAuthn needs (docs/passkeys.md, "CBOR"):
/// - at most `maxInputBytes` bytes, nested at most `maxDepth` deep (an array, map or tag is one level);
/// - definite lengths only (CTAP2 canonical CBOR, which WebAuthn Level 3 §6.1 and §6.5.1 require);
/// - no map with the same key twice (RFC 8949 §5.6);
/// - text strings that are well-formed UTF-8 (RFC 8949 §3.1);
/// - `decode(_:)` also refuses any byte after the top-level item (RFC 8949 §5.1).
///
/// The streaming decoder is used rather than `cbor_load` so that nothing is built before the depth limit
/// is checked: libcbor frees a loaded tree recursively, so a deep tree could exhaust the stack. No
/// `cbor_item_t` is ever allocated here.
public enum CBOR {
    /// The largest input accepted, in bytes (64 KiB): far above any attestation object or COSE key.
    public static let maxInputBytes = 64 * 1024
    /// The deepest nesting accepted: a top-level array or map is depth 1. A COSE key is depth 1, an
    /// attestation object depth 2.
    public static let maxDepth = 16

    /// Decodes `bytes` as exactly one CBOR data item.
    /// - Throws: `CBORDecodingError` naming the first problem (`.trailingBytes` when anything follows the
    ///   item).
    public static func decode<C: Collection>(_ bytes: C) throws(CBORDecodingError) -> CBORValue where C.Element == UInt8 {
        let input = ArraySlice(bytes)
        let (value, length) = try decodeItem(input)
        guard length == input.count else { throw CBORDecodingError(.trailingBytes, offset: length) }
        return value
    }

    /// Decodes the one CBOR data item at the start of `bytes`, leaving whatever follows it.
    /// - Returns: the item and the number of bytes it took.
    /// - Throws: `CBORDecodingError` naming the first problem.
    @Sendable public static func decodeItem(_ bytes: ArraySlice<UInt8>) throws(CBORDecodingError) -> (value: CBORValue, length: Int) {
        guard !bytes.isEmpty else { throw CBORDecodingError(.empty, offset: 0) }
        guard bytes.count <= maxInputBytes else { throw CBORDecodingError(.tooLarge, offset: 0) }
        let builder = Builder()
        let input = Array(bytes)
        var callbacks = Self.callbacks
        // `builder` outlives every call below: it is a local held until this function returns, and the
        // decoder reaches it only through `context` during `cbor_stream_decode`.
        let context = Unmanaged.passUnretained(builder).toOpaque()
        try withExtendedLifetime(builder) { () throws(CBORDecodingError) in
            try input.withUnsafeBufferPointer { (buffer) throws(CBORDecodingError) in
                while builder.root == nil {
                    let offset = builder.offset
                    guard offset < buffer.count else { throw CBORDecodingError(.truncated, offset: offset) }
                    let result = cbor_stream_decode(buffer.baseAddress! + offset, buffer.count - offset, &callbacks, context)
                    switch result.status {
                    case CBOR_DECODER_FINISHED:
                        if let failure = builder.failure { throw CBORDecodingError(failure, offset: offset) }
                        builder.offset += result.read
                    case CBOR_DECODER_NEDATA:
                        throw CBORDecodingError(.truncated, offset: offset)
                    default:
                        throw CBORDecodingError(.malformed, offset: offset)
                    }
                }
            }
        }
        guard let root = builder.root else { throw CBORDecodingError(.truncated, offset: builder.offset) }
        return (root, builder.offset)
    }

    /// Assembles the items libcbor reports, one head at a time, into nested values.
    private final class Builder {
        /// An array, map or tag still waiting for items.
        enum Frame {
            case array(expected: Int, items: [CBORValue])
            case map(expected: Int, entries: [CBORValue.Entry], keys: Set<CBORValue>, pendingKey: CBORValue?)
            case tag(UInt64)
        }

        var stack: [Frame] = []
        var root: CBORValue?
        var failure: CBORDecodingError.Reason?
        /// Where the next item head starts.
        var offset = 0

        func fail(_ reason: CBORDecodingError.Reason) {
            if failure == nil { failure = reason }
        }

        /// A complete item: hand it to the innermost open frame, closing every frame it completes.
        func add(_ item: CBORValue) {
            guard failure == nil else { return }
            var value = item
            while let frame = stack.popLast() {
                switch frame {
                case .array(let expected, var items):
                    items.append(value)
                    if items.count < expected {
                        stack.append(.array(expected: expected, items: items))
                        return
                    }
                    value = .array(items)
                case .map(let expected, var entries, var keys, let pendingKey):
                    guard let key = pendingKey else {
                        guard keys.insert(value).inserted else { return fail(.duplicateMapKey) }
                        stack.append(.map(expected: expected, entries: entries, keys: keys, pendingKey: value))
                        return
                    }
                    entries.append(CBORValue.Entry(key, value))
                    if entries.count < expected {
                        stack.append(.map(expected: expected, entries: entries, keys: keys, pendingKey: nil))
                        return
                    }
                    value = .map(entries)
                case .tag(let number):
                    value = .tagged(number, value)
                }
            }
            root = value
        }

        /// An array, map or tag head: open a frame, or add the empty container at once.
        func open(_ frame: Frame) {
            guard failure == nil else { return }
            guard stack.count < CBOR.maxDepth else { return fail(.tooDeep) }
            switch frame {
            case .array(0, _): add(.array([]))
            case .map(0, _, _, _): add(.map([]))
            default: stack.append(frame)
            }
        }

        func text(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let string = String(validating: bytes, as: UTF8.self) else { return fail(.invalidUTF8) }
            add(.text(string))
        }
    }

    private static func builder(_ context: UnsafeMutableRawPointer?) -> Builder {
        Unmanaged<Builder>.fromOpaque(context!).takeUnretainedValue()
    }

    private static func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: count == 0 ? nil : data, count: count)
    }

    /// The decoder's callbacks: capture-free C functions that reach the `Builder` through the context.
    private static let callbacks: cbor_callbacks = {
        var c = cbor_empty_callbacks
        c.uint8 = { builder($0).add(.unsigned(UInt64($1))) }
        c.uint16 = { builder($0).add(.unsigned(UInt64($1))) }
        c.uint32 = { builder($0).add(.unsigned(UInt64($1))) }
        c.uint64 = { builder($0).add(.unsigned($1)) }
        c.negint8 = { builder($0).add(.negative(UInt64($1))) }
        c.negint16 = { builder($0).add(.negative(UInt64($1))) }
        c.negint32 = { builder($0).add(.negative(UInt64($1))) }
        c.negint64 = { builder($0).add(.negative($1)) }
        // libcbor's field names: `byte_string` and `string` are definite strings; `byte_string_start` and
        // `string_start` begin indefinite ones.
        c.byte_string = { builder($0).add(.bytes(Array(bytes($1, $2)))) }
        c.string = { builder($0).text(bytes($1, $2)) }
        c.array_start = { builder($0).open(.array(expected: $1, items: [])) }
        c.map_start = { builder($0).open(.map(expected: $1, entries: [], keys: [], pendingKey: nil)) }
        c.tag = { builder($0).open(.tag($1)) }
        c.float2 = { builder($0).add(.float(Double($1))) }
        c.float4 = { builder($0).add(.float(Double($1))) }
        c.float8 = { builder($0).add(.float($1)) }
        c.boolean = { builder($0).add(.bool($1)) }
        c.null = { builder($0).add(.null) }
        c.undefined = { builder($0).add(.undefined) }
        c.byte_string_start = { builder($0).fail(.indefiniteLength) }
        c.string_start = { builder($0).fail(.indefiniteLength) }
        c.indef_array_start = { builder($0).fail(.indefiniteLength) }
        c.indef_map_start = { builder($0).fail(.indefiniteLength) }
        c.indef_break = { builder($0).fail(.indefiniteLength) }
        return c
    }()
}

extension CBOR {
    /// Encodes a value as one CBOR data item through libcbor's builders and serializer, with definite
    /// lengths and the shortest integer heads (RFC 8949 §4.2.1), map entries in the order given. Used to
    /// store a passkey's `COSE_Key` (docs/passkeys.md, "Storage") and by tests to build authenticator
    /// responses; what it writes is read back with `decode(_:)`.
    /// - Returns: the bytes, or nil for a value with a tag, a float or `undefined` (never stored), or when
    ///   libcbor cannot allocate.
    public static func encode(_ value: CBORValue) -> [UInt8]? {
        guard let item = build(value) else { return nil }
        defer { release(item) }
        var buffer: UnsafeMutablePointer<UInt8>?
        var capacity = 0
        let length = cbor_serialize_alloc(item, &buffer, &capacity)
        guard let buffer, length > 0 else { return nil }
        defer { free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// A libcbor item holding one reference (the caller releases it with `cbor_decref`), or nil.
    private static func build(_ value: CBORValue) -> UnsafeMutablePointer<cbor_item_t>? {
        switch value {
        case .unsigned(let number): return integer(number, negative: false)
        case .negative(let number): return integer(number, negative: true)
        case .bytes(let bytes): return bytes.withUnsafeBufferPointer { cbor_build_bytestring($0.baseAddress, $0.count) }
        case .text(let text):
            let utf8 = Array(text.utf8)
            return utf8.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { cbor_build_stringn($0.baseAddress, $0.count) }
            }
        case .bool(let flag): return cbor_build_bool(flag)
        case .null: return cbor_new_null()
        case .array(let elements):
            guard let array = cbor_new_definite_array(elements.count) else { return nil }
            for element in elements {
                guard let child = build(element) else {
                    release(array)
                    return nil
                }
                // `cbor_array_push` takes its own reference.
                let pushed = cbor_array_push(array, child)
                release(child)
                guard pushed else {
                    release(array)
                    return nil
                }
            }
            return array
        case .map(let entries):
            guard let map = cbor_new_definite_map(entries.count) else { return nil }
            for entry in entries {
                guard let key = build(entry.key) else {
                    release(map)
                    return nil
                }
                guard let item = build(entry.value) else {
                    release(key)
                    release(map)
                    return nil
                }
                // `cbor_map_add` takes its own references to the key and the value.
                let added = cbor_map_add(map, cbor_pair(key: key, value: item))
                release(key)
                release(item)
                guard added else {
                    release(map)
                    return nil
                }
            }
            return map
        case .tagged, .float, .undefined: return nil
        }
    }

    /// Drops the reference the caller holds (libcbor frees the item, and its children, at zero).
    private static func release(_ item: UnsafeMutablePointer<cbor_item_t>) {
        var handle: UnsafeMutablePointer<cbor_item_t>? = item
        cbor_decref(&handle)
    }

    /// An integer item with the shortest head that holds `number` (RFC 8949 §4.2.1).
    private static func integer(_ number: UInt64, negative: Bool) -> UnsafeMutablePointer<cbor_item_t>? {
        switch number {
        case 0...UInt64(UInt8.max): negative ? cbor_build_negint8(UInt8(number)) : cbor_build_uint8(UInt8(number))
        case 0...UInt64(UInt16.max): negative ? cbor_build_negint16(UInt16(number)) : cbor_build_uint16(UInt16(number))
        case 0...UInt64(UInt32.max): negative ? cbor_build_negint32(UInt32(number)) : cbor_build_uint32(UInt32(number))
        default: negative ? cbor_build_negint64(number) : cbor_build_uint64(number)
        }
    }
}
