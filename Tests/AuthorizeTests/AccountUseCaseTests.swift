import Authorize
import Foundation
import Synchronization
import Testing

// The account use cases' decisions (docs/protocol.md#accounts, #totp, #session-ends), with in-memory stand-ins
// for their narrow store protocols and for Argon2id, TOTP, AES-GCM and the CSPRNG: no database, no C.

/// Deterministic secrets: tokens count up, a digest is visible (`d(text)`).
final class AccountTestSecrets: Secrets {
    private let minted = Mutex(0)
    func mintToken(prefix: String) throws -> String { prefix + "token\(minted.withLock { $0 += 1; return $0 })" }
    func digest(_ text: String) -> String { "d(\(text))" }
    func sha256(_ bytes: [UInt8]) -> [UInt8] { fakeSHA256(bytes) }
    func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
    func newID() -> String { "id\(minted.withLock { $0 += 1; return $0 })" }
}

/// "Argon2id": `h:<password>`; counts dummy verifications.
final class PlainPasswords: PasswordHashingPort {
    let dummies = Mutex(0)
    let hashes = Mutex(0)
    func hash(_ password: String) throws -> String {
        hashes.withLock { $0 += 1 }
        return "h:" + password
    }
    func verify(_ password: String, against encoded: String) -> Bool { encoded == "h:" + password }
    func verifyDummy(_ password: String) { dummies.withLock { $0 += 1 } }
}

/// TOTP whose right code at any time is `123456` (step 7), and random bytes that count up.
struct FixedCodes: OneTimePasswords {
    func randomBytes(_ count: Int) throws -> [UInt8] { (0..<count).map { UInt8($0 * 7 % 256) } }
    func matchingStep(secret: [UInt8], code: String, atUnixSeconds unixSeconds: Double) -> Int64? { code == "123456" ? 7 : nil }
}

/// "AES-GCM": the plaintext followed by the associated data; opening checks it.
struct TaggingSealer: SecretSealing {
    struct Mismatch: Error {}
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] { plaintext + associatedData }
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= associatedData.count, Array(sealed.suffix(associatedData.count)) == associatedData else { throw Mismatch() }
        return Array(sealed.dropLast(associatedData.count))
    }
}

func address(_ text: String) -> EmailAddress {
    guard case .success(let parsed) = EmailAddress.parse(text, domainToASCII: { $0.lowercased() }) else { fatalError(text) }
    return parsed
}

let now = Date(timeIntervalSince1970: 1_800_000_000)
let pat = UserRecord(id: "u1", email: "Pat@Example.com", name: "Pat", imageURL: nil, passwordHash: "h:correct horse", closed: false)

@Suite struct NewPasswordRuleTests {
    @Test func theRuleIsTenCharactersToOneThousandTwentyFourBytes() {
        #expect(NewPassword.parse("123456789") == .failure(.tooShort))
        #expect((try? NewPassword.parse("1234567809").get())?.text == "1234567809")
        #expect(NewPassword.parse(String(repeating: "é", count: 513)) == .failure(.tooLong))  // 1026 bytes
        #expect(AccountRules.passwordProblem("short") == "must be at least 10 characters")
        #expect(AccountRules.passwordProblem(String(repeating: "a", count: 1025)) == "must be at most 1024 bytes")
        #expect(AccountRules.passwordProblem("long enough") == nil)
    }

    /// The 1,000 most common passwords (data/common-passwords/) are refused, whatever their case.
    @Test func aCommonPasswordIsRefusedWhateverItsCase() {
        #expect(NewPassword.parse("1234567890") == .failure(.common))
        #expect(NewPassword.parse("QWERTYUIOP") == .failure(.common))
        #expect(CommonPasswords.contains("password"))
        #expect(!CommonPasswords.contains("correct horse battery staple"))
    }

    /// The compiled list is the shipped data file, line for line (scripts/common-passwords.py).
    @Test func theCompiledListIsTheShippedFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(
            contentsOf: root.appendingPathComponent("data/common-passwords/10-million-password-list-top-1000.txt"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count >= 1000)
        #expect(lines.allSatisfy { CommonPasswords.contains($0) })
    }
}

/// Emailed codes (docs/protocol.md, "Email codes"): uniform digits, typed input, the attempt decision.
@Suite struct EmailCodeRuleTests {
    @Test func codesAreSixDigitsAndWordsPastTheUniformRangeAreRejected() {
        #expect(EmailCodeRules.code(fromRandom: [0, 0, 0, 42]) == "000042")
        #expect(EmailCodeRules.code(fromRandom: [0xFF, 0xFF, 0xFF, 0xFF]) == nil)
        #expect(EmailCodeRules.code(fromRandom: [0xFF, 0xFF, 0xFF, 0xFF, 0, 0x0F, 0x42, 0x3F]) == "999999")
    }

    @Test func typedCodesIgnoreSpacesAndDashesOnly() {
        #expect(EmailCodeRules.typed(" 123 456 ") == "123456")
        #expect(EmailCodeRules.typed("123-456") == "123456")
        #expect(EmailCodeRules.typed("12345") == nil)
        #expect(EmailCodeRules.typed("١٢٣٤٥٦") == nil)
    }

    @Test func theAttemptDecision() {
        let flow = EmailCodeFlowRecord(
            id: "f", userID: "u", purpose: .signUp, browserBindingHash: "b", authorizationRequestID: nil, attempts: 0,
            expiresAt: now, endReason: nil, passwordHash: nil, newEmail: nil, newEmailKey: nil, secondFactorAt: nil, completed: false)
        func facts(counted: Bool = true, matched: Bool = false, attempts: Int = 1, expired: Bool = false, locked: Bool = false)
            -> CodeAttemptFacts
        {
            CodeAttemptFacts(
                found: true, locked: locked, counted: counted, matched: matched, attempts: attempts, endReason: nil, expired: expired,
                lockedNow: false)
        }
        #expect(CodeAttemptOutcome.decide(facts(attempts: 2), flow: flow) == .wrong(triesLeft: 3))
        #expect(CodeAttemptOutcome.decide(facts(attempts: 5), flow: flow) == .exhausted)
        #expect(CodeAttemptOutcome.decide(facts(matched: true), flow: flow) == .accepted(flow))
        #expect(CodeAttemptOutcome.decide(facts(counted: false, expired: true), flow: flow) == .expired)
        #expect(CodeAttemptOutcome.decide(facts(locked: true), flow: flow) == .locked)
    }

    @Test func retriesBackOffAndStopAfterTheHour() {
        let queued = now
        let giveUp = queued.addingTimeInterval(EmailRetry.retrySeconds)
        #expect(EmailRetry.nextAttempt(afterAttempts: 1, now: queued, giveUpAt: giveUp) == queued.addingTimeInterval(15))
        #expect(EmailRetry.nextAttempt(afterAttempts: 3, now: queued, giveUpAt: giveUp) == queued.addingTimeInterval(60))
        #expect(EmailRetry.nextAttempt(afterAttempts: 20, now: queued, giveUpAt: giveUp) == queued.addingTimeInterval(600))
        #expect(EmailRetry.nextAttempt(afterAttempts: 2, now: giveUp, giveUpAt: giveUp) == nil)
    }

    @Test func aCodeEmailNamesItsPurposeAndCarriesNoLink() throws {
        let bytes = try #require(
            EmailMessages.render(
                kind: EmailMessages.codeKind(.passwordReset), to: "pat@example.com", name: "Pat", code: "123456",
                fromHeader: "ZevID <no-reply@example.com>", fromAddress: "no-reply@example.com", messageID: "m1", date: now))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("Subject: Your ZevID code: 123456\r\n"))
        #expect(text.contains("reset your ZevID password"))
        #expect(!text.contains("http"))
        let notice = try #require(EmailMessages.text(kind: SecurityNotice.newBrowserSignIn.rawValue, name: "Pat", code: nil))
        #expect(!notice.body.contains { $0.isNumber })
    }
}

@Suite struct AccountCodeParsingTests {
    @Test func sixDigitsAreATOTPCodeAndSpacesDoNotCount() {
        #expect(TOTPCode("123 456")?.digits == "123456")
        #expect(TOTPCode("12345") == nil)
        #expect(TOTPCode("١٢٣٤٥٦") == nil)  // Arabic-Indic digits are not ASCII digits
        #expect(SecondFactorCode("123456") == .totp(TOTPCode("123456")!))
    }

    @Test func aRecoveryCodeIsCanonicalWhateverItsCaseHyphensOrPrefix() throws {
        let code = try #require(RecoveryCode("zrc_abcde-fghij"))
        #expect(code.canonical == "zrc_ABCDEFGHIJ")
        #expect(code.display == "zrc_ABCDE-FGHIJ")
        #expect(RecoveryCode("ABCDE FGHIJ") == code)
        #expect(RecoveryCode("zrc_ABCDE-FGHI1") == nil)  // 1 is not Base32
        #expect(SecondFactorCode("abcdefghij") == .recovery(code))
        #expect(SecondFactorCode("not a code") == nil)
    }

    @Test func tenNewRecoveryCodesEachParseBack() throws {
        let codes = try RecoveryCode.generate(with: FixedCodes())
        #expect(codes.count == 10)
        for code in codes { #expect(RecoveryCode(code.display) == code) }
    }

    @Test func theEmailRuleIsPureWithIDNAInjected() {
        #expect(address(" Ｐat@Example.COM ").key == "pat@example.com")
        #expect(EmailAddress.parse("a@b", domainToASCII: { $0 }) == .failure(.domain))
        #expect(EmailAddress.parse("a\u{200B}b@example.com", domainToASCII: { $0 }) == .failure(.localPart))
        #expect(EmailAddress.parse("no-at-sign", domainToASCII: { $0 }) == .failure(.shape))
    }

    /// Found by the `email` fuzz target (docs/fuzzing.md): 250 bytes as typed, but over 254 once the
    /// domain is in its A-label form, so the key itself was refused when normalised again.
    @Test func theLengthLimitHoldsForTheNormalisedAddress() {
        let typed = "A" + String(repeating: "\u{FFFD}", count: 75) + "B@a\u{FC}eA.eer.ehr.eA.ea\u{FC}ca"
        #expect(typed.utf8.count <= 254)
        let longer: (String) -> String? = { domain in
            domain.lowercased().split(separator: ".").map { label in
                label.unicodeScalars.allSatisfy(\.isASCII)
                    ? String(label) : "xn--" + label.unicodeScalars.map { String($0.value, radix: 36) }.joined()
            }.joined(separator: ".")
        }
        #expect(EmailAddress.parse(typed, domainToASCII: longer) == .failure(.shape))
        // Within the limit, normalising a key gives the key.
        guard case .success(let parsed) = EmailAddress.parse(" Ｐat@B\u{FC}cher.example ", domainToASCII: longer) else {
            Issue.record("refused")
            return
        }
        #expect(EmailAddress.parse(parsed.key, domainToASCII: longer).map(\.key) == .success(parsed.key))
    }
}

@Suite struct AccountSignInTests {
    struct Users: AccountSignInStore {
        let byKey: [String: UserRecord]
        func user(emailKey: String) throws -> UserRecord? { byKey[emailKey] }
    }

    let store = Users(byKey: [
        "pat@example.com": pat,
        "closed@example.com": UserRecord(
            id: "u2", email: "closed@example.com", name: "C", imageURL: nil, passwordHash: "h:correct horse", closed: true),
    ])

    @Test func theRightPasswordVerifiesTheAccountOfTheKey() throws {
        let signIn = AccountSignIn(store: store, passwords: PlainPasswords())
        #expect(try signIn(email: address("PAT@example.com"), password: "correct horse") == .verified(pat))
        #expect(try signIn(email: address("pat@example.com"), password: "wrong horse") == .wrong)
    }

    @Test func anUnknownOrClosedAccountCostsOneDummyVerificationAndAnswersTheSame() throws {
        let passwords = PlainPasswords()
        let signIn = AccountSignIn(store: store, passwords: passwords)
        #expect(try signIn(email: address("nobody@example.com"), password: "correct horse") == .wrong)
        #expect(try signIn(email: address("closed@example.com"), password: "correct horse") == .wrong)
        #expect(try signIn(email: address("pat@example.com"), password: String(repeating: "a", count: 1025)) == .wrong)
        #expect(passwords.dummies.withLock { $0 } == 3)
    }

    @Test func aSignedInPersonConfirmsOnlyTheirOwnPassword() throws {
        let signIn = AccountSignIn(store: store, passwords: PlainPasswords())
        #expect(try signIn(email: address("pat@example.com"), password: "correct horse", expectedAccount: "u1") == .verified(pat))
        #expect(try signIn(email: address("pat@example.com"), password: "correct horse", expectedAccount: "u9") == .wrong)
    }
}

@Suite struct CreateUserTests {
    final class Users: CreateUserStore {
        let taken: Set<String>
        let created = Mutex<[String]>([])
        init(taken: Set<String>) { self.taken = taken }
        func createUser(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date, audit: AuditEntry?) throws -> UserRecord {
            if taken.contains(email.key) { throw StoreError.duplicate(constraint: "users_email_unique") }
            created.withLock { $0.append(email.key) }
            return UserRecord(id: "new", email: email.typed, name: name.text, imageURL: nil, passwordHash: passwordHash, closed: false)
        }
    }

    let password = try! NewPassword.parse("correct horse").get()
    let name = DisplayName("  Pat  ")!

    @Test func theOperatorIsToldAnAddressIsTaken() throws {
        let create = CreateUser(store: Users(taken: ["pat@example.com"]), passwords: PlainPasswords())
        #expect(try create(email: address("Pat@example.com"), name: name, password: password, now: now) == .addressTaken)
        let created = try create(email: address("Ada@example.com"), name: name, password: password, now: now)
        #expect(
            created
                == .created(
                    UserRecord(
                        id: "new", email: "Ada@example.com", name: "Pat", imageURL: nil, passwordHash: "h:correct horse", closed: false)))
    }

    @Test func signUpDoesTheSameWorkAndAnswersTheSameForATakenAddress() throws {
        let passwords = PlainPasswords()
        let users = Users(taken: ["pat@example.com"])
        let signUp = SignUp(store: users, passwords: passwords)
        try signUp(email: address("pat@example.com"), name: name, password: password, now: now)
        try signUp(email: address("ada@example.com"), name: name, password: password, now: now)
        #expect(passwords.hashes.withLock { $0 } == 2)
        #expect(users.created.withLock { $0 } == ["ada@example.com"])
    }
}

@Suite struct BrowserSignInTests {
    final class Store: BrowserSignInStore {
        let factor: TOTPFactorRecord?
        let challenges = Mutex<[(String, String, String?)]>([])
        let sessions = Mutex<[String]>([])
        init(factor: TOTPFactorRecord?) { self.factor = factor }
        func totpFactor(userID: String) throws -> TOTPFactorRecord? { factor }
        func createMFAChallenge(
            userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
        ) throws -> String {
            #expect(lifetimeSeconds == 600)
            challenges.withLock { $0.append((userID, browserBindingHash, authorizationRequestID)) }
            return "challenge-1"
        }
        func createBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String {
            sessions.withLock { $0.append(tokenHash) }
            return "bs-1"
        }
    }

    @Test func aConfirmedFactorAsksForTheSecondFactorBeforeAnyBrowserSession() throws {
        let store = Store(factor: TOTPFactorRecord(secretSealed: "x", confirmed: true, lastUsedStep: nil))
        let outcome = try BrowserSignIn(store: store, secrets: AccountTestSecrets())(
            user: pat, binding: "bind", authorizationRequestID: "req", now: now)
        #expect(outcome == .secondFactor(challengeID: "challenge-1"))
        #expect(store.challenges.withLock { $0.map(\.1) } == ["d(bind)"])
        #expect(store.challenges.withLock { $0.map(\.2) } == ["req"])
        #expect(store.sessions.withLock { $0 }.isEmpty)
    }

    @Test func anUnconfirmedFactorDoesNotCountAndTheCookieIsStoredAsItsDigest() throws {
        let store = Store(factor: TOTPFactorRecord(secretSealed: "x", confirmed: false, lastUsedStep: nil))
        let outcome = try BrowserSignIn(store: store, secrets: AccountTestSecrets())(
            user: pat, binding: "bind", authorizationRequestID: nil, now: now)
        #expect(outcome == .signedIn(token: "zbs_token1", browserSessionID: "bs-1"))
        #expect(store.sessions.withLock { $0 } == ["d(zbs_token1)"])
    }
}

@Suite struct CurrentAccountTests {
    struct Store: CurrentAccountStore {
        let user: UserRecord
        func browserSession(tokenHash: String) throws -> BrowserSessionRecord? {
            tokenHash == "d(zbs_live)" ? BrowserSessionRecord(id: "bs", userID: user.id, authTime: now, ended: false) : nil
        }
        func user(id: String) throws -> UserRecord? { id == user.id ? user : nil }
    }

    @Test func onlyALiveSessionOfAnOpenAccountIsSignedIn() throws {
        let secrets = AccountTestSecrets()
        #expect(try CurrentAccount(store: Store(user: pat), secrets: secrets)(token: "zbs_live")?.user == pat)
        #expect(try CurrentAccount(store: Store(user: pat), secrets: secrets)(token: "zbs_other") == nil)
        #expect(try CurrentAccount(store: Store(user: pat), secrets: secrets)(token: nil) == nil)
        let closed = UserRecord(id: "u1", email: "p@e.x", name: "P", imageURL: nil, passwordHash: "", closed: true)
        #expect(try CurrentAccount(store: Store(user: closed), secrets: secrets)(token: "zbs_live") == nil)
    }
}

@Suite struct SecondFactorTests {
    final class Store: SecondFactorStore, TOTPEnrolmentStore {
        let factor: Mutex<TOTPFactorRecord?>
        let usedSteps = Mutex<[Int64]>([])
        let recoveryHashes: Mutex<Set<String>>
        init(factor: TOTPFactorRecord?, recoveryHashes: Set<String> = []) {
            self.factor = Mutex(factor)
            self.recoveryHashes = Mutex(recoveryHashes)
        }
        func totpFactor(userID: String) throws -> TOTPFactorRecord? { factor.withLock { $0 } }
        func useTOTPStep(userID: String, step: Int64) throws -> Bool {
            usedSteps.withLock { used in
                guard !used.contains(where: { $0 >= step }) else { return false }
                used.append(step)
                return true
            }
        }
        func useRecoveryCode(userID: String, codeHash: String, now: Date) throws -> Bool {
            recoveryHashes.withLock { $0.remove(codeHash) != nil }
        }
        func beginTOTPEnrolment(userID: String, secretSealed: String, now: Date) throws -> Bool {
            factor.withLock { current in
                if current?.confirmed == true { return false }
                current = TOTPFactorRecord(secretSealed: secretSealed, confirmed: false, lastUsedStep: nil)
                return true
            }
        }
        func confirmTOTP(userID: String, step: Int64, recoveryCodeHashes: [String], now: Date) throws -> Bool {
            guard factor.withLock({ $0?.confirmed == false }) else { return false }
            factor.withLock { $0 = TOTPFactorRecord(secretSealed: $0!.secretSealed, confirmed: true, lastUsedStep: step) }
            recoveryHashes.withLock { $0 = Set(recoveryCodeHashes) }
            return true
        }
    }

    static func sealed(for userID: String) -> String {
        try! TOTPSecrets.seal([1, 2, 3], userID: userID, with: TaggingSealer())
    }

    @Test func aTOTPCodeCountsOnceAndAUsedStepNeverAgain() throws {
        let store = Store(factor: TOTPFactorRecord(secretSealed: Self.sealed(for: "u1"), confirmed: true, lastUsedStep: nil))
        let verify = VerifySecondFactor(store: store, codes: FixedCodes(), sealer: TaggingSealer(), secrets: AccountTestSecrets())
        #expect(try verify(userID: "u1", code: SecondFactorCode("123456"), now: now) == .accepted)
        #expect(try verify(userID: "u1", code: SecondFactorCode("123456"), now: now) == .rejected)
        #expect(try verify(userID: "u1", code: SecondFactorCode("654321"), now: now) == .rejected)
        #expect(try verify(userID: "u1", code: nil, now: now) == .rejected)
    }

    @Test func withoutTheKeyOrWithAnotherAccountsBoxTOTPIsUnavailableButRecoveryCodesWork() throws {
        let code = RecoveryCode("ABCDEFGHIJ")!
        let store = Store(
            factor: TOTPFactorRecord(secretSealed: Self.sealed(for: "someone-else"), confirmed: true, lastUsedStep: nil),
            recoveryHashes: ["d(\(code.canonical))"])
        let keyless = VerifySecondFactor(store: store, codes: FixedCodes(), sealer: nil, secrets: AccountTestSecrets())
        #expect(try keyless(userID: "u1", code: SecondFactorCode("123456"), now: now) == .unavailable)
        let keyed = VerifySecondFactor(store: store, codes: FixedCodes(), sealer: TaggingSealer(), secrets: AccountTestSecrets())
        #expect(try keyed(userID: "u1", code: SecondFactorCode("123456"), now: now) == .unavailable)
        #expect(try keyless(userID: "u1", code: SecondFactorCode("abcde-fghij"), now: now) == .accepted)
        #expect(try keyless(userID: "u1", code: SecondFactorCode("ABCDEFGHIJ"), now: now) == .rejected)  // single use
    }

    @Test func anUnconfirmedFactorIsNoSecondFactor() throws {
        let store = Store(factor: TOTPFactorRecord(secretSealed: Self.sealed(for: "u1"), confirmed: false, lastUsedStep: nil))
        let verify = VerifySecondFactor(store: store, codes: FixedCodes(), sealer: TaggingSealer(), secrets: AccountTestSecrets())
        #expect(try verify(userID: "u1", code: SecondFactorCode("123456"), now: now) == .rejected)
    }

    @Test func enrolmentTurnsOnOnlyAfterTheRightCodeAndShowsTenRecoveryCodes() throws {
        let store = Store(factor: nil)
        let enrolment = TOTPEnrolment(store: store, codes: FixedCodes(), sealer: TaggingSealer(), secrets: AccountTestSecrets())
        guard case .started(let secret) = try enrolment.start(userID: "u1", now: now) else { Issue.record("not started"); return }
        #expect(secret.count == 20)
        #expect(try enrolment.pending(userID: "u1") == .pending(secret: secret))
        #expect(try enrolment.confirm(userID: "u1", secret: secret, code: TOTPCode("000000"), now: now) == .wrongCode)
        #expect(try enrolment.confirm(userID: "u1", secret: secret, code: nil, now: now) == .wrongCode)
        guard case .confirmed(let codes) = try enrolment.confirm(userID: "u1", secret: secret, code: TOTPCode("123456"), now: now) else {
            Issue.record("not confirmed")
            return
        }
        #expect(codes.count == 10)
        #expect(store.recoveryHashes.withLock { $0 } == Set(codes.map { "d(\($0.canonical))" }))
        #expect(try enrolment.start(userID: "u1", now: now) == .alreadyEnabled)
        #expect(try enrolment.pending(userID: "u1") == .none)
        #expect(try enrolment.confirm(userID: "u1", secret: secret, code: TOTPCode("123456"), now: now) == .notPending)
    }

    @Test func enrolmentWithoutAnEncryptionKeyIsUnavailable() throws {
        let enrolment = TOTPEnrolment(store: Store(factor: nil), codes: FixedCodes(), sealer: nil, secrets: AccountTestSecrets())
        #expect(try enrolment.start(userID: "u1", now: now) == .unavailable)
        #expect(try enrolment.pending(userID: "u1") == .unavailable)
    }
}

@Suite struct MFAChallengeTests {
    final class Store: MFAChallengeStore {
        let record: MFAChallengeRecord
        let completed = Mutex<[String]>([])
        init(_ record: MFAChallengeRecord) { self.record = record }
        func mfaChallenge(id: String) throws -> MFAChallengeRecord? { id == record.id ? record : nil }
        func completeMFAChallenge(id: String, browserSessionTokenHash: String, now: Date) throws -> String? {
            completed.withLock { list in
                guard list.isEmpty else { return nil }
                list.append(browserSessionTokenHash)
                return "bs"
            }
        }
    }

    static func challenge(expiresIn seconds: Double = 60, completed: Bool = false) -> MFAChallengeRecord {
        MFAChallengeRecord(
            id: "c1", userID: "u1", browserBindingHash: "d(bind)", authorizationRequestID: "req",
            expiresAt: now.addingTimeInterval(seconds), completed: completed)
    }

    @Test func aChallengeIsUsableOnlyLiveAndInItsOwnBrowser() throws {
        let secrets = AccountTestSecrets()
        let live = MFAChallenge(store: Store(Self.challenge()), secrets: secrets)
        #expect(try live.load(id: "c1", binding: "bind", now: now) == .success(Self.challenge()))
        #expect(try live.load(id: "c2", binding: "bind", now: now) == .failure(.unknown))
        #expect(try live.load(id: nil, binding: "bind", now: now) == .failure(.unknown))
        #expect(try live.load(id: "c1", binding: "other", now: now) == .failure(.otherBrowser))
        #expect(try live.load(id: "c1", binding: nil, now: now) == .failure(.otherBrowser))
        let expired = MFAChallenge(store: Store(Self.challenge(expiresIn: 0)), secrets: secrets)
        #expect(try expired.load(id: "c1", binding: "bind", now: now) == .failure(.over))
        let done = MFAChallenge(store: Store(Self.challenge(completed: true)), secrets: secrets)
        #expect(try done.load(id: "c1", binding: "bind", now: now) == .failure(.over))
    }

    @Test func completingStartsOneBrowserSessionAndContinuesThePendingSignIn() throws {
        let store = Store(Self.challenge())
        let challenges = MFAChallenge(store: store, secrets: AccountTestSecrets())
        let completed = try #require(try challenges.complete(Self.challenge(), now: now))
        #expect(completed.authorizationRequestID == "req")
        #expect(store.completed.withLock { $0 } == ["d(\(completed.token))"])
        #expect(try challenges.complete(Self.challenge(), now: now) == nil)
    }
}

@Suite struct EmailKeyPlanTests {
    static func row(_ id: String, _ email: String, key: String?, rule: Int = 0, closed: Bool = false, at: Double) -> EmailKeyRow {
        EmailKeyRow(id: id, email: email, key: key, rule: rule, closed: closed, createdAt: Date(timeIntervalSince1970: at))
    }

    @Test func theEarliestOpenAccountKeepsASharedKeyAndNothingIsMerged() {
        let rows = [
            Self.row("a", "Ada@X.example", key: "ada@x.example", closed: true, at: 1),
            Self.row("b", "ADA@x.example", key: "old-b", at: 2),
            Self.row("c", "ada@X.EXAMPLE", key: "old-c", at: 3),
            Self.row("d", "refused", key: "kept", at: 4),
        ]
        let plan = EmailKeyPlan.decide(rows: rows, rule: 1) { $0.contains("@") ? $0.lowercased() : nil }
        #expect(plan.recomputed == ["a", "b", "c", "d"])
        #expect(plan.refused == ["d"])
        #expect(plan.shared.map(\.kept) == ["b"])
        #expect(plan.shared.map(\.keyless) == [["a", "c"]])
        let expected: [String: String?] = ["a": nil, "b": "ada@x.example", "c": nil]
        #expect(plan.changes == expected)
    }
}
