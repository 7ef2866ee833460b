import CArgon2
import Foundation
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

    /// Strings written by libargon2's own encoder (`argon2id_hash_encoded`) verify, and a changed tag does not.
    @Test(arguments: [
        ("correct horse battery staple", "$argon2id$v=19$m=64,t=2,p=1$emV2YXV0aC10ZXN0LXNhbA$cr1FAAQ+UyhF+6soQT36sMEuXe1uL6rnm580+UrAlDo"),
        ("pässwörd", "$argon2id$v=19$m=19456,t=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$75WSs9HLaFIHSGKgyrdrVIdbKPe5AxwwtsGzvUN9hr0"),
        ("x", "$argon2id$v=19$m=32,t=3,p=1$c2FsdHNhbHQ$Zuu7Fz0gEMSrKSRrYLBJoA"),
    ])
    func verifiesHashesLibargon2Wrote(password: String, encoded: String) throws {
        #expect(try hasher.verify(password, against: encoded))
        #expect(try !hasher.verify(password + "!", against: encoded))
        let changed = String(encoded.dropLast()) + (encoded.hasSuffix("A") ? "Q" : "A")
        #expect(try !hasher.verify(password, against: changed))
    }

    /// What `hash(_:)` writes, libargon2's own decoder and verifier accept.
    @Test func libargon2VerifiesWhatHashWrites() throws {
        let cheap = PasswordHasher(memoryKiB: 64, iterations: 1)
        for password in ["", "correct horse battery staple", "pässwörd 😀"] {
            let encoded = try cheap.hash(password)
            let bytes = Array(password.utf8)
            #expect(argon2id_verify(encoded, bytes, bytes.count) == ARGON2_OK.rawValue)
        }
    }

    /// Each hash's 19 MiB goes back to the kernel: after many hashes on several threads, RSS has not grown
    /// by the 19 MiB per thread that glibc's heap kept before (docs/decisions.md, "Argon2 memory is mapped").
    @Test func hashingReturnsItsMemory() throws {
        func residentMiB() -> Int {
            let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
        }
        let hasher = PasswordHasher()
        _ = try hasher.hash("warm up")
        let before = residentMiB()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<3 { _ = try? hasher.hash("correct horse battery staple") }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(residentMiB() - before < 40)
    }
}
