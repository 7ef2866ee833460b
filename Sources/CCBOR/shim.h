// CCBOR: makes libcbor (RFC 8949 CBOR) callable from Swift. No logic lives here.
#ifndef CCBOR_SHIM_H
#define CCBOR_SHIM_H
#include <cbor.h>
#endif
