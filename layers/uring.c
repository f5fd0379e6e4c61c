/* layers/uring.c -- the uring bottom layer (placeholder: behaves as sys). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_uring = {
	.name = "uring",
	.kind = FFIO_LAYER_BOTTOM,
	.size = sizeof(struct ffio_layer),
	.unavailable = "the uring layer is not written yet",
	.fallback = "sys",
};
