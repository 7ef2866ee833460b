// CMicroHTTPD: makes libmicrohttpd callable from Swift. No logic lives here.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <microhttpd.h>

// MHD_start_daemon is variadic, and Swift does not import variadic C functions. This typed wrapper
// passes the URI-log and completion callbacks explicitly and everything else as an MHD_OPTION_ARRAY
// (terminated by an MHD_OPTION_END item), so the Swift side chooses options without more C.
static inline struct MHD_Daemon *CMicroHTTPD_start_daemon(
    unsigned int flags, uint16_t port,
    MHD_AccessHandlerCallback access_handler, void *access_context,
    void *(*uri_log)(void *context, const char *uri, struct MHD_Connection *connection), void *uri_log_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, access_handler, access_context,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_context,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}
#endif
