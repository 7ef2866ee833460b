internal import COpenSSL

extension Crypto {
    /// HMAC-SHA-1 (RFC 2104) of `message` under `key`: only for TOTP (RFC 6238 §1.2 with the RFC 4226
    /// HOTP algorithm), where authenticator apps expect SHA-1. HMAC-SHA-1 is still a sound MAC; nothing
    /// else in the server uses SHA-1.
    /// - Returns: 20 bytes.
    public static func hmacSHA1<K: Collection, M: Collection>(key: K, message: M) -> [UInt8]
    where K.Element == UInt8, M.Element == UInt8 {
        let keyBytes = Array(key)
        let messageBytes = Array(message)
        var mac = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let result = keyBytes.withUnsafeBytes { k in
            messageBytes.withUnsafeBytes { m in
                mac.withUnsafeMutableBufferPointer { out in
                    HMAC(
                        EVP_sha1(), k.baseAddress, Int32(k.count), m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        m.count, out.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == 20, "HMAC(SHA-1) failed")
        return mac
    }
}
