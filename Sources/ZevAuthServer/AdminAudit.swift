import Authorize
import Encoding
import Foundation
import HTTPServer

/// The audit rows of admin calls (docs/console.md, "Audit log"; docs/protocol.md#admin-audit): who called
/// (the operator token, or the calling secret key by its id), from which client address (the one the rate
/// limits use, `ClientAddress`), and when. A change passes its entry to the store method that makes it, which
/// writes the row in the change's own transaction; a refused call records a `refused` row here.
struct AdminAudit: Sendable {
    let context: ServerContext

    /// The actor of `caller`: the operator token, or the calling key's id (never the key). A key revoked
    /// between the lookup and this read is recorded by no id (`unknown`).
    /// - Throws: `StoreUnavailable`.
    func actor(_ caller: AdminCaller) throws -> AuditActor {
        switch caller {
        case .operator: return .operatorToken
        case .environment(_, let keyHash):
            return try context.tenancy.secretKeys.secretKeyID(keyHash: keyHash).map { .secretKey(id: $0) } ?? .unknown
        }
    }

    /// The entry of `action` by `caller`: a secret key's entries carry its project and environment unless
    /// given (`projectLevel`: its project only, as for a domain, which both environments share); the
    /// operator's carry what is given.
    /// - Throws: `StoreUnavailable`.
    func entry(
        _ caller: AdminCaller, _ request: HTTPRequest, _ action: String, target: String? = nil, projectID: String? = nil,
        environmentID: String? = nil, subjectUserID: String? = nil, projectLevel: Bool = false
    ) throws -> AuditEntry {
        var project = projectID
        var environment = environmentID
        if case .environment(let record, _) = caller {
            project = project ?? record.projectID
            environment = projectLevel ? nil : environment ?? record.id
        }
        return AuditEntry(
            actor: try actor(caller), action: action, target: target, projectID: project, environmentID: environment,
            subjectUserID: subjectUserID, clientAddress: ClientAddress.of(request, configuration: context.configuration),
            at: context.clock.now())
    }

    /// Records that `action` was refused: to `caller` (a role's forbidden call), or, when the bearer named
    /// nobody, to an `unknown` actor (no bearer at all records nothing: there is no one to name).
    /// - Throws: `StoreUnavailable`.
    func refused(_ caller: AdminCaller?, _ request: HTTPRequest, _ action: String, target: String? = nil) throws {
        let entry: AuditEntry
        if let caller {
            entry = try self.entry(caller, request, action, target: target).refused
        } else {
            guard Wire.bearer(request) != nil else { return }
            entry =
                AuditEntry(
                    actor: .unknown, action: action, target: target,
                    clientAddress: ClientAddress.of(request, configuration: context.configuration), at: context.clock.now()
                ).refused
        }
        try context.tenancy.audit.record(entry)
    }
}

/// `{"id","at","actor":{"kind","id"},"action","target","projectId","environmentId","clientAddress","outcome"}`
/// (docs/protocol.md#admin-audit); absent values are `null`.
struct AuditRecordBody: JSONEncodable {
    let record: AuditRecord

    func encode(to writer: inout JSONWriter) {
        let entry = record.entry
        writer.object { object in
            object.field("id", record.id)
            object.field("at", Wire.timestamp(entry.at))
            object.field("actor") { actor in
                actor.object { fields in
                    fields.field("kind", entry.actor.kind)
                    fields.field("id", entry.actor.id)
                }
            }
            object.field("action", entry.action)
            object.field("target", entry.target)
            object.field("projectId", entry.projectID)
            object.field("environmentId", entry.environmentID)
            object.field("clientAddress", entry.clientAddress)
            object.field("outcome", entry.outcome.rawValue)
        }
    }
}

extension AdminHandlers {
    /// `GET /v1/admin/audit?cursor=&limit=` → `{"items": [AuditRecordBody…], "nextCursor"}`, newest first: the
    /// operator sees every row; a secret key its environment's rows and its project's project-level rows
    /// (docs/protocol.md#admin-audit). 400 `invalid_request` for a bad `limit`. Reading is not audited.
    func listAudit(_ request: HTTPRequest) throws -> HTTPResponse {
        let scope: AuditScope
        switch try actor(request) {
        case .none: return Self.invalidToken
        case .operator: scope = .deployment
        case .environment(let environment): scope = .environment(projectID: environment.projectID, environmentID: environment.id)
        }
        guard let paging = Paging(request) else { return Self.invalidField("limit", "must be a whole number from 1 to 100") }
        let page = try ListAudit(store: context.tenancy.auditLog)(scope, cursor: paging.cursor, limit: paging.limit)
        return Wire.json(status: 200, ListBody(items: page.items.map(AuditRecordBody.init), nextCursor: page.nextCursor))
    }
}

extension Routes {
    /// The audit log's list call.
    mutating func registerAudit() {
        let handlers = AdminHandlers(context: context)
        add("GET", "/v1/admin/audit") { request, _ in try handlers.listAudit(request) }
    }
}
