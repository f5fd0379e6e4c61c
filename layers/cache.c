/* layers/cache.c -- the cache layer (placeholder until the layer lands). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_cache = {
	.name = "cache",
	.size = sizeof(struct ffio_layer),
};
