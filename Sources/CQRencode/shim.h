// CQRencode: makes libqrencode callable from Swift. No logic lives here.
#ifndef CQRENCODE_SHIM_H
#define CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
