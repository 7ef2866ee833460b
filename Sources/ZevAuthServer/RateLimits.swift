import Authorize
import Foundation
import HTTPServer

/// Thresholds of the rate limits (docs/protocol.md#rate-limits), counted in PostgreSQL so they hold across instances.
/// Each is the number of counted events allowed per fixed window of `windowSeconds`.
public struct RateLimits: Sendable, Equatable {
    /// Password attempts per account (`ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT`, default 10). Counts every
    /// attempt on an email, known or not (the key is a hash of the address, so unknown ones count too).
    public var passwordPerAccount: Int = 10
    /// Password attempts per client address (`ZEVAUTH_RATE_PASSWORD_PER_ADDRESS`, default 100); sign-ups count too.
    public var passwordPerAddress: Int = 100
    /// TOTP or recovery-code attempts per account (`ZEVAUTH_RATE_MFA_PER_ACCOUNT`, default 10).
    public var mfaPerAccount: Int = 10
    /// Failed code exchanges per client address (`ZEVAUTH_RATE_EXCHANGE_FAILURES_PER_ADDRESS`, default 60).
    public var exchangeFailuresPerAddress: Int = 60
    /// Failed refreshes per client address (`ZEVAUTH_RATE_REFRESH_FAILURES_PER_ADDRESS`, default 60).
    public var refreshFailuresPerAddress: Int = 60
    /// The window, in seconds (`ZEVAUTH_RATE_WINDOW_SECONDS`, 10–86400, default 900 = 15 minutes).
    public var windowSeconds: Int = 900

    public init() {}

    /// Thresholds no conformance client or test suite reaches (`zevauth dev`, tests).
    public static var generous: RateLimits {
        var limits = RateLimits()
        limits.passwordPerAccount = 1_000_000
        limits.passwordPerAddress = 1_000_000
        limits.mfaPerAccount = 1_000_000
        limits.exchangeFailuresPerAddress = 1_000_000
        limits.refreshFailuresPerAddress = 1_000_000
        return limits
    }

    /// The environment variables of each threshold, for `ConfigurationLoader`.
    static var variables: [(variable: String, flag: String, path: WritableKeyPath<RateLimits, Int>, range: ClosedRange<Int>)] {
        [
            ("ZEVAUTH_RATE_PASSWORD_PER_ACCOUNT", "--rate-password-per-account", \.passwordPerAccount, 1...1_000_000),
            ("ZEVAUTH_RATE_PASSWORD_PER_ADDRESS", "--rate-password-per-address", \.passwordPerAddress, 1...1_000_000),
            ("ZEVAUTH_RATE_MFA_PER_ACCOUNT", "--rate-mfa-per-account", \.mfaPerAccount, 1...1_000_000),
            (
                "ZEVAUTH_RATE_EXCHANGE_FAILURES_PER_ADDRESS", "--rate-exchange-failures-per-address", \.exchangeFailuresPerAddress,
                1...1_000_000
            ),
            (
                "ZEVAUTH_RATE_REFRESH_FAILURES_PER_ADDRESS", "--rate-refresh-failures-per-address", \.refreshFailuresPerAddress,
                1...1_000_000
            ),
            ("ZEVAUTH_RATE_WINDOW_SECONDS", "--rate-window-seconds", \.windowSeconds, 10...86_400),
        ]
    }

    /// Reads the thresholds from merged configuration values; a threshold not given keeps `base`'s.
    /// - Throws: `ConfigurationError` naming a value that is not a whole number in range.
    static func load(_ values: [String: String], base: RateLimits = RateLimits()) throws -> RateLimits {
        var limits = base
        for entry in variables {
            if let value = try ConfigurationLoader.integer(values, entry.variable, in: entry.range) { limits[keyPath: entry.path] = value }
        }
        return limits
    }
}

/// What is counted. Raw values are the `bucket` column.
public enum RateLimitBucket: String, Sendable, CaseIterable {
    case passwordPerAccount = "password_account"
    case passwordPerAddress = "password_address"
    case mfaPerAccount = "mfa_account"
    case exchangeFailuresPerAddress = "exchange_failure_address"
    case refreshFailuresPerAddress = "refresh_failure_address"
}

/// Whether an event may proceed.
public enum RateLimitDecision: Sendable, Equatable {
    case allowed
    /// Over the threshold until the window ends, `retryAfterSeconds` from now (at least 1).
    case limited(retryAfterSeconds: Int)
}

/// Fixed-window rate limits over `rate_limit_counters` (one atomic upsert per counted event), shared by
/// every server instance on the database.
///
/// Two ways to count: `hit` counts the attempt before it is tried (passwords, MFA codes), `check` + `hit`
/// after a failure count only failures (exchanges, refreshes). To wire a failure-counted endpoint:
/// ```swift
/// let limiter = RateLimiter(context: context)
/// let address = ClientAddress.of(request, configuration: context.configuration)
/// if case .limited(let seconds) = try limiter.check(.refreshFailuresPerAddress, key: address) {
///     return RateLimiter.tooManyRequestsJSON(retryAfterSeconds: seconds)
/// }
/// // … on a 4xx answer: try limiter.hit(.refreshFailuresPerAddress, key: address)
/// ```
public struct RateLimiter: Sendable {
    let store: any RateLimitStore
    let limits: RateLimits
    let clock: any Clock
    let metrics: Metrics

    /// - Parameter context: the store, the configured thresholds and the injected clock.
    public init(context: ServerContext) {
        store = context.roundTrip.rateLimits
        limits = context.configuration.rateLimits
        clock = context.clock
        metrics = context.metrics
    }

    func threshold(_ bucket: RateLimitBucket) -> Int {
        switch bucket {
        case .passwordPerAccount: return limits.passwordPerAccount
        case .passwordPerAddress: return limits.passwordPerAddress
        case .mfaPerAccount: return limits.mfaPerAccount
        case .exchangeFailuresPerAddress: return limits.exchangeFailuresPerAddress
        case .refreshFailuresPerAddress: return limits.refreshFailuresPerAddress
        }
    }

    /// The current window's start and the seconds until it ends (at least 1).
    func window() -> (start: Date, remaining: Int) {
        let now = clock.now().timeIntervalSince1970
        let size = Double(limits.windowSeconds)
        let start = (now / size).rounded(.down) * size
        return (Date(timeIntervalSince1970: start), max(1, Int((start + size - now).rounded(.up))))
    }

    /// Counts one event and answers whether it is within the threshold.
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    public func hit(_ bucket: RateLimitBucket, key: String) throws -> RateLimitDecision {
        let (start, remaining) = window()
        let count = try store.rateLimitHit(bucket: bucket.rawValue, key: key, windowStart: start)
        // Failure buckets are hit after the answer, so they are counted where they refuse (`check`, the exchange).
        if count > threshold(bucket), bucket != .exchangeFailuresPerAddress, bucket != .refreshFailuresPerAddress {
            metrics.rateLimited(bucket)
        }
        return count > threshold(bucket) ? .limited(retryAfterSeconds: remaining) : .allowed
    }

    /// Whether the threshold is already reached, without counting (for failure-only buckets).
    /// - Throws: `StoreUnavailable`.
    public func check(_ bucket: RateLimitBucket, key: String) throws -> RateLimitDecision {
        let (start, remaining) = window()
        let count = try store.rateLimitCount(bucket: bucket.rawValue, key: key, windowStart: start)
        if count >= threshold(bucket) { metrics.rateLimited(bucket) }
        return count >= threshold(bucket) ? .limited(retryAfterSeconds: remaining) : .allowed
    }

    /// A failure limit to check inside another statement, with the `Retry-After` to answer when it holds.
    public struct Gate: Sendable {
        let stored: FailureGate
        let retryAfterSeconds: Int
    }

    /// The current window's gate for `bucket` and `key` (no SQL runs here).
    public func gate(_ bucket: RateLimitBucket, key: String) -> Gate {
        let (start, remaining) = window()
        return Gate(
            stored: FailureGate(bucket: bucket.rawValue, key: key, windowStart: start, threshold: threshold(bucket)),
            retryAfterSeconds: remaining)
    }

    /// Runs a failure-counted grant endpoint (the exchange, the refresh): `body` answers with the client
    /// address the limits use, and a 4xx answer other than the limit's own 429 counts one failure against
    /// that address (docs/protocol.md#rate-limits).
    /// - Throws: `StoreUnavailable`, and whatever `body` throws.
    func countingFailures(
        _ bucket: RateLimitBucket, _ request: HTTPRequest, configuration: ServerConfiguration, _ body: (String) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        let address = ClientAddress.of(request, configuration: configuration)
        return try countingFailure(bucket, key: address, of: try body(address))
    }

    /// Counts `response` against `key` when it is a failure (a 4xx other than the limit's own 429) and
    /// answers it, or 429 when this failure is past the threshold.
    ///
    /// The count is one atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING` on every instance, and its
    /// result decides the answer: of any number of concurrent failures, exactly the threshold get their
    /// own error and the rest 429, though the statement's own gate (which reads the count as it stood when
    /// the statement began) let them be evaluated (docs/decisions.md, "Failure limits decide on the
    /// atomic count"). A success is never counted, so its path stays one statement.
    /// - Throws: `StoreUnavailable`.
    func countingFailure(_ bucket: RateLimitBucket, key: String, of response: HTTPResponse) throws -> HTTPResponse {
        guard response.status != 429, (400..<500).contains(response.status) else { return response }
        guard case .limited(let seconds) = try hit(bucket, key: key) else { return response }
        metrics.rateLimited(bucket)
        return Self.tooManyRequestsJSON(retryAfterSeconds: seconds)
    }

    /// The JSON answer over the limit: 429, `Retry-After` in seconds (RFC 9110 §10.2.3; RFC 6585 §4), and
    /// `{"error":"temporarily_unavailable","error_description":"rate_limited: …"}` — RFC 6749 has no
    /// rate-limit code; `temporarily_unavailable` is the registered one standard clients already handle.
    public static func tooManyRequestsJSON(retryAfterSeconds: Int) -> HTTPResponse {
        Wire.error(ErrorAnswer.rateLimited(retryAfterSeconds: retryAfterSeconds))
    }

    /// The sentence a hosted page shows over the limit.
    static func pageMessage(retryAfterSeconds: Int) -> String {
        let minutes = (retryAfterSeconds + 59) / 60
        let when = retryAfterSeconds < 60 ? "\(retryAfterSeconds) seconds" : (minutes == 1 ? "1 minute" : "\(minutes) minutes")
        return "Too many attempts. For your security, try again in \(when)."
    }
}

/// The client's address for rate limits (docs/protocol.md#trusted-proxies: `ZEVAUTH_TRUSTED_PROXIES` names the
/// proxies whose `X-Forwarded-For`/`X-Forwarded-Proto` are believed).
public enum ClientAddress {
    /// The peer address; when the peer is a trusted proxy, the right-most `X-Forwarded-For` entry that is not
    /// a trusted proxy (entries to its left could be written by the client). Every `X-Forwarded-For` header
    /// counts, in order. When every entry is trusted, the left-most one.
    public static func of(_ request: HTTPRequest, configuration: ServerConfiguration) -> String {
        resolve(peer: request.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"), trusted: configuration.trustedProxies)
    }

    /// The pure rule behind `of(_:configuration:)`.
    public static func resolve(peer: String, forwardedFor: [String], trusted: [String]) -> String {
        let trustedSet = Set(trusted.map { $0.lowercased() })
        guard trustedSet.contains(peer.lowercased()) else { return peer }
        let entries = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard !entries.isEmpty else { return peer }
        for entry in entries.reversed() where !trustedSet.contains(entry.lowercased()) {
            return String(entry.prefix(64))
        }
        return String(entries[0].prefix(64))
    }
}
