// CCurl: makes libcurl callable from Swift. No logic lives here.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt is variadic, and Swift does not import variadic C functions. libcurl reads the third
// argument with va_arg as the type the option documents, so each wrapper below passes exactly one of
// those types: long, curl_off_t, a string, an opaque pointer, an slist, or a write callback.

// For options documented as taking a `long` (CURLOPT_NOSIGNAL, CURLOPT_TIMEOUT_MS, CURLOPT_FOLLOWLOCATION, …).
static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// For options documented as taking a `curl_off_t` (CURLOPT_MAXFILESIZE_LARGE); passing a long there
// would be read with the wrong width on platforms where they differ.
static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// For options documented as taking a `char *` (CURLOPT_URL, CURLOPT_CAINFO, CURLOPT_PROTOCOLS_STR, …).
// libcurl copies option strings, so the Swift string only has to live for the call.
static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// For options documented as taking an opaque pointer (CURLOPT_WRITEDATA, CURLOPT_ERRORBUFFER).
// libcurl keeps the pointer: the caller keeps what it points to alive for the whole transfer.
static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// For options documented as taking a `struct curl_slist *` (CURLOPT_RESOLVE, CURLOPT_HTTPHEADER).
// libcurl does not copy the list: the caller frees it only after the transfer.
static inline CURLcode CCurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

// For CURLOPT_WRITEFUNCTION, which takes a function pointer (a C callback from Swift has no other route
// through the variadic call).
static inline CURLcode CCurl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

// For CURLOPT_HEADERFUNCTION (the general HTTPClient keeps every response header line, including
// repeated ones such as Set-Cookie); same callback type as the write function.
static inline CURLcode CCurl_easy_setopt_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

// For CURLOPT_READFUNCTION (the SMTP upload reads the message through it); curl_read_callback has the
// same shape as the write callback.
static inline CURLcode CCurl_easy_setopt_read_function(CURL *handle, curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

// curl_easy_getinfo is variadic too. For CURLINFO_LONG items (CURLINFO_RESPONSE_CODE).
static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

// For CURLINFO_STRING items (CURLINFO_CONTENT_TYPE, CURLINFO_REDIRECT_URL, CURLINFO_CAPATH). The string
// belongs to the handle and is valid until the next transfer or curl_easy_cleanup: copy it at once.
static inline CURLcode CCurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
