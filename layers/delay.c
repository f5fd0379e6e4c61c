/* layers/delay.c -- the delay layer: simulates a remote file system (placeholder until the layer lands). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_delay = {
	.name = "delay",
	.size = sizeof(struct ffio_layer),
};
