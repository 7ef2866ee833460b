import Authorize
import Foundation
import HTTPServer
import Postgres
import PostgresStore
import Synchronization
import ZevAuthServer

/// An in-memory stand-in for every store port of the round trip and sessions (`RoundTripPorts`): each
/// call answers what the test scripted and records what it was given, so handlers can be tested in process
/// without PostgreSQL.
public final class FakeRoundTripStore: StartStore, ConsentStore, ExchangeStore, RefreshStore, RevokeStore, IntrospectStore,
    CurrentSessionStore,
    RateLimitStore, @unchecked Sendable
{
    /// What the next exchange statement reports.
    public let exchangeFacts: Mutex<ExchangeFacts>
    /// What the next refresh statement reports.
    public let refreshOutcome = Mutex<RefreshOutcome>(.unknownToken)
    /// Live sessions by access-token digest.
    public let sessions = Mutex<[String: IssuedSession]>([:])
    /// Live introspection answers by (environment id, access-token digest).
    public let introspections = Mutex<[String: IntrospectedToken]>([:])
    /// Environment ids by publishable key and by secret-key digest.
    public let environmentsByPublishableKey = Mutex<[String: String]>([:])
    public let environmentsBySecretKeyHash = Mutex<[String: String]>([:])
    /// Rate-limit counts by "bucket key".
    public let counts = Mutex<[String: Int]>([:])
    /// Every exchange and refresh attempt, and every revocation (environment id, token digest).
    public let exchangeAttempts = Mutex<[ExchangeAttempt]>([])
    public let refreshAttempts = Mutex<[RefreshAttempt]>([])
    public let revocations = Mutex<[(String, String)]>([])

    /// Start clients by publishable key, and every pending sign-in recorded.
    public let startClients = Mutex<[String: StartClient]>([:])
    public let pendingSignIns = Mutex<[PendingSignIn]>([])

    public init(exchangeFacts: ExchangeFacts = ExchangeFacts(clientKnown: false)) {
        self.exchangeFacts = Mutex(exchangeFacts)
    }

    public func startClient(publishableKey: String) throws -> StartClient? {
        startClients.withLock { $0[publishableKey] }
    }

    /// Records the pending sign-in; the binding is adopted when one was presented, the browser session
    /// attached when a token was presented.
    public func recordPendingSignIn(_ pending: PendingSignIn) throws -> RecordedSignIn {
        let count = pendingSignIns.withLock {
            $0.append(pending)
            return $0.count
        }
        return RecordedSignIn(
            requestID: "00000000-0000-4000-8000-\(String(repeating: "0", count: 12 - String(count).count))\(count)",
            mintedBinding: pending.presentedBindingHash == nil, authenticated: pending.browserSessionTokenHash != nil)
    }

    /// Codes issued (by pending sign-in id) and pending sign-ins ended without one.
    public let issuedCodes = Mutex<[String: String]>([:])
    public let completed = Mutex<Set<String>>([])

    public func issueCode(
        requestID: String, browserSessionID: String, codeHash: String, rememberConsent: Bool, now: Date, lifetimeSeconds: Double
    ) throws -> Bool {
        completed.withLock { $0.insert(requestID).inserted }
            && issuedCodes.withLock {
                $0[requestID] = codeHash
                return true
            }
    }

    public func completeAuthorizationRequest(id: String, now: Date) throws -> Bool {
        completed.withLock { $0.insert(id).inserted }
    }

    public func exchange(_ attempt: ExchangeAttempt) throws -> ExchangeFacts {
        exchangeAttempts.withLock { $0.append(attempt) }
        return exchangeFacts.withLock { $0 }
    }

    public func isKnownClient(publishableKey: String) throws -> Bool {
        environmentsByPublishableKey.withLock { $0[publishableKey] != nil }
    }

    public func refresh(_ attempt: RefreshAttempt) throws -> RefreshOutcome {
        refreshAttempts.withLock { $0.append(attempt) }
        return refreshOutcome.withLock { $0 }
    }

    public func environmentID(publishableKey: String) throws -> String? {
        environmentsByPublishableKey.withLock { $0[publishableKey] }
    }

    public func environmentID(secretKeyHash: String) throws -> String? {
        environmentsBySecretKeyHash.withLock { $0[secretKeyHash] }
    }

    @discardableResult
    public func revokeSession(environmentID: String, tokenHash: String, reason: RevocationReason, now: Date) throws -> Bool {
        revocations.withLock { $0.append((environmentID, tokenHash)) }
        return true
    }

    public func introspect(environmentID: String, accessTokenHash: String, now: Date) throws -> IntrospectedToken? {
        introspections.withLock { $0[environmentID + " " + accessTokenHash] }
    }

    public func session(accessTokenHash: String, now: Date) throws -> IssuedSession? {
        sessions.withLock { $0[accessTokenHash] }
    }

    public func rateLimitHit(bucket: String, key: String, windowStart: Date) throws -> Int {
        counts.withLock {
            $0[bucket + " " + key, default: 0] += 1
            return $0[bucket + " " + key] ?? 0
        }
    }

    public func rateLimitCount(bucket: String, key: String, windowStart: Date) throws -> Int {
        counts.withLock { $0[bucket + " " + key] ?? 0 }
    }

    /// Ports that all answer from this fake.
    public var ports: RoundTripPorts {
        RoundTripPorts(
            start: self, consent: self, exchange: self, refresh: self, revoke: self, introspect: self, currentSession: self,
            rateLimits: self)
    }

    /// An app over this fake's ports. Handlers of other areas still hold a `PostgresStore`; its pool points
    /// nowhere and opens no connection unless one of them is called.
    public func app(clock: any Clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))) -> ZevAuthApp {
        var configuration = ServerConfiguration(
            databaseURL: "postgresql:///unused?host=/nonexistent", issuer: "https://auth.example.com",
            operatorToken: TestServer.operatorToken)
        configuration.rateLimits = .generous
        let store = PostgresStore(pool: PostgresPool(url: configuration.databaseURL, size: 1, acquireTimeoutSeconds: 0.1))
        let context = ServerContext(
            configuration: configuration, store: store, roundTrip: ports, tenancy: TenancyPorts(store), accounts: AccountsPorts(store),
            clock: clock, passwordHasher: testPasswordHasher, log: CapturingLog())
        return ZevAuthApp(context: context)
    }
}
