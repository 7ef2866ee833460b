internal import CCurl

/// `curl_global_init` exactly once per process, before the first handle (a `static let` runs once,
/// thread-safely). libcurl must not be initialised concurrently with other libcurl use.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// Why a libcurl transfer produced no response, in the categories both clients report. ``CurlEasy`` is the
/// only producer; ``reported(as:)`` is the one map onto ``FetchFailure`` and ``HTTPClientError``. Those
/// stay two public types because each has a case the other lacks (`addressRefused`, `invalidURL`),
/// callers switch over them exhaustively, and only ``HTTPClientError`` is `CustomStringConvertible`.
enum CurlFailure: Error, Equatable {
    /// The connect (TCP + TLS) or total timeout passed (`CURLE_OPERATION_TIMEDOUT`).
    case timeout(String)
    /// The host name does not resolve (`CURLE_COULDNT_RESOLVE_HOST`).
    case dnsError(String)
    /// The certificate did not verify or the TLS handshake failed (any of libcurl's TLS codes).
    case tlsError(String)
    /// The body is larger than `limit` bytes (from `Content-Length`, or counted while receiving).
    case tooLarge(limit: Int)
    /// Refused, reset, any other transport error, or libcurl refused an option.
    case connectionFailed(String)

    /// The same case, same message, in a client's public error type.
    func reported<Failure: CurlFailureReporting>(as _: Failure.Type = Failure.self) -> Failure {
        switch self {
        case .timeout(let detail): .timeout(detail)
        case .dnsError(let detail): .dnsError(detail)
        case .tlsError(let detail): .tlsError(detail)
        case .tooLarge(let limit): .tooLarge(limit: limit)
        case .connectionFailed(let detail): .connectionFailed(detail)
        }
    }
}

/// A public error type with a case for each ``CurlFailure`` category (the enum cases witness these).
protocol CurlFailureReporting {
    /// See ``CurlFailure/timeout(_:)``.
    static func timeout(_ detail: String) -> Self
    /// See ``CurlFailure/dnsError(_:)``.
    static func dnsError(_ detail: String) -> Self
    /// See ``CurlFailure/tlsError(_:)``.
    static func tlsError(_ detail: String) -> Self
    /// See ``CurlFailure/tooLarge(limit:)``.
    static func tooLarge(limit: Int) -> Self
    /// See ``CurlFailure/connectionFailed(_:)``.
    static func connectionFailed(_ detail: String) -> Self
}

extension FetchFailure: CurlFailureReporting {}
extension HTTPClientError: CurlFailureReporting {}

/// The write callback: hands the bytes to the handle's body, which refuses them past its cap (a short
/// count makes libcurl stop with CURLE_WRITE_ERROR). Captures nothing (a capturing `@convention(c)`
/// closure crashes the 6.3.1 compiler); the ``CurlEasy`` comes through CURLOPT_WRITEDATA, alive for the
/// whole `curl_easy_perform`.
private let receiveBody: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    return Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue().append(data, length: size * count)
}

/// The header callback: one header line per call, line ending stripped. Captures nothing; the ``CurlEasy``
/// comes through CURLOPT_HEADERDATA, alive for the whole `curl_easy_perform`.
private let receiveHeader: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    var bytes = UnsafeRawBufferPointer(start: data, count: length)[...]
    // Strip the line ending on bytes: in a Swift String "\r\n" is a single Character.
    while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
    easy.headerLine(String(decoding: bytes, as: UTF8.self))
    return length
}

/// The read callback of an upload (the SMTP message): copies the next bytes of the handle's upload into
/// libcurl's buffer; 0 at the end. Captures nothing; the ``CurlEasy`` comes through CURLOPT_READDATA, alive
/// for the whole `curl_easy_perform`.
private let sendUpload: curl_read_callback = { buffer, size, count, context in
    guard let context, let buffer else { return 0 }
    return Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue().readUpload(into: buffer, capacity: size * count)
}

/// One libcurl easy handle, used by one thread for one transfer: the single owner of the `CURL*`, the
/// slists it points to and its error buffer, all freed in `deinit` (after the transfer: libcurl keeps
/// pointers to the slists and the buffer without copying them). It gives typed `setopt`/`getinfo`
/// wrappers over the CCurl shim, accumulates the body up to ``maxBytes`` (and, when asked, the final
/// response's header lines), and funnels every failed libcurl call into one ``CurlFailure``.
/// ``HTTPSFetcher`` and ``HTTPClient`` each add only the options that differ between them.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var slists: [UnsafeMutablePointer<curl_slist>] = []
    private var exceededLimit = false
    /// The largest body accepted, in bytes; enforced from `Content-Length` and while receiving.
    let maxBytes: Int
    /// The body bytes received, at most ``maxBytes``.
    private(set) var body: [UInt8] = []
    /// After ``collectHeaders()``: the final response's header lines (`Name: value`), line endings
    /// stripped, status line and blank terminator left out. A status line starts a new block, so an
    /// interim `100 Continue` block is dropped.
    private(set) var headerLines: [String] = []
    /// The bytes an upload sends (``setUpload(_:)``) and how many were handed to libcurl so far.
    private var upload: [UInt8] = []
    private var uploadOffset = 0

    /// A fresh handle accepting at most `maxBytes` body bytes; `nil` when `curl_easy_init` fails. The
    /// caller has checked ``CurlGlobal/initialized``.
    init?(maxBytes: Int) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.maxBytes = maxBytes
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        for list in slists { curl_slist_free_all(list) }
        errorBuffer.deallocate()
    }

    /// The options every transfer here shares: the error buffer, `url`, only the schemes in `protocols`
    /// (libcurl's comma list, e.g. `"https"`), no redirect followed, no signals, peer and host name always
    /// verified, `caFile` trusted besides the system store, no proxy, the two timeouts (milliseconds), the
    /// body cap, `userAgent`, and the body write callback.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` naming the option libcurl refused.
    func configure(
        url: String, protocols: String, caFile: String?, connectTimeoutMilliseconds: Int, timeoutMilliseconds: Int,
        userAgent: String
    ) throws(CurlFailure) {
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try set(CURLOPT_URL, url, "CURLOPT_URL")
        try set(CURLOPT_PROTOCOLS_STR, protocols, "CURLOPT_PROTOCOLS_STR")
        // Every 3xx comes back to the caller: the checker reports redirects, the client catches app redirects.
        try set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        // No signals from a multi-threaded server (libcurl would use SIGALRM for DNS timeouts).
        try set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        // Verification is libcurl's default; set it anyway so no build default can turn it off.
        try set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        if let caFile {
            // CURLOPT_CAINFO replaces libcurl's default bundle file, but CURLOPT_CAPATH keeps its built-in
            // default (the system's hashed directory, /etc/ssl/certs on Debian), and OpenSSL trusts both:
            // the extra bundle is added to the system store, not put in its place.
            try set(CURLOPT_CAINFO, caFile, "CURLOPT_CAINFO")
        }
        // A proxy from the environment would send the request elsewhere (and bypass a pinned address).
        try set(CURLOPT_PROXY, "", "CURLOPT_PROXY")
        try set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds, "CURLOPT_CONNECTTIMEOUT_MS")
        try set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds, "CURLOPT_TIMEOUT_MS")
        // Acts only on a known Content-Length; the write callback counts a chunked body.
        try set(CURLOPT_MAXFILESIZE_LARGE, size: curl_off_t(maxBytes), "CURLOPT_MAXFILESIZE_LARGE")
        try set(CURLOPT_USERAGENT, userAgent, "CURLOPT_USERAGENT")
        try check(CCurl_easy_setopt_write_function(handle, receiveBody), "CURLOPT_WRITEFUNCTION")
        try set(CURLOPT_WRITEDATA, pointer: Unmanaged.passUnretained(self).toOpaque(), "CURLOPT_WRITEDATA")
    }

    /// Keeps the final response's header lines in ``headerLines``.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` naming the option libcurl refused.
    func collectHeaders() throws(CurlFailure) {
        try check(CCurl_easy_setopt_header_function(handle, receiveHeader), "CURLOPT_HEADERFUNCTION")
        try set(CURLOPT_HEADERDATA, pointer: Unmanaged.passUnretained(self).toOpaque(), "CURLOPT_HEADERDATA")
    }

    /// Sets an option documented as taking a `long`; `name` is the option's name for the message.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func set(_ option: CURLoption, _ value: Int, _ name: String) throws(CurlFailure) {
        try check(CCurl_easy_setopt_long(handle, option, value), name)
    }

    /// Sets an option documented as taking a `curl_off_t` (a size in bytes).
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func set(_ option: CURLoption, size: curl_off_t, _ name: String) throws(CurlFailure) {
        try check(CCurl_easy_setopt_off_t(handle, option, size), name)
    }

    /// Sets an option documented as taking a `char *` (libcurl copies the string).
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func set(_ option: CURLoption, _ value: String, _ name: String) throws(CurlFailure) {
        try check(CCurl_easy_setopt_string(handle, option, value), name)
    }

    /// Sets an option documented as taking an opaque pointer; libcurl keeps it, so what it points to must
    /// outlive the transfer unless the option copies (CURLOPT_COPYPOSTFIELDS does).
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?, _ name: String) throws(CurlFailure) {
        try check(CCurl_easy_setopt_pointer(handle, option, pointer), name)
    }

    /// Sets an option documented as taking a `struct curl_slist *` (CURLOPT_HTTPHEADER, CURLOPT_RESOLVE)
    /// to `lines`, in order. The list belongs to this handle until `deinit`: libcurl does not copy it.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when the list cannot be allocated or libcurl refuses it.
    func set(_ option: CURLoption, lines: [String], _ name: String) throws(CurlFailure) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw .connectionFailed("libcurl could not allocate a list")
            }
            list = appended
        }
        guard let list else { throw .connectionFailed("libcurl could not allocate a list") }
        slists.append(list)
        try check(CCurl_easy_setopt_slist(handle, option, list), name)
    }

    /// Sends `bytes` as the request body (this makes the request a POST unless CURLOPT_CUSTOMREQUEST says
    /// otherwise). libcurl copies them, so they only have to live for the call.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` naming the option libcurl refused.
    func setRequestBody(_ bytes: [UInt8]) throws(CurlFailure) {
        try set(CURLOPT_POSTFIELDSIZE_LARGE, size: curl_off_t(bytes.count), "CURLOPT_POSTFIELDSIZE_LARGE")
        // COPYPOSTFIELDS copies the bytes (POSTFIELDSIZE given first, so a NUL byte is data); an empty body
        // still needs a valid pointer.
        var bytes = bytes
        if bytes.isEmpty { bytes = [0] }
        let code = bytes.withUnsafeMutableBytes { CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        try check(code, "CURLOPT_COPYPOSTFIELDS")
    }

    /// Uploads `bytes` (CURLOPT_UPLOAD with a read callback; the SMTP message, whose size libcurl is told).
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` naming the option libcurl refused.
    func setUpload(_ bytes: [UInt8]) throws(CurlFailure) {
        upload = bytes
        uploadOffset = 0
        try set(CURLOPT_UPLOAD, 1, "CURLOPT_UPLOAD")
        try set(CURLOPT_INFILESIZE_LARGE, size: curl_off_t(bytes.count), "CURLOPT_INFILESIZE_LARGE")
        try check(CCurl_easy_setopt_read_function(handle, sendUpload), "CURLOPT_READFUNCTION")
        try set(CURLOPT_READDATA, pointer: Unmanaged.passUnretained(self).toOpaque(), "CURLOPT_READDATA")
    }

    /// Copies up to `capacity` further upload bytes into `buffer`; returns how many (0 at the end).
    fileprivate func readUpload(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, upload.count - uploadOffset)
        guard count > 0 else { return 0 }
        upload.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + uploadOffset, byteCount: count)
        }
        uploadOffset += count
        return count
    }

    /// Runs the transfer; afterwards ``body``, ``headerLines`` and the `getinfo` items hold the response.
    /// - Throws: the ``CurlFailure`` the failed transfer maps to.
    func perform() throws(CurlFailure) {
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else { throw failure(for: code) }
    }

    /// A `CURLINFO_LONG` item, e.g. CURLINFO_RESPONSE_CODE.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func longInfo(_ info: CURLINFO, _ name: String) throws(CurlFailure) -> Int {
        var value = 0
        try check(CCurl_easy_getinfo_long(handle, info, &value), name)
        return value
    }

    /// A `CURLINFO_STRING` item, copied at once (libcurl's string lives only until the next transfer);
    /// `nil` when libcurl has none.
    /// - Throws: ``CurlFailure/connectionFailed(_:)`` when libcurl refuses it.
    func stringInfo(_ info: CURLINFO, _ name: String) throws(CurlFailure) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        try check(CCurl_easy_getinfo_string(handle, info, &value), name)
        return value.map { String(cString: $0) }
    }

    /// libcurl's built-in CA directory (CURLINFO_CAPATH on a fresh handle), or `nil` when there is none.
    static func defaultCAPath() -> String? {
        guard CurlGlobal.initialized, let easy = CurlEasy(maxBytes: 1) else { return nil }
        return try? easy.stringInfo(CURLINFO_CAPATH, "CURLINFO_CAPATH")
    }

    /// Appends `length` bytes to the body and returns `length`, or returns 0 (libcurl then stops with
    /// CURLE_WRITE_ERROR, which ``failure(for:)`` reports as too large) when the body would pass the cap.
    fileprivate func append(_ data: UnsafeMutablePointer<CChar>?, length: Int) -> Int {
        guard body.count + length <= maxBytes else {
            exceededLimit = true
            return 0
        }
        if length > 0, let data { body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
        return length
    }

    /// Records one header line: a status line starts a new block, a blank line ends one.
    fileprivate func headerLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headerLines = []
        } else if !line.isEmpty {
            headerLines.append(line)
        }
    }

    /// The one funnel from a failed `curl_easy_perform` to a ``CurlFailure``.
    private func failure(for code: CURLcode) -> CurlFailure {
        let detail = errorText(code)
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout(detail)
        case CURLE_COULDNT_RESOLVE_HOST:
            return .dnsError(detail)
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge(limit: maxBytes)
        case CURLE_WRITE_ERROR where exceededLimit:
            return .tooLarge(limit: maxBytes)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tlsError(detail)
        default:
            return .connectionFailed(detail)
        }
    }

    /// libcurl's message for the failure: the error buffer when it has one (trailing newline dropped),
    /// else `curl_easy_strerror`.
    private func errorText(_ code: CURLcode) -> String {
        errorBuffer[Int(CURL_ERROR_SIZE)] = 0
        let buffered = String(cString: errorBuffer)
        if !buffered.isEmpty { return buffered.hasSuffix("\n") ? String(buffered.dropLast()) : buffered }
        return String(cString: curl_easy_strerror(code))
    }

    /// Turns a failed `setopt`/`getinfo` into ``CurlFailure/connectionFailed(_:)`` naming `option`.
    private func check(_ code: CURLcode, _ option: String) throws(CurlFailure) {
        guard code == CURLE_OK else {
            throw .connectionFailed("libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
