import Authorize
import Encoding
import HTTPServer

/// An error to answer, before it is rendered: what went wrong (`code`, `condition`), the sentence the
/// client or person reads (`description`), and an optional `debugDetail` that is written to the log and
/// never sent. The status and the headers are not part of it: `ErrorRenderer` decides them, from one table
/// (docs/protocol.md#json-error-body, docs/protocol.md#error-codes).
struct ErrorAnswer: Error, Sendable, Equatable {
    /// Why the request cannot be served, beyond the code: the conditions whose status is not the code's.
    enum Condition: Sendable, Equatable {
        /// The request is refused: the code's own status.
        case refused
        /// Too many requests (a rate limit, or a bounded job already running): 429 with
        /// `Retry-After: <seconds>` (RFC 6585 §4, RFC 9110 §10.2.3).
        case tooManyRequests(retryAfterSeconds: Int)
        /// The service cannot serve it now (the database is out of reach, a queue is full): 503 with
        /// `Retry-After: <seconds>`.
        case unavailable(retryAfterSeconds: Int)
    }

    /// The challenge a 401 carries in `WWW-Authenticate` (RFC 9110 §11.6.1).
    enum Challenge: Sendable, Equatable {
        /// `Bearer` (RFC 6750 §3): the default for a 401 `invalid_client` or `invalid_token`.
        case bearer
        /// `Bearer error="invalid_token"` (RFC 6750 §3.1): a bearer token was sent and is not valid.
        case bearerInvalidToken
        /// `Basic realm="ZevAuth"` (RFC 6749 §5.2): the client tried HTTP Basic authentication.
        case basic
    }

    /// The product code (spelled as an RFC 6749 code on a standard endpoint).
    var code: OAuthErrorCode
    /// A sentence for the client: no secret, no echoed input (docs/protocol.md#json-error-body).
    var description: String
    /// The condition that decides a status other than the code's.
    var condition: Condition
    /// A challenge other than the default for a 401; ignored on other statuses.
    var challenge: Challenge?
    /// What the log should say about it (an error's kind, a SQLSTATE): logged, never sent.
    var debugDetail: String?

    /// Creates an answer.
    init(
        _ code: OAuthErrorCode, _ description: String, condition: Condition = .refused, challenge: Challenge? = nil,
        debugDetail: String? = nil
    ) {
        self.code = code
        self.description = description
        self.condition = condition
        self.challenge = challenge
        self.debugDetail = debugDetail
    }

    /// An `OAuthError` from a use case, as an answer.
    init(_ error: OAuthError) { self.init(error.code, error.description) }

    /// 429 `temporarily_unavailable` with `rate_limited: …` first in the description: RFC 6749 has no
    /// rate-limit code, and `temporarily_unavailable` is the registered one standard clients already handle
    /// (docs/protocol.md#rate-limits).
    static func rateLimited(retryAfterSeconds: Int) -> ErrorAnswer {
        ErrorAnswer(
            .temporarilyUnavailable, "rate_limited: Too many failed attempts. Try again in \(retryAfterSeconds) seconds.",
            condition: .tooManyRequests(retryAfterSeconds: retryAfterSeconds))
    }

    /// 503 `temporarily_unavailable` with `Retry-After: 1`: the database is out of reach.
    static func unavailable(debugDetail: String? = nil) -> ErrorAnswer {
        ErrorAnswer(
            .temporarilyUnavailable, "The service is briefly unavailable. Try again.", condition: .unavailable(retryAfterSeconds: 1),
            debugDetail: debugDetail)
    }

    /// 500 `server_error`; what happened goes to the log only.
    static func serverError(debugDetail: String? = nil) -> ErrorAnswer {
        ErrorAnswer(.serverError, "Something went wrong on our side.", debugDetail: debugDetail)
    }
}

/// Where an error is answered: how its code is spelled and whether it is a JSON body or a page.
struct ErrorPlace: Sendable, Equatable {
    /// How the error is rendered.
    enum Format: Sendable, Equatable {
        /// `{"error","error_description"}` (RFC 6749 §5.2).
        case json
        /// The hosted error page (HTML), for a person in a browser.
        case page
    }

    /// Product codes on `/v1`, RFC codes on `/oauth2` (docs/protocol.md#standard-surface).
    var surface: ErrorSurface
    /// JSON or HTML.
    var format: Format
    /// The start (`/v1/auth/zevid/start`, `/oauth2/authorize`), where an unknown client is a 400
    /// (docs/protocol.md#start-check-2), not a 401.
    var isStart: Bool

    /// Creates a place; the default is a ZevAuth JSON endpoint.
    init(surface: ErrorSurface = .zevAuth, format: Format = .json, isStart: Bool = false) {
        self.surface = surface
        self.format = format
        self.isStart = isStart
    }

    /// A ZevAuth JSON endpoint (`/v1/...`).
    static let api = ErrorPlace()
    /// A hosted page.
    static let page = ErrorPlace(format: .page)
}

/// The one error renderer: every error answer of the server, JSON or HTML, on every surface, gets its
/// status and headers here. `Wire.error` and the funnel are thin entries into it.
enum ErrorRenderer {
    /// The status of `answer` at `place` — the one table (docs/protocol.md#error-codes):
    /// - `tooManyRequests` is 429 and `unavailable` 503, whatever the code;
    /// - on `/oauth2/token` the status is the RFC code's (a `reauthentication_required` is a 400
    ///   `invalid_grant` there, docs/protocol.md#token-errors);
    /// - at the start, `invalid_client` is 400 (docs/protocol.md#start-check-2);
    /// - everywhere else, the product code's `httpStatus`.
    static func status(_ answer: ErrorAnswer, at place: ErrorPlace) -> Int {
        switch answer.condition {
        case .tooManyRequests: return 429
        case .unavailable: return 503
        case .refused: break
        }
        if place.isStart, answer.code == .invalidClient { return 400 }
        if case .standard(.token) = place.surface { return answer.code.rfcCode(at: .token).httpStatus }
        return answer.code.httpStatus
    }

    /// The headers the renderer adds to a JSON or HTML error: `Retry-After` for a 429 or 503 that names
    /// one, `WWW-Authenticate` on a 401 `invalid_client` or `invalid_token` (the answer's challenge, or
    /// `Bearer`; RFC 6750 §3, RFC 6749 §5.2), and `Bearer error="insufficient_scope"` on a 403
    /// `insufficient_scope` (RFC 6750 §3.1).
    static func headers(_ answer: ErrorAnswer, status: Int, at place: ErrorPlace) -> [(String, String)] {
        var headers: [(String, String)] = []
        switch answer.condition {
        case .tooManyRequests(let seconds), .unavailable(let seconds): headers.append(("Retry-After", String(seconds)))
        case .refused: break
        }
        let wireCode = wireCode(answer, at: place)
        if status == 401, wireCode == .invalidClient || wireCode == .invalidToken || answer.challenge != nil {
            switch answer.challenge ?? .bearer {
            case .bearer: headers.append(("WWW-Authenticate", "Bearer"))
            case .bearerInvalidToken: headers.append(("WWW-Authenticate", "Bearer error=\"invalid_token\""))
            case .basic: headers.append(("WWW-Authenticate", "Basic realm=\"ZevAuth\""))
            }
        }
        if status == 403, wireCode == .insufficientScope {
            headers.append(("WWW-Authenticate", "Bearer error=\"insufficient_scope\""))
        }
        return headers
    }

    /// The `error` value: the product code on `/v1`, the RFC code on `/oauth2`.
    static func wireCode(_ answer: ErrorAnswer, at place: ErrorPlace) -> OAuthErrorCode {
        switch place.surface {
        case .zevAuth: answer.code.productWireCode
        case .standard(let endpoint): answer.code.rfcCode(at: endpoint)
        }
    }

    /// The `error_description` value: on `/oauth2` it starts with the product code and `": "`
    /// (docs/protocol.md#authorize-errors).
    static func wireDescription(_ answer: ErrorAnswer, at place: ErrorPlace) -> String {
        OAuthError(answer.code, answer.description).wireDescription(on: place.surface)
    }

    /// The response for `answer` at `place`. A `debugDetail` is written to `log` (one line naming the code
    /// and status) and never to the response.
    static func render(_ answer: ErrorAnswer, at place: ErrorPlace, log: (any LogSink)? = nil) -> HTTPResponse {
        let status = status(answer, at: place)
        if let detail = answer.debugDetail, let log {
            log.write("error \(detail) code=\(answer.code.rawValue) status=\(status)")
        }
        return response(
            status: status, code: wireCode(answer, at: place).rawValue, description: wireDescription(answer, at: place),
            headers: headers(answer, status: status, at: place), format: place.format, productCode: answer.code.rawValue)
    }

    /// Writes an error body or page with everything already decided. `render` is the entry that decides;
    /// this one also serves `Wire.error(_: OAuthError…)`, whose error carries its own status.
    /// `productCode` picks a page's person-facing words (docs/protocol.md#error-pages) when the wire
    /// spelling is the RFC one; nil means `code` itself.
    static func response(
        status: Int, code: String, description: String, headers: [(String, String)], format: ErrorPlace.Format,
        productCode: String? = nil
    ) -> HTTPResponse {
        var response: HTTPResponse
        switch format {
        case .json:
            response = Wire.json(status: status, ErrorBody(error: code, description: description))
        case .page:
            response = Pages.error(
                status: status, PersonFacingErrors.explanation(forWire: productCode ?? code), code: code, detail: description)
        }
        for (name, value) in headers { response.headers.set(name, value) }
        return response
    }

    /// `{"error":…,"error_description":…}` in that order (RFC 6749 §5.2).
    struct ErrorBody: JSONEncodable {
        let error: String
        let description: String

        func encode(to writer: inout JSONWriter) {
            writer.object { object in
                object.field("error", error)
                object.field("error_description", description)
            }
        }
    }
}
