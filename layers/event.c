/* layers/event.c -- the event layer: counts, bytes, times, size histograms (placeholder until the layer lands). */
#include "config.h"
#include "ffio-internal.h"

const struct ffio_layer_ops ffio_layer_event = {
	.name = "event",
	.size = sizeof(struct ffio_layer),
};
