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
// passes the accept policy (the first two arguments of MHD_start_daemon), the URI-log, completion and connection-notification callbacks explicitly and everything else as
// an MHD_OPTION_ARRAY (terminated by an MHD_OPTION_END item), so the Swift side chooses options without
// more C.
static inline struct MHD_Daemon *CMicroHTTPD_start_daemon(
    unsigned int flags, uint16_t port,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_context,
    MHD_AccessHandlerCallback access_handler, void *access_context,
    void *(*uri_log)(void *context, const char *uri, struct MHD_Connection *connection), void *uri_log_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_context,
    struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, accept_policy, accept_policy_context, access_handler, access_context,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_context,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_context,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

// MHD_get_daemon_info is variadic (not imported by Swift). Returns the port the daemon is bound to
// (MHD_DAEMON_INFO_BIND_PORT, since 0.9.63), which is how a daemon started on port 0 reports the
// ephemeral port; 0 when MHD cannot tell.
static inline uint16_t CMicroHTTPD_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// MHD_get_connection_info is variadic (not imported by Swift). Returns the peer's socket address
// (MHD_CONNECTION_INFO_CLIENT_ADDRESS), owned by MHD for the life of the connection; NULL if unknown.
static inline const struct sockaddr *CMicroHTTPD_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

// MHD_get_connection_info is variadic. Returns the connection's socket context, the value the
// MHD_OPTION_NOTIFY_CONNECTION callback stored at MHD_CONNECTION_NOTIFY_STARTED; NULL if none.
static inline void *CMicroHTTPD_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

// MHD_get_connection_info is variadic. Returns the connection's socket (MHD_CONNECTION_INFO_CONNECTION_FD),
// or -1 if unknown.
static inline int CMicroHTTPD_socket_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

#endif
