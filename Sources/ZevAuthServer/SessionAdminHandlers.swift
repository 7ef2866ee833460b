import Authorize
import Crypto
import Foundation
import HTTPServer
import PostgresStore

/// The admin calls of the sessions area (docs/protocol.md#admin-api): the environment's session settings
/// and secret-key rotation, all with `Authorization: Bearer sk_…`.
struct SessionAdminHandlers: Sendable {
    let context: ServerContext

    /// The environment of the calling secret key, and the key's hash; or the answer to send.
    private func environment(_ request: HTTPRequest) throws -> Result<(EnvironmentRecord, keyHash: String), AdminHandlers.Stop> {
        switch try AdminHandlers(context: context).actor(request) {
        case .none: return .failure(AdminHandlers.Stop(AdminHandlers.invalidToken))
        case .operator:
            return .failure(AdminHandlers.Stop(Wire.error(.forbidden, "Use the environment's secret key (sk_…) for this call.")))
        case .environment(let environment):
            return .success((environment, Crypto.hexSHA256(Wire.bearer(request) ?? "")))
        }
    }

    // MARK: Settings

    /// The bounds of each setting (docs/protocol.md#session-windows): windows may be shortened, never lengthened past
    /// 90 and 30 days; the access-token lifetime is 5–60 minutes; the reuse grace 0–60 seconds.
    static let bounds: [(field: String, range: ClosedRange<Int>, unit: String)] = [
        ("sessionMaxAgeDays", 1...90, "days (a session may be shortened, never lengthened past 90 days)"),
        ("sessionIdleDays", 1...30, "days (a session may be shortened, never lengthened past 30 days)"),
        ("accessTokenTtlMinutes", 5...60, "minutes"),
        ("refreshReuseGraceSeconds", 0...60, "seconds"),
    ]

    static func settingsBody(_ environment: EnvironmentRecord) -> [String: Any] {
        [
            "sessionMaxAgeDays": environment.sessionMaxAgeDays, "sessionIdleDays": environment.sessionIdleDays,
            "accessTokenTtlMinutes": environment.accessTokenTTLMinutes,
            "refreshReuseGraceSeconds": environment.refreshReuseGraceSeconds,
        ]
    }

    /// `GET /v1/admin/settings` → 200 with the four settings.
    func getSettings(_ request: HTTPRequest) throws -> HTTPResponse {
        switch try environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (environment, _)): return Wire.anyJSON(status: 200, Self.settingsBody(environment))
        }
    }

    /// `PATCH /v1/admin/settings` with any of the four settings → 200 with all four. A field out of its
    /// bounds, not a whole number, or unknown → 400 `invalid_request` naming it, and nothing changes.
    /// Windows are computed at each refresh from the current settings, so a shorter window applies to
    /// existing sessions at once; a longer one never revives a session already past the old one.
    func patchSettings(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (value, _)): environment = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        // An unknown member is described without its name: a description never echoes request input
        // (docs/protocol.md, "Errors"); only the known fields are named.
        if body.fields.keys.contains(where: { name in !Self.bounds.contains { $0.field == name } }) {
            let known = Self.bounds.map(\.field).joined(separator: ", ")
            return Wire.error(.invalidRequest, "The body has a field that is not a setting; the settings are \(known).")
        }
        var values: [String: Int] = [:]
        for (field, range, unit) in Self.bounds {
            guard let raw = body.fields[field] else { continue }
            // JSONSerialization gives NSNumber for numbers and booleans alike (a boolean's objCType is "c"):
            // refuse booleans and fractions.
            guard let number = raw as? NSNumber, String(cString: number.objCType) != "c",
                let value = Int(exactly: number.doubleValue), range.contains(value)
            else {
                return AdminHandlers.invalidField(field, "must be a whole number from \(range.lowerBound) to \(range.upperBound) \(unit)")
            }
            values[field] = value
        }
        let update = SessionSettingsUpdate(
            sessionMaxAgeDays: values["sessionMaxAgeDays"], sessionIdleDays: values["sessionIdleDays"],
            accessTokenTTLMinutes: values["accessTokenTtlMinutes"], refreshReuseGraceSeconds: values["refreshReuseGraceSeconds"])
        guard let updated = try context.store.updateSessionSettings(environmentID: environment.id, update, now: context.clock.now()) else {
            return Wire.error(.notFound, "The environment no longer exists.", status: 404)
        }
        return Wire.anyJSON(status: 200, Self.settingsBody(updated))
    }

    // MARK: Secret keys

    static func keyBody(_ key: SecretKeyRecord, current: Bool) -> [String: Any] {
        [
            "id": key.id, "suffix": key.suffix, "createdAt": Wire.timestamp(key.createdAt),
            "revokedAt": key.revokedAt.map(Wire.timestamp) ?? NSNull(), "current": current,
        ]
    }

    /// `POST /v1/admin/keys` → 201 `{"id","secretKey","suffix","createdAt"}`: a new key for the caller's
    /// environment that works at once; the key is shown only here (stored as SHA-256).
    func createKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (value, _)): environment = value
        }
        let secret = try Crypto.mintToken(prefix: environment.kind == "production" ? "sk_live_" : "sk_test_")
        let key = try context.store.addSecretKey(
            environmentID: environment.id, keyHash: Crypto.hexSHA256(secret), suffix: String(secret.suffix(4)), now: context.clock.now())
        return Wire.anyJSON(
            status: 201, ["id": key.id, "secretKey": secret, "suffix": key.suffix, "createdAt": Wire.timestamp(key.createdAt)])
    }

    /// `GET /v1/admin/keys?cursor=&limit=` → `{"items": [{"id","suffix","createdAt","revokedAt","current"}],
    /// "nextCursor"}`, live and revoked keys, never a key itself; `current` marks the calling key.
    func listKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        let keyHash: String
        switch try self.environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (value, hash)): (environment, keyHash) = (value, hash)
        }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        let callingID = try context.store.secretKeyID(keyHash: keyHash)
        let items = try context.store.secretKeys(environmentID: environment.id, after: paging.cursor, limit: paging.limit + 1)
        let page = Array(items.prefix(paging.limit))
        return Wire.anyJSON(
            status: 200,
            [
                "items": page.map { Self.keyBody($0, current: $0.id == callingID) },
                "nextCursor": items.count > paging.limit ? (page.last?.id ?? "") : NSNull(),
            ] as [String: Any])
    }

    /// `DELETE /v1/admin/keys/{id}` → 204 (also when it was revoked already); 404 `not_found` for another
    /// environment's or an unknown key; 409 `conflict` for the environment's last live key. The calling
    /// key may revoke itself when another live key exists.
    func revokeKey(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try self.environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (value, _)): environment = value
        }
        switch try context.store.revokeSecretKey(environmentID: environment.id, id: id, now: context.clock.now()) {
        case .revoked:
            return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        case .notFound:
            return Wire.error(.notFound, "No secret key with this id in this environment.", status: 404)
        case .lastKey:
            return Wire.error(
                .conflict, "This is the environment's last live secret key; create another (POST /v1/admin/keys) first.", status: 409)
        }
    }
}
