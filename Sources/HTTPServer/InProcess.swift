extension HTTPServer {
    /// Answers one request without a socket, through the steps the daemon takes once libmicrohttpd has read
    /// it (Callbacks.swift): the framing checks, the target split at its first "?" with any "#" fragment
    /// dropped, the handler, and the response normalized, or replaced by the 500 the server would send, as
    /// before it goes on the wire. For testing handlers in process (docs/architecture.md, "Testing").
    ///
    /// What libmicrohttpd itself does is not part of it: parsing the request line and header section (and
    /// its own limits and errors there), and adding `Content-Length`, `Date` and `Connection` to the
    /// response and leaving out the body of a HEAD answer.
    /// - Parameters:
    ///   - handler: the application, called on the caller's thread.
    ///   - method: the request method as sent, e.g. "GET".
    ///   - target: the request target exactly as sent (path, query, any fragment).
    ///   - headers: the request header fields in the order sent, framing fields included (`Content-Length`).
    ///   - body: the request body.
    ///   - remoteAddress: the peer's IP address literal.
    ///   - maxBodyBytes: the body size limit (`HTTPServerConfiguration.maxBodyBytes`).
    /// - Returns: the response as the server would hand it to libmicrohttpd.
    public static func answerInProcess(
        _ handler: any HTTPHandler, method: String, target: [UInt8], headers: HTTPHeaders, body: [UInt8],
        remoteAddress: String = "127.0.0.1", maxBodyBytes: Int = HTTPServerConfiguration().maxBodyBytes
    ) -> HTTPResponse {
        if let rejection = Framing.rejection(target: target, headers: headers, maxBodyBytes: maxBodyBytes) {
            return Framing.sendable(rejection)
        }
        let (path, query) = Framing.splitTarget(target)
        let request = HTTPRequest(
            method: method, path: path, rawQuery: query, headers: headers, body: body, remoteAddress: remoteAddress)
        return Framing.sendable(handler.handle(request))
    }
}
