import Authorize
import Encoding
import Foundation
import HTTPServer

/// The registered callbacks (docs/protocol.md#admin-callbacks), authenticated by a secret key. A callback
/// is parsed once, when it is registered, and stored with its parts (sql/008).
extension AdminHandlers {
    /// `POST /v1/admin/callbacks {"uri"}` → 201 `{"id","uri","kind","createdAt"}`. Registration refuses what
    /// could never be safe (docs/protocol.md#callback-registration); a link needs a verified project domain.
    func addCallback(_ request: HTTPRequest) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try requireEnvironment(request, action: "callback.add") {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let raw) = body.string("uri") else { return Self.invalidField("uri", "is required (a string)") }
        let uri: RedirectURI
        switch RedirectURI.parse(raw) {
        case .failure(let problem): return Self.invalidField("uri", "is not a redirect URI this server accepts: \(problem.explanation)")
        case .success(let value): uri = value
        }
        let entry = try audit.entry(caller, request, "callback.add")
        switch try RegisterCallback(store: context.roundTrip.callbacks)(
            uri, environment: environment, now: context.clock.now(), audit: entry)
        {
        case .registered(let callback): return Wire.json(status: 201, Self.callbackBody(callback))
        case .domainNotVerified: return Self.invalidField("uri", "uses a domain that is not a verified domain of this project")
        case .duplicate: return Wire.error(.conflict, "This redirect URI is already registered.")
        }
    }

    /// `GET /v1/admin/callbacks?cursor=&limit=` → `{"items": […], "nextCursor": …}`.
    func listCallbacks(_ request: HTTPRequest) throws -> HTTPResponse {
        let environment: EnvironmentRecord
        switch try requireEnvironment(request) {
        case .failure(let stop): return stop.response
        case .success(let value): environment = value
        }
        guard let paging = Paging(request) else { return Self.invalidField("limit", "must be a whole number from 1 to 100") }
        let items = try context.roundTrip.callbacks.callbacks(environmentID: environment.id, after: paging.cursor, limit: paging.limit + 1)
        let page = Array(items.prefix(paging.limit))
        return Wire.json(
            status: 200,
            [
                "items": .array(page.map(Self.callbackBody)),
                "nextCursor": items.count > paging.limit ? .string(page.last?.id ?? "") : .null,
            ] as JSONValue)
    }

    /// `DELETE /v1/admin/callbacks/{id}` → 204, or 404 `not_found`.
    func deleteCallback(_ request: HTTPRequest, id: String) throws -> HTTPResponse {
        let (environment, caller): (EnvironmentRecord, AdminCaller)
        switch try requireEnvironment(request, action: "callback.delete", target: id) {
        case .failure(let stop): return stop.response
        case .success(let value): (environment, caller) = value
        }
        let entry = try audit.entry(caller, request, "callback.delete", target: id)
        guard try context.roundTrip.callbacks.deleteCallback(environmentID: environment.id, id: id, audit: entry) else {
            return Wire.error(.notFound, "No callback with this id in this environment.")
        }
        return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", "no-store")]))
    }

    /// `{"id","uri","kind","createdAt"}`.
    static func callbackBody(_ callback: CallbackRecord) -> JSONValue {
        [
            "id": .string(callback.id), "uri": .string(callback.uri), "kind": .string(callback.kind.rawValue),
            "createdAt": .string(Wire.timestamp(callback.createdAt)),
        ]
    }
}
