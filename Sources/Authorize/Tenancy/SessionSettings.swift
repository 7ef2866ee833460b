import Foundation

/// One of an environment's four session settings, with its bounds (docs/protocol.md#session-windows):
/// windows may be shortened, never lengthened past 90 and 30 days; the access-token lifetime is 5–60
/// minutes; the reuse grace 0–60 seconds.
public enum SessionSetting: String, Sendable, CaseIterable {
    case sessionMaxAgeDays
    case sessionIdleDays
    case accessTokenTtlMinutes
    case refreshReuseGraceSeconds

    /// The JSON member name.
    public var field: String { rawValue }

    /// The accepted values.
    public var range: ClosedRange<Int> {
        switch self {
        case .sessionMaxAgeDays: 1...90
        case .sessionIdleDays: 1...30
        case .accessTokenTtlMinutes: 5...60
        case .refreshReuseGraceSeconds: 0...60
        }
    }

    /// The unit, as the refusal's sentence names it.
    public var unit: String {
        switch self {
        case .sessionMaxAgeDays: "days (a session may be shortened, never lengthened past 90 days)"
        case .sessionIdleDays: "days (a session may be shortened, never lengthened past 30 days)"
        case .accessTokenTtlMinutes: "minutes"
        case .refreshReuseGraceSeconds: "seconds"
        }
    }

    /// What a refused value breaks, completing "`field` …".
    public var rule: String { "must be a whole number from \(range.lowerBound) to \(range.upperBound) \(unit)" }

    /// This setting's current value in `environment`.
    public func value(in environment: EnvironmentRecord) -> Int {
        switch self {
        case .sessionMaxAgeDays: environment.sessionMaxAgeDays
        case .sessionIdleDays: environment.sessionIdleDays
        case .accessTokenTtlMinutes: environment.accessTokenTTLMinutes
        case .refreshReuseGraceSeconds: environment.refreshReuseGraceSeconds
        }
    }
}

/// What changing session settings needs from storage.
public protocol SessionSettingsStore: Sendable {
    /// Applies a settings change (values within bounds), serialised per environment; when a window grows,
    /// sessions already past the current window are ended first, so lengthening never revives one.
    /// - Returns: the environment with its new settings, or nil when it no longer exists.
    /// `audit` is written in the same transaction when the environment exists (docs/console.md, "Audit log").
    /// - Throws: `StoreUnavailable`.
    func updateSessionSettings(
        environmentID: String, _ update: SessionSettingsUpdate, now: Date, audit: AuditEntry
    ) throws -> EnvironmentRecord?
}

/// `PATCH /v1/admin/settings`: checks every given value against its bounds, then applies them together.
public struct UpdateSessionSettings: Sendable {
    let store: any SessionSettingsStore

    /// - Parameter store: where settings are changed.
    public init(store: any SessionSettingsStore) { self.store = store }

    /// The answer to a change.
    public enum Outcome: Sendable, Equatable {
        /// Applied; the environment with all four settings.
        case updated(EnvironmentRecord)
        /// This setting's value is out of its bounds; nothing changed.
        case outOfBounds(SessionSetting)
        /// The environment no longer exists.
        case environmentGone
    }

    /// The update for `values`, or the first setting (in `SessionSetting.allCases` order) out of bounds.
    public static func update(_ values: [SessionSetting: Int]) -> Result<SessionSettingsUpdate, SessionSettingOutOfBounds> {
        for setting in SessionSetting.allCases {
            if let value = values[setting], !setting.range.contains(value) { return .failure(SessionSettingOutOfBounds(setting: setting)) }
        }
        return .success(
            SessionSettingsUpdate(
                sessionMaxAgeDays: values[.sessionMaxAgeDays], sessionIdleDays: values[.sessionIdleDays],
                accessTokenTTLMinutes: values[.accessTokenTtlMinutes], refreshReuseGraceSeconds: values[.refreshReuseGraceSeconds]))
    }

    /// - Parameters:
    ///   - environmentID: the calling key's environment.
    ///   - values: the whole numbers given, by setting.
    ///   - requireVerifiedEmail: the boolean setting, when given.
    ///   - requirePushedAuthorizationRequests: the boolean setting, when given (docs/protocol.md#pushed-requests).
    ///   - requireDPoP: the boolean setting, when given (docs/dpop.md, "Requiring DPoP").
    ///   - now: when the change happens (sessions past a window are ended as of it).
    ///   - idTokenSigningAlg: the ID tokens' new algorithm, or nil to keep it.
    ///   - audit: the `settings.update` row, written with the change.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(
        environmentID: String, values: [SessionSetting: Int], idTokenSigningAlg: SigningAlgorithm? = nil,
        requireVerifiedEmail: Bool? = nil, requirePushedAuthorizationRequests: Bool? = nil, requireDPoP: Bool? = nil, now: Date,
        audit: AuditEntry
    ) throws -> Outcome {
        switch Self.update(values) {
        case .failure(let problem): return .outOfBounds(problem.setting)
        case .success(var update):
            update.idTokenSigningAlg = idTokenSigningAlg
            update.requireVerifiedEmail = requireVerifiedEmail
            update.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
            update.requireDPoP = requireDPoP
            guard let updated = try store.updateSessionSettings(environmentID: environmentID, update, now: now, audit: audit) else {
                return .environmentGone
            }
            return .updated(updated)
        }
    }
}

/// A setting given outside its bounds.
public struct SessionSettingOutOfBounds: Error, Sendable, Equatable {
    /// The setting.
    public let setting: SessionSetting

    /// - Parameter setting: the setting out of bounds.
    public init(setting: SessionSetting) { self.setting = setting }
}
