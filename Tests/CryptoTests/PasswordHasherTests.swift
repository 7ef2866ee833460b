import PasswordHashing
import Testing

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher()

    @Test func hashThenVerifyRoundTrips() throws {
        let encoded = try hasher.hash("correct horse battery staple")
        #expect(try hasher.verify("correct horse battery staple", against: encoded))
    }

    @Test func wrongPasswordDoesNotVerify() throws {
        let encoded = try hasher.hash("correct horse battery staple")
        #expect(try !hasher.verify("correct horse battery stapl", against: encoded))
        #expect(try !hasher.verify("", against: encoded))
    }

    @Test func encodesAsArgon2idPHCStringWithDefaultParameters() throws {
        let encoded = try hasher.hash("pässwörd 😀")
        #expect(encoded.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        let fields = encoded.split(separator: "$")
        #expect(fields.count == 5)
        #expect(fields[3].count == 22)  // 16-byte salt, base64 without padding
        #expect(fields[4].count == 43)  // 32-byte tag
        #expect(try hasher.verify("pässwörd 😀", against: encoded))
    }

    @Test func saltsEveryHash() throws {
        #expect(try hasher.hash("same") != hasher.hash("same"))
    }

    @Test(arguments: [
        "", "not a hash", "$argon2id$v=19$m=19456,t=2,p=1$", "$argon2id$v=19$m=19456,t=2,p=1$!!!!$????",
        "$argon2i$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func malformedEncodedHashThrows(_ encoded: String) {
        #expect(throws: PasswordHashingError.self) { try hasher.verify("password", against: encoded) }
    }

    @Test func errorNamesTheArgon2FailureButNotThePassword() {
        do {
            _ = try hasher.verify("hunter2", against: "garbage")
            Issue.record("expected a throw")
        } catch {
            let text = String(describing: error)
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("garbage"))
            guard case .argon2(let code, let message) = error as? PasswordHashingError else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(code == -32)
            #expect(message == "Decoding failed")
        }
    }

    @Test func overLongPasswordThrows() throws {
        let long = String(repeating: "a", count: PasswordHasher.maxPasswordBytes + 1)
        #expect(throws: PasswordHashingError.passwordTooLong(maxBytes: 1024)) { try hasher.hash(long) }
        let encoded = try hasher.hash("short")
        #expect(throws: PasswordHashingError.passwordTooLong(maxBytes: 1024)) { try hasher.verify(long, against: encoded) }
        #expect(throws: PasswordHashingError.passwordTooLong(maxBytes: 1024)) { try hasher.verifyDummy(long) }
        // The limit counts UTF-8 bytes, not characters: 512 two-byte characters are at the limit.
        #expect(try hasher.verify(String(repeating: "é", count: 512), against: hasher.hash(String(repeating: "é", count: 512))))
        #expect(throws: PasswordHashingError.self) { try hasher.hash(String(repeating: "é", count: 513)) }
    }

    @Test func dummyVerificationRunsArgon2AndNeverMatches() throws {
        #expect(hasher.dummyHash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(try !hasher.verifyDummy("anything"))
        #expect(try !hasher.verifyDummy(""))
    }

    @Test func dummyHashFollowsConfiguredParameters() throws {
        let cheap = PasswordHasher(memoryKiB: 64, iterations: 1, parallelism: 1)
        #expect(cheap.dummyHash.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        #expect(try !cheap.verifyDummy("anything"))
        let encoded = try cheap.hash("x")
        #expect(encoded.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"))
        // Verification reads the parameters from the stored string, whatever the verifier's own.
        #expect(try hasher.verify("x", against: encoded))
    }

    @Test func invalidParametersThrowFromHash() {
        let broken = PasswordHasher(memoryKiB: 1, iterations: 0, parallelism: 1)
        #expect(throws: PasswordHashingError.self) { try broken.hash("x") }
    }
}
