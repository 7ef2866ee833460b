import Authorize
import Encoding
import Foundation
import HTTPServer

/// A ZevID account as the admin API shows it (docs/protocol.md#admin-api): `{"id","email","name","passkeys"}`,
/// and `closedAt` (RFC 3339) once closed. `passkeys` is how many passkeys the account holds, 0 to 20
/// (docs/passkeys.md, "Events and emails").
struct UserBody: JSONEncodable {
    let user: UserRecord
    let passkeys: Int
    let closedAt: Date?

    init(_ user: UserRecord, passkeys: Int, closedAt: Date? = nil) {
        self.user = user
        self.passkeys = passkeys
        self.closedAt = closedAt
    }

    /// The record of `user` with its passkey count read now.
    /// - Throws: the store's error.
    init(_ user: UserRecord, context: ServerContext, closedAt: Date? = nil) throws {
        self.init(user, passkeys: try context.accounts.passkeys.passkeyCount(userID: user.id), closedAt: closedAt)
    }

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("id", user.id)
            object.field("email", user.email)
            object.field("name", user.name)
            object.field("passkeys", passkeys)
            object.fieldIfPresent("closedAt", closedAt.map(Wire.timestamp))
        }
    }
}

/// The operator's account calls of the admin API (the routes are registered with the round trip's).
extension AdminHandlers {
    /// `POST /v1/admin/users {"email","password","name"}` → 201 `{"id","email","name","passkeys"}` (`passkeys`
    /// 0); 409 when the email
    /// has an account. Each field is parsed here, once, into its type (`EmailAddress`, `NewPassword`,
    /// `DisplayName`), then `CreateUser` decides.
    func createUser(_ request: HTTPRequest) throws -> HTTPResponse {
        if case .failure(let stop) = try requireOperator(request, action: "account.create") { return stop.response }
        guard let body = JSONObjectBody(request.body) else { return Self.badBody }
        guard case .value(let rawEmail) = body.string("email") else { return Self.invalidField("email", "is required (a string)") }
        guard case .value(let rawPassword) = body.string("password") else { return Self.invalidField("password", "is required (a string)") }
        guard case .value(let rawName) = body.string("name") else { return Self.invalidField("name", "is required (a string)") }
        let email: EmailAddress
        switch EmailAddress.parse(rawEmail) {
        case .failure(let problem): return Self.invalidField("email", problem.explanation)
        case .success(let address): email = address
        }
        let password: NewPassword
        switch NewPassword.parse(rawPassword) {
        case .failure(let problem): return Self.invalidField("password", problem.explanation)
        case .success(let value): password = value
        }
        guard let name = DisplayName(rawName) else { return Self.invalidField("name", DisplayName.rule) }
        let create = CreateUser(store: context.accounts.createUser, passwords: context.accountPasswords)
        // The row names the new account by its id only, never its email address.
        let entry = try audit.entry(.operator, request, "account.create")
        switch try create(email: email, name: name, password: password, now: context.clock.now(), audit: entry) {
        case .created(let user): return Wire.json(status: 201, try UserBody(user, context: context))
        case .addressTaken: return Wire.error(.conflict, "An account with this email already exists.")
        }
    }
}
