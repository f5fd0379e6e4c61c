/* libffio/posix.c -- POSIX interposition (placeholder). */
#include "config.h"
#include "ffio-internal.h"
