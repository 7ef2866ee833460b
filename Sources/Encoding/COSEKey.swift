/// The COSE algorithms a passkey may use here (RFC 9053 §2.1 and §2.2, RFC 8812 §2), by their COSE
/// identifiers.
public enum COSEAlgorithm: Int64, Sendable, Hashable, CaseIterable {
    /// ECDSA with SHA-256 on P-256; WebAuthn signatures are DER `Ecdsa-Sig-Value` (WebAuthn Level 3 §6.5, "Signature Formats").
    case es256 = -7
    /// EdDSA; here only with the Ed25519 curve (RFC 9053 §2.2).
    case eddsa = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8812 §2).
    case rs256 = -257
}

/// A public key read from a `COSE_Key` map (RFC 9052 §7), limited to the three shapes a passkey may
/// have here. Each case holds the raw components that `Crypto` turns into an OpenSSL key.
///
/// The rules (docs/passkeys.md, "COSE keys"): the map's labels are integers; `kty` (1) and `alg` (3) are
/// required and must be one of the combinations below; no other parameter may appear (WebAuthn Level 3
/// §6.5.1: the key "MUST NOT contain any other OPTIONAL parameters").
/// - EC2 (`kty` 2), `alg` -7, `crv` (-1) 1 (P-256), `x` (-2) and `y` (-3) byte strings of 32 bytes each
///   (RFC 9053 §7.1.1; a compressed `y` is refused). Whether the point is on the curve is checked when
///   OpenSSL builds the key.
/// - OKP (`kty` 1), `alg` -8, `crv` (-1) 6 (Ed25519), `x` (-2) a byte string of 32 bytes (RFC 9053 §7.2)
///   that `isAcceptableEd25519` accepts: a canonical encoding of a point that is not of small order.
/// - RSA (`kty` 3), `alg` -257, `n` (-1) of 256 to 512 bytes (2048 to 4096 bits) without a leading zero
///   byte, `e` (-2) of 1 to 8 bytes without a leading zero byte (RFC 8230 §4).
public enum COSEKey: Sendable, Hashable {
    /// An ES256 key: the P-256 point's affine coordinates, 32 bytes each, big-endian.
    case es256(x: [UInt8], y: [UInt8])
    /// An EdDSA key on Ed25519: the 32-byte public key (RFC 8032 §5.1.5).
    case ed25519(x: [UInt8])
    /// An RS256 key: the modulus and public exponent, big-endian, without leading zero bytes.
    case rs256(n: [UInt8], e: [UInt8])

    /// The algorithm this key verifies with.
    public var algorithm: COSEAlgorithm {
        switch self {
        case .es256: .es256
        case .ed25519: .eddsa
        case .rs256: .rs256
        }
    }

    /// Reads a decoded `COSE_Key` map.
    /// - Throws: `COSEKeyError` naming the first rule broken.
    public init(cbor: CBORValue) throws(COSEKeyError) {
        guard case .map(let entries) = cbor else { throw .notAMap }
        var parameters: [Int64: CBORValue] = [:]
        for entry in entries {
            guard let label = entry.key.integer else { throw .unexpectedParameter }
            parameters[label] = entry.value
        }
        guard let kty = parameters[1] else { throw .missingParameter(label: 1) }
        guard let alg = parameters[3] else { throw .missingParameter(label: 3) }
        guard let algorithmNumber = alg.integer, let algorithm = COSEAlgorithm(rawValue: algorithmNumber) else {
            throw .unsupportedAlgorithm
        }
        let expected: (kty: Int64, crv: Int64?, labels: Set<Int64>)
        switch algorithm {
        case .es256: expected = (2, 1, [1, 3, -1, -2, -3])
        case .eddsa: expected = (1, 6, [1, 3, -1, -2])
        case .rs256: expected = (3, nil, [1, 3, -1, -2])
        }
        guard kty.integer == expected.kty else { throw .keyTypeMismatch }
        guard Set(parameters.keys) == expected.labels else {
            let missing = expected.labels.subtracting(parameters.keys).sorted(by: >)
            if let label = missing.first { throw .missingParameter(label: label) }
            throw .unexpectedParameter
        }
        if let curve = expected.crv, parameters[-1]?.integer != curve { throw .unsupportedCurve }

        func bytes(_ label: Int64, _ lengths: ClosedRange<Int>, minimal: Bool = false) throws(COSEKeyError) -> [UInt8] {
            guard case .bytes(let value) = parameters[label] else { throw .wrongType(label: label) }
            guard lengths.contains(value.count), !minimal || value.first != 0 else { throw .wrongLength(label: label) }
            return value
        }
        switch algorithm {
        case .es256: self = .es256(x: try bytes(-2, 32...32), y: try bytes(-3, 32...32))
        case .eddsa:
            let x = try bytes(-2, 32...32)
            guard Self.isAcceptableEd25519(x) else { throw .weakKey }
            self = .ed25519(x: x)
        case .rs256: self = .rs256(n: try bytes(-1, 256...512, minimal: true), e: try bytes(-2, 1...8, minimal: true))
        }
    }

    /// Whether `x` is an Ed25519 public key a passkey may have (docs/passkeys.md, "COSE keys"): 32 bytes,
    /// its `y` (the low 255 bits, little-endian) below p = 2^255 − 19 (RFC 8032 §5.1.3 decodes only canonical
    /// encodings), and not one of the encodings of a point of small order, the sign bit ignored, as libsodium's
    /// `ge25519_has_small_order` compares them. A small-order key lets a signature with R the identity and
    /// S = 0 verify for a share of messages, so anyone could sign as it; no honest authenticator makes one.
    public static func isAcceptableEd25519(_ x: [UInt8]) -> Bool {
        guard x.count == 32 else { return false }
        var y = x
        y[31] &= 0x7f
        // y ≥ p: p − 1 is ec ff … ff 7f, so y is at least p when bytes 1…30 are ff, byte 31 is 7f and byte 0 is ed or more.
        if y[31] == 0x7f, y[1...30].allSatisfy({ $0 == 0xff }), y[0] >= 0xed { return false }
        return !smallOrderEd25519.contains(y)
    }

    /// The encodings, sign bit cleared, whose points have order 1, 2, 4 or 8: y = 0 (order 4), y = 1 (the
    /// identity), the two order-8 points, y = p − 1 (order 2), and the non-canonical y = p and p + 1 (aliases of
    /// 0 and 1, refused above already).
    private static let smallOrderEd25519: Set<[UInt8]> = {
        func bytes(_ hex: String) -> [UInt8] {
            var out: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
                index = next
            }
            return out
        }
        let high = String(repeating: "ff", count: 30) + "7f"
        return [
            Array(repeating: 0, count: 32), [1] + Array(repeating: 0, count: 31),
            bytes("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
            bytes("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), bytes("ec" + high), bytes("ed" + high),
            bytes("ee" + high),
        ]
    }()

    /// The key as a `COSE_Key` map with integer labels in the order above (for fixtures and storage).
    public var cbor: CBORValue {
        switch self {
        case .es256(let x, let y):
            .map([
                .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)),
            ])
        case .ed25519(let x):
            .map([.init(.int(1), .int(1)), .init(.int(3), .int(-8)), .init(.int(-1), .int(6)), .init(.int(-2), .bytes(x))])
        case .rs256(let n, let e):
            .map([.init(.int(1), .int(3)), .init(.int(3), .int(-257)), .init(.int(-1), .bytes(n)), .init(.int(-2), .bytes(e))])
        }
    }
}

/// Why a `COSE_Key` was refused. Carries labels, never key bytes.
public enum COSEKeyError: Error, Equatable, Sendable {
    /// The item is not a CBOR map.
    case notAMap
    /// A required parameter is absent (1 `kty`, 3 `alg`, -1, -2 or -3).
    case missingParameter(label: Int64)
    /// A label that is not an integer, or one the key type does not have (WebAuthn Level 3 §6.5.1).
    case unexpectedParameter
    /// `alg` is not -7, -8 or -257.
    case unsupportedAlgorithm
    /// `kty` does not go with `alg` (EC2 with ES256, OKP with EdDSA, RSA with RS256).
    case keyTypeMismatch
    /// `crv` is not P-256 (1) for ES256 or Ed25519 (6) for EdDSA.
    case unsupportedCurve
    /// A key component is not a byte string.
    case wrongType(label: Int64)
    /// A key component has the wrong length, or a leading zero byte where the encoding is minimal.
    case wrongLength(label: Int64)
    /// An Ed25519 `x` that is not canonical or is a point of small order (`COSEKey.isAcceptableEd25519`).
    case weakKey
}
