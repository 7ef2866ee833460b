import Authorize
import Encoding
import Foundation
import HTTPServer

/// The operator's read calls of the admin API (docs/openapi.yaml): the deployment's projects, and a ZevID
/// account found by its email. Both answer the list shape `{"items": […], "nextCursor": …}`.
struct OperatorAdminHandlers: Sendable {
    let context: ServerContext

    /// The operator's answer to send instead, or nil when the bearer is the operator token.
    private func refusal(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch try AdminHandlers(context: context).actor(request) {
        case .none: return AdminHandlers.invalidToken
        case .environment: return Wire.error(.forbidden, "Only the operator token may do this.")
        case .operator: return nil
        }
    }

    /// `GET /v1/admin/projects?cursor=&limit=` (operator) → `{"items": [{"id","name","createdAt",
    /// "development": {"publishableKey"}, "production": {"publishableKey"}}], "nextCursor": …}` in creation
    /// order. No secret key is shown (they are stored only as hashes). 400 `invalid_request` for a bad `limit`.
    func listProjects(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = try refusal(request) { return refusal }
        guard let paging = Paging(request) else { return AdminHandlers.invalidField("limit", "must be a whole number from 1 to 100") }
        let page = try ListProjects(store: context.tenancy.projectList)(cursor: paging.cursor, limit: paging.limit)
        return Wire.json(status: 200, ListBody(items: page.items.map(ProjectBody.init), nextCursor: page.nextCursor))
    }

    /// `POST /v1/admin/users/search {"email"}` (operator) → `{"items": [{"id","email","name","closed","passkeys"}],
    /// "nextCursor": null}`: the account whose normalised email equals the given one's (at most one, open or
    /// closed). The email travels in the body, not the URL, so no access log or proxy log records it
    /// (docs/decisions.md, "Admin API"). 400 `invalid_request` when `email` is missing or not an address.
    func searchUsers(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = try refusal(request) { return refusal }
        guard let body = JSONObjectBody(request.body) else { return AdminHandlers.badBody }
        guard case .value(let raw) = body.string("email") else { return AdminHandlers.invalidField("email", "is required (a string)") }
        guard let email = EmailAddress(raw) else { return AdminHandlers.invalidField("email", "must be an email address") }
        let user = try FindUser(store: context.accounts.findUser)(email: email)
        var items: [JSONValue] = []
        if let user {
            items.append(
                .object([
                    ("id", .string(user.id)), ("email", .string(user.email)), ("name", .string(user.name)), ("closed", .bool(user.closed)),
                    ("passkeys", .int(try context.accounts.passkeys.passkeyCount(userID: user.id))),
                ]))
        }
        return Wire.json(status: 200, ListBody(items: items, nextCursor: nil))
    }
}

extension Routes {
    /// The operator's list calls: projects and the account search.
    mutating func registerOperator() {
        let handlers = OperatorAdminHandlers(context: context)
        add("GET", "/v1/admin/projects") { request, _ in try handlers.listProjects(request) }
        add("POST", "/v1/admin/users/search") { request, _ in try handlers.searchUsers(request) }
    }
}
