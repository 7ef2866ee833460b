import Authorize
import Encoding
import HTTPServer
import Testing

@testable import ZevAuthServer

/// The one error renderer (docs/protocol.md#json-error-body, docs/protocol.md#error-codes): each code's
/// status and headers, JSON or HTML by place, and the debug detail in the log only. In process: no database.
@Suite struct ErrorRendererTests {
    static func body(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(response.body) }

    @Test(arguments: OAuthErrorCode.allCases)
    func everyCodeAnswersItsStatusWithTheStandardBody(_ code: OAuthErrorCode) throws {
        let response = ErrorRenderer.render(ErrorAnswer(code, "A sentence."), at: .api)
        #expect(response.status == code.httpStatus)
        // A bad nonce is `invalid_request` on the wire, its description beginning `invalid_nonce`
        // (docs/protocol.md#start-order); every other code is itself.
        let expected: JSONValue =
            code == .invalidNonce
            ? ["error": "invalid_request", "error_description": "invalid_nonce: A sentence."]
            : ["error": .string(code.rawValue), "error_description": "A sentence."]
        #expect(try Self.body(response) == expected)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Pragma"] == "no-cache")
        let challenged = code == .invalidClient || code == .invalidToken
        #expect((response.headers["WWW-Authenticate"] == "Bearer") == challenged, "\(code)")
        #expect(response.headers["Retry-After"] == nil)
    }

    @Test func conditionsDecideStatusAndRetryAfter() throws {
        let limited = ErrorRenderer.render(.rateLimited(retryAfterSeconds: 42), at: .api)
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "42")
        #expect(try Self.body(limited)["error"] == "temporarily_unavailable")
        #expect(try Self.body(limited)["error_description"]?.stringValue?.hasPrefix("rate_limited: ") == true)

        let down = ErrorRenderer.render(.unavailable(), at: .api)
        #expect(down.status == 503)
        #expect(down.headers["Retry-After"] == "1")

        let busy = ErrorRenderer.render(
            ErrorAnswer(.temporarilyUnavailable, "Busy.", condition: .tooManyRequests(retryAfterSeconds: 5)), at: .api)
        #expect(busy.status == 429)
        #expect(busy.headers["Retry-After"] == "5")
    }

    @Test func statusDependsOnTheSurfaceWhereTheContractSaysSo() throws {
        // The start answers an unknown client with 400 (docs/protocol.md#start-check-2), elsewhere 401.
        let start = ErrorRenderer.render(ErrorAnswer(.invalidClient, "Unknown."), at: ErrorPlace(isStart: true))
        #expect(start.status == 400)
        #expect(start.headers["WWW-Authenticate"] == nil)
        // /oauth2/token: the RFC code and its status; the product code first in the description.
        let token = ErrorPlace(surface: .standard(.token))
        let reauth = ErrorRenderer.render(ErrorAnswer(.reauthenticationRequired, "Sign in again."), at: token)
        #expect(reauth.status == 400)
        #expect(try Self.body(reauth) == ["error": "invalid_grant", "error_description": "reauthentication_required: Sign in again."])
        let badBearer = ErrorRenderer.render(ErrorAnswer(.invalidToken, "No."), at: token)
        #expect(badBearer.status == 401)
        #expect(try Self.body(badBearer)["error"] == "invalid_client")
        #expect(badBearer.headers["WWW-Authenticate"] == "Bearer")
        // /oauth2/authorize keeps the product code's status with the RFC code.
        let authorize = ErrorRenderer.render(
            ErrorAnswer(.customSchemeNotAllowed, "No custom schemes."), at: ErrorPlace(surface: .standard(.authorize), isStart: true))
        #expect(authorize.status == 403)
        #expect(try Self.body(authorize)["error"] == "invalid_request")
    }

    @Test func challengesAreTheRenderersChoice() {
        let session = ErrorRenderer.render(ErrorAnswer(.invalidToken, "Expired.", challenge: .bearerInvalidToken), at: .api)
        #expect(session.headers["WWW-Authenticate"] == "Bearer error=\"invalid_token\"")
        let basic = ErrorRenderer.render(ErrorAnswer(.invalidClient, "Public clients.", challenge: .basic), at: .api)
        #expect(basic.headers["WWW-Authenticate"] == "Basic realm=\"ZevAuth\"")
        // A challenge belongs to a 401 only.
        let notUnauthorized = ErrorRenderer.render(ErrorAnswer(.invalidRequest, "Bad.", challenge: .bearer), at: .api)
        #expect(notUnauthorized.headers["WWW-Authenticate"] == nil)
    }

    @Test func aPageIsHTMLWithTheSameStatusAndAnEscapedMessage() throws {
        let response = ErrorRenderer.render(ErrorAnswer(.invalidRequest, "This <sign-in> expired."), at: .page)
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["X-Frame-Options"] == "DENY")
        let html = String(decoding: response.body, as: UTF8.self)
        #expect(html.contains("This &lt;sign-in&gt; expired."))
        #expect(html.contains("<code>invalid_request</code>"))
        let limited = ErrorRenderer.render(.rateLimited(retryAfterSeconds: 60), at: .page)
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "60")
    }

    @Test func debugDetailIsLoggedAndNeverSent() throws {
        let log = MemoryLog()
        let detail = "postgres kind=query sqlstate=XX000 constraint=-"
        let response = ErrorRenderer.render(.serverError(debugDetail: detail), at: .api, log: log)
        #expect(response.status == 500)
        #expect(!String(decoding: response.body, as: UTF8.self).contains("sqlstate"))
        #expect(try Self.body(response) == ["error": "server_error", "error_description": "Something went wrong on our side."])
        #expect(log.all == ["error \(detail) code=server_error status=500"])
        let page = ErrorRenderer.render(ErrorAnswer(.invalidRequest, "Bad.", debugDetail: "kind=secret-detail"), at: .page, log: log)
        #expect(!String(decoding: page.body, as: UTF8.self).contains("secret-detail"))
        #expect(log.all.count == 2)
    }

    @Test func theFunnelRendersThrownErrorsAndLogsTheirKind() throws {
        let log = MemoryLog()
        struct Surprise: Error {}
        let failed = ZevAuthApp.funnel(log) { throw Surprise() }
        #expect(failed.status == 500)
        #expect(try Self.body(failed)["error"] == "server_error")
        let down = ZevAuthApp.funnel(log) { throw StoreUnavailable(reason: "connection") }
        #expect(down.status == 503)
        #expect(down.headers["Retry-After"] == "1")
        let unstorable = ZevAuthApp.funnel(log) { throw StoreError.unstorableInput }
        #expect(unstorable.status == 400)
        #expect(try Self.body(unstorable)["error"] == "invalid_request")
        let thrown = ZevAuthApp.funnel(log) { throw ErrorAnswer.rateLimited(retryAfterSeconds: 7) }
        #expect(thrown.status == 429)
        #expect(thrown.headers["Retry-After"] == "7")
        #expect(log.all.count == 3)
        #expect(log.all[0].hasPrefix("error kind=Surprise"))
        #expect(log.all[1].hasPrefix("error store unavailable"))
        #expect(log.all[2].hasPrefix("error refused input sqlstate=22021"))
    }

    @Test func aDatabaseFaultIsA500WhoseLogLineNamesItsSQLState() throws {
        let log = MemoryLog()
        let fault = ZevAuthApp.funnel(log) { throw StoreFault(kind: "query", sqlState: "42P01", constraint: nil) }
        #expect(fault.status == 500)
        #expect(try Self.body(fault)["error"] == "server_error")
        #expect(!String(decoding: fault.body, as: UTF8.self).contains("42P01"))
        #expect(log.all == ["error postgres kind=query sqlstate=42P01 constraint=- code=server_error status=500"])
    }

    @Test func entryPointsTakeTheirStatusesFromTheTableAndGainTheRenderersHeaders() throws {
        let limited = Wire.error(ErrorAnswer(.temporarilyUnavailable, "Busy.", condition: .tooManyRequests(retryAfterSeconds: 5)))
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "5")
        let admin = Wire.error(.invalidToken, "Send a key.")
        #expect(admin.status == 401)
        #expect(admin.headers["WWW-Authenticate"] == "Bearer")
        let start = Wire.error(OAuthError(.invalidClient, "Unknown.", status: 400))
        #expect(start.status == 400)
        #expect(start.headers["WWW-Authenticate"] == nil)
        #expect(
            try Self.body(Wire.error(OAuthError(.invalidGrant, "Used."), wireCode: "x", description: "y")) == [
                "error": "x", "error_description": "y",
            ])
    }

    @Test func constantDocumentsAreEncodedOnceWithTheirFields() throws {
        let documents = ConstantDocuments(configuration: try Self.configuration())
        let response = StandardOAuthHandlers.metadata(documents)
        #expect(response.body == documents.metadata)
        #expect(response.headers["Cache-Control"] == "public, max-age=300")
        #expect(response.headers["Pragma"] == nil)
        let metadata = try Self.body(response)
        #expect(metadata["issuer"] == "https://auth.example.com")
        #expect(metadata["token_endpoint"] == "https://auth.example.com/oauth2/token")
        #expect(metadata["authorization_response_iss_parameter_supported"] == true)
        #expect(try JSONValue.parse(ConstantDocuments.healthy) == ["status": "ok"])
        #expect(try JSONValue.parse(ConstantDocuments.notReady) == ["status": "unavailable", "error": "temporarily_unavailable"])
    }

    static func configuration() throws -> ServerConfiguration {
        ServerConfiguration(
            databaseURL: "postgresql:///zevauth", issuer: "https://auth.example.com", operatorToken: String(repeating: "o", count: 40))
    }
}

/// `JSONObjectBody`, the edge every JSON request body passes: strict parsing, `StorableText` on every string
/// and name, typed accessors, and the Foundation-shaped `fields` kept for handlers not yet converted.
@Suite struct JSONObjectBodyTests {
    static func body(_ text: String) -> JSONObjectBody? { JSONObjectBody(Array(text.utf8)) }

    @Test(arguments: [
        "[]", "\"text\"", "1", "", "{\"a\":1,}", "{\"a\":1,\"a\":2}", "\u{FEFF}{}", "{\"a\":\"\\u0000\"}", "{\"\\u0000\":1}",
        "{\"a\":[{\"b\":\"\\u0000\"}]}", "{\"a\":1} x",
    ])
    func refusesWhatIsNotOneStorableStrictObject(_ text: String) {
        #expect(Self.body(text) == nil)
    }

    @Test func typedAccessorsSayMissingWrongTypeOrValue() throws {
        let body = try #require(Self.body(#"{"s":"x","n":3,"f":3.5,"b":true,"z":null,"a":["p","q"],"m":[1],"o":{"k":"v"}}"#))
        guard case .value("x") = body.string("s"), case .wrongType = body.string("n"), case .missing = body.string("z"),
            case .missing = body.string("absent")
        else { Issue.record("string"); return }
        guard case .value(3) = body.int("n"), case .wrongType = body.int("f"), case .wrongType = body.int("b") else {
            Issue.record("int")
            return
        }
        guard case .value(true) = body.bool("b"), case .wrongType = body.bool("n") else { Issue.record("bool"); return }
        guard case .value(["p", "q"]) = body.stringArray("a"), case .wrongType = body.stringArray("m") else {
            Issue.record("stringArray")
            return
        }
        guard case .value(let members) = body.object("o"), members.count == 1, members[0].0 == "k" else {
            Issue.record("object")
            return
        }
        #expect(body.contains("z"))
        #expect(!body.contains("absent"))
        #expect(body.names == ["s", "n", "f", "b", "z", "a", "m", "o"])
    }
}
