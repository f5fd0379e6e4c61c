/* libffio/fdtable.c -- (being written). */
#include "config.h"
#include "ffio-internal.h"
