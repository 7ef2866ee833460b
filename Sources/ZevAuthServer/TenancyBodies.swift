import Association
import Authorize
import Encoding
import Foundation

// The typed JSON answers of the tenancy, app and association admin calls (docs/protocol.md#admin-api,
// docs/protocol.md#apps). Field names and values are the wire contract; the order is the order written.

/// `{"items": […], "nextCursor": "…" | null}`.
struct ListBody<Item: JSONEncodable>: JSONEncodable {
    let items: [Item]
    let nextCursor: String?

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("items", items)
            object.field("nextCursor", nextCursor)
        }
    }
}

/// A timestamp as the admin API writes it (RFC 3339, whole seconds, UTC).
struct TimestampBody: JSONEncodable {
    let date: Date
    func encode(to writer: inout JSONWriter) { writer.string(Wire.timestamp(date)) }
}

/// `POST /v1/admin/projects`'s answer: both environments' keys, the secret keys shown only here.
struct CreatedProjectBody: JSONEncodable {
    let project: CreatedProject

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", project.id)
            object.field("name", project.name)
            for (name, keys) in [("development", project.development), ("production", project.production)] {
                object.field(name, ["publishableKey": .string(keys.publishableKey), "secretKey": .string(keys.secretKey)] as JSONValue)
            }
        }
    }
}

/// A project in the operator's list (publishable keys only).
struct ProjectBody: JSONEncodable {
    let project: ProjectRecord

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", project.id)
            object.field("name", project.name)
            object.field("createdAt", TimestampBody(date: project.createdAt))
            object.field("development", ["publishableKey": .string(project.developmentPublishableKey)] as JSONValue)
            object.field("production", ["publishableKey": .string(project.productionPublishableKey)] as JSONValue)
        }
    }
}

/// A project domain with the token to publish.
struct DomainBody: JSONEncodable {
    let domain: DomainRecord

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("domain", domain.domain)
            object.field("verified", domain.verifiedAt != nil)
            object.field("hosted", domain.hosted)
            object.field("verificationToken", domain.verificationToken)
            object.field("verificationUrl", domain.verificationURL)
        }
    }
}

/// The settings of an environment: the four session settings, the ID tokens' algorithm,
/// `requireVerifiedEmail`, `requirePushedAuthorizationRequests` and `requireDPoP`.
struct SettingsBody: JSONEncodable {
    let environment: EnvironmentRecord

    /// The boolean setting's field (docs/protocol.md, "Email verification").
    static let requireVerifiedEmail = "requireVerifiedEmail"
    /// The boolean setting's field (docs/protocol.md#pushed-requests).
    static let requirePushedAuthorizationRequests = "requirePushedAuthorizationRequests"
    /// The boolean setting's field (docs/dpop.md, "Requiring DPoP").
    static let requireDPoP = "requireDPoP"

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            for setting in SessionSetting.allCases { object.field(setting.field, setting.value(in: environment)) }
            object.field(SessionAdminHandlers.signingAlgorithmField, environment.idTokenSigningAlg.rawValue)
            object.field(Self.requireVerifiedEmail, environment.requireVerifiedEmail)
            object.field(Self.requirePushedAuthorizationRequests, environment.requirePushedAuthorizationRequests)
            object.field(Self.requireDPoP, environment.requireDPoP)
        }
    }
}

/// A listed secret key (never the key itself).
struct SecretKeyBody: JSONEncodable {
    let listed: ListedSecretKey

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", listed.key.id)
            object.field("suffix", listed.key.suffix)
            object.field("createdAt", TimestampBody(date: listed.key.createdAt))
            object.field("revokedAt", listed.key.revokedAt.map(TimestampBody.init))
            object.field("current", listed.current)
        }
    }
}

/// `POST /v1/admin/keys`'s answer: the new key, shown only here.
struct CreatedKeyBody: JSONEncodable {
    let record: SecretKeyRecord
    let secret: String

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", record.id)
            object.field("secretKey", secret)
            object.field("suffix", record.suffix)
            object.field("createdAt", TimestampBody(date: record.createdAt))
        }
    }
}

/// An app with its `link` summary.
struct AppBody: JSONEncodable {
    let app: AppWithLink

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", app.app.id)
            object.field("platform", app.app.platform.rawValue)
            object.field("createdAt", TimestampBody(date: app.app.createdAt))
            object.field("productionCustomScheme", app.app.productionCustomScheme)
            switch app.app.identity {
            case .ios(let ios):
                object.field("bundleId", ios.bundleID.value)
                object.field("teamId", ios.teamID.value)
                object.field("appId", ios.appID)
            case .android(let android):
                object.field("packageName", android.packageName.value)
                object.field("sha256CertFingerprints", android.fingerprints.map(\.canonical))
            }
            object.field("link", LinkBody(summary: app.link))
        }
    }
}

/// An app's `link`: `{"status","checkedAt","nextCheckAt","domains","problems":[{"code","message","blocking","domain"}]}`.
struct LinkBody: JSONEncodable {
    let summary: LinkSummary

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("status", summary.status.rawValue)
            object.field("checkedAt", summary.checkedAt.map(TimestampBody.init))
            object.field("nextCheckAt", summary.nextCheckAt.map(TimestampBody.init))
            object.field("domains", summary.domains)
            object.field(
                "problems",
                summary.problems.map { item -> JSONValue in
                    [
                        "code": .string(item.problem.code), "message": .string(item.problem.message),
                        "blocking": .bool(item.problem.blocking), "domain": .string(item.domain),
                    ]
                })
        }
    }
}

/// `GET /v1/admin/association-files`'s answer: both generated files, embedded as they are served.
struct AssociationFilesBody: JSONEncodable {
    let files: GeneratedFiles

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("appleAppSiteAssociation") { $0.raw(files.aasa) }
            object.field("assetlinks") { $0.raw(files.assetLinks) }
        }
    }
}
