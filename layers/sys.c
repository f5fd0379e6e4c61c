/* layers/sys.c -- (being written). */
#include "config.h"
#include "ffio-internal.h"
