/* layers/fault.c -- the fault layer: injects errors for tests (placeholder until the layer lands). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_fault = {
	.name = "fault",
	.size = sizeof(struct ffio_layer),
};
