import Foundation

/// The platform of a registered app (docs/protocol.md#apps); the raw value is the wire and column spelling.
public enum Platform: String, Sendable, Equatable, Hashable, CaseIterable {
    case ios
    case android
}

/// An app's link state on a domain (docs/protocol.md#link-check); the raw value is the wire and column spelling.
public enum LinkStatus: String, Sendable, Equatable, CaseIterable {
    /// The domain's file lists the app (for iOS: every callback path on the domain is covered).
    case verified
    /// The file is missing, unreadable, or does not list the app.
    case notVerified = "not_verified"
    /// Not checked yet.
    case pending
}

/// What identifies an app to its platform, parsed at registration and stored canonical.
public enum AppIdentity: Sendable, Equatable {
    /// An iOS app: Apple team and bundle ID.
    case ios(IOSApp)
    /// An Android app: package name and signing-certificate fingerprints (in the order given).
    case android(AndroidApp)

    /// The platform.
    public var platform: Platform {
        switch self {
        case .ios: .ios
        case .android: .android
        }
    }
}

/// A registered mobile app (docs/protocol.md#apps).
public struct AppRecord: Sendable, Equatable {
    /// The app's id (a UUID).
    public let id: String
    /// The environment it is registered in.
    public let environmentID: String
    /// Its platform identity.
    public let identity: AppIdentity
    /// The operator's exception: production sign-ins may return to this private-use scheme.
    public let productionCustomScheme: String?
    /// When it was registered.
    public let createdAt: Date

    /// Creates an app record.
    public init(id: String, environmentID: String, identity: AppIdentity, productionCustomScheme: String?, createdAt: Date) {
        self.id = id
        self.environmentID = environmentID
        self.identity = identity
        self.productionCustomScheme = productionCustomScheme
        self.createdAt = createdAt
    }

    /// The platform.
    public var platform: Platform { identity.platform }
}

extension TeamID {
    /// A team ID read back from storage, where only `parse`d values are written.
    public init(stored value: String) { self.init(value: value) }
}

extension BundleID {
    /// A bundle ID read back from storage, where only `parse`d values are written.
    public init(stored value: String) { self.init(value: value) }
}

extension PackageName {
    /// A package name read back from storage, where only `parse`d values are written.
    public init(stored value: String) { self.init(value: value) }
}

extension CertificateFingerprint {
    /// A fingerprint read back from storage, where only canonical values are written.
    public init(stored canonical: String) { self.init(canonical: canonical) }
}

/// One problem found by an association check, as stored (`code` is one of docs/protocol.md#problem-codes).
public struct LinkProblemRecord: Sendable, Equatable {
    /// The problem code's spelling.
    public let code: String
    /// A sentence for the developer.
    public let message: String
    /// Whether it blocks verification (warnings do not).
    public let blocking: Bool

    /// Creates a stored problem.
    public init(code: String, message: String, blocking: Bool) {
        self.code = code
        self.message = message
        self.blocking = blocking
    }

    /// A judge's problem as stored.
    public init(_ problem: Problem) {
        self.init(code: problem.code.rawValue, message: problem.message, blocking: problem.blocking)
    }
}

/// An app's link state on one of its environment's link domains.
public struct LinkStateRecord: Sendable, Equatable {
    public let appID: String
    public let domain: String
    public let status: LinkStatus
    public let checkedAt: Date?
    public let nextCheckAt: Date?
    public let problems: [LinkProblemRecord]
    /// iOS: the callback paths on this domain the file covers; Android: the callback paths when verified.
    public let coveredPaths: [String]

    /// Creates a link state.
    public init(
        appID: String, domain: String, status: LinkStatus, checkedAt: Date?, nextCheckAt: Date?, problems: [LinkProblemRecord],
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
    /// The app.
    public let app: AppRecord
    /// The project of its environment.
    public let projectID: String
    /// The distinct link callbacks (path and query) of the environment on this domain, in registration order:
    /// the check judges the URL each one receives (docs/association.md#callback-url).
    public let callbacks: [LinkCallback]

    /// Creates a subject.
    public init(app: AppRecord, projectID: String, callbacks: [LinkCallback]) {
        self.app = app
        self.projectID = projectID
        self.callbacks = callbacks
    }

    /// Creates a subject whose callbacks have these paths and no query.
    public init(app: AppRecord, projectID: String, callbackPaths: [String]) {
        self.init(app: app, projectID: projectID, callbacks: callbackPaths.map { LinkCallback(path: $0) })
    }

    /// The distinct paths of `callbacks`, in order: what the generated AASA covers and what a link state
    /// records as covered (queries apart).
    public var callbackPaths: [String] {
        var out: [String] = []
        for callback in callbacks where !out.contains(callback.path) { out.append(callback.path) }
        return out
    }
}

/// The scheduler's view of one link domain.
public struct DomainScheduleRecord: Sendable, Equatable {
    public let domain: String
    public let consecutiveTransientFailures: Int

    /// Creates a schedule record.
    public init(domain: String, consecutiveTransientFailures: Int) {
        self.domain = domain
        self.consecutiveTransientFailures = consecutiveTransientFailures
    }
}

/// The limits of docs/protocol.md#app-limits, enforced by the store (PostgreSQL's triggers) and reported
/// by it as these cases.
public enum AppLimitError: Error, Equatable, Sendable {
    /// `native_app_limit`: 10 iOS or 10 Android apps per environment, or 5 fingerprints per Android app.
    case nativeAppLimit
    /// `native_app_team_mismatch`: every iOS app of an environment belongs to one Apple team.
    case teamMismatch
}
