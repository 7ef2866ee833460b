// Fuzz target: the framing checks the server adds on top of libmicrohttpd (HTTPServer, Framing.swift):
// compiled together with Framing.swift, HTTPHeaders.swift, HTTPMessages.swift and WorkQueue.swift, so
// the internal `Framing` is reachable. Input: the request target, then one `name:value` header per line.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    let target = Array(lines.first ?? [])
    var headers = HTTPHeaders()
    for line in lines.dropFirst() {
        let text = String(decoding: line, as: UTF8.self)
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        headers.add(String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }
    if let rejection = Framing.rejection(target: target, headers: headers, maxBodyBytes: 65_536) {
        guard [400, 413, 414, 431, 501].contains(rejection.status) else { fatalError("rejection status") }
    }
    _ = Framing.hostRejection(version: "HTTP/1.1", headers: headers)
    _ = Framing.splitTarget(target)
    _ = Framing.queryFieldCount(target)
    // A handler's response built from the same fields is either sendable as is or the server's 500.
    let sent = Framing.sendable(HTTPResponse(status: 200, headers: headers, body: bytes))
    for field in sent.headers where field.value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
        fatalError("a response field holds CR, LF or NUL")
    }
    return 0
}
