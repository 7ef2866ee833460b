internal import COpenSSL

extension Crypto {
    /// Why an AES-256-GCM operation was refused. Carries no key, nonce or plaintext material.
    public enum SealError: Error, Equatable, Sendable {
        /// The key is not 32 bytes.
        case badKey
        /// The sealed box is shorter than a nonce and a tag, or its tag does not verify (tampered, wrong
        /// key, or wrong associated data).
        case authenticationFailed
        /// OpenSSL reported a failure (with `ERR_get_error()`).
        case openSSL(UInt)
    }

    /// Bytes of the random nonce AES-256-GCM uses here (NIST SP 800-38D §8.2.2: 96-bit IVs).
    public static let gcmNonceLength = 12
    /// Bytes of the GCM authentication tag (the full 128 bits).
    public static let gcmTagLength = 16

    /// Encrypts and authenticates `plaintext` with AES-256-GCM (NIST SP 800-38D) through OpenSSL EVP, under a
    /// fresh random 96-bit nonce.
    /// - Parameters:
    ///   - key: 32 bytes (`ZEVAUTH_ENCRYPTION_KEY`).
    ///   - plaintext: any length.
    ///   - associatedData: authenticated but not encrypted (binds the box to, say, a user id).
    /// - Returns: `nonce (12) ‖ ciphertext (plaintext.count) ‖ tag (16)`.
    /// - Throws: `SealError.badKey`, `SealError.openSSL`, `Failure` from the CSPRNG.
    public static func aesGCMSeal(key: [UInt8], plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == 32 else { throw SealError.badKey }
        let nonce = try randomBytes(gcmNonceLength)
        guard let context = EVP_CIPHER_CTX_new() else { throw SealError.openSSL(UInt(ERR_get_error())) }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: gcmTagLength)
        var written: Int32 = 0
        var total = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(gcmNonceLength), nil) == 1,
            EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
        else { throw SealError.openSSL(UInt(ERR_get_error())) }
        if !associatedData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else {
                throw SealError.openSSL(UInt(ERR_get_error()))
            }
        }
        let ok = ciphertext.withUnsafeMutableBufferPointer { out -> Bool in
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(context, out.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1 else { return false }
                total = Int(written)
            }
            guard EVP_EncryptFinal_ex(context, out.baseAddress! + total, &written) == 1 else { return false }
            total += Int(written)
            return true
        }
        guard ok, EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(gcmTagLength), &tag) == 1 else {
            throw SealError.openSSL(UInt(ERR_get_error()))
        }
        return nonce + ciphertext[0..<total] + tag
    }

    /// Verifies and decrypts a box made by `aesGCMSeal(key:plaintext:associatedData:)`.
    /// - Parameters:
    ///   - key: the same 32 bytes.
    ///   - sealed: `nonce ‖ ciphertext ‖ tag`.
    ///   - associatedData: must equal what was sealed with.
    /// - Returns: the plaintext.
    /// - Throws: `SealError.authenticationFailed` when anything was altered or the key or associated data
    ///   differ; `SealError.badKey`; `SealError.openSSL`.
    public static func aesGCMOpen(key: [UInt8], sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard key.count == 32 else { throw SealError.badKey }
        guard sealed.count >= gcmNonceLength + gcmTagLength else { throw SealError.authenticationFailed }
        let nonce = Array(sealed[0..<gcmNonceLength])
        let ciphertext = Array(sealed[gcmNonceLength..<(sealed.count - gcmTagLength)])
        var tag = Array(sealed[(sealed.count - gcmTagLength)...])
        guard let context = EVP_CIPHER_CTX_new() else { throw SealError.openSSL(UInt(ERR_get_error())) }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var total = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(gcmNonceLength), nil) == 1,
            EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
        else { throw SealError.openSSL(UInt(ERR_get_error())) }
        if !associatedData.isEmpty {
            guard EVP_DecryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else {
                throw SealError.openSSL(UInt(ERR_get_error()))
            }
        }
        let decrypted = plaintext.withUnsafeMutableBufferPointer { out -> Bool in
            if !ciphertext.isEmpty {
                guard EVP_DecryptUpdate(context, out.baseAddress, &written, ciphertext, Int32(ciphertext.count)) == 1 else { return false }
                total = Int(written)
            }
            return true
        }
        guard decrypted, EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(gcmTagLength), &tag) == 1 else {
            throw SealError.openSSL(UInt(ERR_get_error()))
        }
        // The tag is checked by the final call: anything but 1 means the box was altered.
        let verified = plaintext.withUnsafeMutableBufferPointer { out in
            EVP_DecryptFinal_ex(context, out.baseAddress! + total, &written)
        }
        guard verified == 1 else {
            ERR_clear_error()
            throw SealError.authenticationFailed
        }
        total += Int(written)
        return Array(plaintext[0..<total])
    }
}
