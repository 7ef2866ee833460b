import Foundation
import Glibc
import Testing

@testable import HTTPServer

/// One raw request and what the server must answer (docs/protocol.md, "HTTP framing").
struct FramingCase: CustomStringConvertible, Sendable {
    let name: String
    let request: String
    /// The one status expected; nil when the request is answered by the handler (200 echo).
    let status: Int
    /// Whether the answer must be the JSON error body.
    let json: Bool
    /// How many status lines libmicrohttpd writes when it answers the request itself, with its own HTML
    /// body, before any callback of the server runs (docs/operations.md, "Requests libmicrohttpd answers
    /// itself"); nil when the server answers.
    var library: Int? = nil

    var description: String { name }
}

/// Raw requests a proxy in front might frame differently from the server (RFC 9112 §5.1, §5.2, §6.3):
/// each is answered exactly once, with the right status, and every refusal is the JSON error body and
/// closes the connection, so nothing after it is read as a next request.
@Suite(.serialized)
struct FramingTableTests {
    static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n"

    static let cases: [FramingCase] = [
        .init(name: "plain request", request: "GET /ok HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", status: 200, json: false),
        .init(
            name: "space before the colon of Content-Length",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length : 34\r\n\r\n" + smuggled, status: 400, json: true),
        .init(
            name: "tab before the colon of Content-Length",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length\t: 34\r\n\r\n" + smuggled, status: 400, json: true),
        .init(
            name: "space before the colon of Transfer-Encoding",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + smuggled,
            status: 400, json: true),
        .init(
            name: "space before the colon of another field",
            request: "GET /ok HTTP/1.1\r\nHost: t\r\nX-Thing : a\r\n\r\n", status: 400, json: true),
        .init(name: "duplicate Host", request: "GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400, json: true),
        .init(name: "missing Host", request: "GET /ok HTTP/1.1\r\nConnection: close\r\n\r\n", status: 400, json: true),
        .init(name: "empty Host", request: "GET /ok HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n", status: 200, json: false),
        .init(
            name: "HTTP/1.0 without Host", request: "GET /ok HTTP/1.0\r\n\r\n", status: 200, json: false),
        .init(
            name: "obs-fold", request: "GET /ok HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n",
            status: 400, json: true),
        .init(
            name: "bare LF", request: "GET /ok HTTP/1.1\nHost: t\nConnection: close\n\n", status: 400, json: true),
        .init(
            name: "Content-Length -1", request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n",
            status: 400, json: false, library: 2),
        .init(
            name: "Content-Length +13",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: +13\r\n\r\nhello, world!", status: 400, json: false, library: 2),
        .init(
            name: "Content-Length 13, 13",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 13, 13\r\n\r\nhello, world!", status: 400,
            json: false, library: 2),
        .init(
            name: "two differing Content-Length",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", status: 400,
            json: true),
        .init(
            name: "Content-Length with Transfer-Encoding",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            status: 400, json: true),
        .init(
            name: "Transfer-Encoding other than chunked",
            request: "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", status: 501,
            json: true),
        .init(
            name: "header line without a colon", request: "GET /ok HTTP/1.1\r\nHost: t\r\nNoColon\r\n\r\n", status: 400,
            json: false, library: 1),
        .init(
            name: "space inside the request target", request: "GET /a b HTTP/1.1\r\nHost: t\r\n\r\n", status: 400,
            json: true),
    ]

    @Test(arguments: cases)
    func answeredOnceWithTheRightStatus(_ framing: FramingCase) throws {
        let server = try startServer()
        defer { server.shutdown(gracePeriodSeconds: 0) }
        let fd = try RawClient.connect(port: server.port, timeoutSeconds: 3)
        defer { close(fd) }
        RawClient.send(fd, Array(framing.request.utf8))
        let bytes = RawClient.readAll(fd)
        let text = String(decoding: bytes, as: UTF8.self)
        let response = RawClient.parse(bytes)
        let statusLines = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.") }.count
        #expect(response?.status == framing.status, "\(framing.name): \(text.debugDescription)")
        #expect(
            statusLines == (framing.library ?? 1), "\(framing.name): answered \(statusLines) times: \(text.debugDescription)")
        #expect(!text.contains("smuggled"), "\(framing.name): the body was read as a next request")
        if framing.json, let response {
            #expect(jsonError(response) == "invalid_request", "\(framing.name): \(text.debugDescription)")
        }
        if framing.library != nil {
            // libmicrohttpd's own page, and the connection closed after it: what a proxy must refuse first.
            #expect(text.contains("<html>"), "\(framing.name): \(text.debugDescription)")
        }
    }
}
