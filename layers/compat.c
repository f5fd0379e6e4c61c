/* layers/compat.c -- SGI's eie and Cray's cachea/bufa, mapped onto cache (placeholder). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_eie = { .name = "eie", .size = sizeof(struct ffio_layer) };
const struct ffio_layer_ops ffio_layer_cachea = { .name = "cachea", .size = sizeof(struct ffio_layer) };
const struct ffio_layer_ops ffio_layer_bufa = { .name = "bufa", .size = sizeof(struct ffio_layer) };
