internal import CCurl

/// `curl_global_init` exactly once per process, before the first handle (a `static let` runs once,
/// thread-safely). libcurl must not be initialised concurrently with other libcurl use.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// The write callback: appends to the transfer's body, or aborts the transfer (a short count makes libcurl
/// stop with CURLE_WRITE_ERROR) when the body would pass the limit. Needed besides CURLOPT_MAXFILESIZE_LARGE,
/// which only acts on a known `Content-Length`: a chunked body has none. Captures nothing; the transfer
/// comes through the context pointer (CURLOPT_WRITEDATA), alive for the whole `curl_easy_perform`.
private let receiveBody: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard transfer.body.count + length <= transfer.maxBytes else {
        transfer.exceededLimit = true
        return 0
    }
    if length > 0, let data {
        transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    }
    return length
}

/// One libcurl easy transfer. Owns the `CURL*` handle, the slists it points to, the error buffer and the
/// body; everything is freed in `deinit`, after the transfer, because libcurl keeps pointers to the slists
/// and the buffer without copying them. Used by one thread, once.
final class CurlTransfer {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var slists: [UnsafeMutablePointer<curl_slist>] = []
    fileprivate let maxBytes: Int
    fileprivate var body: [UInt8] = []
    fileprivate var exceededLimit = false

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

    /// Runs the GET and turns the outcome into a response or a ``FetchFailure``.
    func perform(url: String, pin: String, configuration: OutboundConfiguration) -> Result<FetchedResponse, FetchFailure> {
        do {
            try configure(url: url, pin: pin, configuration: configuration)
        } catch {
            return .failure(error)
        }
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else { return .failure(failure(for: code)) }

        var status = 0
        var contentType: String?
        var location: String?
        do {
            status = try longInfo(CURLINFO_RESPONSE_CODE)
            contentType = try stringInfo(CURLINFO_CONTENT_TYPE)
            if (300..<400).contains(status) { location = try stringInfo(CURLINFO_REDIRECT_URL) }
        } catch {
            return .failure(error)
        }
        return .success(FetchedResponse(status: status, contentType: contentType, body: body, redirectLocation: location))
    }

    private func configure(url: String, pin: String, configuration: OutboundConfiguration) throws(FetchFailure) {
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_URL, url), "CURLOPT_URL")
        // HTTPS only, and no redirect followed (the checker reports redirects as problems).
        try check(CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "https"), "CURLOPT_PROTOCOLS_STR")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "https"), "CURLOPT_REDIR_PROTOCOLS_STR")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        // No signals from a multi-threaded server (libcurl would use SIGALRM for DNS timeouts).
        try check(CCurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        // Verification is libcurl's default; set it anyway so no build default can turn it off.
        try check(CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try check(CCurl_easy_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        if let caFile = configuration.caFile {
            // CURLOPT_CAINFO replaces libcurl's default bundle file, but CURLOPT_CAPATH keeps its built-in
            // default (the system's hashed directory, /etc/ssl/certs on Debian), and OpenSSL trusts both:
            // the extra bundle is added to the system store, not put in its place.
            try check(CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile), "CURLOPT_CAINFO")
        }
        // An https_proxy in the environment would send the request elsewhere and bypass the pinned address.
        try check(CCurl_easy_setopt_string(handle, CURLOPT_PROXY, ""), "CURLOPT_PROXY")
        try check(
            CCurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeoutMilliseconds), "CURLOPT_CONNECTTIMEOUT_MS"
        )
        try check(CCurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, configuration.timeoutMilliseconds), "CURLOPT_TIMEOUT_MS")
        try check(CCurl_easy_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        try check(CCurl_easy_setopt_string(handle, CURLOPT_USERAGENT, HTTPSFetcher.userAgent), "CURLOPT_USERAGENT")
        try check(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, try slist(["Accept: application/json"])), "CURLOPT_HTTPHEADER")
        // The address checked by AddressPolicy is the one connected to: libcurl takes it from here and
        // never asks DNS for this host and port.
        try check(CCurl_easy_setopt_slist(handle, CURLOPT_RESOLVE, try slist([pin])), "CURLOPT_RESOLVE")
        try check(CCurl_easy_setopt_write_function(handle, receiveBody), "CURLOPT_WRITEFUNCTION")
        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
    }

    /// The one funnel from a failed `curl_easy_perform` to a ``FetchFailure``.
    private func failure(for code: CURLcode) -> FetchFailure {
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

    /// libcurl's message for the failure: the error buffer when it has one, else `curl_easy_strerror`.
    private func errorText(_ code: CURLcode) -> String {
        errorBuffer[Int(CURL_ERROR_SIZE)] = 0
        let buffered = String(cString: errorBuffer)
        if !buffered.isEmpty { return buffered.hasSuffix("\n") ? String(buffered.dropLast()) : buffered }
        return String(cString: curl_easy_strerror(code))
    }

    private func check(_ code: CURLcode, _ option: String) throws(FetchFailure) {
        guard code == CURLE_OK else {
            throw .connectionFailed("libcurl refused \(option): \(String(cString: curl_easy_strerror(code)))")
        }
    }

    private func slist(_ lines: [String]) throws(FetchFailure) -> UnsafeMutablePointer<curl_slist> {
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
        return list
    }

    private func longInfo(_ info: CURLINFO) throws(FetchFailure) -> Int {
        var value = 0
        try check(CCurl_easy_getinfo_long(handle, info, &value), "getinfo")
        return value
    }

    private func stringInfo(_ info: CURLINFO) throws(FetchFailure) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        try check(CCurl_easy_getinfo_string(handle, info, &value), "getinfo")
        return value.map { String(cString: $0) }
    }

    /// libcurl's built-in CA directory (CURLINFO_CAPATH on a fresh handle), or `nil` when there is none.
    static func defaultCAPath() -> String? {
        guard CurlGlobal.initialized, let transfer = CurlTransfer(maxBytes: 1) else { return nil }
        return try? transfer.stringInfo(CURLINFO_CAPATH)
    }
}
