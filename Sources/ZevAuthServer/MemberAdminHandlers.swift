import Authorize
import Encoding
import Foundation
import HTTPServer

/// The admin API's members and operators calls (docs/protocol.md#admin-calls, docs/console.md "Members"):
/// a project's members for the operator token or a secret key of one of that project's environments, and
/// the operator marks for the operator token only. Every change records its audit row in its transaction.
struct MemberAdminHandlers: Sendable {
    let context: ServerContext

    private var members: ProjectMembers { ProjectMembers(store: context.tenancy.members) }

    /// The sentence of a refused demotion or removal of the last owner.
    static let lastOwnerMessage = "A project keeps at least one owner: make another member an owner first."

    // MARK: Callers

    /// The audit origin of a caller allowed to manage `projectID`'s members, or the answer to send: 401 for
    /// no caller, 403 for a secret key of another project.
    /// Who calls a project's members API: the operator token, or a secret key of that project. A refused
    /// change (`action` given; reads pass nil) is recorded as the other admin calls' refusals are
    /// (docs/console.md, "Audit log").
    private func origin(_ request: HTTPRequest, projectID: String, action: String?, target: String? = nil) throws -> Result<
        ChangeOrigin, AdminHandlers.Stop
    > {
        let admin = AdminHandlers(context: context)
        let actor: AuditActor
        switch try admin.caller(request) {
        case .none:
            if let action { try admin.audit.refused(nil, request, action, target: target) }
            return .failure(AdminHandlers.Stop(AdminHandlers.invalidToken))
        case .operator: actor = .operatorToken
        case .environment(let environment, let keyHash):
            guard environment.projectID == projectID.lowercased() else {
                if let action {
                    try admin.audit.refused(.environment(environment, keyHash: keyHash), request, action, target: target)
                }
                return .failure(AdminHandlers.Stop(Wire.error(.forbidden, "A secret key manages only its own project's members.")))
            }
            actor = .secretKey(id: try context.tenancy.secretKeys.secretKeyID(keyHash: keyHash) ?? "")
        }
        return .success(origin(request, actor: actor))
    }

    /// The operator token's origin for `action`; anyone else is refused and recorded.
    private func operatorOrigin(_ request: HTTPRequest, action: String, target: String? = nil) throws -> Result<
        ChangeOrigin, AdminHandlers.Stop
    > {
        let admin = AdminHandlers(context: context)
        let caller = try admin.caller(request)
        switch caller {
        case .none:
            try admin.audit.refused(nil, request, action, target: target)
            return .failure(AdminHandlers.Stop(AdminHandlers.invalidToken))
        case .environment:
            try admin.audit.refused(caller, request, action, target: target)
            return .failure(AdminHandlers.Stop(Wire.error(.forbidden, "Only the operator token may do this.")))
        case .operator: return .success(origin(request, actor: .operatorToken))
        }
    }

    private func origin(_ request: HTTPRequest, actor: AuditActor) -> ChangeOrigin {
        ChangeOrigin(actor: actor, clientAddress: ClientAddress.of(request, configuration: context.configuration), at: context.clock.now())
    }

    // MARK: Fields

    /// `role` of a body: one of `owner`, `admin`, `viewer`.
    private static func role(_ body: JSONObjectBody) -> Result<ProjectRole, AdminHandlers.Stop> {
        guard case .value(let raw) = body.string("role"), let role = ProjectRole(wire: raw) else {
            return .failure(AdminHandlers.Stop(AdminHandlers.invalidField("role", "must be one of owner, admin or viewer")))
        }
        return .success(role)
    }

    /// `email` (or another field holding an address) of a body, parsed as `EmailAddress`.
    static func email(_ body: JSONObjectBody, field: String = "email") -> Result<EmailAddress, AdminHandlers.Stop> {
        guard case .value(let raw) = body.string(field) else {
            return .failure(AdminHandlers.Stop(AdminHandlers.invalidField(field, "is required (a string)")))
        }
        switch EmailAddress.parse(raw) {
        case .success(let email): return .success(email)
        case .failure(let problem): return .failure(AdminHandlers.Stop(AdminHandlers.invalidField(field, problem.explanation)))
        }
    }

    static let noAccount = Wire.error(.notFound, "No open account has this email address.")

    private static func answer(_ refusal: MemberRefusal) -> HTTPResponse {
        switch refusal {
        case .noProject: return Wire.error(.notFound, "There is no such project.")
        case .noAccount: return noAccount
        case .alreadyMember: return Wire.error(.conflict, "This account is already a member of the project.")
        case .notMember: return Wire.error(.notFound, "This account is no member of the project.")
        case .lastOwner: return Wire.error(.conflict, lastOwnerMessage)
        }
    }

    // MARK: Members

    /// `GET /v1/admin/projects/{id}/members?cursor=&limit=` → `{"items": [{"userId","email","name","role",
    /// "addedAt"}], "nextCursor": …}` in the order members were added.
    func list(_ request: HTTPRequest, projectID: String) throws -> HTTPResponse {
        if case .failure(let stop) = try origin(request, projectID: projectID, action: nil) { return stop.response }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        do {
            let page = try members.list(projectID: projectID, cursor: paging.cursor, limit: paging.limit)
            return Wire.json(status: 200, ListBody(items: page.items.map(MemberBody.init), nextCursor: page.nextCursor))
        } catch let refusal as MemberRefusal {
            return Self.answer(refusal)
        }
    }

    /// `POST /v1/admin/projects/{id}/members {"email","role"}` → 201 with the member; 404 for an address
    /// with no open account, 409 for an account already a member.
    func add(_ request: HTTPRequest, projectID: String) throws -> HTTPResponse {
        try change(request, projectID: projectID, action: "member.add") { origin in
            guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
            let email: EmailAddress
            switch Self.email(body) {
            case .failure(let stop): return stop.response
            case .success(let value): email = value
            }
            let role: ProjectRole
            switch Self.role(body) {
            case .failure(let stop): return stop.response
            case .success(let value): role = value
            }
            return Wire.json(status: 201, MemberBody(member: try members.add(projectID: projectID, email: email, role: role, by: origin)))
        }
    }

    /// `PATCH /v1/admin/projects/{id}/members/{userId} {"role"}` → 200 with the member; 409 when it would
    /// leave the project without an owner.
    func update(_ request: HTTPRequest, projectID: String, userID: String) throws -> HTTPResponse {
        try change(request, projectID: projectID, action: "member.update", target: userID) { origin in
            guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
            let role: ProjectRole
            switch Self.role(body) {
            case .failure(let stop): return stop.response
            case .success(let value): role = value
            }
            let member = try members.changeRole(projectID: projectID, userID: userID.lowercased(), to: role, by: origin)
            return Wire.json(status: 200, MemberBody(member: member))
        }
    }

    /// `DELETE /v1/admin/projects/{id}/members/{userId}` → 204; 409 for the last owner.
    func remove(_ request: HTTPRequest, projectID: String, userID: String) throws -> HTTPResponse {
        try change(request, projectID: projectID, action: "member.remove", target: userID) { origin in
            try members.remove(projectID: projectID, userID: userID.lowercased(), by: origin)
            return HTTPResponse(status: 204)
        }
    }

    /// One member change: the caller's origin first (a refused caller gets its answer, and nothing else
    /// runs), then `body` with that origin; a `MemberRefusal` it throws is answered by `answer(_:)`.
    /// - Throws: what `origin(_:projectID:action:target:)` or `body` throws other than `MemberRefusal`
    ///   (`StoreUnavailable` → 503).
    private func change(
        _ request: HTTPRequest, projectID: String, action: String, target: String? = nil,
        _ body: (ChangeOrigin) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        let origin: ChangeOrigin
        switch try self.origin(request, projectID: projectID, action: action, target: target) {
        case .failure(let stop): return stop.response
        case .success(let value): origin = value
        }
        do {
            return try body(origin)
        } catch let refusal as MemberRefusal {
            return Self.answer(refusal)
        }
    }

    // MARK: Operators

    /// `POST /v1/admin/operators {"email"}` (operator token) → 201 `{"userId","email","name","markedAt"}`;
    /// 404 for an address with no open account, 409 for an account already marked.
    func markOperator(_ request: HTTPRequest) throws -> HTTPResponse {
        let origin: ChangeOrigin
        switch try operatorOrigin(request, action: "operator.mark") {
        case .failure(let stop): return stop.response
        case .success(let value): origin = value
        }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        let email: EmailAddress
        switch Self.email(body) {
        case .failure(let stop): return stop.response
        case .success(let value): email = value
        }
        do {
            return Wire.json(status: 201, OperatorBody(record: try members.markOperator(email: email, by: origin)))
        } catch let refusal as OperatorRefusal {
            switch refusal {
            case .noAccount: return Self.noAccount
            case .alreadyOperator: return Wire.error(.conflict, "This account is already an operator.")
            case .notOperator: return Wire.error(.notFound, "This account is no operator.")
            }
        }
    }

    /// `DELETE /v1/admin/operators/{userId}` (operator token) → 204; 404 when the account is no operator.
    func unmarkOperator(_ request: HTTPRequest, userID: String) throws -> HTTPResponse {
        let origin: ChangeOrigin
        switch try operatorOrigin(request, action: "operator.unmark", target: userID) {
        case .failure(let stop): return stop.response
        case .success(let value): origin = value
        }
        do {
            try members.unmarkOperator(userID: userID.lowercased(), by: origin)
            return HTTPResponse(status: 204)
        } catch is OperatorRefusal {
            return Wire.error(.notFound, "This account is no operator.")
        }
    }
}

/// A member as the admin API writes it: `{"userId","email","name","role","addedAt"}`.
struct MemberBody: JSONEncodable {
    let member: ProjectMember

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("userId", member.userID)
            object.field("email", member.email)
            object.field("name", member.name)
            object.field("role", member.role.rawValue)
            object.field("addedAt", TimestampBody(date: member.addedAt))
        }
    }
}

/// An operator as the admin API writes it: `{"userId","email","name","markedAt"}`.
struct OperatorBody: JSONEncodable {
    let record: OperatorRecord

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("userId", record.userID)
            object.field("email", record.email)
            object.field("name", record.name)
            object.field("markedAt", TimestampBody(date: record.markedAt))
        }
    }
}

extension Routes {
    /// The members and operators calls.
    mutating func registerMembers() {
        let handlers = MemberAdminHandlers(context: context)
        add("GET", "/v1/admin/projects/{id}/members") { request, parameters in try handlers.list(request, projectID: parameters["id"] ?? "")
        }
        add("POST", "/v1/admin/projects/{id}/members") { request, parameters in try handlers.add(request, projectID: parameters["id"] ?? "")
        }
        add("PATCH", "/v1/admin/projects/{id}/members/{userId}") { request, parameters in
            try handlers.update(request, projectID: parameters["id"] ?? "", userID: parameters["userId"] ?? "")
        }
        add("DELETE", "/v1/admin/projects/{id}/members/{userId}") { request, parameters in
            try handlers.remove(request, projectID: parameters["id"] ?? "", userID: parameters["userId"] ?? "")
        }
        add("POST", "/v1/admin/operators") { request, _ in try handlers.markOperator(request) }
        add("DELETE", "/v1/admin/operators/{userId}") { request, parameters in
            try handlers.unmarkOperator(request, userID: parameters["userId"] ?? "")
        }
    }
}
