import Authorize
import Foundation
import PKCE
import Synchronization
import Testing

/// With `fakeSHA256` the digest of a 43-character verifier is its first 32 bytes, so the matching
/// challenge is their base64url.
private let verifier = String(repeating: "v", count: 43)
private let challenge = PKCE.s256Challenge(for: CodeVerifier(verifier)!, sha256: fakeSHA256)
private let issued = "http://127.0.0.1:54321/cb"
private let session = IssuedSession(
    sessionID: "s1", accessExpiresAt: Date(timeIntervalSince1970: 900), expiresAt: Date(timeIntervalSince1970: 9_000),
    idleExpiresAt: Date(timeIntervalSince1970: 8_000), user: SessionUser(id: "u1", email: "ada@example.com", name: "Ada", imageURL: nil))

/// Deterministic secrets that count how often the verifier is hashed.
final class CountingSecrets: Secrets, @unchecked Sendable {
    let hashes = Mutex(0)
    let minted = Mutex(0)
    func mintToken(prefix: String) throws -> String {
        prefix + "token"
            + String(
                minted.withLock {
                    $0 += 1; return $0
                })
    }
    func digest(_ text: String) -> String { "digest(" + text + ")" }
    func sha256(_ bytes: [UInt8]) -> [UInt8] {
        hashes.withLock { $0 += 1 }
        return fakeSHA256(bytes)
    }
    func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }
    func newID() -> String { "00000000-0000-4000-8000-000000000001" }
}

/// A store that answers as the exchange statement does for one code issued for `issued` and `challenge`:
/// it compares what it is given and decides nothing.
final class OneCodeStore: ExchangeStore, @unchecked Sendable {
    let attempts = Mutex<[ExchangeAttempt]>([])
    func exchange(_ attempt: ExchangeAttempt) throws -> ExchangeFacts {
        attempts.withLock { $0.append(attempt) }
        let redirectMatches = attempt.requestedRedirectURI.map { $0.utf8.elementsEqual(issued.utf8) } ?? false
        let challengeMatches = attempt.verifierChallenge == challenge.value
        return ExchangeFacts(
            clientKnown: true, code: .won, redirectPresent: attempt.requestedRedirectURI != nil,
            redirectMatches: redirectMatches, challengeMatches: challengeMatches,
            session: redirectMatches && challengeMatches ? session : nil)
    }
    func isKnownClient(publishableKey: String) throws -> Bool { true }
}

@Suite struct ExchangeDecisionTests {
    /// Every combination of facts, against the contract's table read top to bottom: the first row whose
    /// condition holds answers (docs/protocol.md#exchange-checks).
    @Test func everyCombinationOfFactsIsAnsweredByTheFirstFailingRow() {
        let codes: [ExchangeFacts.Code] = [
            .notConsumed, .won, .alreadyConsumed(revokedSession: false), .alreadyConsumed(revokedSession: true),
        ]
        var combinations = 0
        for known in [false, true] {
            for limited in [false, true] {
                for code in codes {
                    for present in [false, true] {
                        for matches in [false, true] {
                            for pkce in [false, true] {
                                for made in [nil, session] {
                                    let facts = ExchangeFacts(
                                        clientKnown: known, rateLimited: limited, code: code, redirectPresent: present,
                                        redirectMatches: matches, challengeMatches: pkce, session: made)
                                    let expected: ExchangeVerdict
                                    if !known {
                                        expected = .invalidClient
                                    } else if limited {
                                        expected = .rateLimited
                                    } else if code != .won {
                                        expected = .refused(ExchangeDecision.invalidCode)
                                    } else if !present {
                                        expected = .refused(ExchangeDecision.redirectRequired)
                                    } else if !matches {
                                        expected = .refused(ExchangeDecision.redirectMismatch)
                                    } else if !pkce {
                                        expected = .refused(ExchangeDecision.verifierMismatch)
                                    } else if let made {
                                        expected = .issue(made)
                                    } else {
                                        expected = .refused(ExchangeDecision.accountClosed)
                                    }
                                    #expect(ExchangeDecision.decide(facts, proofPresented: false) == expected, "\(facts)")
                                    combinations += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(combinations == 256)
    }

    /// A code bound to a DPoP key refuses an exchange without a proof and one with another key's proof
    /// alike (400 `invalid_dpop_proof`), each with its own sentence (docs/dpop.md, "Binding").
    @Test func aBoundCodeNamesAMissingProofApartFromAnotherKey() throws {
        var facts = ExchangeFacts(
            clientKnown: true, code: .won, redirectPresent: true, redirectMatches: true, challengeMatches: true, session: session)
        facts.keyMatches = false
        let missing = ExchangeDecision.decide(facts, proofPresented: false)
        let other = ExchangeDecision.decide(facts, proofPresented: true)
        #expect(missing == .refused(ExchangeDecision.boundCodeNeedsProof))
        #expect(other == .refused(DPoPRefusal.otherKey.error))
        for error in [ExchangeDecision.boundCodeNeedsProof, DPoPRefusal.otherKey.error] {
            #expect(error.code == .invalidDPoPProof && error.status == 400)
        }
        #expect(ExchangeDecision.boundCodeNeedsProof.description == "This code is bound to a DPoP key: send a DPoP proof made with it.")
        facts.keyMatches = true
        #expect(ExchangeDecision.decide(facts, proofPresented: false) == .issue(session))
    }

    @Test func answersCarryTheContractsCodesAndStatuses() {
        #expect(ExchangeDecision.invalidCode.code == .invalidGrant)
        #expect(ExchangeDecision.redirectRequired.code == .redirectURIRequired)
        #expect(ExchangeDecision.redirectMismatch.code == .redirectURIMismatch)
        #expect(ExchangeDecision.verifierMismatch.code == .pkceVerificationFailed)
        for error in [
            ExchangeDecision.invalidCode, ExchangeDecision.redirectRequired, ExchangeDecision.redirectMismatch,
            ExchangeDecision.verifierMismatch, ExchangeDecision.accountClosed,
        ] {
            #expect(error.status == 400)
        }
    }

    @Test func matchingRedirectAndVerifierIssueTheMintedPair() throws {
        let store = OneCodeStore()
        let outcome = try Exchange(store: store, secrets: CountingSecrets())(
            publishableKey: "pk_test_x", code: "hoc_c", redirectURI: issued, codeVerifier: verifier, gate: nil, now: Date())
        #expect(outcome == .issued(session, accessToken: "zat_token1", refreshToken: "zrt_token2"))
        let attempt = try #require(store.attempts.withLock { $0.first })
        #expect(attempt.codeHash == "digest(hoc_c)")
        #expect(attempt.accessTokenHash == "digest(zat_token1)")
        #expect(attempt.refreshTokenHash == "digest(zrt_token2)")
    }

    @Test(arguments: [
        (nil as String?, nil as String?, OAuthErrorCode.redirectURIRequired),
        ("", "x", .redirectURIRequired),
        ("http://127.0.0.1:54322/cb", verifier, .redirectURIMismatch),  // loopback: the port is part of it here
        ("http://127.0.0.1/cb", verifier, .redirectURIMismatch),
        ("http://127.0.0.1:54321/cb/", verifier, .redirectURIMismatch),
        ("http://127.0.0.1:54321/cb", nil, .pkceVerificationFailed),  // redirect first, then verifier
        ("http://127.0.0.1:54321/cb", "", .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "v", count: 42), .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "v", count: 43) + "+", .pkceVerificationFailed),
        ("http://127.0.0.1:54321/cb", String(repeating: "w", count: 43), .pkceVerificationFailed),
        ("http://127.0.0.1:54322/cb", nil, .redirectURIMismatch),  // mismatch beats a missing verifier
    ])
    func rowsFourToSixRunInOrder(redirect: String?, verifier: String?, expected: OAuthErrorCode) throws {
        let outcome = try Exchange(store: OneCodeStore(), secrets: CountingSecrets())(
            publishableKey: "pk_test_x", code: "hoc_c", redirectURI: redirect, codeVerifier: verifier, gate: nil, now: Date())
        guard case .refused(let error) = outcome else {
            Issue.record("expected a refusal, got \(outcome)")
            return
        }
        #expect(error.code == expected)
    }

    @Test func theVerifierIsCheckedAndHashedOnce() throws {
        let secrets = CountingSecrets()
        _ = try Exchange(store: OneCodeStore(), secrets: secrets)(
            publishableKey: "pk_test_x", code: "hoc_c", redirectURI: issued, codeVerifier: verifier, gate: nil, now: Date())
        #expect(secrets.hashes.withLock { $0 } == 1)
        let malformed = CountingSecrets()
        _ = try Exchange(store: OneCodeStore(), secrets: malformed)(
            publishableKey: "pk_test_x", code: "hoc_c", redirectURI: issued, codeVerifier: "short", gate: nil, now: Date())
        #expect(malformed.hashes.withLock { $0 } == 0)
    }

    @Test func verifierChallengeOnlyForValidGrammar() {
        #expect(Exchange.challenge(of: verifier, sha256: fakeSHA256) == challenge.value)
        #expect(Exchange.challenge(of: nil, sha256: fakeSHA256) == nil)
        #expect(Exchange.challenge(of: String(repeating: "v", count: 42), sha256: fakeSHA256) == nil)
        #expect(Exchange.challenge(of: String(repeating: "v", count: 129), sha256: fakeSHA256) == nil)
        #expect(Exchange.challenge(of: verifier + "%", sha256: fakeSHA256) == nil)
    }
}
