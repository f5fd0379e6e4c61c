/* libffio/registry.c -- every layer ffio knows, found by name or alias. */
#include "config.h"
#include <string.h>
#include "ffio-internal.h"

const struct ffio_layer_ops *const ffio_layers[] = {
	&ffio_layer_sys,
	&ffio_layer_uring,
	&ffio_layer_cache,
	&ffio_layer_eie,
	&ffio_layer_cachea,
	&ffio_layer_bufa,
	&ffio_layer_event,
	&ffio_layer_fault,
	&ffio_layer_delay,
	NULL,
};

static int name_is(const char *want, const char *name, size_t len)
{
	return want && strlen(want) == len && memcmp(want, name, len) == 0;
}

const struct ffio_layer_ops *ffio_layer_find(const char *name, size_t len)
{
	for (int i = 0; ffio_layers[i]; i++) {
		const struct ffio_layer_ops *ops = ffio_layers[i];
		if (name_is(ops->name, name, len))
			return ops;
		for (int a = 0; ops->aliases && ops->aliases[a]; a++)
			if (name_is(ops->aliases[a], name, len))
				return ops;
	}
	return NULL;
}
