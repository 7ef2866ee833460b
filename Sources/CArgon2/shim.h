// CArgon2: makes libargon2 callable from Swift. No logic lives here.
#ifndef CARGON2_SHIM_H
#define CARGON2_SHIM_H
#include <argon2.h>
#endif
