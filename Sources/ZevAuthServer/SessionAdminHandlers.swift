import Authorize
import Encoding
import Foundation
import HTTPServer

/// The admin calls of the sessions area (docs/protocol.md#admin-api): the environment's session settings
/// and secret-key rotation, all with `Authorization: Bearer sk_…`.
struct SessionAdminHandlers: Sendable {
    let context: ServerContext

    /// The environment of the calling secret key, and the key's digest; or the answer to send.
    private func environment(_ request: HTTPRequest) throws -> Result<(EnvironmentRecord, keyHash: String), AdminHandlers.Stop> {
        switch try AdminHandlers(context: context).caller(request) {
        case .none: return .failure(AdminHandlers.Stop(AdminHandlers.invalidToken))
        case .operator:
            return .failure(AdminHandlers.Stop(Wire.error(.forbidden, "Use the environment's secret key (sk_…) for this call.")))
        case .environment(let environment, let keyHash):
            return .success((environment, keyHash))
        }
    }

    /// The secret-key caller of the change `action`, or the answer to send (recorded as a `refused` row).
    private func changer(_ request: HTTPRequest, _ action: String, target: String? = nil) throws -> Result<
        (environment: EnvironmentRecord, caller: AdminCaller), AdminHandlers.Stop
    > {
        try admin.requireEnvironment(request, action: action, target: target)
    }

    private var admin: AdminHandlers { AdminHandlers(context: context) }

    private var keys: SecretKeys { SecretKeys(store: context.tenancy.secretKeys, secrets: context.secrets) }

    // MARK: Settings

    /// The settings member naming the environment's ID-token algorithm (`RS256` or `ES256`).
    static let signingAlgorithmField = "idTokenSigningAlg"

    /// `GET /v1/admin/settings` → 200 with the four settings.
    func getSettings(_ request: HTTPRequest) throws -> HTTPResponse {
        switch try environment(request) {
        case .failure(let stop): return stop.response
        case .success(let (environment, _)): return Wire.json(status: 200, SettingsBody(environment: environment))
        }
    }

    /// `PATCH /v1/admin/settings` with any of the four settings → 200 with all four. A field out of its
    /// bounds (`SessionSetting`), not a whole number, or unknown → 400 `invalid_request` naming it, and
    /// nothing changes. Windows are computed at each refresh from the current settings, so a shorter window
    /// applies to existing sessions at once; a longer one never revives a session already past the old one.
    func patchSettings(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "settings.update") {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        // An unknown member is described without its name: a description never echoes request input
        // (docs/protocol.md, "Errors"); only the known fields are named.
        let extraFields = [
            Self.signingAlgorithmField, SettingsBody.requireVerifiedEmail, SettingsBody.requirePushedAuthorizationRequests,
            SettingsBody.requireDPoP,
        ]
        if body.names.contains(where: { SessionSetting(rawValue: $0) == nil && !extraFields.contains($0) }) {
            let known = (SessionSetting.allCases.map(\.field) + extraFields).joined(separator: ", ")
            return Wire.error(.invalidRequest, "The body has a field that is not a setting; the settings are \(known).")
        }
        var values: [SessionSetting: Int] = [:]
        for setting in SessionSetting.allCases {
            guard let raw = body[setting.field] else { continue }
            // A whole number only (`30` or `30.0`): booleans, strings, null and fractions are refused. Fields
            // are judged in `SessionSetting.allCases` order.
            let whole: Int?
            switch raw {
            case .int(let number): whole = number
            case .double(let number): whole = Int(exactly: number)
            default: whole = nil
            }
            guard let value = whole, setting.range.contains(value) else {
                return AdminHandlers.invalidField(setting.field, setting.rule)
            }
            values[setting] = value
        }
        // The ID tokens' algorithm (docs/protocol.md, "OpenID Connect"): exactly "RS256" or "ES256".
        var algorithm: SigningAlgorithm?
        if let raw = body[Self.signingAlgorithmField] {
            guard let name = raw.stringValue, let parsed = SigningAlgorithm(rawValue: name) else {
                return AdminHandlers.invalidField(Self.signingAlgorithmField, "must be \"RS256\" or \"ES256\"")
            }
            algorithm = parsed
        }
        var requireVerified: Bool?
        if let raw = body[SettingsBody.requireVerifiedEmail] {
            guard case .bool(let flag) = raw else {
                return AdminHandlers.invalidField(SettingsBody.requireVerifiedEmail, "must be true or false")
            }
            requireVerified = flag
        }
        var requirePushed: Bool?
        if let raw = body[SettingsBody.requirePushedAuthorizationRequests] {
            guard case .bool(let flag) = raw else {
                return AdminHandlers.invalidField(SettingsBody.requirePushedAuthorizationRequests, "must be true or false")
            }
            requirePushed = flag
        }
        var requireDPoP: Bool?
        if let raw = body[SettingsBody.requireDPoP] {
            guard case .bool(let flag) = raw else { return AdminHandlers.invalidField(SettingsBody.requireDPoP, "must be true or false") }
            requireDPoP = flag
        }
        switch try UpdateSessionSettings(store: context.tenancy.sessionSettings)(
            environmentID: environment.id, values: values, idTokenSigningAlg: algorithm, requireVerifiedEmail: requireVerified,
            requirePushedAuthorizationRequests: requirePushed, requireDPoP: requireDPoP, now: context.clock.now(),
            audit: try admin.audit.entry(caller, request, "settings.update"))
        {
        case .outOfBounds(let setting): return AdminHandlers.invalidField(setting.field, setting.rule)
        case .environmentGone: return Wire.error(.notFound, "The environment no longer exists.")
        case .updated(let updated): return Wire.json(status: 200, SettingsBody(environment: updated))
        }
    }

    // MARK: Secret keys

    /// `POST /v1/admin/keys` → 201 `{"id","secretKey","suffix","createdAt"}`: a new key for the caller's
    /// environment that works at once; the key is shown only here (stored as SHA-256).
    func createKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "secret_key.create") {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        // The call takes no fields: an empty body or `{}`; anything else is refused, as every JSON call
        // refuses a body it cannot read.
        guard request.body.isEmpty || JSONObjectBody(request.body)?.names.isEmpty == true else {
            return Wire.error(.invalidRequest, "This call takes no body, or an empty JSON object.")
        }
        let created = try keys.create(
            for: environment, now: context.clock.now(), audit: try admin.audit.entry(caller, request, "secret_key.create"))
        return Wire.json(status: 201, CreatedKeyBody(record: created.record, secret: created.secret))
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
        let page = try keys.list(environmentID: environment.id, callingKeyHash: keyHash, cursor: paging.cursor, limit: paging.limit)
        return Wire.json(status: 200, ListBody(items: page.items.map(SecretKeyBody.init), nextCursor: page.nextCursor))
    }

    /// `DELETE /v1/admin/keys/{id}` → 204 (also when it was revoked already); 404 `not_found` for another
    /// environment's or an unknown key; 409 `conflict` for the environment's last live key. The calling
    /// key may revoke itself when another live key exists.
    func revokeKey(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try changer(request, "secret_key.revoke", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        let entry = try admin.audit.entry(caller, request, "secret_key.revoke", target: id)
        switch try keys.revoke(environmentID: environment.id, id: id, now: context.clock.now(), audit: entry) {
        case .revoked:
            return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        case .notFound:
            return Wire.error(.notFound, "No secret key with this id in this environment.")
        case .lastKey:
            return Wire.error(
                .conflict, "This is the environment's last live secret key; create another (POST /v1/admin/keys) first.")
        }
    }
}
