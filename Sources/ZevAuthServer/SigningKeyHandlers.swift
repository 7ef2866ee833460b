import Authorize
import Encoding
import Foundation
import HTTPServer

/// The JWKS and the operator's signing-key calls (docs/protocol.md, "JWKS"; docs/operations.md, "Signing
/// keys"; docs/openapi.yaml).
struct SigningKeyHandlers: Sendable {
    let context: ServerContext

    private var ring: SigningKeyRing? { context.roundTrip.signingKeys }

    private static let unavailable = Wire.error(
        ErrorAnswer(
            .temporarilyUnavailable, "Signing keys need ZEVAUTH_ENCRYPTION_KEY; this server has none.",
            condition: .unavailable(retryAfterSeconds: 1)))

    /// `GET /.well-known/jwks.json` → `{"keys": [JWK…]}` (RFC 7517 §5): for each algorithm the current
    /// key, the next key and the retired keys whose tokens may still be live, with
    /// `Cache-Control: public, max-age=300`.
    func jwks(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let ring else { return Self.unavailable }
        let keys = try ring.published()
        var writer = JSONWriter(capacity: 2048)
        writer.object { body in
            body.field("keys") { array in
                array.raw(Array("[".utf8))
                array.raw(Array(keys.map(\.publicJWK).joined(separator: ",").utf8))
                array.raw(Array("]".utf8))
            }
        }
        var headers = HTTPHeaders()
        headers.set("Content-Type", "application/json")
        headers.set("Cache-Control", "public, max-age=\(Int(SigningKeyPolicy.jwksCacheSeconds))")
        return HTTPResponse(status: 200, headers: headers, body: writer.bytes)
    }

    /// The operator's answer to send instead, or nil when the bearer is the operator token.
    private func refusal(_ request: HTTPRequest) throws -> HTTPResponse? {
        switch try AdminHandlers(context: context).actor(request) {
        case .none: return AdminHandlers.invalidToken
        case .environment: return Wire.error(.forbidden, "Only the operator token may do this.")
        case .operator: return nil
        }
    }

    private func listing(_ ring: SigningKeyRing) throws -> HTTPResponse {
        Wire.json(status: 200, ListBody(items: try ring.published().map(SigningKeyBody.init), nextCursor: nil))
    }

    /// `GET /v1/admin/signing-keys` (operator) → `{"items": [{"kid","alg","state","createdAt",
    /// "activatesAt","retiresAt"}], "nextCursor": null}`: the published keys, read afresh. Never a private key.
    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        if let refusal = try refusal(request) { return refusal }
        guard let ring else { return Self.unavailable }
        // The operator sees the database as it is, not this instance's copy of a few seconds ago.
        ring.invalidate()
        return try listing(ring)
    }

    /// `POST /v1/admin/signing-keys/rotate` (operator; no body or `{}`) → 200 with the keys after the
    /// rotation (the list's shape); 409 `conflict` with `Retry-After` while a next key has been published
    /// for less than the JWKS cache time, saying when rotation becomes possible.
    func rotate(_ request: HTTPRequest) throws -> HTTPResponse {
        let admin = AdminHandlers(context: context)
        if case .failure(let stop) = try admin.requireOperator(request, action: "signing_key.rotate") { return stop.response }
        guard request.body.isEmpty || JSONObjectBody(request.body)?.names.isEmpty == true else {
            return Wire.error(.invalidRequest, "This call takes no body, or an empty JSON object.")
        }
        guard let ring, let maker = ring.maker else { return Self.unavailable }
        let now = context.clock.now()
        let outcome = try RotateSigningKeys(store: ring.store, maker: maker)(
            now: now, audit: try admin.audit.entry(.operator, request, "signing_key.rotate"))
        ring.invalidate()
        switch outcome {
        case .rotated:
            context.log.write("signing keys rotated")
            return try listing(ring)
        case .tooEarly(let possibleAt):
            var response = Wire.error(
                .conflict,
                "The next signing keys have been published for less than \(Int(SigningKeyPolicy.jwksCacheSeconds)) seconds "
                    + "(the JWKS cache time); rotation is possible from \(Wire.timestamp(possibleAt)).")
            response.headers.set("Retry-After", String(max(1, Int(possibleAt.timeIntervalSince(now).rounded(.up)))))
            return response
        }
    }

    /// `POST /v1/admin/signing-keys/{kid}/revoke` (operator) → 200 `{"kid","alg","state":"revoked",
    /// "revokedAt","promotedKid"}`: the key leaves the JWKS and stops verifying hints at once (on other
    /// instances within a few seconds); a current key's next key signs from now on, without waiting.
    /// 404 `not_found` for a kid that is not published.
    func revoke(_ request: HTTPRequest, kid: String) throws -> HTTPResponse {
        let admin = AdminHandlers(context: context)
        if case .failure(let stop) = try admin.requireOperator(request, action: "signing_key.revoke", target: kid) {
            return stop.response
        }
        guard let ring, let maker = ring.maker else { return Self.unavailable }
        let now = context.clock.now()
        let entry = try admin.audit.entry(.operator, request, "signing_key.revoke", target: kid)
        guard let revoked = try RevokeSigningKey(store: ring.store, maker: maker)(kid: kid, now: now, audit: entry) else {
            return Wire.error(.notFound, "No published signing key has this kid.")
        }
        ring.invalidate()
        context.log.write("signing key revoked kid=\(revoked.kid) alg=\(revoked.algorithm.rawValue) was=\(revoked.previousState.rawValue)")
        return Wire.json(status: 200, RevokedKeyBody(revocation: revoked, at: now))
    }
}

/// One key of the operator's list.
struct SigningKeyBody: JSONEncodable {
    let record: SigningKeyRecord
    init(_ record: SigningKeyRecord) { self.record = record }

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("kid", record.kid)
            object.field("alg", record.algorithm.rawValue)
            object.field("state", record.state.rawValue)
            object.field("createdAt", TimestampBody(date: record.createdAt))
            object.field("activatesAt", record.activatesAt.map(TimestampBody.init))
            object.field("retiresAt", record.retiresAt.map(TimestampBody.init))
        }
    }
}

/// The revocation's answer.
struct RevokedKeyBody: JSONEncodable {
    let revocation: SigningKeyRevocation
    let at: Date

    func encode(to writer: inout JSONWriter) {
        writer.object { object in
            object.field("kid", revocation.kid)
            object.field("alg", revocation.algorithm.rawValue)
            object.field("state", "revoked")
            object.field("revokedAt", TimestampBody(date: at))
            object.field("promotedKid", revocation.promotedKID)
        }
    }
}

extension Routes {
    /// The JWKS and the operator's signing-key calls.
    mutating func registerSigningKeys() {
        let handlers = SigningKeyHandlers(context: context)
        add("GET", "/.well-known/jwks.json") { request, _ in try handlers.jwks(request) }
        add("GET", "/v1/admin/signing-keys") { request, _ in try handlers.list(request) }
        add("POST", "/v1/admin/signing-keys/rotate") { request, _ in try handlers.rotate(request) }
        add("POST", "/v1/admin/signing-keys/{kid}/revoke") { request, parameters in
            try handlers.revoke(request, kid: parameters["kid"] ?? "")
        }
    }
}
