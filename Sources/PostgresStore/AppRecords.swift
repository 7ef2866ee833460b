import Foundation

/// A registered mobile app (docs/protocol.md#apps).
public struct AppRecord: Sendable, Equatable {
    public let id: String
    public let environmentID: String
    /// `ios` or `android`.
    public let platform: String
    /// iOS: the Apple team ID (10 of `A-Z0-9`).
    public let teamID: String?
    /// iOS: the bundle ID as registered.
    public let bundleID: String?
    /// Android: the package name (applicationId).
    public let packageName: String?
    /// Android: canonical SHA-256 fingerprints, in the order given.
    public let fingerprints: [String]
    /// The operator's exception: production sign-ins may return to this private-use scheme.
    public let productionCustomScheme: String?
    public let createdAt: Date
}

/// One problem found by an association check, as stored (`code` is one of docs/protocol.md#problem-codes).
public struct LinkProblemRecord: Sendable, Equatable {
    public let code: String
    public let message: String
    /// Whether it blocks verification (warnings do not).
    public let blocking: Bool

    /// Creates a stored problem.
    public init(code: String, message: String, blocking: Bool) {
        self.code = code
        self.message = message
        self.blocking = blocking
    }
}

/// An app's link state on one of its environment's link domains.
public struct LinkStateRecord: Sendable, Equatable {
    public let appID: String
    public let domain: String
    /// `verified`, `not_verified` or `pending`.
    public let status: String
    public let checkedAt: Date?
    public let nextCheckAt: Date?
    public let problems: [LinkProblemRecord]
    /// iOS: the callback paths on this domain the file covers; Android: `["*"]` when verified.
    public let coveredPaths: [String]

    /// Creates a link state.
    public init(
        appID: String, domain: String, status: String, checkedAt: Date?, nextCheckAt: Date?, problems: [LinkProblemRecord],
        coveredPaths: [String]
    ) {
        self.appID = appID
        self.domain = domain
        self.status = status
        self.checkedAt = checkedAt
        self.nextCheckAt = nextCheckAt
        self.problems = problems
        self.coveredPaths = coveredPaths
    }
}

/// An app to judge on a link domain, with the link callbacks its environment registered there.
public struct DomainSubject: Sendable, Equatable {
    public let app: AppRecord
    /// `development` or `production`.
    public let environmentKind: String
    public let projectID: String
    /// The registered link callback URIs on this domain, in registration order.
    public let callbackURIs: [String]
}

/// The scheduler's view of one link domain.
public struct DomainScheduleRecord: Sendable, Equatable {
    public let domain: String
    public let consecutiveTransientFailures: Int
}

/// The limits of docs/protocol.md#app-limits, raised by PostgreSQL's triggers and mapped by constraint name
/// (`PostgresError.constraint`), never by message text.
public enum AppLimitError: Error, Equatable, Sendable {
    /// `native_app_limit`: 10 iOS or 10 Android apps per environment, or 5 fingerprints per Android app.
    case nativeAppLimit
    /// `native_app_team_mismatch`: every iOS app of an environment belongs to one Apple team.
    case teamMismatch

    /// The constraint names the triggers in `sql/002_association.sql` raise.
    static func from(_ constraint: String?) -> AppLimitError? {
        switch constraint {
        case "native_app_limit": return .nativeAppLimit
        case "native_app_team_mismatch": return .teamMismatch
        default: return nil
        }
    }
}
