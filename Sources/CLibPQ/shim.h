// CLibPQ: makes libpq callable from Swift. No logic lives here.
#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

// Character-literal macros from postgres_ext.h are not imported by Swift; re-export them as constants.
static const int CLibPQ_DIAG_SQLSTATE = 'C';
static const int CLibPQ_DIAG_MESSAGE_PRIMARY = 'M';
static const int CLibPQ_DIAG_MESSAGE_DETAIL = 'D';
static const int CLibPQ_DIAG_CONSTRAINT_NAME = 'n';
#endif
