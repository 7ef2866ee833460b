internal import COpenSSL

extension Crypto {
    /// HMAC-SHA-1 (RFC 2104) of `message` under `key`: only for TOTP (RFC 6238 §1.2 with the RFC 4226
    /// HOTP algorithm), where authenticator apps expect SHA-1. HMAC-SHA-1 is still a sound MAC; nothing
    /// else in the server uses SHA-1.
    /// - Returns: 20 bytes.
    public static func hmacSHA1<K: Collection, M: Collection>(key: K, message: M) -> [UInt8]
    where K.Element == UInt8, M.Element == UInt8 {
        hmac(EVP_sha1(), outputBytes: 20, name: "SHA-1", key: key, message: message)
    }
}
