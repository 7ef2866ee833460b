// CIDN2: makes libidn2 (IDNA2008 with Unicode UTS #46 processing) callable from Swift. No logic lives here.
#ifndef CIDN2_SHIM_H
#define CIDN2_SHIM_H
#include <idn2.h>
#endif
