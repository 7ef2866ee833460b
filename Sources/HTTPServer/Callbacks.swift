internal import CMicroHTTPD
import Glibc
import Synchronization

// The libmicrohttpd callbacks. Each is a file-level closure with no captures (a capturing @convention(c)
// closure crashes the Swift 6.3.1 compiler); state arrives through the `void *`: `cls` is the
// `ServerContext` (unretained, owned by `HTTPServer`), the connection's socket context a `ConnectionState`
// (retained when the connection opens, released when it closes), and `*req_cls` the current `RequestState`
// (unretained: the `ConnectionState` owns it).
//
// Why the connection owns the request (docs/decisions.md, "Request state belongs to the connection"):
// libmicrohttpd 0.9.75 calls the completion callback only on some of the paths that end a request. When a
// second error hits a request that already has an error queued (e.g. the query's arguments exhausting the
// connection's memory pool, then the read buffer that could not grow back), it marks the connection closed
// without the completion callback; the connection is reaped at the idle-timeout sweep, and only the
// MHD_OPTION_NOTIFY_CONNECTION "closed" event fires. That event fires exactly once for every connection, on
// every path, including MHD_stop_daemon, so it is where whatever is still held gets released.

/// What the callbacks of one daemon share.
final class ServerContext: Sendable {
    let handler: any HTTPHandler
    let maxBodyBytes: Int
    /// Requests between the URI-log callback and their end (completion callback, or the connection's close).
    let inFlight = Atomic<Int>(0)
    /// Connections between libmicrohttpd's "started" and "closed" notifications.
    let openConnections = Atomic<Int>(0)
    /// Set by `shutdown`: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// Connections suspended while their handler runs on a `WorkQueue` and not yet resumed; the daemon
    /// must not stop while any is (`MHD_suspend_connection`).
    let suspended = Atomic<Int>(0)
    /// The per-address connection limit and the request deadline.
    let limits: ClientLimits

    init(handler: any HTTPHandler, maxBodyBytes: Int, limits: ClientLimits) {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.limits = limits
    }

    /// Makes `request` the current request of `connection`, ending any request libmicrohttpd left open.
    func begin(_ request: RequestState, on connection: ConnectionState) {
        end(on: connection)
        connection.request = request
        inFlight.add(1, ordering: .sequentiallyConsistent)
    }

    /// Ends (releases) the current request of `connection`, if any; counts it once.
    func end(on connection: ConnectionState) {
        guard connection.request != nil else { return }
        connection.request = nil
        inFlight.subtract(1, ordering: .sequentiallyConsistent)
    }
}

/// One connection's state: owns the request being read or answered on it. Only the worker thread that owns
/// the connection touches it, one callback at a time (or the thread stopping the daemon, after the workers).
final class ConnectionState {
    var request: RequestState?
    /// The peer's IP literal (`remoteAddress(of:)`), fixed when the connection opens.
    let address: String
    /// When the request being read must have arrived (`ClientLimits`).
    let deadline = RequestDeadline()

    init(address: String) {
        self.address = address
    }
}

/// One request's state. Only the worker thread that owns the connection touches it, one callback at a time.
final class RequestState {
    enum Phase {
        case headers, body
        /// The handler runs on a `WorkQueue`; the connection is suspended until the response is ready.
        case suspended(PendingResponse)
        case answered
    }

    /// The request target exactly as sent (path, query, anything else).
    let target: [UInt8]
    var phase = Phase.headers
    var headers = HTTPHeaders()
    /// Set when a header line was folded (obs-fold) or ended in a bare LF (`LineEndings`).
    var badLineEnding = false
    var body: [UInt8] = []

    init(target: [UInt8]) {
        self.target = target
    }
}

/// The `ConnectionState` stored in `connection`'s socket context, if any.
private func connectionState(_ connection: OpaquePointer?) -> ConnectionState? {
    guard let connection, let pointer = CMicroHTTPD_socket_context(connection) else { return nil }
    return Unmanaged<ConnectionState>.fromOpaque(pointer).takeUnretainedValue()
}

/// Called when a connection opens (creates its `ConnectionState`) and once when it closes, on every path
/// (releases the state and any request still open on it).
let connectionNotification: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
    guard let cls, let socketContext else { return }
    let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let state = ConnectionState(address: connection.map(remoteAddress(of:)) ?? "")
        socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
        server.openConnections.add(1, ordering: .sequentiallyConsistent)
        server.limits.opened(state, socket: connection.map(CMicroHTTPD_socket_fd) ?? -1, now: .now)
    default:
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        let connection = Unmanaged<ConnectionState>.fromOpaque(pointer)
        server.limits.closed(connection.takeUnretainedValue())
        server.end(on: connection.takeUnretainedValue())
        connection.release()
        server.openConnections.subtract(1, ordering: .sequentiallyConsistent)
    }
}

/// Called once the request line is parsed, with the raw target; its result becomes `*req_cls`.
///
/// It also stops libmicrohttpd from parsing the query into its per-connection memory pool: the server reads
/// the query from this copy of the target (`HTTPRequest.rawQuery`) and never asks libmicrohttpd for it, and
/// libmicrohttpd 0.9.75 fails a request whose query has too many arguments for the pool without ever calling
/// the access handler (so no 414 could be sent). It parses the arguments right after this callback, from the
/// byte after the target's first "?" (connection.c, parse_initial_message_line): ending the string there
/// leaves it nothing to parse. That byte lies in libmicrohttpd's own writable read buffer, which it modifies
/// in place anyway (it overwrites the "?" with NUL next).
let uriLogCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    cls, uri, connection in
    guard let cls, let owner = connectionState(connection) else { return nil }
    let target = uri.map { pointer in Array(UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))) } ?? []
    if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        (mark + 1).pointee = 0
    }
    let request = RequestState(target: target)
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().begin(request, on: owner)
    return Unmanaged.passUnretained(request).toOpaque()
}

/// Called when a request ends, answered or not, with any termination code; releases the `RequestState`.
let completedCallback: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
    guard let cls else { return }
    requestContext?.pointee = nil
    guard let owner = connectionState(connection) else { return }
    let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    server.end(on: owner)
    server.limits.completed(owner, now: .now)
}

/// Called before libmicrohttpd accepts a connection: refuses one from an address already at its limit.
let acceptPolicy: MHD_AcceptPolicyCallback = { cls, address, _ in
    guard let cls, let address else { return .YES }
    let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    return server.limits.admits(ipLiteral(address)) ? .YES : .NO
}

/// Appends each request header field to the `RequestState` in `cls`.
private let headerIterator: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
    if !LineEndings.isPlainLine(key: key, keySize: keySize, value: value, valueSize: valueSize) {
        state.badLineEnding = true
    }
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) }
    state.headers.add(name, text ?? "")
    return .YES
}

/// The access handler, in three phases (docs/decisions.md#libmicrohttpd): headers (check framing; a response queued here
/// goes out before any `100 Continue`), body chunks (`*upload_data_size > 0`), and the final call.
let accessHandler: MHD_AccessHandlerCallback = {
    cls, connection, _, method, version, uploadData, uploadDataSize, requestContext in
    guard let cls, let connection, let method, let uploadDataSize, let requestContext,
        let statePointer = requestContext.pointee
    else { return .NO }
    let server = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()
    switch state.phase {
    case .headers:
        state.phase = .body
        MHD_get_connection_values_n(connection, .HEADER_KIND, headerIterator, statePointer)
        if let rejection =
            Framing.rejection(target: state.target, headers: state.headers, maxBodyBytes: server.maxBodyBytes)
            ?? LineEndings.rejection(headerLines: state.badLineEnding, version: version)
            ?? Framing.hostRejection(version: version.map { String(cString: $0) } ?? "", headers: state.headers)
        {
            state.phase = .answered
            return queue(rejection, on: connection, server: server)
        }
        return .YES
    case .body:
        let count = uploadDataSize.pointee
        if count > 0 {
            // Only a chunked body can get here oversized (a too-large Content-Length was answered 413 in the
            // headers phase). libmicrohttpd 0.9.75 refuses a response queued while the body is being read,
            // so the 413 of RFC 9110 §15.5.14 is not possible: close the connection instead.
            guard let uploadData, count <= server.maxBodyBytes - state.body.count else { return .NO }
            state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: count))
            uploadDataSize.pointee = 0
            return .YES
        }
        state.phase = .answered
        if let owner = connectionState(connection) { server.limits.arrived(owner) }
        let (path, query) = Framing.splitTarget(state.target)
        let request = HTTPRequest(
            method: String(cString: method), path: path, rawQuery: query, headers: state.headers, body: state.body,
            remoteAddress: remoteAddress(of: connection))
        state.body = []
        let workQueue: WorkQueue
        switch server.handler.placement(for: request) {
        case .inline:
            return queue(server.handler.handle(request), on: connection, server: server)
        case .inlineWithin(let budget, let otherwise):
            let handler = server.handler
            if let response = budget.run({ handler.handle(request) }) {
                return queue(response, on: connection, server: server)
            }
            workQueue = otherwise
        case .queue(let chosen):
            workQueue = chosen
        }
        guard workQueue.reserve() else { return queue(Framing.queueFull, on: connection, server: server) }
        // Suspend before the job can exist, so its resume always finds the connection suspended.
        let pending = PendingResponse()
        state.phase = .suspended(pending)
        server.suspended.add(1, ordering: .sequentiallyConsistent)
        MHD_suspend_connection(connection)
        let handler = server.handler
        let suspended = SuspendedConnection(pointer: connection)
        workQueue.run(reserved: { [server] in
            pending.response = handler.handle(request)
            // libmicrohttpd calls the access handler again on the connection's worker, which sends it.
            MHD_resume_connection(suspended.pointer)
            server.suspended.subtract(1, ordering: .sequentiallyConsistent)
        })
        return .YES
    case .suspended(let pending):
        // The call after MHD_resume_connection: the queued handler's response is ready.
        state.phase = .answered
        return queue(pending.response ?? Framing.serverError, on: connection, server: server)
    case .answered:
        return .YES
    }
}

/// A response computed on a `WorkQueue` thread for a suspended connection. Written once by that thread
/// before `MHD_resume_connection`, read by the connection's worker after it (libmicrohttpd's resume
/// takes a mutex both sides pass through, which orders the two).
final class PendingResponse: @unchecked Sendable {
    var response: HTTPResponse?
}

/// The `MHD_Connection *` of a suspended connection, handed to the work-queue thread that resumes it.
/// libmicrohttpd allows `MHD_resume_connection` from any thread.
private struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Hands `response` to libmicrohttpd, which copies the body. A response that cannot be sent as given
/// (`Framing.sendable`, or a field libmicrohttpd still refuses) becomes a 500 rather than a dropped connection.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, server: ServerContext) -> MHD_Result {
    let draining = server.draining.load(ordering: .sequentiallyConsistent)
    for candidate in [Framing.sendable(response), Framing.serverError] {
        var candidate = candidate
        if draining { candidate.headers.set("Connection", "close") }
        guard let created = makeResponse(candidate) else { continue }
        defer { MHD_destroy_response(created) }
        return MHD_queue_response(connection, UInt32(candidate.status), created)
    }
    return .NO
}

/// An `MHD_Response *` for `response` (the caller destroys it), or `nil` if libmicrohttpd refuses a part.
private func makeResponse(_ response: HTTPResponse) -> OpaquePointer? {
    let created = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let created else { return nil }
    for field in response.headers where MHD_add_response_header(created, field.name, field.value) != .YES {
        MHD_destroy_response(created)
        return nil
    }
    return created
}

/// The peer's IP literal, from MHD_CONNECTION_INFO_CLIENT_ADDRESS; empty if unknown.
private func remoteAddress(of connection: OpaquePointer) -> String {
    guard let address = CMicroHTTPD_client_address(connection) else { return "" }
    return ipLiteral(address)
}

/// The IP literal of an IPv4 or IPv6 socket address (`inet_ntop`); empty for another family.
private func ipLiteral(_ address: UnsafePointer<sockaddr>) -> String {
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let capacity = socklen_t(text.count - 1)
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
            var raw = v4.pointee.sin_addr
            _ = inet_ntop(AF_INET, &raw, &text, capacity)
        }
    case AF_INET6:
        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
            var raw = v6.pointee.sin6_addr
            _ = inet_ntop(AF_INET6, &raw, &text, capacity)
        }
    default:
        return ""
    }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// What libmicrohttpd 0.9.75 leaves of a request's line endings (docs/decisions.md, "Framing"). It ends a
/// line at a bare LF as well as at CRLF, and it unfolds an obs-fold line (one starting with a space or tab)
/// into the previous field's *name*, so neither is visible in the fields it reports. Both stay visible in
/// its read buffer, which it parses in place: a line's CR and LF are each overwritten with NUL, a bare LF
/// with one NUL; a field's name and value point into that line, the name ending at the overwritten colon,
/// the value starting after the colon and any spaces or tabs. A folded field's name is copied elsewhere in
/// the connection's pool. RFC 9112 §2.2 lets a server refuse a bare LF, and §5.2 says a server must
/// refuse obs-fold with 400 or replace it; a proxy in front may read either differently, so both are
/// refused. This reads only bytes of the line the pointers were handed for; the framing table test
/// (FramingTableTests) fails if a libmicrohttpd release lays them out otherwise.
enum LineEndings {
    /// Whether the field at `key`/`value` was one plain `name: value` line ending in CRLF.
    static func isPlainLine(
        key: UnsafePointer<CChar>, keySize: Int, value: UnsafePointer<CChar>?, valueSize: Int
    ) -> Bool {
        guard let value else { return false }
        // The value must start on the name's own line: after the colon and at most 64 spaces or tabs.
        let gap = value - key
        guard gap > keySize, gap <= keySize + 1 + 64 else { return false }
        for offset in (keySize + 1)..<gap where key[offset] != 0x20 && key[offset] != 0x09 {
            return false
        }
        return endsInCRLF(value + valueSize)
    }

    /// Whether the line whose terminator starts at `end` ended in CRLF (two NULs) rather than a bare LF
    /// (one NUL, then the next line's first byte). The header section's last line cannot be told apart
    /// this way: the empty line after it is overwritten too.
    static func endsInCRLF(_ end: UnsafePointer<CChar>) -> Bool {
        end[0] == 0 && end[1] == 0
    }

    /// The 400 for a request whose request line or a header line ended in a bare LF or was folded.
    /// - Parameters:
    ///   - headerLines: whether a header line was (`isPlainLine` false for one of them).
    ///   - version: the request line's version, pointing into that line (its end is checked as well).
    static func rejection(headerLines: Bool, version: UnsafePointer<CChar>?) -> HTTPResponse? {
        let requestLineOK = version.map { endsInCRLF($0 + strlen($0)) } ?? true
        guard headerLines || !requestLineOK else { return nil }
        return HTTPResponse.jsonError(
            status: 400, error: "invalid_request",
            description: "Every request line must end in CRLF, and header fields must not be folded.", close: true)
    }
}
